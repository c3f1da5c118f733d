//! With `--log-format json` every line the mock binary writes on stderr
//! is JSON, also those outside its log: an error that stops the start (the
//! port taken, a catalogue or TLS file that cannot be read, a recording to
//! seed from that cannot be read, an invalid setting). With text, the
//! same errors as `error: …` lines.

use std::process::{Command, Stdio};

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_payments-mock-server");

/// Each line of `stderr` as JSON (none of them anything else).
fn json_lines(stderr: &str) -> Vec<Value> {
    assert!(!stderr.is_empty(), "something said");
    stderr
        .lines()
        .map(|line| {
            serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("not a JSON line ({e}): {line:?} in\n{stderr}"))
        })
        .collect()
}

/// The ways to stop the start: the arguments, and a word of the error.
fn refused_starts(dir: &std::path::Path, taken: u16) -> Vec<(Vec<String>, &'static str)> {
    let missing = |name: &str| dir.join(name).display().to_string();
    let args = |list: &[&str]| list.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>();
    vec![
        (args(&["--port", &taken.to_string()]), "cannot listen"),
        (
            args(&["--port", "0", "--catalog", &missing("catalog.toml")]),
            "catalog.toml",
        ),
        (
            args(&[
                "--port",
                "0",
                "--tls-cert",
                &missing("cert.pem"),
                "--tls-key",
                &missing("key.pem"),
            ]),
            "cert.pem",
        ),
        (
            args(&["--port", "0", "--seed-from", &missing("recording.jsonl")]),
            "recording.jsonl",
        ),
    ]
}

#[test]
fn an_error_that_stops_the_start_is_a_json_line_with_json_logs() {
    let dir = tempfile::tempdir().expect("a directory");
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let port = taken.local_addr().expect("its address").port();
    for (args, word) in refused_starts(dir.path(), port) {
        for json in [true, false] {
            let mut all = args.clone();
            if json {
                all.extend(["--log-format".to_owned(), "json".to_owned()]);
            }
            let output = Command::new(BIN)
                .args(&all)
                .env_remove("PAYMENTS_MOCK_STORE")
                .stdin(Stdio::null())
                .output()
                .expect("runs");
            assert_eq!(output.status.code(), Some(2), "{args:?}");
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert!(stderr.contains(word), "{args:?}: {stderr}");
            if json {
                let lines = json_lines(&stderr);
                assert!(
                    lines.iter().any(|l| l["level"] == "ERROR"
                        && l["fields"]["message"]
                            .as_str()
                            .is_some_and(|m| m.contains(word))),
                    "{args:?}: {stderr}"
                );
            } else {
                let said = stderr
                    .lines()
                    .find(|l| l.contains(word))
                    .unwrap_or_else(|| panic!("{args:?}: {stderr}"));
                assert!(said.starts_with("error: "), "{args:?}: {stderr}");
            }
        }
    }
}

/// The mock's flags before `proxy` or `check` did nothing for them (the
/// proxy ran on its own default port with `--port 9000 proxy …`, its log
/// as text with `--log-format json proxy …`): a usage error now, in the
/// log's format, that says to give them after the command.
#[test]
fn the_mocks_flags_before_proxy_or_check_are_a_usage_error() {
    for (args, json) in [
        (
            &["--port", "0", "proxy", "--upstream", "http://127.0.0.1:1"][..],
            false,
        ),
        (
            &[
                "--log-format",
                "json",
                "proxy",
                "--upstream",
                "http://127.0.0.1:1",
            ][..],
            true,
        ),
        (&["--port", "0", "check", "none.jsonl"][..], false),
    ] {
        let output = Command::new(BIN)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("runs");
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(output.stdout.is_empty(), "{args:?}: nothing served");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("give them after it"), "{args:?}: {stderr}");
        if json {
            json_lines(&stderr);
        } else {
            assert!(stderr.starts_with("error: the flags before `"), "{stderr}");
        }
    }
}
