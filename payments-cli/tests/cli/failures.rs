//! Unreachable services, service errors and answers that are not the
//! envelope: exit 4 with a message that says what to do.

use std::time::Duration;

use payments_mock_server::{Fault, MockServer};
use predicates::str::contains;
use tokio::{
    io::{AsyncReadExt as _, AsyncWriteExt as _},
    net::TcpListener,
};

use crate::common::{
    Sandbox, closed_port_url, initiate_command, run, snapshot_settings, stderr, stdout,
};

/// Stdout of a successful command: the one line, and the envelope it holds.
fn envelope_of(assert: &assert_cmd::assert::Assert) -> (String, serde_json::Value) {
    let line = stdout(assert);
    let envelope = serde_json::from_str(line.trim()).expect("one JSON line");
    (line, envelope)
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unreachable_service_exits_4_naming_the_url_and_how_to_change_it() {
    let sandbox = Sandbox::new();
    let url = closed_port_url();
    let mut cmd = sandbox.payments();
    cmd.args(["--base-url", &url, "--retries", "1", "status", "abc"]);
    let assert = run(cmd).await.code(4);
    let err = stderr(&assert);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(&url), "{err}");
    // Where the URL came from: the flag here (hints.rs has the others).
    assert!(err.contains("the URL comes from --base-url"), "{err}");
    assert!(err.contains("request id"), "{err}");
    assert_eq!(stdout(&assert), "");
}

/// A server that answers every request like a proxy in trouble.
async fn html_server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("loopback");
    let addr = listener.local_addr().expect("bound");
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = vec![0u8; 8192];
                let mut seen = Vec::new();
                while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                    match socket.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => seen.extend_from_slice(&buf[..n]),
                    }
                }
                let body = "<html><body><h1>502 Bad Gateway</h1></body></html>";
                let response = format!(
                    "HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/html\r\n\
                     content-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(response.as_bytes()).await;
                let _ = socket.shutdown().await;
            });
        }
    });
    format!("http://{addr}")
}

#[tokio::test(flavor = "multi_thread")]
async fn an_html_answer_exits_4_with_a_readable_message() {
    let url = html_server().await;
    let sandbox = Sandbox::new();
    let mut cmd = sandbox.payments();
    cmd.args(["--base-url", &url, "--retries", "0", "status", "abc"]);
    let assert = run(cmd).await.code(4);
    let err = stderr(&assert);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("HTTP 502") && err.contains("text/html"),
        "{err}"
    );
    assert!(
        !err.contains("<html>"),
        "no markup dumped on the user: {err}"
    );
    snapshot_settings().bind(|| insta::assert_snapshot!("html_answer_stderr", err));
}

