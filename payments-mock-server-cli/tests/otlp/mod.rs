//! `--otlp-endpoint` (CONTRACT section 21, issue 44): the spans the mock
//! and the proxy export, as a real OTLP/HTTP receiver gets them. The
//! receiver is an axum server on a loopback port that decodes each
//! `ExportTraceServiceRequest` with the OpenTelemetry project's own types
//! (`opentelemetry-proto`), never by matching text.

use std::process::{Command, Stdio};
use std::time::Duration;

use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use opentelemetry_proto::tonic::trace::v1::status::StatusCode as SpanStatus;
use payments_mock_server::MockServer;
use serde_json::json;

use crate::common::{MERCHANT, address_of, initiate_body, spawn_with_banner};

mod proxy;
mod receiver;
mod secrets;

use receiver::{Receiver, all_values, named};

const BIN: &str = env!("CARGO_BIN_EXE_payments-mock-server");

const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT: &str = "00f067aa0ba902b7";

fn traceparent() -> String {
    format!("00-{TRACE}-{PARENT}-01")
}

/// `body` posted to `url` (with `key` as a bearer), its answer's JSON.
async fn post_json(url: &str, key: Option<&str>, body: &serde_json::Value) -> serde_json::Value {
    let mut request = reqwest::Client::new().post(url).json(body);
    if let Some(key) = key {
        request = request.bearer_auth(key);
    }
    request
        .send()
        .await
        .expect("an answer")
        .json()
        .await
        .expect("JSON")
}

async fn mock_exporting_to(receiver: &Receiver) -> MockServer {
    MockServer::builder()
        .replica_name("replica-a")
        .otlp_endpoint(receiver.endpoint())
        .start()
        .await
        .expect("the mock starts")
}

#[tokio::test]
async fn a_request_with_a_traceparent_is_a_server_span_under_the_callers() {
    let mut receiver = Receiver::start().await;
    let mock = mock_exporting_to(&receiver).await;
    let http = reqwest::Client::new();
    let reply = http
        .post(format!("{}/api/payments/initiate", mock.base_url()))
        .header("traceparent", traceparent())
        .json(&initiate_body("OT-1", "TOPUP"))
        .send()
        .await
        .expect("an answer");
    assert_eq!(reply.status(), 200);
    let body: serde_json::Value = reply.json().await.expect("JSON");
    let id = body["data"]["transactionId"].as_str().expect("an id");
    let reply = http
        .get(format!("{}/api/payments/{id}/status", mock.base_url()))
        .header("traceparent", traceparent())
        .send()
        .await
        .expect("an answer");
    assert_eq!(reply.status(), 200);
    let port = mock.addr().port();
    mock.shutdown().await;

    let spans = receiver.spans();
    let initiate = named(&spans, "POST /api/payments/initiate");
    let [initiate] = initiate.as_slice() else {
        panic!("one initiate span: {spans:#?}");
    };
    assert_eq!(initiate.span.kind, SpanKind::Server as i32);
    assert_eq!(initiate.trace_id(), TRACE);
    assert_eq!(initiate.parent_id(), PARENT);
    assert_eq!(initiate.service(), Some("payments-mock-server"));
    assert_eq!(initiate.instance(), Some("replica-a"));
    assert_eq!(initiate.text("http.request.method"), Some("POST"));
    assert_eq!(initiate.text("http.route"), Some("/api/payments/initiate"));
    assert_eq!(initiate.text("url.path"), Some("/api/payments/initiate"));
    assert_eq!(initiate.text("url.scheme"), Some("http"));
    assert_eq!(initiate.int("http.response.status_code"), Some(200));
    assert_eq!(initiate.text("server.address"), Some("127.0.0.1"));
    assert_eq!(initiate.int("server.port"), Some(i64::from(port)));
    assert_eq!(initiate.text("error.type"), None);
    assert!(initiate.span.end_time_unix_nano >= initiate.span.start_time_unix_nano);

    let status = named(&spans, "GET /api/payments/{transactionId}/status");
    let [status] = status.as_slice() else {
        panic!("one status span: {spans:#?}");
    };
    assert_eq!(status.trace_id(), TRACE);
    assert_eq!(status.parent_id(), PARENT);
    assert_eq!(
        status.text("url.path"),
        Some(format!("/api/payments/{id}/status").as_str())
    );
    assert_ne!(status.span_id(), initiate.span_id());
}

