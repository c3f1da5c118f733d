//! `GET /metrics` through the binary (CONTRACT section 18, issue 33): the
//! counters move as requests, injected faults (`X-Mock-Fault`,
//! `--fail-rate`) and SQLite store operations happen; the scrape is parsed
//! and `promtool check metrics` accepts it; behind the admin key when there
//! is one; consistent while scraped under concurrent load.

use std::process::{Child, Command, Stdio};

use crate::common::{MERCHANT, spawn_with_banner, terminate_expecting_success};
use crate::metrics_text::{assert_histograms_consistent, parse, promtool_check, value};

const BIN: &str = env!("CARGO_BIN_EXE_payments-mock-server");
const ADMIN: &str = "adm_metrics_admin_key_7f3a";
const MERCHANT_KEY: &str = "key_metrics_merchant_51c2";
const UNBOUND_KEY: &str = "key_metrics_unbound_91aa";
const UNKNOWN_ID: &str = "01970000-0000-7000-8000-000000000000";

fn start(args: &[&str]) -> (Child, String) {
    spawn_with_banner(
        Command::new(BIN)
            .args(["--port", "0"])
            .args(args)
            .env_remove("PAYMENTS_MOCK_ADMIN_KEY")
            .env_remove("PAYMENTS_MOCK_STORE")
            .stderr(Stdio::piped()),
    )
}

fn initiate_body(reference: &str) -> serde_json::Value {
    serde_json::json!({
        "merchantId": MERCHANT, "referenceNo": reference, "amount": 1050,
        "productCode": "TOPUP", "storeId": "S1", "payerId": "60123456789",
    })
}

