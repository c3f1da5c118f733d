//! A symbolic link whose file does not exist yet is that file: the same
//! file as another flag's is refused, and a write goes through the link.

use std::os::unix::fs::symlink;

use payments_mock_server::MockServer;

use crate::common::{record_one, run};

/// The proxy started with `args` (in front of an address nothing answers
/// on: it is refused before it would forward anything).
fn start(args: &[&str]) -> (Option<i32>, String) {
    let mut all = vec!["--upstream", "http://127.0.0.1:9", "--port", "0"];
    all.extend_from_slice(args);
    run(&all).expect("refused at once, not serving")
}

#[test]
fn a_link_to_a_file_not_there_yet_is_that_file() {
    let dir = tempfile::tempdir().expect("a directory");
    let path = |name: &str| dir.path().join(name).display().to_string();
    // --junit a link to the recording to be: it would replace it.
    symlink("contract.jsonl", dir.path().join("junit.xml")).expect("a link");
    let (code, stderr) = start(&[
        "--record",
        &path("contract.jsonl"),
        "--junit",
        &path("junit.xml"),
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.starts_with("error: --junit ")
            && stderr.contains("--record")
            && stderr.contains("are the same file"),
        "{stderr}"
    );
    // Said as what it is, not as an option's syntax.
    assert!(!stderr.contains("invalid option"), "{stderr}");
    assert!(
        !dir.path().join("contract.jsonl").exists(),
        "nothing created"
    );
    // --record a link to the report to be: lines mixed.
    symlink("report.jsonl", dir.path().join("rec.jsonl")).expect("a link");
    let (code, stderr) = start(&[
        "--report",
        &path("report.jsonl"),
        "--record",
        &path("rec.jsonl"),
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("are the same file"), "{stderr}");
    assert!(!dir.path().join("report.jsonl").exists(), "nothing created");
    // A link in a directory of its own, naming the file relative to it.
    std::fs::create_dir(dir.path().join("sub")).expect("a directory");
    symlink("../sarif.json", dir.path().join("sub/junit.xml")).expect("a link");
    let (code, stderr) = start(&[
        "--sarif",
        &path("sarif.json"),
        "--junit",
        &path("sub/junit.xml"),
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("are the same file"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_writes_through_a_link_whose_file_is_not_there_yet() {
    let mock = MockServer::start().await;
    let dir = tempfile::tempdir().expect("a directory");
    let recording = dir.path().join("rec.jsonl");
    record_one(&mock, &recording).await;
    let link = dir.path().join("jl.xml");
    symlink("real.xml", &link).expect("a link");
    let (code, stderr) = run(&[
        "check",
        &recording.display().to_string(),
        "--junit",
        &link.display().to_string(),
    ])
    .expect("ends");
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        std::fs::symlink_metadata(&link)
            .expect("there")
            .is_symlink(),
        "the link is kept"
    );
    let xml = std::fs::read_to_string(dir.path().join("real.xml")).expect("written through");
    assert!(xml.contains("<testsuites"), "{xml}");
}