#[tokio::test]
async fn the_callers_tracestate_is_carried_by_its_span_and_a_bad_one_ignored() {
    let mut receiver = Receiver::start().await;
    let mock = mock_exporting_to(&receiver).await;
    let http = reqwest::Client::new();
    let huge = format!("k={}", "v".repeat(9_000));
    let cases: [(&str, &[&str], &str); 5] = [
        ("TS-ONE", &["vendor=abc,other=1"], "vendor=abc,other=1"),
        // Split over two headers: one list.
        ("TS-TWO", &["vendor=abc", "other=1"], "vendor=abc,other=1"),
        ("TS-BAD", &["==not a list=="], ""),
        ("TS-HUGE", &[huge.as_str()], ""),
        ("TS-NONE", &[], ""),
    ];
    for (reference, headers, _) in &cases {
        let mut request = http
            .post(format!("{}/api/payments/initiate", mock.base_url()))
            .header("traceparent", traceparent())
            .json(&initiate_body(reference, "TOPUP"));
        for value in *headers {
            request = request.header("tracestate", *value);
        }
        let reply = request.send().await.expect("an answer");
        assert_eq!(reply.status(), 200, "{reference}: never refused");
    }
    let journal = mock.requests().await;
    mock.shutdown().await;
    let spans = receiver.spans();
    let initiates = named(&spans, "POST /api/payments/initiate");
    assert_eq!(initiates.len(), cases.len());
    // In the order sent: each span's state is its request's.
    let mut by_start: Vec<_> = initiates;
    by_start.sort_by_key(|s| s.span.start_time_unix_nano);
    for ((reference, _, carried), seen) in cases.iter().zip(by_start) {
        assert_eq!(seen.span.trace_state, *carried, "{reference}");
    }
    assert_eq!(journal.len(), cases.len());
}

#[tokio::test]
async fn without_a_good_traceparent_a_request_starts_a_trace_of_its_own() {
    let mut receiver = Receiver::start().await;
    let mock = mock_exporting_to(&receiver).await;
    let http = reqwest::Client::new();
    let url = format!("{}/api/payments/reference/R-1/status", mock.base_url());
    let bare = http.get(&url).send().await.expect("an answer");
    assert_eq!(bare.status(), 404);
    let long = "0".repeat(20_000);
    for malformed in [
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01",
        "nonsense",
        long.as_str(),
    ] {
        let reply = http
            .get(format!("{}/_mock/health", mock.base_url()))
            .header("traceparent", malformed)
            .send()
            .await
            .expect("an answer");
        assert_eq!(reply.status(), 200);
    }
    mock.shutdown().await;

    let spans = receiver.spans();
    let [bare] = named(&spans, "GET /api/payments/reference/{referenceNo}/status")[..] else {
        panic!("one by-reference span: {spans:#?}");
    };
    assert_eq!(bare.parent_id(), "", "a root");
    assert_eq!(bare.trace_id().len(), 32);
    assert_ne!(bare.trace_id(), "0".repeat(32));
    assert_eq!(bare.int("http.response.status_code"), Some(404));
    assert_eq!(
        bare.text("payments.error_code"),
        Some("TRANSACTION_NOT_FOUND")
    );
    // No route of the interface: named by the method alone.
    let health = named(&spans, "GET");
    assert_eq!(health.len(), 4, "{spans:#?}");
    for span in health {
        assert_eq!(span.parent_id(), "", "a root: {span:?}");
        assert_ne!(span.trace_id(), TRACE);
        assert_eq!(span.text("http.route"), None);
        assert_eq!(span.text("url.path"), Some("/_mock/health"));
        assert_eq!(span.int("http.response.status_code"), Some(200));
    }
}

