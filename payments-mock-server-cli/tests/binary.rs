//! The `payments-mock-server` binary as a process (COMMANDS.md).

use std::io::Write;
use std::process::{Command, Stdio};

use crate::common::{address_of, post_over_http, spawn_with_banner, terminate_expecting_success};

const BIN: &str = env!("CARGO_BIN_EXE_payments-mock-server");

#[tokio::test]
async fn binary_prints_the_banner_serves_and_exits_zero_on_sigterm() {
    let (child, base) = spawn_with_banner(
        Command::new(BIN)
            .args(["--port", "0", "--expiry", "30s", "--log-format", "json"])
            .stderr(Stdio::piped()),
    );
    assert!(base.starts_with("http://127.0.0.1:"), "{base}");

    let reply = reqwest::get(format!("{base}/_mock/health"))
        .await
        .expect("reply");
    assert_eq!(reply.status(), 200);
    let reply = reqwest::get(format!("{base}/api/payments/x/status"))
        .await
        .expect("reply");
    assert_eq!(reply.status(), 404);

    let log = terminate_expecting_success(child);
    assert!(log.contains("\"request_id\""), "{log}");
}

#[tokio::test]
async fn stdout_keeps_its_one_line_and_the_console_address_goes_to_the_log() {
    use std::io::{BufRead as _, Read as _};
    let mut child = Command::new(BIN)
        .args(["--port", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
    let mut banner = String::new();
    stdout.read_line(&mut banner).expect("banner");
    let port = banner
        .trim_end()
        .strip_prefix("listening on http://127.0.0.1:")
        .unwrap_or_else(|| panic!("banner {banner:?}"))
        .to_owned();
    let page = reqwest::get(format!("http://127.0.0.1:{port}/_mock/ui/"))
        .await
        .expect("reply");
    assert_eq!(page.status(), 200);
    let log = terminate_expecting_success(child);
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).expect("stdout");
    assert_eq!(rest, "", "one line on stdout, the banner");
    assert!(
        log.contains(&format!("web console at http://127.0.0.1:{port}/_mock/ui/")),
        "{log}"
    );
}

#[test]
fn sigterm_lets_an_in_flight_request_finish() {
    use std::io::Read;
    use std::net::TcpStream;

    let (mut child, base) = spawn_with_banner(
        Command::new(BIN)
            .args(["--port", "0"])
            .stderr(Stdio::null()),
    );
    let addr = address_of(&base).to_owned();

    let mut stream = TcpStream::connect(&addr).expect("connect");
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .expect("timeout");
    // A first exchange proves the connection is being served...
    stream
        .write_all(b"GET /_mock/health HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
        .expect("write");
    let mut buf = [0u8; 4096];
    let n = stream.read(&mut buf).expect("first reply");
    assert!(buf[..n].starts_with(b"HTTP/1.1 200"));
    // ...then a slow request is in flight when SIGTERM arrives.
    stream
        .write_all(
            b"GET /api/payments/x/status HTTP/1.1\r\nHost: x\r\nX-Mock-Fault: delay=400\r\n\r\n",
        )
        .expect("write");
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    let mut reply = Vec::new();
    let _ = stream.read_to_end(&mut reply);
    let text = String::from_utf8_lossy(&reply);
    assert!(text.starts_with("HTTP/1.1 404"), "{text:?}");
    assert!(text.contains("TRANSACTION_NOT_FOUND"));
    let status = child.wait().expect("exit");
    assert!(status.success(), "{status:?}");
}

#[test]
fn a_bad_flag_exits_two_with_a_message() {
    let output = Command::new(BIN)
        .arg("--no-such-flag")
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--no-such-flag"));

    let output = Command::new(BIN)
        .args(["--fail-rate", "2"])
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("between 0 and 1"));

    let output = Command::new(BIN)
        .args(["--api-key", "k=not-a-uuid"])
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("not a UUID"));

    let output = Command::new(BIN)
        .args(["--expiry", "soon"])
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn a_public_url_that_no_page_can_live_under_exits_two() {
    for (bad, says) in [
        ("not a url", "--public-url"),
        ("ftp://dev.example", "http or https"),
        ("https://dev.example/?q=1", "no query"),
        ("https://user:secret@dev.example", "credentials"),
    ] {
        let output = Command::new(BIN)
            .args(["--port", "0", "--public-url", bad])
            .output()
            .expect("run");
        assert_eq!(output.status.code(), Some(2), "{bad}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(says), "{bad}: {stderr}");
        assert!(!stderr.contains("secret"), "{stderr}");
    }
}

#[tokio::test]
async fn payment_pages_are_announced_under_the_public_url() {
    let (child, base) = spawn_with_banner(
        Command::new(BIN)
            .args(["--port", "0", "--public-url", "https://dev.example/mock"])
            .stderr(Stdio::piped()),
    );
    let initiated = post_over_http(
        &format!("{base}/api/payments/initiate"),
        &serde_json::json!({
            "merchantId": crate::common::MERCHANT,
            "referenceNo": "OB-1", "amount": 100, "productCode": "ONLINEBANKING",
            "storeId": "S1", "returnUrl": "https://shop.example/back",
        }),
    )
    .await;
    let id = initiated["data"]["transactionId"].as_str().expect("an id");
    let confirmed = post_over_http(
        &format!("{base}/api/payments/confirm"),
        &serde_json::json!({ "transactionId": id, "referenceNo": "OB-1" }),
    )
    .await;
    let extra = confirmed["data"]["extraProperties"]
        .as_str()
        .expect("a string");
    let extra: serde_json::Value = serde_json::from_str(extra).expect("JSON");
    let url = extra["paymentUrl"].as_str().expect("paymentUrl");
    assert!(url.starts_with("https://dev.example/mock/pay/"), "{url}");
    // The page itself is served at /pay/ on the listening address.
    let token = url.rsplit('/').next().expect("a token");
    let page = reqwest::get(format!("{base}/pay/{token}"))
        .await
        .expect("sent");
    assert_eq!(page.status(), 200);
    let log = terminate_expecting_success(child);
    assert!(log.contains("https://dev.example/mock"), "{log}");
}

#[test]
fn a_bad_catalogue_file_exits_two_naming_the_line() {
    let mut file = tempfile::NamedTempFile::new().expect("temp file");
    writeln!(file, "[[product]]\ncode = \"A\"\noutcome = success").expect("write");
    let output = Command::new(BIN)
        .args(["--port", "0", "--catalog"])
        .arg(file.path())
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("line 3"), "{stderr}");

    let output = Command::new(BIN)
        .args(["--catalog", "/nonexistent/catalog.toml"])
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("/nonexistent/catalog.toml"));
}

