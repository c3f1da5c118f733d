//! `--report FILE`: what FILE may be, and what is left of it.

use std::process::{Command as StdCommand, Stdio};

use payments_mock_server::MockServer;

use crate::common::{MERCHANT, Sandbox};

/// `payments reconcile - --report REPORT` with `stdin` as its standard
/// input (a file, as a shell's `<` gives it): its code and stderr.
async fn reconcile_stdin(
    sandbox: &Sandbox,
    server: &MockServer,
    stdin: &std::path::Path,
    report: &std::path::Path,
) -> (Option<i32>, String) {
    let mut cmd = StdCommand::new(env!("CARGO_BIN_EXE_payments"));
    cmd.env_clear()
        .env("XDG_CONFIG_HOME", sandbox.path())
        .env("HOME", sandbox.path())
        .env("NO_COLOR", "1")
        .args(["--base-url", &server.base_url(), "--merchant-id", MERCHANT])
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