#[tokio::test]
async fn an_injected_fault_is_an_error_span_naming_it() {
    let mut receiver = Receiver::start().await;
    let mock = mock_exporting_to(&receiver).await;
    let reply = reqwest::Client::new()
        .post(format!("{}/api/payments/initiate", mock.base_url()))
        .header("x-mock-fault", "internal-error")
        .json(&initiate_body("OT-F", "TOPUP"))
        .send()
        .await
        .expect("an answer");
    assert_eq!(reply.status(), 500);
    mock.shutdown().await;

    let spans = receiver.spans();
    let [span] = named(&spans, "POST /api/payments/initiate")[..] else {
        panic!("one span: {spans:#?}");
    };
    assert_eq!(span.int("http.response.status_code"), Some(500));
    assert_eq!(span.text("error.type"), Some("500"));
    assert_eq!(span.text("payments.fault"), Some("internal-error"));
    let status = span.span.status.as_ref().expect("a status");
    assert_eq!(status.code, SpanStatus::Error as i32);
}

/// A fault never answered (a reset, a hang) has no response to name it
/// on: its span, ended as `aborted`, names it all the same, so a trace
/// tells an injected reset from a client that left.
#[tokio::test]
async fn a_reset_or_a_hang_is_an_aborted_span_naming_its_fault() {
    let mut receiver = Receiver::start().await;
    let mock = mock_exporting_to(&receiver).await;
    let http = reqwest::Client::new();
    let reset = http
        .post(format!("{}/api/payments/initiate", mock.base_url()))
        .header("x-mock-fault", "commit-then-reset")
        .json(&initiate_body("OT-R", "TOPUP"))
        .send()
        .await;
    assert!(reset.is_err(), "no answer: {reset:?}");
    // A hang is a rule's (the header has the seven answered kinds).
    mock.add_fault_rule(
        payments_mock_server::FaultRule::new(payments_mock_server::Fault::Hang)
            .on(payments_mock_server::Endpoint::StatusById),
    )
    .expect("valid");
    let hanging = tokio::spawn(
        http.get(format!("{}/api/payments/OT-H/status", mock.base_url()))
            .send(),
    );
    while mock.requests().await.len() < 2 {
        tokio::task::yield_now().await;
    }
    mock.shutdown().await;
    let hung = hanging.await.expect("joined");
    assert!(hung.is_err(), "never answered: {hung:?}");

    let spans = receiver.spans();
    let [reset] = named(&spans, "POST /api/payments/initiate")[..] else {
        panic!("one initiate span: {spans:#?}");
    };
    let [hang] = named(&spans, "GET /api/payments/{transactionId}/status")[..] else {
        panic!("one status span: {spans:#?}");
    };
    for (span, fault) in [(reset, "commit-then-reset"), (hang, "hang")] {
        assert_eq!(span.text("error.type"), Some("aborted"), "{span:?}");
        assert_eq!(span.text("payments.fault"), Some(fault), "{span:?}");
        assert_eq!(span.int("http.response.status_code"), None);
    }
}

#[tokio::test]
async fn a_sandboxed_request_is_named_by_the_sandboxes_route() {
    let mut receiver = Receiver::start().await;
    let mock = mock_exporting_to(&receiver).await;
    let http = reqwest::Client::new();
    let made = post_json(
        &format!("{}/_mock/sandboxes", mock.base_url()),
        None,
        &json!({"label": "spans"}),
    )
    .await;
    let sandbox = made["data"]["id"].as_str().expect("a sandbox id");
    let reply = http
        .post(format!(
            "{}/sandboxes/{sandbox}/api/payments/initiate",
            mock.base_url()
        ))
        .json(&initiate_body("OT-S", "TOPUP"))
        .send()
        .await
        .expect("an answer");
    assert_eq!(reply.status(), 200);
    mock.shutdown().await;

    let spans = receiver.spans();
    let [span] = named(&spans, "POST /sandboxes/{sandboxId}/api/payments/initiate")[..] else {
        panic!("one sandboxed span: {spans:#?}");
    };
    assert_eq!(
        span.text("url.path"),
        Some(format!("/sandboxes/{sandbox}/api/payments/initiate").as_str())
    );
}

