//! `--report FILE`: what FILE may be, and what is left of it; and the
//! table's temporary file.

use std::{
    os::unix::fs::{FileTypeExt as _, PermissionsExt as _},
    path::Path,
    process::{Command as StdCommand, Stdio},
};

use payments_mock_server::MockServer;

use crate::common::{MERCHANT, Sandbox, run};

/// `payments` with an environment of `sandbox`'s only (no colours).
fn payments(sandbox: &Sandbox) -> StdCommand {
    let mut cmd = StdCommand::new(env!("CARGO_BIN_EXE_payments"));
    cmd.env_clear()
        .env("XDG_CONFIG_HOME", sandbox.path())
        .env("HOME", sandbox.path())
        .env("NO_COLOR", "1");
    cmd
}

/// `/dev/full`, to be a standard output or error that cannot be written.
fn dev_full() -> Stdio {
    Stdio::from(
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full"),
    )
}

/// `payments reconcile - --report REPORT` with `stdin` as its standard
/// input (a file, as a shell's `<` gives it): its code and stderr.
async fn reconcile_stdin(
    sandbox: &Sandbox,
    server: &MockServer,
    stdin: &std::path::Path,
    report: &std::path::Path,
) -> (Option<i32>, String) {
    let mut cmd = payments(sandbox);
    cmd.args(["--base-url", &server.base_url(), "--merchant-id", MERCHANT])
        .args(["reconcile", "-", "--report"])
        .arg(report)
        .stdin(Stdio::from(std::fs::File::open(stdin).expect("the ledger")))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let output = tokio::task::spawn_blocking(move || cmd.output())
        .await
        .expect("the runner does not panic")
        .expect("payments runs");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// `reconcile - --report shop.csv < shop.csv` replaced the shop's ledger
/// with the report, where `reconcile shop.csv --report shop.csv` is
/// refused: the file behind standard input is the ledger too.
#[tokio::test(flavor = "multi_thread")]
async fn a_report_never_overwrites_the_ledger_on_standard_input() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let contents = "referenceNo,amount\nR1,1.00\n";
    let ledger = sandbox.write_file("shop.csv", contents);
    let (code, err) = reconcile_stdin(&sandbox, &server, &ledger, &ledger).await;
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("that is the ledger itself"), "{err}");
    assert_eq!(
        std::fs::read_to_string(&ledger).expect("still there"),
        contents
    );
    // Through another path, and as the partial file.
    let partial = sandbox.write_file("other.csv.partial", "x");
    std::fs::remove_file(&partial).expect("removed");
    std::fs::hard_link(&ledger, &partial).expect("a hard link");
    let other = sandbox.path().join("other.csv");
    let (code, err) = reconcile_stdin(&sandbox, &server, &ledger, &other).await;
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(
        std::fs::read_to_string(&ledger).expect("still there"),
        contents
    );
}

/// `payments reconcile LEDGER --report REPORT`: its code and stderr.
async fn reconcile_to(
    sandbox: &Sandbox,
    server: &MockServer,
    ledger: &Path,
    report: &Path,
) -> (Option<i32>, String) {
    let mut cmd = super::reconcile(sandbox, server, ledger);
    cmd.arg("--report").arg(report);
    let assert = run(cmd).await;
    let output = assert.get_output();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// `--report FILE` replaced whatever FILE was with a regular file (a
/// reviewer replaced /dev/full), a symbolic link instead of writing where
/// it points, and a 0600 report came back 0644. A device, pipe or socket
/// is refused before any look-up; a link is followed; FILE's permissions
/// are kept.
#[tokio::test(flavor = "multi_thread")]
async fn a_report_keeps_what_file_is_a_link_and_its_permissions() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let ledger = sandbox.write_file("ledger.csv", "referenceNo,amount\nR1,1.00\n");

    let fifo = sandbox.path().join("fifo");
    let made = StdCommand::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    let (code, err) = reconcile_to(&sandbox, &server, &ledger, &fifo).await;
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("not a regular file"), "{err}");
    let kind = std::fs::symlink_metadata(&fifo)
        .expect("still there")
        .file_type();
    assert!(kind.is_fifo(), "{kind:?}");
    assert!(!sandbox.path().join("fifo.partial").exists());

    let target = sandbox.write_file("target.csv", "old\n");
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    let link = sandbox.path().join("link.csv");
    std::os::unix::fs::symlink("target.csv", &link).expect("a link");
    let (code, err) = reconcile_to(&sandbox, &server, &ledger, &link).await;
    assert_eq!(code, Some(6), "{err}");
    assert!(
        std::fs::symlink_metadata(&link)
            .expect("the link")
            .file_type()
            .is_symlink(),
        "the link stays a link"
    );
    let report = std::fs::read_to_string(&target).expect("the report");
    assert!(report.starts_with("line,referenceNo,class"), "{report}");
    let mode = std::fs::metadata(&target)
        .expect("the report")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "{mode:o}");
}

