//! A line of the recording or the report that could not be written fails
//! the run (2) and the stop says how many the file lacks; a run appending
//! to a file whose last line is torn starts on a new line, so the torn
//! line stays a bad line and the next exchange is whole.

use payments_mock_server::MockServer;

use crate::common::{initiate, run, spawn_within, stop};

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lines_that_cannot_be_written_fail_the_run_saying_how_many() {
    let mock = MockServer::start().await;
    for flag in ["--record", "--report"] {
        let (proxy, base) = spawn_within(&[
            "--upstream",
            &mock.base_url(),
            "--port",
            "0",
            flag,
            "/dev/full",
        ])
        .expect("started");
        for n in 1..=2 {
            assert_eq!(initiate(&base, &format!("FULL{flag}-{n}")).await, 200);
        }
        let (code, stderr) = stop(proxy).expect("stops");
        assert_eq!(code, Some(2), "{flag}: {stderr}");
        assert!(
            stderr.contains("error: evidence incomplete: /dev/full lacks 2 of the 2 exchanges"),
            "{flag}: {stderr}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_torn_last_line_never_swallows_the_next_runs_first_exchange() {
    let mock = MockServer::start().await;
    let dir = tempfile::tempdir().expect("a directory");
    let recording = dir.path().join("rec.jsonl");
    // An earlier run's last line, cut by a full disk.
    std::fs::write(&recording, "{\"seq\":1,\"request\":{\"meth").expect("written");
    let path = recording.display().to_string();
    let (proxy, base) = spawn_within(&[
        "--upstream",
        &mock.base_url(),
        "--port",
        "0",
        "--record",
        &path,
    ])
    .expect("started");
    assert_eq!(initiate(&base, "TORN-1").await, 200);
    let (code, stderr) = stop(proxy).expect("stops");
    assert_eq!(code, Some(0), "{stderr}");
    let text = std::fs::read_to_string(&recording).expect("read");
    assert_eq!(text.lines().count(), 2, "{text}");
    let (code, stderr) = run(&["check", &path]).expect("ends");
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.starts_with(&format!("{path}:1: ")), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}
