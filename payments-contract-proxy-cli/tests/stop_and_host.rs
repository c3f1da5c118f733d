//! The binary's stderr at the stop and its `--host`: with
//! `--log-format json` every line is JSON, the summary and the coverage
//! included (as events, with the table's numbers); in either format the
//! log's lines so far come before the summary; `--host [::1]`, as the
//! banners write an IPv6 address, is listened on.

use payments_mock_server::MockServer;
use serde_json::{Value, json};

#[path = "../../payments-mock-server-cli/tests/proxy/process.rs"]
mod process;

use process::{command, spawn_listening, stop};

const BIN: &str = env!("CARGO_BIN_EXE_payments-contract-proxy");
/// The admin key's variables, never set here.
const UNSET: [&str; 2] = ["PAYMENTS_PROXY_ADMIN_KEY", "PAYMENTS_MOCK_ADMIN_KEY"];

/// Sends one initiate through the proxy at `base`: its status.
async fn initiate(base: &str) -> u16 {
    reqwest::Client::new()
        .post(format!("{base}/api/payments/initiate"))
        .json(&json!({
            "merchantId": "6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60", "referenceNo": "STOP-1",
            "amount": 1050, "productCode": "TOPUP", "storeId": "S1", "payerId": "60123456789",
        }))
        .send()
        .await
        .expect("answered")
        .status()
        .as_u16()
}

/// The proxy in front of `mock` with `args`, one initiate through it,
/// stopped: its exit code and stderr.
async fn one_exchange(mock: &MockServer, args: &[&str]) -> (Option<i32>, String) {
    let upstream = mock.base_url();
    let mut all = vec!["--upstream", upstream.as_str(), "--port", "0"];
    all.extend_from_slice(args);
    let (proxy, base) = spawn_listening(&mut command(BIN, &all, &UNSET, &[]));
    assert_eq!(initiate(&base).await, 200);
    stop(proxy)
}

/// The first of `events` whose message starts with `start`.
fn event<'a>(events: &'a [Value], start: &str) -> &'a Value {
    events
        .iter()
        .find(|e| {
            e["fields"]["message"]
                .as_str()
                .is_some_and(|m| m.starts_with(start))
        })
        .unwrap_or_else(|| panic!("an event {start:?} in {events:#?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_json_logs_the_summary_and_coverage_are_json_lines_after_the_log() {
    let mock = MockServer::start().await;
    let (code, stderr) =
        one_exchange(&mock, &["--log-format", "json", "--min-coverage", "100"]).await;
    // The coverage gate: one exchange is far below every cell.
    assert_eq!(code, Some(1), "{stderr}");
    let events: Vec<Value> = stderr
        .lines()
        .filter(|line| !line.is_empty())
        .map(|line| {
            serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}"))
        })
        .collect();
    assert!(events.len() > 50, "{stderr}");

    let summary = event(&events, "contract check: 1 exchanges");
    assert_eq!(summary["target"], "payments_contract_proxy::summary");
    let fields = &summary["fields"];
    assert_eq!(fields["exchanges"], 1, "{summary}");
    assert_eq!(fields["endpoints.initiate"], 1, "{summary}");
    assert_eq!(fields["endpoints.confirm"], 0, "{summary}");
    assert_eq!(fields["verdicts.pass"], 1, "{summary}");
    assert_eq!(fields["verdicts.violation"], 0, "{summary}");
    assert_eq!(fields["levels.violation"], 0, "{summary}");

    let coverage = event(&events, "interface coverage: ");
    assert_eq!(coverage["target"], "payments_contract_proxy::coverage");
    let total = coverage["fields"]["total"].as_u64().expect("a total");
    let covered = coverage["fields"]["covered"].as_u64().expect("a count");
    assert!(covered >= 1 && covered < total, "{coverage}");
    assert!(
        coverage["fields"]["percent"].as_f64().is_some(),
        "{coverage}"
    );
    let cells: Vec<&Value> = events
        .iter()
        .filter(|e| {
            e["target"] == "payments_contract_proxy::coverage" && !e["fields"]["cell"].is_null()
        })
        .collect();
    assert_eq!(cells.len() as u64, total, "one event per cell: {cells:#?}");
    let initiate_200 = cells
        .iter()
        .find(|e| e["fields"]["cell"] == "initiate 200")
        .expect("initiate 200");
    assert_eq!(initiate_200["fields"]["seen"], 1, "{initiate_200}");
    assert_eq!(initiate_200["fields"]["whose"], "document");

    assert!(
        events.iter().any(|e| e["level"] == "WARN"
            && e["fields"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("is below --min-coverage 100 %"))),
        "the coverage gate's shortfall, a warning: {stderr}"
    );

    // The log's lines before the summary, which they precede in time.
    let at = |start: &str| {
        events
            .iter()
            .position(|e| {
                e["fields"]["message"]
                    .as_str()
                    .is_some_and(|m| m.starts_with(start))
            })
            .unwrap_or_else(|| panic!("{start:?} in {stderr}"))
    };
    assert!(at("shutting down") < at("contract check: "), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_text_logs_the_tables_come_after_the_log() {
    let mock = MockServer::start().await;
    let (code, stderr) = one_exchange(&mock, &[]).await;
    assert_eq!(code, Some(0), "{stderr}");
    let at = |start: &str| {
        stderr
            .lines()
            .position(|l| l.starts_with(start) || l.contains(&format!(" {start}")))
            .unwrap_or_else(|| panic!("{start:?} in {stderr}"))
    };
    let tables: Vec<&str> = stderr.lines().skip(at("contract check: ")).collect();
    assert_eq!(
        tables[..3],
        [
            "contract check: 1 exchanges (initiate 1)",
            "verdicts: pass 1",
            "no finding"
        ],
        "{stderr}"
    );
    assert!(
        tables[3].starts_with("interface coverage: 2 of "),
        "{stderr}"
    );
    assert!(
        at("shutting down: finishing in-flight requests") < at("contract check: "),
        "{stderr}"
    );
}

/// A `--host` with a bracket left open is refused, naming the flag.
#[test]
fn a_host_with_a_bracket_left_open_is_refused() {
    let output = std::process::Command::new(BIN)
        .args([
            "--upstream",
            "http://127.0.0.1:1",
            "--port",
            "0",
            "--host",
            "[::1",
        ])
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--host"), "{stderr}");
    assert!(stderr.contains("a bracket left open"), "{stderr}");
}

/// `--host [::1]`, as both banners write an IPv6 address, is the address
/// `::1`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ipv6_host_in_brackets_is_listened_on() {
    if std::net::TcpListener::bind("[::1]:0").is_err() {
        eprintln!("SKIPPED: --host [::1] (no IPv6 loopback on this machine)");
        return;
    }
    let mock = MockServer::start().await;
    let upstream = mock.base_url();
    let args = [
        "--upstream",
        upstream.as_str(),
        "--port",
        "0",
        "--host",
        "[::1]",
    ];
    let (proxy, base) = spawn_listening(&mut command(BIN, &args, &UNSET, &[]));
    assert!(base.starts_with("http://[::1]:"), "{base}");
    assert_eq!(initiate(&base).await, 200);
    let (code, stderr) = stop(proxy);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("web console at http://[::1]:"), "{stderr}");
}
