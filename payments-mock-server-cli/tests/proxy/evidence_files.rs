//! The JUnit and SARIF files of `proxy` and `check` (CONTRACT section
//! 20) as files: one that is the same file as another flag's (the
//! recording a run appends to, the report, the other output, `check`'s
//! input) is refused at the start with 2 and nothing is emptied; the start
//! creates and empties no file (a crash leaves the earlier run's whole);
//! the stop writes each whole. And the gates: a 200 that is not the
//! envelope earns no coverage, `--min-coverage` is compared exactly, an
//! empty run's summary reads cleanly.

use std::path::{Path, PathBuf};
use std::process::Command;

use payments_mock_server::MockServer;
use serde_json::Value;

use crate::binary::{
    BIN, UNSET, html_upstream, post, proxy_args, run, spawn, spawn_proxy, stop, topup,
};
use crate::consumers::{junitparser_reads, valid_sarif_file};
use crate::process::{command, spawn_reading_banner};

/// The names in `dir`, sorted.
fn listed(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("a directory")
        .map(|e| {
            e.expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    names
}

fn shown(path: &Path) -> String {
    path.display().to_string()
}

/// `path` written `dir/./name`: another spelling of one file.
fn dotted(path: &Path) -> String {
    let dir = path.parent().expect("a directory");
    let name = path.file_name().expect("a name");
    shown(&dir.join(".").join(name))
}

/// Runs `args` (a proxy): its exit code, what it printed on stdout and
/// stderr. One that starts after all (its banner on stdout) is stopped
/// with SIGTERM at once, so a refusal that did not happen fails the test
/// instead of hanging it.
fn refused_or_stopped(args: &[&str]) -> (Option<i32>, String, String) {
    let (child, banner) = spawn_reading_banner(&mut command(BIN, args, &UNSET, &[]));
    if !banner.is_empty() {
        let (code, stderr) = stop(child);
        return (code, banner, stderr);
    }
    let output = child.wait_with_output().expect("exits");
    (
        output.status.code(),
        banner,
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// A recording of one initiate through the proxy in front of the mock.
async fn recording(mock: &MockServer, dir: &Path) -> PathBuf {
    let record = dir.join("run.jsonl");
    let (proxy, base) = spawn_proxy(&mock.base_url(), &["--record", &shown(&record)]);
    let answer = post(&base, "/api/payments/initiate", &topup("FILES-1")).await;
    assert_eq!(answer["isSuccess"], true, "{answer}");
    let (code, stderr) = stop(proxy);
    assert_eq!(code, Some(0), "{stderr}");
    record
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_output_that_is_another_flags_file_is_refused_and_nothing_is_emptied() {
    let mock = MockServer::start().await;
    let dir = tempfile::tempdir().expect("a directory");
    let record = recording(&mock, dir.path()).await;
    let kept = std::fs::read_to_string(&record).expect("a recording");
    assert!(!kept.is_empty());
    let link = dir.path().join("link.jsonl");
    std::os::unix::fs::symlink(&record, &link).expect("a link");
    let hard = dir.path().join("hard.jsonl");
    std::fs::hard_link(&record, &hard).expect("a hard link");
    let same = dir.path().join("same.out");
    let before = listed(dir.path());
    let upstream = mock.base_url();
    let proxy = |more: &[&str]| refused_or_stopped(&proxy_args(&upstream, more));
    let (file, file_dotted, link, hard) =
        (shown(&record), dotted(&record), shown(&link), shown(&hard));
    let (same, same_dotted) = (shown(&same), dotted(&same));
    let cases: [([&str; 4], [&str; 2]); 6] = [
        (
            ["--record", &file, "--junit", &file_dotted],
            ["--junit", "--record"],
        ),
        (
            ["--record", &file, "--sarif", &link],
            ["--sarif", "--record"],
        ),
        (
            ["--report", &file, "--junit", &hard],
            ["--junit", "--report"],
        ),
        (
            ["--junit", &same, "--sarif", &same_dotted],
            ["--sarif", "--junit"],
        ),
        (["--junit", &link, "--sarif", &file], ["--sarif", "--junit"]),
        // Both append: exchanges and verdicts mixed in one file.
        (
            ["--record", &file, "--report", &link],
            ["--record", "--report"],
        ),
    ];
    for (args, flags) in &cases {
        let (code, stdout, stderr) = proxy(args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(stdout.is_empty(), "never listening: {stdout}");
        for flag in flags {
            assert!(stderr.contains(flag), "{args:?} names {flag}: {stderr}");
        }
        assert!(stderr.contains("the same file"), "{stderr}");
        assert_eq!(std::fs::read_to_string(&record).expect("read"), kept);
        assert_eq!(listed(dir.path()), before, "nothing created");
    }

    // `check`: its input is never replaced, nor one output by the other.
    for args in [
        vec!["check", &file, "--junit", &file],
        vec!["check", &file, "--sarif", &file_dotted],
        vec!["check", &file, "--junit", &hard],
        vec!["check", &file, "--sarif", &link],
        vec!["check", &file, "--junit", &same, "--sarif", &same_dotted],
    ] {
        let (code, stdout, stderr) = run(&args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(stdout.is_empty(), "refused before checking: {stdout}");
        assert!(stderr.contains("the same file"), "{stderr}");
        assert_eq!(std::fs::read_to_string(&record).expect("read"), kept);
        assert_eq!(listed(dir.path()), before, "nothing created");
    }
    let (code, _, stderr) = run(&["check", &file, "--junit", &same]);
    assert_eq!(code, Some(0), "{stderr}");
}

/// The start creates and empties no evidence file: a run that never
/// stops cleanly (killed, or a second signal) leaves an earlier run's
/// file whole and no empty one a CI step would fail to parse; the stop
/// replaces each whole, leaving nothing else beside it. An empty run's
/// summary reads cleanly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_start_leaves_earlier_evidence_whole_and_the_stop_writes_it_whole() {
    let mock = MockServer::start().await;
    let dir = tempfile::tempdir().expect("a directory");
    let junit = dir.path().join("earlier.xml");
    let earlier =
        r#"<?xml version="1.0" encoding="UTF-8"?><testsuites tests="0" failures="0"></testsuites>"#;
    std::fs::write(&junit, earlier).expect("written");
    let sarif = dir.path().join("new.sarif");
    let upstream = mock.base_url();
    let (junit_file, sarif_file) = (shown(&junit), shown(&sarif));
    let args = proxy_args(&upstream, &["--junit", &junit_file, "--sarif", &sarif_file]);
    let (mut crashed, _) = spawn(&args);
    assert_eq!(std::fs::read_to_string(&junit).expect("read"), earlier);
    assert_eq!(listed(dir.path()), ["earlier.xml"], "nothing created");
    let _ = Command::new("kill")
        .args(["-KILL", &crashed.id().to_string()])
        .status();
    let _ = crashed.wait();
    assert_eq!(std::fs::read_to_string(&junit).expect("read"), earlier);
    assert_eq!(listed(dir.path()), ["earlier.xml"]);

    // Nothing passed through: a clean summary, and files that say so.
    let (empty, _) = spawn(&args);
    let (code, stderr) = stop(empty);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("contract check: 0 exchanges\n"), "{stderr}");
    assert!(!stderr.contains("()"), "{stderr}");
    assert_eq!(listed(dir.path()), ["earlier.xml", "new.sarif"]);

    let (proxy, base) = spawn(&args);
    let answer = post(&base, "/api/payments/initiate", &topup("FILES-2")).await;
    assert_eq!(answer["isSuccess"], true, "{answer}");
    let (code, stderr) = stop(proxy);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        listed(dir.path()),
        ["earlier.xml", "new.sarif"],
        "no leftovers"
    );
    if let Some(read) = junitparser_reads(&junit) {
        assert_eq!(read["tests"].as_u64(), Some(1), "{read}");
        assert_eq!(read["failures"].as_u64(), Some(0), "{read}");
    }
    let log = valid_sarif_file(&sarif);
    assert_eq!(log["runs"][0]["results"], serde_json::json!([]), "{log}");
}

/// A gateway's HTML 200 is not the service's success: it earns no cell of
/// the coverage (`/_proxy/coverage`, `check --coverage`), so it cannot
/// pass `--min-coverage`; it counts outside the cells.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_200_that_is_not_the_envelope_earns_no_coverage() {
    // An upstream that answers every request 200 with an HTML page.
    let upstream = html_upstream(axum::http::StatusCode::OK, "<html>ok</html>").await;
    let dir = tempfile::tempdir().expect("a directory");
    let record = dir.path().join("html.jsonl");
    let (proxy, base) = spawn_proxy(
        &upstream,
        &["--record", &shown(&record), "--min-coverage", "0.1"],
    );
    let http = reqwest::Client::new();
    let reply = http
        .get(format!("{base}/api/payments/t-1/status"))
        .send()
        .await
        .expect("answered");
    assert_eq!(reply.status(), 200);
    assert_eq!(reply.headers()["x-contract-verdict"], "violation");
    let coverage: Value = http
        .get(format!("{base}/_proxy/coverage"))
        .send()
        .await
        .expect("answered")
        .json()
        .await
        .expect("JSON");
    let data = &coverage["data"];
    assert_eq!(data["covered"], 0, "{coverage}");
    let cell = data["cells"]
        .as_array()
        .expect("cells")
        .iter()
        .find(|c| c["name"] == "statusById 200")
        .expect("the success cell");
    assert_eq!(cell["count"], 0, "{coverage}");
    assert_eq!(
        data["outside"][0]["name"], "statusById 200 (not the envelope)",
        "{coverage}"
    );
    let (code, stderr) = stop(proxy);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("below --min-coverage 0.1 %"), "{stderr}");

    let (code, stdout, stderr) = run(&[
        "check",
        &shown(&record),
        "--coverage",
        "--output",
        "json",
        "--min-coverage",
        "0.1",
    ]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("below --min-coverage 0.1 %"), "{stderr}");
    let summary: Value = serde_json::from_str(&stdout).expect("JSON");
    assert_eq!(summary["coverage"]["covered"], 0, "{stdout}");
}

/// `--min-coverage` is compared with the share seen exactly, for the
/// proxy and `check` alike: one initiate shows 2 of 49 cells (4.0816… %,
/// the table's 4.1), which is below 4.1 and meets 4.08.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn min_coverage_is_compared_exactly_not_with_the_rounded_figure() {
    let mock = MockServer::start().await;
    let dir = tempfile::tempdir().expect("a directory");
    let record = recording(&mock, dir.path()).await;
    let file = shown(&record);
    let (code, stdout, _) = run(&["check", &file, "--coverage", "--output", "json"]);
    assert_eq!(code, Some(0), "{stdout}");
    let summary: Value = serde_json::from_str(&stdout).expect("JSON");
    let coverage = &summary["coverage"];
    assert_eq!(
        (
            &coverage["covered"],
            &coverage["total"],
            &coverage["percent"]
        ),
        (&Value::from(2), &Value::from(49), &Value::from(4.1)),
        "{coverage}"
    );
    for below in ["4.1", "4.09", "4.0817"] {
        let (code, _, stderr) = run(&["check", &file, "--min-coverage", below]);
        assert_eq!(code, Some(1), "{below}: {stderr}");
        assert!(
            stderr.contains(&format!(
                "interface coverage 4.0816 % (2 of 49 cells) is below --min-coverage {below} %"
            )),
            "{stderr}"
        );
    }
    for met in ["4.08", "4.0816", "0"] {
        let (code, _, stderr) = run(&["check", &file, "--min-coverage", met]);
        assert_eq!(code, Some(0), "{met}: {stderr}");
    }
    let (proxy, base) = spawn_proxy(&mock.base_url(), &["--min-coverage", "4.1"]);
    let answer = post(&base, "/api/payments/initiate", &topup("FILES-3")).await;
    assert_eq!(answer["isSuccess"], true, "{answer}");
    let (code, stderr) = stop(proxy);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("is below --min-coverage 4.1 %"), "{stderr}");
}
