//! A stdout closed at start (`payments status ID >&-`): exit 4 and one line
//! on stderr, as for one that cannot be written (`> /dev/full`). Rust's
//! runtime puts `/dev/null` there, where every write succeeds: each command
//! exited as if its output had been read (0, or reconcile's 6).

use std::process::{Command as StdCommand, Stdio};

use payments_mock_server::MockServer;

use crate::common::{MERCHANT, Sandbox, initiate};

const CLOSED: &str = "error: cannot write the output: stdout is closed\n";
const ADMIN: &str = "adm_stdout_5d2e7a";

/// `payments ARGS…` started by `sh` with `redirects` (`>&-`: stdout
/// closed, as a shell does it): its exit code and its stderr.
async fn run_with(sandbox: &Sandbox, redirects: &str, args: &[&str]) -> (Option<i32>, String) {
    let mut cmd = StdCommand::new("sh");
    cmd.env_clear()
        .env("XDG_CONFIG_HOME", sandbox.path())
        .env("HOME", sandbox.path())
        .env("NO_COLOR", "1")
        .arg("-c")
        .arg(format!(r#"exec "$0" "$@" {redirects}"#))
        .arg(env!("CARGO_BIN_EXE_payments"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let output = tokio::task::spawn_blocking(move || cmd.output())
        .await
        .expect("the runner does not panic")
        .expect("sh runs");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn every_command_exits_4_when_stdout_is_closed() {
    let server = MockServer::builder()
        .admin_key(ADMIN)
        .start()
        .await
        .expect("the mock starts");
    let base = server.base_url();
    let sandbox = Sandbox::new();
    let id = initiate(&sandbox, &base, "INV-STDOUT-1", "TOPUP").await;
    let ids = sandbox.write_file("ids.txt", &format!("{id}\n"));
    let ids = ids.to_str().expect("a UTF-8 path");
    let ledger = sandbox.write_file(
        "ledger.csv",
        "referenceNo,amount,currency,status\nINV-STDOUT-1,10.50,MYR,PAID\n",
    );
    let ledger = ledger.to_str().expect("a UTF-8 path");
    let service = ["--base-url", &base, "--merchant-id", MERCHANT];
    let journal = ["--base-url", &base, "--api-key", ADMIN, "tail"];
    for (args, written) in [
        (&[&service[..], &["status", &id]].concat(), 0),
        (&[&service[..], &["status", "--from-file", ids]].concat(), 0),
        (&[&service[..], &["reconcile", ledger]].concat(), 6),
        (&journal[..].to_vec(), 0),
        (&vec!["completions", "bash"], 0),
        (&vec!["--help"], 0),
    ] {
        let (code, err) = run_with(&sandbox, ">&-", args).await;
        assert_eq!((code, err.as_str()), (Some(4), CLOSED), "{args:?}");
        // Written somewhere, as before: its own exit code, nothing said.
        let (code, err) = run_with(&sandbox, "> /dev/null", args).await;
        assert_eq!((code, err.as_str()), (Some(written), ""), "{args:?}");
    }
    // A usage error is still one (its line goes to stderr).
    let (code, err) = run_with(&sandbox, ">&-", &["status", "--bogus"]).await;
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--bogus"), "{err}");
    // Stdout closed, stderr too: only the exit code says it.
    let (code, err) = run_with(&sandbox, ">&- 2>&-", &["completions", "bash"]).await;
    assert_eq!((code, err.as_str()), (Some(4), ""));
}

/// A daemon discards all three (daemon(3), start-stop-daemon: `/dev/null`
/// read-write on each): that is not a stdout closed.
#[tokio::test(flavor = "multi_thread")]
async fn a_daemons_dev_null_on_all_three_is_no_closed_stdout() {
    let sandbox = Sandbox::new();
    let (code, _) = run_with(
        &sandbox,
        "0<>/dev/null 1<>/dev/null 2<>/dev/null",
        &["completions", "bash"],
    )
    .await;
    assert_eq!(code, Some(0));
}

/// Before: `payments --help > /dev/full` exited 0 with nothing written,
/// and so did a help whose reader was gone. Help is the output: as any
/// command's (`completions bash > /dev/full`: 4; `| head`: 141).
#[tokio::test(flavor = "multi_thread")]
async fn help_that_cannot_be_written_is_not_exit_0() {
    let sandbox = Sandbox::new();
    for args in [
        &["--help"][..],
        &["status", "--help"],
        &["-h"],
        &["--version"],
        &["completions", "bash"],
    ] {
        let (code, err) = run_with(&sandbox, "> /dev/full", args).await;
        assert_eq!(code, Some(4), "{args:?}: {err}");
        assert!(
            err.starts_with("error: cannot write the output: ") && err.lines().count() == 1,
            "{args:?}: {err}"
        );
        // Control: written, exit 0 and nothing said.
        let (code, err) = run_with(&sandbox, "> /dev/null", args).await;
        assert_eq!((code, err.as_str()), (Some(0), ""), "{args:?}");
        // A reader gone before anything is written: 141, quietly.
        let (reader, writer) = std::io::pipe().expect("a pipe");
        drop(reader);
        let mut cmd = StdCommand::new(env!("CARGO_BIN_EXE_payments"));
        cmd.env_clear()
            .env("XDG_CONFIG_HOME", sandbox.path())
            .env("HOME", sandbox.path())
            .args(args)
            .stdin(Stdio::null())
            .stdout(writer)
            .stderr(Stdio::piped());
        let output = tokio::task::spawn_blocking(move || cmd.output())
            .await
            .expect("the runner does not panic")
            .expect("payments runs");
        assert_eq!(output.status.code(), Some(141), "{args:?}: {output:?}");
        assert!(output.stderr.is_empty(), "{args:?}: {output:?}");
    }
}

/// Before: `status --from-file - <&-` said `nothing to look up: the input
/// has no ids or references`, and `reconcile - <&-` called the ledger
/// empty: stdin closed is said as such (exit 2), as a closed stdout is.
#[tokio::test(flavor = "multi_thread")]
async fn a_closed_stdin_is_said_to_be_closed() {
    let sandbox = Sandbox::new();
    let base = crate::common::closed_port_url();
    let service = ["--base-url", base.as_str(), "--merchant-id", MERCHANT];
    for args in [
        [&service[..], &["status", "--from-file", "-"]].concat(),
        [&service[..], &["reconcile", "-"]].concat(),
    ] {
        // A closed stdin, and the read-write /dev/null the runtime puts in
        // its place (Python's subprocess.DEVNULL too): named both.
        for redirect in ["<&- > /dev/null", "<>/dev/null > /dev/null"] {
            let (code, err) = run_with(&sandbox, redirect, &args).await;
            assert_eq!(
                (code, err.as_str()),
                (
                    Some(2),
                    "error: cannot read standard input: it is closed, or /dev/null opened for writing too (nothing to read)\n"
                ),
                "{args:?} {redirect}"
            );
        }
        // Control: an empty stdin is still read as empty (status: nothing
        // to look up, exit 0; reconcile: a ledger without a header, exit 2).
        let (code, err) = run_with(&sandbox, "< /dev/null > /dev/null", &args).await;
        let empty = if args.contains(&"status") { 0 } else { 2 };
        assert_eq!(code, Some(empty), "{args:?}: {err}");
        assert!(!err.contains("closed"), "{args:?}: {err}");
    }
}