/// `--report adir` failed only at the end, after every row was looked up
/// (hours on a big ledger), leaving `adir.partial` unmentioned: a
/// directory is refused before the first look-up.
#[tokio::test(flavor = "multi_thread")]
async fn a_report_naming_a_directory_is_refused_before_any_look_up() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let ledger = sandbox.write_file("ledger.csv", "referenceNo,amount\nR1,1.00\n");
    let directory = sandbox.path().join("adir");
    std::fs::create_dir(&directory).expect("a directory");
    let (code, err) = reconcile_to(&sandbox, &server, &ledger, &directory).await;
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("it is a directory"), "{err}");
    assert!(!sandbox.path().join("adir.partial").exists(), "{err}");
}

/// `--report` errors printed the whole path raw: a 1,000-character path
/// made a 1,060-byte line, and an ESC in it reached the terminal. Like the
/// ledger's path (and, now, its header's errors), at most 200 bytes of it,
/// escaped.
#[tokio::test(flavor = "multi_thread")]
async fn a_long_path_with_escapes_is_cut_and_escaped_in_messages() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let ledger = sandbox.write_file("ledger.csv", "referenceNo,amount\nR1,1.00\n");
    let long = format!("\u{1b}[31m{}", "d".repeat(250));
    let report = sandbox.path().join("missing").join(long.repeat(4));
    let (code, err) = reconcile_to(&sandbox, &server, &ledger, &report).await;
    assert_eq!(code, Some(2), "{err}");
    assert!(!err.contains('\u{1b}'), "{err}");
    assert!(err.len() < 400, "{} bytes: {err}", err.len());
    // The ledger's own header error, on a path as long.
    let deep = sandbox.path().join(&long).join(&long).join(&long);
    std::fs::create_dir_all(&deep).expect("directories");
    let empty = deep.join("empty.csv");
    std::fs::write(&empty, "").expect("an empty ledger");
    let mut cmd = super::reconcile(&sandbox, &server, &empty);
    cmd.args(["-o", "json"]);
    let assert = run(cmd).await.code(2);
    let err = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(!err.contains('\u{1b}'), "{err}");
    assert!(err.len() < 400, "{} bytes: {err}", err.len());
}

/// `TMPDIR=/nonexistent payments -o table reconcile` exited 4, "cannot
/// write the output: No such file or directory": a local failure called
/// the service's, naming nothing. It is exit 2 and names the temporary
/// file and TMPDIR.
#[tokio::test(flavor = "multi_thread")]
async fn a_temporary_directory_that_is_not_there_is_named_and_exits_2() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let ledger = sandbox.write_file("ledger.csv", "referenceNo,amount\nR1,1.00\n");
    let mut cmd = super::reconcile(&sandbox, &server, &ledger);
    cmd.args(["-o", "table"])
        .env("TMPDIR", sandbox.path().join("nonexistent"));
    let assert = run(cmd).await.code(2);
    let err = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(err.contains("temporary file"), "{err}");
    assert!(err.contains("TMPDIR"), "{err}");
    assert!(err.contains("nonexistent"), "{err}");
}

/// `eprintln!` panicked (exit 101) when stderr could not be written
/// (`2>/dev/full`): a stopped run's notes are lost, its exit code is not.
#[tokio::test(flavor = "multi_thread")]
async fn a_full_stderr_loses_the_notes_not_the_exit_code() {
    let sandbox = Sandbox::new();
    let ledger = sandbox.write_file("ledger.csv", "referenceNo,amount\nINV-1,1.00\n");
    let report = sandbox.path().join("report.csv");
    let mut cmd = payments(&sandbox);
    cmd.args([
        "--base-url",
        &crate::common::closed_port_url(),
        "--retries",
        "0",
    ])
    .arg("reconcile")
    .arg(&ledger)
    .arg("--report")
    .arg(&report)
    .stdout(Stdio::null())
    .stderr(dev_full());
    let status = tokio::task::spawn_blocking(move || cmd.status())
        .await
        .expect("the runner does not panic")
        .expect("payments runs");
    assert_eq!(status.code(), Some(4));
    assert!(sandbox.path().join("report.csv.partial").exists());
}

/// `-o json` with a standard output that cannot be written (`>/dev/full`)
/// ended the run with exit 4 before the report was finished: the rows
/// judged stayed in `FILE.partial` without the note a stopped run gives.
/// Now it says where they are, and FILE is left as it was.
#[tokio::test(flavor = "multi_thread")]
async fn a_full_stdout_leaves_the_partial_report_and_says_so() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let ledger = sandbox.write_file("ledger.csv", "referenceNo,amount\nINV-1,1.00\n");
    let report = sandbox.write_file("report.csv", "the report before\n");
    let mut cmd = payments(&sandbox);
    cmd.args(["--base-url", &server.base_url(), "--merchant-id", MERCHANT])
        .args(["-o", "json", "reconcile"])
        .arg(&ledger)
        .arg("--report")
        .arg(&report)
        .stdout(dev_full())
        .stderr(Stdio::piped());
    let output = tokio::task::spawn_blocking(move || cmd.output())
        .await
        .expect("the runner does not panic")
        .expect("payments runs");
    let err = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(4), "{err}");
    assert!(err.contains("report.csv.partial"), "{err}");
    assert!(err.contains("is left as it was"), "{err}");
    assert_eq!(
        std::fs::read_to_string(&report).expect("the report"),
        "the report before\n"
    );
    assert!(sandbox.path().join("report.csv.partial").exists());
}
