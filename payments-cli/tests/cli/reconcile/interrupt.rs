//! Ctrl-C, SIGTERM or SIGHUP during a run: the rows judged are kept
//! whole, stderr says so, and the exit code is a shell's for the signal.

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Command as StdCommand, Stdio};
use std::time::Duration;

use crate::common::{MERCHANT, Sandbox};

/// Ctrl-C killed the process (no code, stderr empty) with `FILE.partial`
/// cut mid-row. The ledger comes on a pipe kept open, so the run is
/// mid-way for sure when its rows are out; then a real SIGINT.
#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_keeps_the_rows_judged_whole_says_so_and_exits_130() {
    stopped_by("INT", 130, "Ctrl-C (SIGINT)").await;
}

/// SIGHUP (the terminal closed) killed the run mid-row, as SIGINT did
/// before it was taken; SIGTERM (`docker stop`) is taken alike.
#[tokio::test(flavor = "multi_thread")]
async fn sighup_and_sigterm_stop_the_run_as_ctrl_c_does() {
    stopped_by("HUP", 129, "SIGHUP").await;
    stopped_by("TERM", 143, "SIGTERM").await;
}

/// A run of two rows on a pipe kept open, then `kill -SIGNAL`: its exit
/// `code`, stderr naming it as `named`, the rows judged whole.
async fn stopped_by(signal: &str, code: i32, named: &str) {
    let (server, _) = super::shop().await;
    let sandbox = Sandbox::new();
    let report = sandbox.write_file("rep.csv", "old\n");
    let mut child = StdCommand::new(env!("CARGO_BIN_EXE_payments"))
        .env_clear()
        .env("XDG_CONFIG_HOME", sandbox.path())
        .env("HOME", sandbox.path())
        .env("NO_COLOR", "1")
        .args(["--base-url", &server.base_url(), "--merchant-id", MERCHANT])
        .args(["-o", "json", "reconcile", "-", "--report"])
        .arg(&report)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("payments starts");
    let mut stdin = child.stdin.take().expect("piped");
    stdin
        .write_all(b"referenceNo,amount\nINV-1001,49.90\nINV-1006,20.00\n")
        .expect("rows written");
    stdin.flush().expect("flushed");
    let out = child.stdout.take().expect("piped");
    let pid = child.id().to_string();
    let lines = tokio::task::spawn_blocking(move || {
        let mut lines = BufReader::new(out).lines();
        let first = lines.next().and_then(Result::ok);
        let second = lines.next().and_then(Result::ok);
        (first, second, lines)
    });
    let (first, second, rest) = tokio::time::timeout(Duration::from_secs(20), lines)
        .await
        .expect("two rows within 20 s")
        .expect("the reader ran");
    assert!(first.is_some_and(|l| l.contains("\"line\":2")));
    assert!(second.is_some_and(|l| l.contains("\"line\":3")));
    let sent = StdCommand::new("kill")
        .args([&format!("-{signal}"), &pid])
        .status()
        .expect("kill runs");
    assert!(sent.success());
    let waited = tokio::task::spawn_blocking(move || {
        let rest: Vec<String> = rest.map_while(Result::ok).collect();
        let output = child.wait_with_output().expect("an exit status");
        drop(stdin);
        (output, rest)
    });
    let (output, rest) = tokio::time::timeout(Duration::from_secs(20), waited)
        .await
        .expect("exits within 20 s")
        .expect("the wait ran");
    let err = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(code), "{err}");
    assert!(err.contains(&format!("interrupted by {named}")), "{err}");
    assert!(err.contains("rep.csv.partial"), "{err}");
    assert!(
        rest.iter().any(|l| l.contains("\"complete\":false")),
        "{rest:?}"
    );
    assert_eq!(std::fs::read_to_string(&report).expect("kept"), "old\n");
    let partial = std::fs::read_to_string(sandbox.path().join("rep.csv.partial")).expect("rows");
    let rows: Vec<&str> = partial.lines().collect();
    assert_eq!(rows.len(), 3, "{partial}");
    assert!(rows[1].starts_with("2,INV-1001,match,"), "{partial}");
    assert!(rows[2].starts_with("3,INV-1006,match,"), "{partial}");
}
