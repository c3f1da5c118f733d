//! A stdout or stderr that cannot be written never panics (exit 101): a
//! stdout that cannot be (full, closed) is said on stderr and exits 2,
//! the JUnit file written all the same; a stderr that cannot be loses its
//! lines, never the run.

use payments_mock_server::MockServer;

use crate::common::{BIN, initiate, record_one, run_with, stop};

/// What `check` says of a stdout that cannot be written.
const UNWRITABLE: &str = "error: cannot write the output: ";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_says_a_stdout_it_cannot_write_and_writes_its_files() {
    let mock = MockServer::start().await;
    let dir = tempfile::tempdir().expect("a directory");
    let recording = dir.path().join("rec.jsonl");
    record_one(&mock, &recording).await;
    let recording = recording.display().to_string();
    let mut cases = vec![
        (">&-", vec![], "stdout is closed"),
        (">&-", vec!["--output", "json"], "stdout is closed"),
    ];
    if cfg!(target_os = "linux") {
        cases.push(("> /dev/full", vec![], "No space left on device"));
        cases.push((
            "> /dev/full",
            vec!["--output", "json", "--coverage"],
            "No space",
        ));
    }
    for (n, (redirects, extra, cause)) in cases.into_iter().enumerate() {
        let junit = dir.path().join(format!("check-{n}.xml"));
        let junit = junit.display().to_string();
        let mut args = vec!["check", recording.as_str(), "--junit", junit.as_str()];
        args.extend(extra);
        let (code, stderr) = run_with(redirects, &args).expect("ends");
        assert_eq!(code, Some(2), "{redirects} {args:?}: {stderr}");
        assert_eq!(
            stderr,
            format!("{UNWRITABLE}{cause}{}", tail(&stderr, cause))
        );
        let xml = std::fs::read_to_string(&junit).expect("the JUnit file, all the same");
        assert!(xml.contains("<testsuites"), "{xml}");
    }
    // Stdout fine, stderr not: the verdict's exit code, the files written
    // (a torn line's report lost on the way).
    if cfg!(target_os = "linux") {
        let torn = dir.path().join("torn.jsonl");
        let whole = std::fs::read_to_string(&recording).expect("read");
        std::fs::write(&torn, format!("{{\"torn\n{whole}")).expect("written");
        let junit = dir.path().join("torn.xml");
        let (code, stderr) = run_with(
            "> /dev/null 2> /dev/full",
            &[
                "check",
                &torn.display().to_string(),
                "--junit",
                &junit.display().to_string(),
            ],
        )
        .expect("ends");
        assert_eq!((code, stderr.as_str()), (Some(0), ""));
        assert!(junit.exists());
    }
}

/// What follows `cause` in `stderr` (the OS error's number), for the
/// comparison of the whole line.
fn tail<'a>(stderr: &'a str, cause: &str) -> &'a str {
    stderr.split_once(cause).map_or("", |(_, rest)| rest)
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_proxy_never_panics_on_a_stdout_or_stderr_it_cannot_write() {
    let mock = MockServer::start().await;
    let upstream = mock.base_url();
    // Its banner cannot be written: said in the log, and it serves on,
    // as the mock does (it panicked, exit 101).
    banner_lost_but_serving(&upstream).await;
    // Its stderr cannot be written: it serves, and stops with its verdict.
    let mut command = std::process::Command::new("sh");
    command
        .arg("-c")
        .arg(r#"exec "$0" "$@" 2> /dev/full"#)
        .arg(BIN)
        .args(["--upstream", &upstream, "--port", "0"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    let mut child = command.spawn().expect("spawns");
    let mut banner = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().expect("stdout")),
        &mut banner,
    )
    .expect("a banner");
    let base = banner
        .trim_end()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("banner {banner:?}"))
        .to_owned();
    assert_eq!(initiate(&base, "STDERR-FULL-1").await, 200);
    let (code, _) = stop(child).expect("stops");
    assert_eq!(code, Some(0));
    // A start refused with a stderr that cannot be written: 2, not 101,
    // in both log formats (in JSON, tracing's report of the failed write
    // was an `eprintln!`: a panic).
    for format in ["text", "json"] {
        let (code, _) = run_with(
            "2> /dev/full",
            &[
                "--log-format",
                format,
                "--upstream",
                &upstream,
                "--port",
                "0",
                "--record",
                "/nonexistent/dir/r.jsonl",
            ],
        )
        .expect("ends");
        assert_eq!(code, Some(2), "{format}");
    }
}

/// The proxy started with a stdout that cannot be written: the log says
/// where it serves, it answers there, and SIGTERM stops it with 0.
async fn banner_lost_but_serving(upstream: &str) {
    use std::io::BufRead as _;
    let mut command = std::process::Command::new("sh");
    command
        .arg("-c")
        .arg(r#"exec "$0" "$@" > /dev/full"#)
        .arg(BIN)
        .args(["--upstream", upstream, "--port", "0"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    let mut child = command.spawn().expect("spawns");
    let stderr = child.stderr.take().expect("stderr");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if let Some((_, at)) = line.split_once("serving anyway on ") {
                let base = at.split_whitespace().next().unwrap_or_default();
                let _ = tx.send(base.trim_end_matches('"').to_owned());
            }
        }
    });
    let base = match rx.recv_timeout(crate::common::LIMIT) {
        Ok(base) => base,
        Err(e) => {
            let _ = child.kill();
            panic!("no warning naming where it serves: {e}");
        }
    };
    assert_eq!(initiate(&base, "STDOUT-FULL-1").await, 200);
    let (code, _) = stop(child).expect("stops");
    assert_eq!(code, Some(0));
}
