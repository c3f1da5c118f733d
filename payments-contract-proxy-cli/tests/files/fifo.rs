//! A FIFO named by `--junit` is never waited for: opening one for writing
//! waits until a process reads it, which held the proxy before its banner
//! and before it took its signals, unkillable by SIGTERM. Now one no
//! process reads fails the stop (2) at once; one a process reads gets
//! the file. The same for `--record` and `--report`, opened at the start:
//! a FIFO no process reads ends the start (2) at once, a socket is
//! refused saying so, and a FIFO a process reads gets the lines.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use payments_mock_server::MockServer;

use crate::common::{initiate, record_one, run, spawn_within, stop};

/// A FIFO made in `dir`.
fn fifo(dir: &Path) -> PathBuf {
    fifo_named(dir, "junit.fifo")
}

/// A FIFO made in `dir` under `name`.
fn fifo_named(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
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

/// `--record` and `--report` name a FIFO no process reads: the start ends
/// at once (2), saying so; it waited for a reader without end, before its
/// banner and its signals.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recording_or_report_fifo_no_process_reads_ends_the_start_at_once() {
    let mock = MockServer::start().await;
    let dir = tempfile::tempdir().expect("a directory");
    for (flag, what) in [("--record", "recording"), ("--report", "report")] {
        let fifo = fifo_named(dir.path(), &format!("{what}.fifo"));
        let fifo = fifo.display().to_string();
        let (code, stderr) = run(&["--upstream", &mock.base_url(), "--port", "0", flag, &fifo])
            .expect("ends, not waiting for a reader of the FIFO");
        assert_eq!(code, Some(2), "{flag}: {stderr}");
        assert!(
            stderr.contains(&format!("cannot open the {what} file {fifo}: "))
                && stderr.contains("no process reads"),
            "{flag}: {stderr}"
        );
    }
}

/// A socket is refused by `--record` as by `--junit`: with its reason,
/// not the system's `No such device or address`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_socket_is_refused_by_every_output_saying_so() {
    let mock = MockServer::start().await;
    let dir = tempfile::tempdir().expect("a directory");
    let socket = dir.path().join("us.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).expect("bound");
    let socket = socket.display().to_string();
    for flag in ["--record", "--report", "--junit", "--sarif"] {
        let (code, stderr) =
            run(&["--upstream", &mock.base_url(), "--port", "0", flag, &socket]).expect("ends");
        assert_eq!(code, Some(2), "{flag}: {stderr}");
        assert!(
            stderr.contains("it is a socket; give a file"),
            "{flag}: {stderr}"
        );
    }
}

/// A FIFO a process reads, named by `--record`: each exchange's line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recording_fifo_a_process_reads_gets_the_lines() {
    let mock = MockServer::start().await;
    let dir = tempfile::tempdir().expect("a directory");
    let fifo = fifo_named(dir.path(), "rec.fifo");
    // A reader there before the proxy starts (read and write: no wait).
    let mut reader = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&fifo)
        .expect("opened");
    let (proxy, base) = spawn_within(&[
        "--upstream",
        &mock.base_url(),
        "--port",
        "0",
        "--record",
        &fifo.display().to_string(),
    ])
    .expect("the banner");
    assert_eq!(initiate(&base, "FIFO-REC-1").await, 200);
    let (code, stderr) = stop(proxy).expect("stops");
    assert_eq!(code, Some(0), "{stderr}");
    let mut line = Vec::new();
    let mut chunk = [0; 4096];
    while !line.ends_with(b"\n") {
        let n = reader.read(&mut chunk).expect("read");
        assert!(n > 0, "{}", String::from_utf8_lossy(&line));
        line.extend_from_slice(&chunk[..n]);
    }
    let exchange: serde_json::Value = serde_json::from_slice(&line).expect("a line of JSON");
    assert_eq!(exchange["seq"], 1, "{exchange}");
}