#[test]
fn the_example_catalogue_is_the_default() {
    let text = include_str!("../../payments-mock-server/catalog.example.toml");
    let parsed = payments_mock_server::Catalog::from_toml_str(text).expect("valid");
    assert_eq!(parsed, payments_mock_server::Catalog::default());
}

/// The fault seed's JSON field is a string: as a number, a seed above
/// 2^53 (most random ones) was rounded by jq or JavaScript, and passing
/// what they read to `--fault-seed` repeated another run's faults.
#[test]
fn the_fault_seed_is_logged_in_json_as_a_string_equal_to_the_seed() {
    for given in [None, Some("18446744073709551557")] {
        let mut args = vec!["--port", "0", "--log-format", "json"];
        if let Some(seed) = given {
            args.extend(["--fault-seed", seed]);
        }
        let (child, _) = spawn_with_banner(Command::new(BIN).args(&args).stderr(Stdio::piped()));
        let log = terminate_expecting_success(child);
        let line = log
            .lines()
            .find(|l| l.contains("\"fault_seed\""))
            .unwrap_or_else(|| panic!("no fault_seed line: {log}"));
        let entry: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
        let fields = entry.get("fields").unwrap_or(&entry);
        let field = fields["fault_seed"]
            .as_str()
            .unwrap_or_else(|| panic!("fault_seed is not a string: {line}"));
        let message = fields["message"].as_str().expect("a message");
        let said = message
            .strip_prefix("fault seed ")
            .and_then(|rest| rest.split(' ').next())
            .unwrap_or_else(|| panic!("{message}"));
        assert_eq!(field, said, "{line}");
        assert!(field.parse::<u64>().is_ok(), "{line}");
        if let Some(seed) = given {
            assert_eq!(field, seed, "{line}");
        }
    }
}

/// A faulted answer's log line names the fault (and the rule that
/// injected it): a `commit-then-error` was the line of a genuine 500, a
/// `truncate` a plain 200. An answer without a fault has no such field.
#[tokio::test]
async fn a_faulted_answers_log_line_names_the_fault_and_its_rule() {
    for format in ["text", "json"] {
        let (child, base) = spawn_with_banner(
            Command::new(BIN)
                .args(["--port", "0", "--log-format", format])
                .stderr(Stdio::piped()),
        );
        let client = reqwest::Client::new();
        let initiate = |reference: &str| {
            let body = crate::common::initiate_body(reference, "TOPUP");
            client
                .post(format!("{base}/api/payments/initiate"))
                .json(&body)
        };
        let faulted = initiate("LOGF-1")
            .header("x-mock-fault", "commit-then-error")
            .send()
            .await
            .expect("an answer");
        assert_eq!(faulted.status(), 500);
        let rule: serde_json::Value = client
            .post(format!("{base}/_mock/faults"))
            .json(
                &serde_json::json!({"match": {"referenceNo": "LOGF-2"}, "fault": "internal-error"}),
            )
            .send()
            .await
            .expect("a rule")
            .json()
            .await
            .expect("JSON");
        let rule_id = rule["data"]["id"].as_str().expect("a rule id").to_owned();
        let ruled = initiate("LOGF-2").send().await.expect("an answer");
        assert_eq!(ruled.status(), 500);
        let plain = initiate("LOGF-3").send().await.expect("an answer");
        assert_eq!(plain.status(), 200);
        let log = terminate_expecting_success(child);
        let lines: Vec<&str> = log
            .lines()
            .filter(|l| l.contains("payments_mock_server::request"))
            .collect();
        assert_eq!(lines.len(), 4, "{log}");
        if format == "text" {
            assert!(
                lines[0].ends_with(" fault=\"commit-then-error\""),
                "{}",
                lines[0]
            );
            assert!(
                lines[2].ends_with(&format!(
                    " fault=\"internal-error\" fault_rule=\"{rule_id}\""
                )),
                "{}",
                lines[2]
            );
            assert!(!lines[3].contains("fault"), "{}", lines[3]);
        } else {
            let field = |line: &str, name: &str| {
                let entry: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
                let fields = entry.get("fields").cloned().unwrap_or(entry);
                fields.get(name).cloned()
            };
            assert_eq!(field(lines[0], "fault"), Some("commit-then-error".into()));
            assert_eq!(field(lines[2], "fault"), Some("internal-error".into()));
            assert_eq!(field(lines[2], "fault_rule"), Some(rule_id.clone().into()));
            assert_eq!(field(lines[3], "fault"), None, "{}", lines[3]);
        }
    }
}
