//! SIGHUP (a closed terminal or SSH session, logrotate's `kill -HUP`)
//! stops the proxy as SIGTERM does: its summary said and its `--junit`
//! and `--sarif` files written, not the run lost to the signal's default.

use std::process::Command;

// The binary started, its banner read: as the mock's `proxy` alias is in
// its tests.
#[path = "../../payments-mock-server-cli/tests/proxy/process.rs"]
mod process;

const BIN: &str = env!("CARGO_BIN_EXE_payments-contract-proxy");
const UNSET: [&str; 2] = ["PAYMENTS_PROXY_ADMIN_KEY", "PAYMENTS_MOCK_ADMIN_KEY"];

/// The proxy with `--junit` and `--sarif` in `dir`, its banner read.
fn spawn(dir: &std::path::Path) -> std::process::Child {
    let junit = dir.join("proxy.xml").display().to_string();
    let sarif = dir.join("proxy.sarif").display().to_string();
    // No exchange goes through: an upstream nothing listens on will do.
    let (child, _base) = process::spawn_listening(&mut process::command(
        BIN,
        &[
            "--upstream",
            "http://127.0.0.1:9",
            "--port",
            "0",
            "--junit",
            &junit,
            "--sarif",
            &sarif,
        ],
        &UNSET,
        &[],
    ));
    child
}

/// The summary said and both files written, in `dir`.
fn evidence_in(dir: &std::path::Path, stderr: &str) {
    assert!(stderr.contains("contract check: 0 exchanges"), "{stderr}");
    let junit = std::fs::read_to_string(dir.join("proxy.xml")).expect("the JUnit file");
    assert!(junit.contains("<testsuites"), "{junit}");
    assert!(dir.join("proxy.sarif").exists(), "{stderr}");
}

#[test]
fn sighup_writes_the_evidence_as_sigterm_does() {
    let hup = tempfile::tempdir().expect("a directory");
    let child = spawn(hup.path());
    let _ = Command::new("kill")
        .args(["-HUP", &child.id().to_string()])
        .status();
    let output = child.wait_with_output().expect("exits");
    let stderr = String::from_utf8_lossy(&output.stderr);
    evidence_in(hup.path(), &stderr);

    let term = tempfile::tempdir().expect("a directory");
    let (code, term_stderr) = process::stop(spawn(term.path()));
    evidence_in(term.path(), &term_stderr);
    assert_eq!(output.status.code(), code, "{stderr}");
    assert_eq!(code, Some(0), "{term_stderr}");
}
