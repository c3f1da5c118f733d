//! `--tls-self-signed DIR` and the directory's lock, `DIR/.lock`: a lock
//! another process holds is waited for, saying so on stderr (the wait was
//! silent: a start that seemed hung for up to 30 s, or without end); one
//! that is no regular file (a directory, which made the start spin at
//! full CPU) ends the start at once, asking for it to be removed.

use std::io::BufRead as _;
use std::process::{Command, Stdio};
use std::sync::mpsc;

use payments_mock_server::MockServer;

use crate::common::{BIN, LIMIT, UNSET, run, stop};

/// A proxy started with `--tls-self-signed tls` whose `tls/.lock`
/// another process holds, once it has said it waits: the proxy, its
/// stdout's and stderr's lines on one channel, those seen before the
/// word of the wait, and that word.
fn spawn_waiting(
    mock: &MockServer,
    tls: &std::path::Path,
) -> (
    std::process::Child,
    mpsc::Receiver<String>,
    Vec<String>,
    String,
) {
    let lock = tls.join(".lock");
    let mut command = Command::new(BIN);
    command
        .args(["--upstream", &mock.base_url(), "--port", "0"])
        .args(["--tls-self-signed", &tls.display().to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for variable in UNSET {
        command.env_remove(variable);
    }
    let mut proxy = command.spawn().expect("spawns");
    let (tx, rx) = mpsc::channel();
    let stderr = proxy.stderr.take().expect("stderr");
    let lines = tx.clone();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            let _ = lines.send(line);
        }
    });
    let stdout = proxy.stdout.take().expect("stdout");
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = std::io::BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let waiting = format!("waiting for {}, held for ", lock.display());
    let mut seen = Vec::new();
    let said = loop {
        let Ok(line) = rx.recv_timeout(LIMIT) else {
            let _ = proxy.kill();
            panic!("no word of the wait: {seen:?}");
        };
        assert!(!line.starts_with("listening on"), "{seen:?}");
        if line.contains(&waiting) {
            break line;
        }
        seen.push(line);
    };
    (proxy, rx, seen, said)
}

/// `tls`, a directory in `dir` whose lock another process holds.
fn held(dir: &tempfile::TempDir) -> (std::path::PathBuf, std::path::PathBuf) {
    let tls = dir.path().join("tls");
    std::fs::create_dir(&tls).expect("a directory");
    let lock = tls.join(".lock");
    std::fs::write(&lock, "").expect("held");
    (tls, lock)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_lock_is_waited_for_saying_so_and_served_once_released() {
    let mock = MockServer::start().await;
    let dir = tempfile::tempdir().expect("a directory");
    let (tls, lock) = held(&dir);
    let (mut proxy, rx, mut seen, said) = spawn_waiting(&mock, &tls);
    assert!(said.contains("taken over after 30 s"), "{said}");
    std::fs::remove_file(&lock).expect("released");
    let banner = loop {
        let Ok(line) = rx.recv_timeout(LIMIT) else {
            let _ = proxy.kill();
            panic!("no banner once released: {seen:?}");
        };
        assert!(!line.contains("waiting for"), "said twice: {line}");
        if line.starts_with("listening on https://") {
            break line;
        }
        seen.push(line);
    };
    assert!(banner.starts_with("listening on https://"), "{banner}");
    let (code, _) = stop(proxy).expect("stops");
    assert_eq!(code, Some(0));
    assert!(!lock.exists(), "its own lock removed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lock_that_is_a_directory_ends_the_start_at_once() {
    let mock = MockServer::start().await;
    let dir = tempfile::tempdir().expect("a directory");
    let tls = dir.path().join("tls");
    std::fs::create_dir_all(tls.join(".lock")).expect("a directory");
    let (code, stderr) = run(&[
        "--upstream",
        &mock.base_url(),
        "--port",
        "0",
        "--tls-self-signed",
        &tls.display().to_string(),
    ])
    .expect("ends, not a loop");
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "{}: it is a directory",
            tls.join(".lock").display()
        )) && stderr.contains("remove it"),
        "{stderr}"
    );
}

/// A stop while the proxy waits for the directory's lock ends the start
/// at once: exit 0, no banner, "stopped before serving" (the handlers
/// were installed after the wait, so SIGTERM killed it mid-start, and as
/// PID 1 in a container it was ignored until the wait ended).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_while_waiting_for_the_lock_ends_the_start_with_0() {
    let mock = MockServer::start().await;
    let dir = tempfile::tempdir().expect("a directory");
    let (tls, lock) = held(&dir);
    let (mut proxy, rx, mut seen, _) = spawn_waiting(&mock, &tls);
    let _ = Command::new("kill")
        .args(["-TERM", &proxy.id().to_string()])
        .status();
    let (tx, exited) = mpsc::channel();
    let pid = proxy.id();
    std::thread::spawn(move || {
        let _ = tx.send(proxy.wait());
    });
    let Ok(status) = exited.recv_timeout(LIMIT) else {
        let _ = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
        panic!("still waiting for the lock after a SIGTERM: {seen:?}");
    };
    let status = status.expect("waited for");
    seen.extend(rx.try_iter());
    // The reader threads end with the pipes; what is left comes now.
    while let Ok(line) = rx.recv_timeout(std::time::Duration::from_secs(2)) {
        seen.push(line);
    }
    assert_eq!(status.code(), Some(0), "{seen:?}");
    assert!(
        !seen.iter().any(|line| line.starts_with("listening on")),
        "no banner: {seen:?}"
    );
    assert!(
        seen.iter()
            .any(|line| line.contains("stopped before serving")),
        "{seen:?}"
    );
    assert!(lock.exists(), "the other process's lock is left alone");
}