/// The scrape's status, content type and body.
async fn scrape(base: &str, headers: &[(&str, &str)]) -> (u16, String, String) {
    let mut request = reqwest::Client::new().get(format!("{base}/metrics"));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let reply = request.send().await.expect("answered");
    let status = reply.status().as_u16();
    let content_type = reply
        .headers()
        .get("content-type")
        .map(|v| v.to_str().expect("ASCII").to_owned())
        .unwrap_or_default();
    (status, content_type, reply.text().await.expect("a body"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_faults_and_store_operations_are_counted_and_promtool_accepts_the_scrape() {
    let dir = tempfile::tempdir().expect("a directory");
    let store = format!("sqlite:{}", dir.path().join("mock.db").display());
    let (child, base) = start(&["--store", &store, "--replica-name", "metrics-r1"]);
    let http = reqwest::Client::new();
    let created = http
        .post(format!("{base}/api/payments/initiate"))
        .json(&initiate_body("MET-1"))
        .send()
        .await
        .expect("answered");
    assert_eq!(created.status(), 200);
    let missing = http
        .get(format!("{base}/api/payments/{UNKNOWN_ID}/status"))
        .send()
        .await
        .expect("answered");
    assert_eq!(missing.status(), 404);
    let faulted = http
        .post(format!("{base}/api/payments/initiate"))
        .header("x-mock-fault", "internal-error")
        .json(&initiate_body("MET-2"))
        .send()
        .await
        .expect("answered");
    assert_eq!(faulted.status(), 500);
    let delayed = http
        .get(format!("{base}/api/payments/{UNKNOWN_ID}/status"))
        .header("x-mock-fault", "delay=1")
        .send()
        .await
        .expect("answered");
    assert_eq!(delayed.status(), 404);
    let health = http
        .get(format!("{base}/_mock/health"))
        .send()
        .await
        .expect("answered");
    assert_eq!(health.status(), 200);

    let (status, content_type, text) = scrape(&base, &[]).await;
    assert_eq!(status, 200, "{text}");
    assert_eq!(content_type, "text/plain; version=0.0.4; charset=utf-8");
    let samples = parse(&text);
    let requests = |endpoint: &str, status: &str, code: &str| {
        value(
            &samples,
            "payments_mock_requests_total",
            &[
                ("replica", "metrics-r1"),
                ("endpoint", endpoint),
                ("status", status),
                ("error_code", code),
            ],
        )
    };
    assert_eq!(requests("initiate", "200", ""), 1.0, "{text}");
    assert_eq!(requests("initiate", "500", "INTERNAL_ERROR"), 1.0, "{text}");
    assert_eq!(
        requests("statusById", "404", "TRANSACTION_NOT_FOUND"),
        2.0,
        "{text}"
    );
    assert_eq!(requests("admin", "200", ""), 1.0, "{text}");
    let faults = |kind: &str| {
        value(
            &samples,
            "payments_mock_faults_injected_total",
            &[("kind", kind)],
        )
    };
    assert_eq!(faults("internal-error"), 1.0, "{text}");
    assert_eq!(faults("delay"), 1.0, "{text}");
    assert_eq!(faults("reset"), 0.0, "{text}");
    assert_eq!(
        value(
            &samples,
            "payments_mock_request_duration_seconds_count",
            &[("endpoint", "statusById")]
        ),
        2.0,
        "{text}"
    );
    let store_ops = |operation: &str| {
        value(
            &samples,
            "payments_mock_store_operation_duration_seconds_count",
            &[("store", "sqlite"), ("operation", operation)],
        )
    };
    assert!(store_ops("create") >= 1.0, "{text}");
    assert!(store_ops("with_id") >= 2.0, "{text}");
    assert!(
        !text.contains("store=\"postgres\""),
        "only the store in use: {text}"
    );
    assert_histograms_consistent(&samples);
    promtool_check(&text, "the mock's scrape");

    // Prometheus asks for OpenMetrics: the same counts, its format.
    let (status, content_type, openmetrics) = scrape(
        &base,
        &[(
            "accept",
            "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5",
        )],
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        content_type,
        "application/openmetrics-text; version=1.0.0; charset=utf-8"
    );
    assert!(openmetrics.ends_with("# EOF\n"), "{openmetrics}");
    assert!(openmetrics.contains("# TYPE payments_mock_requests counter\n"));
    // The scrapes themselves are counted, under their own endpoint.
    let (_, _, text) = scrape(&base, &[]).await;
    assert_eq!(
        value(
            &parse(&text),
            "payments_mock_requests_total",
            &[("endpoint", "metrics"), ("status", "200")]
        ),
        2.0,
        "{text}"
    );
    terminate_expecting_success(child);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fail_rate_faults_are_counted_by_kind() {
    let (child, base) = start(&["--fail-rate", "1", "--fault-seed", "33"]);
    // A client per request: a reset fault closes its connection.
    for _ in 0..20 {
        let _ = reqwest::Client::new()
            .get(format!("{base}/api/payments/{UNKNOWN_ID}/status"))
            .send()
            .await;
    }
    let (status, _, text) = scrape(&base, &[]).await;
    assert_eq!(status, 200);
    let samples = parse(&text);
    let total: f64 = [
        "internal-error",
        "commit-then-error",
        "reset",
        "commit-then-reset",
    ]
    .iter()
    .map(|kind| {
        value(
            &samples,
            "payments_mock_faults_injected_total",
            &[("kind", kind)],
        )
    })
    .sum();
    assert_eq!(total, 20.0, "{text}");
    assert!(
        value(
            &samples,
            "payments_mock_faults_injected_total",
            &[("kind", "reset")]
        ) > 0.0,
        "seed 33 draws a reset among 20: {text}"
    );
    terminate_expecting_success(child);
}

/// `--latency` shapes every request and injects no fault: nothing is
/// counted for it (the metric's help and the docs say so); a `delay` asked
/// for by `X-Mock-Fault` is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn latency_is_not_counted_as_a_fault_and_an_asked_delay_is() {
    let (child, base) = start(&["--latency", "1"]);
    let http = reqwest::Client::new();
    for _ in 0..3 {
        let _ = http
            .get(format!("{base}/api/payments/{UNKNOWN_ID}/status"))
            .send()
            .await;
    }
    let _ = http
        .get(format!("{base}/api/payments/{UNKNOWN_ID}/status"))
        .header("x-mock-fault", "delay=1")
        .send()
        .await;
    let (_, _, text) = scrape(&base, &[]).await;
    let samples = parse(&text);
    let delays = value(
        &samples,
        "payments_mock_faults_injected_total",
        &[("kind", "delay")],
    );
    assert_eq!(delays, 1.0, "{text}");
    terminate_expecting_success(child);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_an_admin_key_metrics_answers_the_admin_key_alone() {
    let merchant_key = format!("{MERCHANT_KEY}={MERCHANT}");
    let (child, base) = start(&[
        "--admin-key",
        ADMIN,
        "--api-key",
        &merchant_key,
        "--api-key",
        UNBOUND_KEY,
    ]);
    let bearer = |key: &str| format!("Bearer {key}");
    let (status, _, text) = scrape(&base, &[]).await;
    assert_eq!(status, 401, "{text}");
    assert!(text.contains("\"UNAUTHORIZED\""), "{text}");
    let reply = reqwest::get(format!("{base}/metrics"))
        .await
        .expect("answered");
    assert_eq!(reply.headers()["www-authenticate"], "Bearer");
    for key in [MERCHANT_KEY, UNBOUND_KEY] {
        let (status, _, text) = scrape(&base, &[("authorization", &bearer(key))]).await;
        assert_eq!(status, 403, "{text}");
        assert!(text.contains("\"FORBIDDEN\""), "{text}");
    }
    let (status, _, text) = scrape(&base, &[("authorization", "Bearer adm_wrong")]).await;
    assert_eq!(status, 401, "{text}");
    let (status, _, text) = scrape(&base, &[("authorization", &bearer(ADMIN))]).await;
    assert_eq!(status, 200, "{text}");
    let samples = parse(&text);
    // The refused scrapes are counted too (401 and 403 of `metrics`).
    assert_eq!(
        value(
            &samples,
            "payments_mock_requests_total",
            &[("endpoint", "metrics"), ("status", "403")]
        ),
        2.0,
        "{text}"
    );
    promtool_check(&text, "the keyed mock's scrape");
    let log = terminate_expecting_success(child);
    assert!(!log.contains(ADMIN), "the log shows the admin key");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn scrapes_under_concurrent_load_are_consistent() {
    const TASKS: usize = 4;
    const EACH: usize = 100;
    let (child, base) = start(&[]);
    let load: Vec<_> = (0..TASKS)
        .map(|_| {
            let base = base.clone();
            tokio::spawn(async move {
                let http = reqwest::Client::new();
                for _ in 0..EACH {
                    let reply = http
                        .get(format!("{base}/api/payments/{UNKNOWN_ID}/status"))
                        .send()
                        .await
                        .expect("answered");
                    assert_eq!(reply.status(), 404);
                }
            })
        })
        .collect();
    let mut last = 0.0;
    let mut scrapes = 0;
    while !load.iter().all(tokio::task::JoinHandle::is_finished) {
        let (status, _, text) = scrape(&base, &[]).await;
        assert_eq!(status, 200);
        let samples = parse(&text);
        assert_histograms_consistent_or_empty(&samples);
        let seen = value(
            &samples,
            "payments_mock_requests_total",
            &[("endpoint", "statusById")],
        );
        assert!(seen >= last, "a counter went back: {last} then {seen}");
        last = seen;
        scrapes += 1;
    }
    for task in load {
        task.await.expect("the load ran");
    }
    let (_, _, text) = scrape(&base, &[]).await;
    let samples = parse(&text);
    assert_histograms_consistent(&samples);
    let total = (TASKS * EACH) as f64;
    assert_eq!(
        value(
            &samples,
            "payments_mock_requests_total",
            &[
                ("endpoint", "statusById"),
                ("status", "404"),
                ("error_code", "TRANSACTION_NOT_FOUND")
            ]
        ),
        total,
        "{text}"
    );
    assert_eq!(
        value(
            &samples,
            "payments_mock_request_duration_seconds_count",
            &[("endpoint", "statusById")]
        ),
        total
    );
    eprintln!("{scrapes} scrapes during the load");
    promtool_check(&text, "the mock's scrape after the load");
    terminate_expecting_success(child);
}

fn assert_histograms_consistent_or_empty(samples: &std::collections::BTreeMap<String, f64>) {
    if samples.keys().any(|k| k.contains("_seconds_count")) {
        assert_histograms_consistent(samples);
    }
}

/// Scrapes `base` and asserts its sandbox figures: `live` now, `made` and
/// `expired` since the start. The scrape's text.
async fn assert_sandboxes_counted(base: &str, live: f64, made: f64, expired: f64) -> String {
    let (_, _, text) = scrape(base, &[]).await;
    let samples = parse(&text);
    assert_eq!(
        value(&samples, "payments_mock_sandboxes", &[]),
        live,
        "{text}"
    );
    assert_eq!(
        value(&samples, "payments_mock_sandboxes_created_total", &[]),
        made,
        "{text}"
    );
    assert_eq!(
        value(&samples, "payments_mock_sandboxes_expired_total", &[]),
        expired,
        "{text}"
    );
    text
}

/// Sandboxes (CONTRACT section 19): live ones as a gauge, made and
/// expired ones as counters, with no label per sandbox.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sandboxes_are_counted_live_made_and_expired() {
    let (child, base) = start(&["--sandbox-ttl", "1s"]);
    let http = reqwest::Client::new();
    let mut made = Vec::new();
    for _ in 0..3 {
        let answer: serde_json::Value = http
            .post(format!("{base}/_mock/sandboxes"))
            .send()
            .await
            .expect("answered")
            .json()
            .await
            .expect("an envelope");
        made.push(answer["data"]["id"].as_str().expect("an id").to_owned());
    }
    let text = assert_sandboxes_counted(&base, 3.0, 3.0, 0.0).await;
    assert!(!text.contains(&made[0]), "no label per sandbox: {text}");
    promtool_check(&text, "the scrape with sandboxes");
    // One removed; the other two left unused past their time to live.
    let removed = http
        .delete(format!("{base}/_mock/sandboxes/{}", made[0]))
        .send()
        .await
        .expect("answered");
    assert_eq!(removed.status(), 200);
    tokio::time::sleep(std::time::Duration::from_millis(1200)).await;
    // Listing drops the expired ones.
    let listed: serde_json::Value = http
        .get(format!("{base}/_mock/sandboxes"))
        .send()
        .await
        .expect("answered")
        .json()
        .await
        .expect("an envelope");
    assert_eq!(listed["data"]["items"], serde_json::json!([]));
    let text = assert_sandboxes_counted(&base, 0.0, 3.0, 2.0).await;
    promtool_check(&text, "the scrape after sandboxes expired");
    terminate_expecting_success(child);
}
