//! A stderr that cannot be written (`2>&1 >/dev/null | head -1` once the
//! reader is gone, `2>/dev/full`) loses its lines, never the run's exit
//! code: `eprintln!` panicked there, exit 101.

use std::process::{Command as StdCommand, Stdio};

use payments_mock_server::MockServer;

use crate::common::{MERCHANT, Sandbox};

const UNKNOWN: &str = "01937e1c-0000-7000-8000-00000000e3e3";
const ADMIN: &str = "adm_stderr_3c1f0e";

/// `payments ARGS…` with stderr a pipe whose reader is already closed (each
/// write to it fails, EPIPE), stdout discarded: its exit code.
async fn code_with_stderr_closed(sandbox: &Sandbox, args: &[&str]) -> Option<i32> {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let mut cmd = StdCommand::new(env!("CARGO_BIN_EXE_payments"));
    cmd.env_clear()
        .env("XDG_CONFIG_HOME", sandbox.path())
        .env("HOME", sandbox.path())
        .env("NO_COLOR", "1")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(writer);
    let status = tokio::task::spawn_blocking(move || cmd.status())
        .await
        .expect("the runner does not panic")
        .expect("payments runs");
    status.code()
}

#[tokio::test(flavor = "multi_thread")]
async fn status_keeps_its_exit_codes_when_stderr_is_closed() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let base = server.base_url();
    // One id not found: its error line on stderr, exit 3.
    let one = ["--base-url", &base, "-o", "table", "status", UNKNOWN];
    assert_eq!(code_with_stderr_closed(&sandbox, &one).await, Some(3));
    // Many from a file: each error line and the count of failures.
    let ids = sandbox.write_file("ids.txt", &format!("{UNKNOWN}\n{UNKNOWN}\n"));
    let ids = ids.to_str().expect("a UTF-8 path");
    let many = ["--base-url", &base, "status", "--from-file", ids];
    assert_eq!(code_with_stderr_closed(&sandbox, &many).await, Some(3));
}

#[tokio::test(flavor = "multi_thread")]
async fn tail_with_nothing_to_show_exits_0_when_stderr_is_closed() {
    let server = MockServer::builder()
        .admin_key(ADMIN)
        .start()
        .await
        .expect("the mock starts");
    let sandbox = Sandbox::new();
    let base = server.base_url();
    let args = [
        "--base-url",
        &base,
        "--api-key",
        ADMIN,
        "--merchant-id",
        MERCHANT,
        "tail",
        "--status",
        "418",
    ];
    assert_eq!(code_with_stderr_closed(&sandbox, &args).await, Some(0));
}