#[tokio::test]
async fn no_key_otp_or_payer_id_reaches_an_exported_attribute() {
    const API_KEY: &str = "sk_test_otlp_never_exported";
    const ADMIN_KEY: &str = "admin_otlp_never_exported";
    const OTP: &str = "123456";
    const PAYER: &str = "60198765432";
    let mut receiver = Receiver::start().await;
    let mock = MockServer::builder()
        .api_key(API_KEY, None)
        .admin_key(ADMIN_KEY)
        .otlp_endpoint(receiver.endpoint())
        .start()
        .await
        .expect("the mock starts");
    let http = reqwest::Client::new();
    let mut body = initiate_body("OT-K", "EWALLET");
    body["payerId"] = json!(PAYER);
    let initiated = post_json(
        &format!("{}/api/payments/initiate", mock.base_url()),
        Some(API_KEY),
        &body,
    )
    .await;
    let id = initiated["data"]["transactionId"].as_str().expect("an id");
    let confirmed = http
        .post(format!("{}/api/payments/confirm", mock.base_url()))
        .bearer_auth(API_KEY)
        .json(&json!({ "transactionId": id, "referenceNo": "OT-K", "confirmationCode": OTP }))
        .send()
        .await
        .expect("an answer");
    assert_eq!(confirmed.status(), 200);
    // A wrong key, an admin read, a key in the query: none of them either.
    for (path, key) in [
        (
            "/api/payments/initiate".to_owned(),
            "sk_wrong_never_exported",
        ),
        ("/_mock/requests".to_owned(), ADMIN_KEY),
        (format!("/_mock/requests?key={ADMIN_KEY}"), ADMIN_KEY),
    ] {
        let _ = http
            .get(format!("{}{path}", mock.base_url()))
            .bearer_auth(key)
            .header("x-api-key", key)
            .send()
            .await
            .expect("an answer");
    }
    mock.shutdown().await;

    let spans = receiver.spans();
    assert!(spans.len() >= 5, "{spans:#?}");
    for seen in &spans {
        let mut values = all_values(&seen.span.attributes);
        values.extend(all_values(&seen.resource));
        values.push(seen.span.name.clone());
        for value in values {
            for secret in [
                API_KEY,
                ADMIN_KEY,
                "sk_wrong_never_exported",
                OTP,
                PAYER,
                MERCHANT,
            ] {
                assert!(!value.contains(secret), "{secret} in {value}: {seen:?}");
            }
        }
    }
}

