//! `payments tail --follow`: the child process and its stdout line by
//! line, what comes later, filters read past, Ctrl-C (exit 0) and a
//! server that goes away (exit 4).

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command as StdCommand, Stdio};
use std::time::Duration;
use tokio::sync::mpsc;

use serde_json::Value;

pub(super) use crate::common::exit_of;
use crate::common::{MERCHANT, Sandbox};

use super::{ADMIN, KEY_A, initiate, mock, read_unknown};

/// The child's stdout, line by line, as it comes.
pub(super) fn line_reader(child: &mut Child) -> mpsc::UnboundedReceiver<String> {
    let out = child.stdout.take().expect("stdout is piped");
    let (send, receive) = mpsc::unbounded_channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines() {
            let Ok(line) = line else { break };
            if send.send(line).is_err() {
                break;
            }
        }
    });
    receive
}

/// The next line, within 20 s (awaited as it comes, no polling).
pub(super) async fn next_line(lines: &mut mpsc::UnboundedReceiver<String>) -> String {
    match tokio::time::timeout(Duration::from_secs(20), lines.recv()).await {
        Ok(Some(line)) => line,
        Ok(None) => panic!("stdout closed"),
        Err(_) => panic!("no line in 20 s"),
    }
}

/// `payments tail --follow` as a child process, its stdout piped.
pub(super) fn follow(sandbox: &Sandbox, base: &str, key: &str, args: &[&str]) -> Child {
    follow_every(sandbox, base, key, "0.05", args)
}

/// [`follow`], polling every `seconds`.
pub(super) fn follow_every(
    sandbox: &Sandbox,
    base: &str,
    key: &str,
    seconds: &str,
    args: &[&str],
) -> Child {
    StdCommand::new(env!("CARGO_BIN_EXE_payments"))
        .env_clear()
        .env("XDG_CONFIG_HOME", sandbox.path())
        .env("HOME", sandbox.path())
        .env("NO_COLOR", "1")
        .args([
            "--base-url",
            base,
            "--api-key",
            key,
            "-o",
            "json",
            "--retries",
            "1",
        ])
        .args(["tail", "--follow", "--poll-interval", seconds])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("payments starts")
}

/// Ctrl-C to `child`, as a terminal would send it.
pub(super) fn interrupt(child: &Child) {
    let sent = StdCommand::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(sent.success());
}

#[tokio::test(flavor = "multi_thread")]
async fn follow_prints_what_comes_later_and_ctrl_c_exits_0() {
    let server = mock().await;
    let base = server.base_url();
    initiate(&base, KEY_A, MERCHANT, "BEFORE-1").await;
    let sandbox = Sandbox::new();
    let mut child = follow(&sandbox, &base, ADMIN, &[]);
    let mut lines = line_reader(&mut child);
    let first: Value = serde_json::from_str(&next_line(&mut lines).await).expect("JSON");
    assert!(
        first["body"]
            .as_str()
            .is_some_and(|b| b.contains("BEFORE-1")),
        "{first}"
    );

    // Made after tail started: printed by a later poll.
    initiate(&base, KEY_A, MERCHANT, "AFTER-1").await;
    let later: Value = serde_json::from_str(&next_line(&mut lines).await).expect("JSON");
    assert_eq!(later["seq"], 2);
    assert!(
        later["body"]
            .as_str()
            .is_some_and(|b| b.contains("AFTER-1")),
        "{later}"
    );

    interrupt(&child);
    let (code, err) = exit_of(child).await;
    assert_eq!(code, Some(0), "Ctrl-C exits 0: {err}");
    assert!(!err.contains("error"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn follow_with_filters_reads_on_past_what_they_leave_out() {
    let server = mock().await;
    let base = server.base_url();
    let sandbox = Sandbox::new();
    let mut child = follow(&sandbox, &base, ADMIN, &["--status", "404"]);
    let mut lines = line_reader(&mut child);
    // Entries it leaves out, then one it shows.
    initiate(&base, KEY_A, MERCHANT, "F-1").await;
    initiate(&base, KEY_A, MERCHANT, "F-2").await;
    read_unknown(&base).await;
    let shown: Value = serde_json::from_str(&next_line(&mut lines).await).expect("JSON");
    assert_eq!(
        (shown["seq"].as_u64(), shown["status"].as_u64()),
        (Some(3), Some(404))
    );
    let _ = StdCommand::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    assert_eq!(exit_of(child).await.0, Some(0));
}

#[tokio::test(flavor = "multi_thread")]
async fn follow_says_when_the_server_goes_away_and_exits_4() {
    let server = mock().await;
    let base = server.base_url();
    initiate(&base, KEY_A, MERCHANT, "GONE-1").await;
    let sandbox = Sandbox::new();
    let mut child = follow(&sandbox, &base, ADMIN, &[]);
    let mut lines = line_reader(&mut child);
    next_line(&mut lines).await;
    server.shutdown().await;
    let (code, err) = exit_of(child).await;
    assert_eq!(code, Some(4), "{err}");
    assert!(
        err.contains("tail stopped: the mock's journal at http://127.0.0.1:"),
        "{err}"
    );
    assert!(err.contains("stopped answering"), "{err}");
    assert!(err.contains("(the last entry read: seq 1)"), "{err}");
    assert!(!err.contains(ADMIN), "{err}");
}

/// SIGTERM (`docker stop`, Kubernetes) and SIGHUP end `--follow` as
/// Ctrl-C does: exit 0, the lines printed whole. SIGTERM killed it (143)
/// mid-page, and as a container's PID 1 was ignored.
#[tokio::test(flavor = "multi_thread")]
async fn sigterm_and_sighup_end_follow_as_ctrl_c_does() {
    let server = mock().await;
    let base = server.base_url();
    initiate(&base, KEY_A, MERCHANT, "SIG-1").await;
    for signal in ["-TERM", "-HUP"] {
        let sandbox = Sandbox::new();
        let mut child = follow(&sandbox, &base, ADMIN, &[]);
        let mut lines = line_reader(&mut child);
        let first: Value = serde_json::from_str(&next_line(&mut lines).await).expect("JSON");
        assert_eq!(first["seq"], 1, "{first}");
        let sent = StdCommand::new("kill")
            .args([signal, &child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(sent.success());
        let (code, err) = exit_of(child).await;
        assert_eq!(code, Some(0), "{signal} exits 0: {err}");
        assert!(!err.contains("error"), "{err}");
        // Whatever else was printed is whole lines of JSON.
        while let Some(line) = lines.recv().await {
            serde_json::from_str::<Value>(&line).expect("a whole line");
        }
    }
}
