//! The `--tls-self-signed DIR` line on stderr (where the CA is, made or
//! reused) in the log's format: with `--log-format json` an `INFO` event
//! like every other stderr line (it was the one plain-text line among
//! them), with text the line it always was. The same for the contract
//! proxy run as the mock's `proxy` alias.

use std::io::BufRead as _;
use std::process::{Command, Stdio};

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_payments-mock-server");

/// The binary with `args` started, its banner read, then SIGTERM: its
/// stderr once it exited 0.
fn served(args: &[&str]) -> String {
    let mut child = Command::new(BIN)
        .args(args)
        .env_remove("PAYMENTS_MOCK_STORE")
        .env_remove("PAYMENTS_MOCK_ADMIN_KEY")
        .env_remove("PAYMENTS_MOCK_API_KEYS")
        .env_remove("PAYMENTS_PROXY_ADMIN_KEY")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawns");
    let mut banner = String::new();
    let _ = std::io::BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut banner);
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let output = child.wait_with_output().expect("exits");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        banner.starts_with("listening on https://"),
        "{banner:?}: {stderr}"
    );
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    stderr
}

/// Every line of `stderr` as JSON; the one about the TLS directory.
fn tls_event(stderr: &str) -> Value {
    let events: Vec<Value> = stderr
        .lines()
        .map(|line| {
            serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("not a JSON line ({e}): {line:?} in\n{stderr}"))
        })
        .collect();
    events
        .into_iter()
        .find(|e| {
            e["fields"]["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("TLS: local CA"))
        })
        .unwrap_or_else(|| panic!("no TLS line: {stderr}"))
}

#[test]
fn the_tls_directorys_line_is_a_json_event_with_json_logs_and_text_without() {
    let top = tempfile::tempdir().expect("a directory");
    let dir = top.path().join("tls");
    let shown = dir.display().to_string();
    let ca = dir.join("ca.pem").display().to_string();
    let mock = |json: bool| {
        let mut args = vec!["--port", "0", "--tls-self-signed", shown.as_str()];
        if json {
            args.extend(["--log-format", "json"]);
        }
        served(&args)
    };

    let made = tls_event(&mock(true));
    assert_eq!(made["level"], "INFO", "{made}");
    assert_eq!(
        made["fields"]["message"],
        format!("TLS: local CA made in {shown}; clients trust it (payments --ca-cert {ca})")
    );
    assert_eq!(made["fields"]["ca"], ca.as_str(), "{made}");
    assert_eq!(made["fields"]["tls_dir"], shown.as_str(), "{made}");
    let reused = tls_event(&mock(true));
    assert!(
        reused["fields"]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("TLS: local CA reused in")),
        "{reused}"
    );

    let text = mock(false);
    let line =
        format!("TLS: local CA reused in {shown}; clients trust it (payments --ca-cert {ca})");
    assert!(text.lines().any(|l| l == line), "{text}");

    // The contract proxy through the alias: its lines are JSON too.
    let proxy = served(&[
        "proxy",
        "--upstream",
        "http://127.0.0.1:9",
        "--port",
        "0",
        "--tls-self-signed",
        &shown,
        "--log-format",
        "json",
    ]);
    let event = tls_event(&proxy);
    assert_eq!(event["level"], "INFO", "{event}");
}