/// A payment page's path ends in its token, the payer's capability: the
/// span of a page's request never carries its path, at the root and under a
/// sandbox (where it once slipped through as `url.path`).
#[tokio::test]
async fn a_payment_pages_token_never_reaches_an_exported_attribute() {
    let mut receiver = Receiver::start().await;
    let mock = mock_exporting_to(&receiver).await;
    let sandbox = mock.sandbox();
    let http = reqwest::Client::new();
    let mut tokens = Vec::new();
    for base in [mock.base_url(), sandbox.base_url()] {
        let mut body = initiate_body("OT-PAGE", "ONLINEBANKING");
        body["returnUrl"] = json!("https://shop.example/back");
        let initiated = post_json(&format!("{base}/api/payments/initiate"), None, &body).await;
        let id = initiated["data"]["transactionId"].as_str().expect("an id");
        let confirmed = post_json(
            &format!("{base}/api/payments/confirm"),
            None,
            &json!({ "transactionId": id, "referenceNo": "OT-PAGE" }),
        )
        .await;
        let extra: serde_json::Value = serde_json::from_str(
            confirmed["data"]["extraProperties"]
                .as_str()
                .expect("extraProperties"),
        )
        .expect("JSON");
        let url = extra["paymentUrl"]
            .as_str()
            .expect("a payment URL")
            .to_owned();
        let page = http.get(&url).send().await.expect("an answer");
        assert_eq!(page.status(), 200, "{url}");
        tokens.push(url.rsplit('/').next().expect("a token").to_owned());
    }
    drop(sandbox);
    mock.shutdown().await;
    let spans = receiver.spans();
    for seen in &spans {
        let mut values = all_values(&seen.span.attributes);
        values.push(seen.span.name.clone());
        for value in values {
            for token in &tokens {
                assert!(
                    !value.contains(token.as_str()),
                    "a token in {value}: {seen:?}"
                );
            }
        }
    }
    // Both pages' spans were exported (named by their method alone).
    assert_eq!(
        spans.iter().filter(|s| s.span.name == "GET").count(),
        2,
        "{:?}",
        spans.iter().map(|s| &s.span.name).collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn the_binary_sends_its_last_batch_at_sigterm() {
    let mut receiver = Receiver::start().await;
    let (child, base) = spawn_with_banner(
        Command::new(BIN)
            .args(["--port", "0", "--replica-name", "bin-1", "--otlp-endpoint"])
            .arg(&receiver.base)
            // A batch waits ten minutes: what arrives was sent by the stop.
            .env("OTEL_BSP_SCHEDULE_DELAY", "600000")
            .stderr(Stdio::piped()),
    );
    let reply = reqwest::Client::new()
        .get(format!("{base}/api/payments/x/status"))
        .header("traceparent", traceparent())
        .send()
        .await
        .expect("an answer");
    assert_eq!(reply.status(), 404);
    let stopped = tokio::task::spawn_blocking(move || terminate(child));
    let spans = receiver.next_spans().await;
    let (ok, log) = stopped.await.expect("the child's exit");
    assert!(ok, "{log}");
    let [span] = named(&spans, "GET /api/payments/{transactionId}/status")[..] else {
        panic!("one span: {spans:#?}");
    };
    assert_eq!(span.trace_id(), TRACE);
    assert_eq!(span.parent_id(), PARENT);
    assert_eq!(span.instance(), Some("bin-1"));
    assert!(log.contains("exporting spans to"), "{log}");
    let _ = address_of(&base);
}

/// SIGTERM, then the exit: whether it was 0, and stderr.
fn terminate(child: std::process::Child) -> (bool, String) {
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    let output = child.wait_with_output().expect("exit");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[tokio::test]
async fn a_receiver_that_is_down_costs_no_request_and_one_warning() {
    // A port nobody listens on any more.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let endpoint = format!("http://{}", closed.local_addr().expect("an address"));
    drop(closed);
    let (child, base) = spawn_with_banner(
        Command::new(BIN)
            .args(["--port", "0", "--otlp-endpoint", &endpoint])
            // A batch per span: many exports fail, one warning says so.
            .env("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "1")
            .stderr(Stdio::piped()),
    );
    let http = reqwest::Client::new();
    for _ in 0..40 {
        let reply = http
            .get(format!("{base}/_mock/health"))
            .send()
            .await
            .expect("an answer");
        assert_eq!(reply.status(), 200);
    }
    let started = std::time::Instant::now();
    let (ok, log) = tokio::task::spawn_blocking(move || terminate(child))
        .await
        .expect("the child's exit");
    assert!(ok, "{log}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the stop waited {:?}",
        started.elapsed()
    );
    assert_eq!(
        log.matches("cannot export spans to").count(),
        1,
        "one warning, not one per batch: {log}"
    );
    assert!(!log.contains("panicked"), "{log}");
}

#[test]
fn a_bad_endpoint_is_a_usage_error_that_never_repeats_it() {
    let huge = format!("http://localhost/{}", "x".repeat(4096));
    for bad in [
        "",
        "localhost:4318",
        "ftp://localhost:4318",
        "http://user:hunter2@localhost:4318",
        "http://localhost:4318/?token=hunter2",
        "http://local\nhost",
        huge.as_str(),
    ] {
        for args in [
            vec!["--otlp-endpoint", bad],
            vec![
                "proxy",
                "--upstream",
                "http://127.0.0.1:1",
                "--otlp-endpoint",
                bad,
            ],
        ] {
            let output = Command::new(BIN).args(&args).output().expect("runs");
            assert_eq!(output.status.code(), Some(2), "{bad:?}");
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert!(stderr.contains("--otlp-endpoint"), "{stderr}");
            assert!(!stderr.contains("hunter2"), "{stderr}");
            assert!(!stderr.contains("xxxxxxxx"), "{stderr}");
        }
    }
}
