//! A stream named by several outputs: `/dev/null` (a character device)
//! given to `--record`, `--report`, `--junit` and `--sarif` at once was
//! refused as "the same file". A stream keeps nothing one output's write
//! could replace or mix into a file, so any number of flags may name it;
//! `/dev/stdout` too, a terminal or a pipe (the outputs interleave there,
//! the user's choice). A file named by two is still refused.

use std::process::{Command, Stdio};
use std::sync::mpsc;

use payments_mock_server::MockServer;

use crate::common::{BIN, LIMIT, UNSET, initiate, record_one, run, spawn_within, stop};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dev_null_may_be_named_by_every_output() {
    let mock = MockServer::start().await;
    let null = "/dev/null";
    let (proxy, base) = spawn_within(&[
        "--upstream",
        &mock.base_url(),
        "--port",
        "0",
        "--record",
        null,
        "--report",
        null,
        "--junit",
        null,
        "--sarif",
        null,
    ])
    .expect("the banner, not 'the same file'");
    assert_eq!(initiate(&base, "NULL-1").await, 200);
    let (code, stderr) = stop(proxy).expect("stops");
    assert_eq!(code, Some(0), "{stderr}");

    let dir = tempfile::tempdir().expect("a directory");
    let recording = dir.path().join("rec.jsonl");
    record_one(&mock, &recording).await;
    let recording = recording.display().to_string();
    let (code, stderr) =
        run(&["check", &recording, "--junit", null, "--sarif", null]).expect("ends");
    assert_eq!(code, Some(0), "{stderr}");
    // A file named by two outputs is still refused.
    let xml = dir.path().join("out.xml").display().to_string();
    let (code, stderr) =
        run(&["check", &recording, "--junit", &xml, "--sarif", &xml]).expect("ends");
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("are the same file"), "{stderr}");
}

/// `check --junit /dev/stdout --sarif /dev/stdout` with stdout a pipe:
/// the summary, then the JUnit, then the SARIF, on the one stdout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dev_stdout_a_pipe_may_be_named_by_two_outputs() {
    let mock = MockServer::start().await;
    let dir = tempfile::tempdir().expect("a directory");
    let recording = dir.path().join("rec.jsonl");
    record_one(&mock, &recording).await;
    let mut command = Command::new(BIN);
    command
        .args(["check", &recording.display().to_string()])
        .args(["--junit", "/dev/stdout", "--sarif", "/dev/stdout"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for variable in UNSET {
        command.env_remove(variable);
    }
    let child = command.spawn().expect("spawns");
    let id = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let Ok(output) = rx.recv_timeout(LIMIT) else {
        let _ = Command::new("kill")
            .args(["-KILL", &id.to_string()])
            .status();
        panic!("check did not end");
    };
    let output = output.expect("its output");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let junit = stdout.find("<testsuites").expect("the JUnit");
    let sarif = stdout.find("\"$schema\"").expect("the SARIF");
    assert!(junit < sarif, "{stdout}");
}
