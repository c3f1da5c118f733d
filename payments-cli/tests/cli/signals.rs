//! SIGTERM (`docker stop`, Kubernetes) and SIGHUP end the commands that do
//! not take them themselves (`reconcile` and `tail --follow` do: their
//! modules) with the code a shell gives a program those signals stop: 143
//! and 129, as an exit code, so also as a container's PID 1, where a
//! signal without a handler is ignored and `docker stop` waited 10 s for
//! SIGKILL.

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command as StdCommand, Stdio};
use std::time::Duration;

use payments_mock_server::MockServer;

use crate::common::{Sandbox, exit_of, initiate};

/// `kill -SIGNAL` to `child`.
fn send(child: &Child, signal: &str) {
    let sent = StdCommand::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(sent.success());
}

/// `status --wait` on a transaction that stays pending, with `-v` so its
/// first call is seen on stderr (the handlers are in place before it).
#[tokio::test(flavor = "multi_thread")]
async fn sigterm_and_sighup_end_status_wait_with_143_and_129() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let base = server.base_url();
    let id = initiate(&sandbox, &base, "SIGNAL-1", "TOPUP").await;
    for (signal, code) in [("-TERM", 143), ("-HUP", 129)] {
        let mut child = StdCommand::new(env!("CARGO_BIN_EXE_payments"))
            .env_clear()
            .env("XDG_CONFIG_HOME", sandbox.path())
            .env("HOME", sandbox.path())
            .env("NO_COLOR", "1")
            .args(["--base-url", &base, "-v", "-o", "json", "status", &id])
            .args(["--wait", "--wait-timeout", "600"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("payments starts");
        let err = child.stderr.take().expect("piped");
        let called = tokio::task::spawn_blocking(move || {
            let mut lines = BufReader::new(err).lines();
            let seen = lines
                .by_ref()
                .map_while(Result::ok)
                .any(|line| line.starts_with("> GET "));
            (seen, lines)
        });
        let (seen, rest) = tokio::time::timeout(Duration::from_secs(20), called)
            .await
            .expect("a call within 20 s")
            .expect("the reader ran");
        assert!(seen, "a call was made");
        send(&child, signal);
        let rest = tokio::task::spawn_blocking(move || {
            rest.map_while(Result::ok).collect::<Vec<_>>().join("\n")
        });
        let (exit, _) = exit_of(child).await;
        let rest = rest.await.expect("the reader ran");
        assert_eq!(exit, Some(code), "{signal}: {rest}");
    }
}

/// A command blocked reading stdin (`status --from-file -` waits for its
/// end first) ends too: the handler is not the command's runtime, which
/// the read holds.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread")]
async fn sigterm_ends_a_command_blocked_reading_stdin() {
    let sandbox = Sandbox::new();
    let mut child = StdCommand::new(env!("CARGO_BIN_EXE_payments"))
        .env_clear()
        .env("XDG_CONFIG_HOME", sandbox.path())
        .env("HOME", sandbox.path())
        .args([
            "--base-url",
            "http://127.0.0.1:9",
            "status",
            "--from-file",
            "-",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("payments starts");
    let stdin = child.stdin.take().expect("piped");
    // SIGTERM caught: bit 15 of SigCgt in /proc/PID/status.
    let caught = format!("/proc/{}/status", child.id());
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let status = std::fs::read_to_string(&caught).unwrap_or_default();
        let mask = status
            .lines()
            .find_map(|line| line.strip_prefix("SigCgt:"))
            .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
            .unwrap_or(0);
        if mask & (1 << (15 - 1)) != 0 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no SIGTERM handler in 20 s"
        );
        tokio::task::yield_now().await;
    }
    send(&child, "-TERM");
    let (exit, err) = exit_of(child).await;
    drop(stdin);
    assert_eq!(exit, Some(143), "{err}");
}