#[tokio::test(flavor = "multi_thread")]
async fn server_errors_exit_4_after_the_retries() {
    let server = MockServer::start().await;
    server.inject_faults([
        Fault::InternalError,
        Fault::InternalError,
        Fault::InternalError,
    ]);
    let sandbox = Sandbox::new();
    let mut cmd = sandbox.payments();
    cmd.args([
        "--base-url",
        &server.base_url(),
        "--retries",
        "2",
        "status",
        "abc",
    ]);
    let assert = run(cmd).await.code(4);
    assert!(
        stdout(&assert).contains("INTERNAL_ERROR"),
        "json shows the last envelope"
    );
    assert!(stderr(&assert).contains("INTERNAL_ERROR"));
    assert_eq!(
        server.requests().await.len(),
        3,
        "one attempt and two retries"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_retry_gets_through_a_passing_fault() {
    let server = MockServer::start().await;
    server.inject_faults([Fault::Reset]);
    let sandbox = Sandbox::new();
    let mut cmd = sandbox.payments();
    cmd.args(["--base-url", &server.base_url(), "status", "abc"]);
    run(cmd).await.code(3);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_slow_service_times_out_with_exit_4() {
    let server = MockServer::start().await;
    server.inject_faults([Fault::Delay(Duration::from_secs(5))]);
    let sandbox = Sandbox::new();
    let mut cmd = sandbox.payments();
    cmd.args([
        "--base-url",
        &server.base_url(),
        "--timeout",
        "0.2",
        "--retries",
        "0",
    ])
    .args(["status", "abc"]);
    run(cmd).await.code(4).stderr(contains("timed out"));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_invalid_base_url_is_a_usage_error() {
    let sandbox = Sandbox::new();
    let mut cmd = sandbox.payments();
    cmd.args(["--base-url", "not a url", "status", "abc"]);
    run(cmd).await.code(2).stderr(contains("not a url"));
}

/// Before: the client's reason lost every `e` (`--base-url e`: `invalid
/// bas… URL …: r…lativ… URL…`), or had `…` between all its letters
/// (`--base-url ""`): only the URL as quoted is taken out, once.
#[tokio::test(flavor = "multi_thread")]
async fn a_short_or_empty_base_url_leaves_the_reason_whole() {
    let sandbox = Sandbox::new();
    let mut transcript = String::new();
    for url in ["e", "", " ", "not a url"] {
        let mut cmd = sandbox.payments();
        cmd.args(["--base-url", url, "status", "abc"]);
        let assert = run(cmd).await.code(2);
        let err = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
        transcript.push_str(&format!("## --base-url {url:?}\n{err}\n"));
    }
    crate::common::snapshot_settings()
        .bind(|| insta::assert_snapshot!("failures_short_base_url", transcript));
}

#[test]
fn a_closed_stdout_stops_quietly_with_141() {
    // `payments completions bash | head -c0`: the reader goes away early.
    // No message (nothing is wrong with the command), but no 0 either: the
    // output was not all written (as a program stopped by SIGPIPE: 141).
    // The reading end is closed before the binary starts: closed after,
    // it raced the first write, which a pipe's buffer then took whole
    // (exit 0 once the binary started faster).
    let sandbox = Sandbox::new();
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_payments"))
        .env_clear()
        .env("XDG_CONFIG_HOME", sandbox.path())
        .args(["completions", "bash"])
        .stdout(writer)
        .stderr(std::process::Stdio::piped())
        .output()
        .expect("the binary runs");
    assert_eq!(output.status.code(), Some(141), "{output:?}");
    assert!(output.stderr.is_empty(), "{output:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn rate_limiting_that_outlasts_the_retries_exits_4() {
    let server = MockServer::start().await;
    server.inject_faults([Fault::RateLimit, Fault::RateLimit]);
    let sandbox = Sandbox::new();
    let mut cmd = sandbox.payments();
    cmd.args([
        "--base-url",
        &server.base_url(),
        "--retries",
        "1",
        "status",
        "abc",
    ]);
    run(cmd).await.code(4).stderr(contains("RATE_LIMITED"));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_initiate_whose_answer_was_lost_is_reconciled_not_doubled() {
    let server = MockServer::start().await;
    server.inject_faults([Fault::CommitThenError]);
    let sandbox = Sandbox::new();
    let mut cmd = initiate_command(&sandbox, &server.base_url(), "LOST-1", "5", "TOPUP", "P");
    cmd.args(["-o", "table"]);
    run(cmd)
        .await
        .success()
        .stdout(contains("LOST-1"))
        .stderr(contains("created once"));
    assert_eq!(server.transactions().await.len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reconciled_initiate_prints_an_initiate_shaped_envelope_in_json() {
    let server = MockServer::start().await;
    server.inject_faults([Fault::CommitThenError]);
    let sandbox = Sandbox::new();
    let mut cmd = initiate_command(
        &sandbox,
        &server.base_url(),
        "LOST-2",
        "150.00",
        "TOPUP",
        "P",
    );
    cmd.args(["-o", "json"]);
    let assert = run(cmd).await.success();
    let (line, envelope) = envelope_of(&assert);
    assert_eq!(envelope["isSuccess"], true, "{line}");
    // Minor units and the currency, as an initiate answer has them; not the
    // status read-back's major-unit amount.
    assert_eq!(envelope["data"]["amount"].to_string(), "15000", "{line}");
    assert_eq!(envelope["data"]["currencyCode"], "MYR", "{line}");
    assert!(
        envelope["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("reconciled")),
        "{line}"
    );
    // Marked as made by the CLI, not received, and said on stderr too.
    assert_eq!(envelope["reconciled"], true, "{line}");
    assert!(
        stderr(&assert).contains("it was created once"),
        "{}",
        stderr(&assert)
    );
    assert_eq!(server.transactions().await.len(), 1);
}

/// A confirm whose answer was lost: the retry finds it already confirmed,
/// the CLI reads it back; in JSON the envelope is marked as the CLI's
/// (`"reconciled": true`) and stderr says it was confirmed once.
#[tokio::test(flavor = "multi_thread")]
async fn a_reconciled_confirm_is_marked_in_json_and_noted_on_stderr() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let base = server.base_url();
    let mut cmd = initiate_command(&sandbox, &base, "LOST-3", "5", "TOPUP", "P");
    cmd.args(["-o", "json"]);
    let (_, initiated) = envelope_of(&run(cmd).await.success());
    let id = initiated["data"]["transactionId"]
        .as_str()
        .expect("an id")
        .to_owned();
    server.inject_faults([Fault::CommitThenError]);
    let mut cmd = sandbox.payments();
    cmd.args(["--base-url", &base, "-o", "json", "confirm", &id])
        .args(["--reference-no", "LOST-3"]);
    let assert = run(cmd).await.success();
    let (line, envelope) = envelope_of(&assert);
    assert_eq!(envelope["isSuccess"], true, "{line}");
    assert_eq!(envelope["reconciled"], true, "{line}");
    assert_eq!(envelope["data"]["transactionId"], id.as_str(), "{line}");
    let err = stderr(&assert);
    assert!(err.contains("it was confirmed once"), "{err}");
}
