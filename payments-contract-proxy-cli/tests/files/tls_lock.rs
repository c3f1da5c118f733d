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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_lock_is_waited_for_saying_so_and_served_once_released() {
    let mock = MockServer::start().await;
    let dir = tempfile::tempdir().expect("a directory");
    let tls = dir.path().join("tls");
    std::fs::create_dir(&tls).expect("a directory");
    let lock = tls.join(".lock");
    std::fs::write(&lock, "").expect("held");
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
