//! A FIFO named by `--junit` is never waited for: opening one for writing
//! waits until a process reads it, which held the proxy before its banner
//! and before it took its signals, unkillable by SIGTERM. Now one no
//! process reads fails the stop (2) at once; one a process reads gets
//! the file.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use payments_mock_server::MockServer;

use crate::common::{initiate, record_one, run, spawn_within, stop};

/// A FIFO made in `dir`.
fn fifo(dir: &Path) -> PathBuf {
    let path = dir.join("junit.fifo");
    let made = Command::new("mkfifo")
        .arg(&path)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_no_process_reads_is_never_waited_for() {
    let mock = MockServer::start().await;
    let dir = tempfile::tempdir().expect("a directory");
    let fifo = fifo(dir.path());
    let fifo = fifo.display().to_string();
    let (proxy, base) = spawn_within(&[
        "--upstream",
        &mock.base_url(),
        "--port",
        "0",
        "--junit",
        &fifo,
    ])
    .expect("the banner, not a wait for a reader of the FIFO");
    assert_eq!(initiate(&base, "FIFO-1").await, 200);
    let (code, stderr) = stop(proxy).expect("stops");
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("no process reads"), "{stderr}");

    let recording = dir.path().join("rec.jsonl");
    record_one(&mock, &recording).await;
    let (code, stderr) = run(&["check", &recording.display().to_string(), "--junit", &fifo])
        .expect("ends, not waiting for a reader of the FIFO");
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("cannot write the JUnit file {fifo}: "))
            && stderr.contains("no process reads"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_a_process_reads_gets_the_file() {
    let mock = MockServer::start().await;
    let dir = tempfile::tempdir().expect("a directory");
    let recording = dir.path().join("rec.jsonl");
    record_one(&mock, &recording).await;
    let fifo = fifo(dir.path());
    // Opened for reading and writing, which waits for no writer (Linux):
    // a reader there before `check` writes. The file is small, and fits
    // in the pipe.
    let mut reader = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&fifo)
        .expect("opened");
    let (code, stderr) = run(&[
        "check",
        &recording.display().to_string(),
        "--junit",
        &fifo.display().to_string(),
    ])
    .expect("ends");
    assert_eq!(code, Some(0), "{stderr}");
    let mut xml = Vec::new();
    let mut chunk = [0; 4096];
    while !xml.ends_with(b"</testsuites>\n") {
        let n = reader.read(&mut chunk).expect("read");
        assert!(n > 0, "{}", String::from_utf8_lossy(&xml));
        xml.extend_from_slice(&chunk[..n]);
    }
    assert!(xml.starts_with(b"<?xml"));
}
