//! Canary secrets in every place an exchange can carry one (the
//! `Authorization`, `Cookie` and `Set-Cookie` headers, `confirmationCode`
//! and `payerId` in bodies and the query, a password in the upstream URL):
//! none reaches the recording, the report, the console, `/_proxy/report`,
//! the log, the stderr summary or an error answer.

use axum::http::HeaderMap;
use serde_json::{Value, json};

use crate::binary::{proxy_args, serve, spawn_with, stop};
const CANARIES: [&str; 6] = [
    "KEY-CANARY",
    "COOKIE-CANARY",
    "SETCOOKIE-CANARY",
    "OTP-CANARY",
    "PAYER-CANARY",
    "PASSWORD-CANARY",
];

/// An upstream that echoes the request body inside a confirm-shaped answer
/// and sets a cookie: every secret the application sent comes back.
async fn echoing_upstream() -> String {
    let app = axum::Router::new().fallback(|headers: HeaderMap, body: String| async move {
        let sent: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
        let echoed = json!({
            "isSuccess": false, "errorCode": "VALIDATION_ERROR",
            "message": format!("you sent {body} with {:?}", headers.get("authorization")),
            "data": null, "echo": sent,
        });
        (
            axum::http::StatusCode::BAD_REQUEST,
            [
                ("content-type", "application/json"),
                ("set-cookie", "session=SETCOOKIE-CANARY; HttpOnly"),
            ],
            echoed.to_string(),
        )
    });
    format!("http://user:PASSWORD-CANARY@{}", serve(app).await)
}

fn assert_clean(what: &str, text: &str) {
    for canary in CANARIES {
        assert!(!text.contains(canary), "{what} holds {canary}:\n{text}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_secret_reaches_the_recording_report_console_log_or_errors() {
    let upstream = echoing_upstream().await;
    let dir = tempfile::tempdir().expect("a directory");
    let record = dir.path().join("record.jsonl");
    let report = dir.path().join("report.jsonl");
    let (child, base) = spawn_with(
        &proxy_args(
            &upstream,
            &[
                "--record",
                &record.display().to_string(),
                "--report",
                &report.display().to_string(),
            ],
        ),
        &[("RUST_LOG", "debug")],
    );
    let http = reqwest::Client::new();
    let body = json!({
        "transactionId": "t-1", "referenceNo": "R-1", "confirmationCode": "OTP-CANARY",
        "payerId": "PAYER-CANARY",
        "extraProperties": "{\"confirmationCode\":\"OTP-CANARY\",\"payerId\":\"PAYER-CANARY\"}",
    });
    let answer = http
        .post(format!(
            "{base}/api/payments/confirm?payerId=PAYER-CANARY&confirmationCode=OTP-CANARY"
        ))
        .header("authorization", "Bearer KEY-CANARY")
        .header("cookie", "session=COOKIE-CANARY")
        .json(&body)
        .send()
        .await
        .expect("answered");
    // The application gets the upstream's answer unchanged, secrets and all:
    // the proxy never rewrites; it keeps them out of what it writes.
    assert_eq!(answer.status(), 400);
    assert!(answer.text().await.expect("a body").contains("OTP-CANARY"));
    let console = http
        .get(format!("{base}/_proxy/ui/"))
        .send()
        .await
        .expect("a page")
        .text()
        .await
        .expect("text");
    let detail = http
        .get(format!("{base}/_proxy/ui/exchanges/1"))
        .send()
        .await
        .expect("a page")
        .text()
        .await
        .expect("text");
    assert!(
        detail.contains("[redacted]") && detail.contains("payer-"),
        "{detail}"
    );
    let summary = http
        .get(format!("{base}/_proxy/report"))
        .send()
        .await
        .expect("an answer")
        .text()
        .await
        .expect("text");
    // The upstream gone: the proxy's own error answer.
    let gone = http
        .get(format!("{base}/api/payments/x/status"))
        .header("authorization", "Bearer KEY-CANARY")
        .send();
    let _ = gone.await;
    let (_, stderr) = stop(child);
    let recording = std::fs::read_to_string(&record).expect("a recording");
    assert!(
        recording.contains("payer-"),
        "payers become tokens: {recording}"
    );
    assert_clean("the recording", &recording);
    assert_clean(
        "the report",
        &std::fs::read_to_string(&report).expect("a report"),
    );
    assert_clean("the console", &console);
    assert_clean("an exchange's page", &detail);
    assert_clean("/_proxy/report", &summary);
    assert_clean("the log and the summary", &stderr);
    assert!(
        stderr.contains("//***:***@"),
        "the upstream shown without its user name and password: {stderr}"
    );
}

#[tokio::test]
async fn an_unreachable_upstream_with_credentials_is_answered_without_them() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a port")
        .port();
    let config = payments_contract_proxy::ProxyConfig::new(
        format!("http://user:PASSWORD-CANARY@127.0.0.1:{port}/prefix")
            .parse()
            .expect("a URL"),
    );
    let proxy = payments_contract_proxy::Proxy::start(config)
        .await
        .expect("a proxy");
    let reply = reqwest::get(format!("{}/api/payments/x/status", proxy.base_url()))
        .await
        .expect("answered");
    assert_eq!(reply.status(), 502);
    assert_eq!(reply.headers()["x-contract-verdict"], "unchecked");
    let text = reply.text().await.expect("a body");
    assert!(text.contains("UPSTREAM_UNAVAILABLE"), "{text}");
    assert_clean("the error answer", &text);
    let exchanges = proxy.exchanges();
    assert_clean("the kept exchange", &format!("{exchanges:?}"));
    proxy.shutdown().await;
}

/// A key in the query (`?api_key=…`, and every parameter the mock's
/// journal redacts by the same rule) is `[redacted]` in the recording,
/// `/_proxy/exchanges`, the console and the log, written as the journal
/// writes it; the rest of the query stays as sent, byte for byte.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_in_the_query_is_recorded_redacted_and_the_rest_as_sent() {
    let upstream = echoing_upstream().await;
    let dir = tempfile::tempdir().expect("a directory");
    let record = dir.path().join("record.jsonl");
    let (child, base) = spawn_with(
        &proxy_args(&upstream, &["--record", &record.display().to_string()]),
        &[("RUST_LOG", "debug")],
    );
    let sent = "api_key=sk_test_LEAKCANARY123&a=%5B1%5D&confirmation%43ode=OTP-LEAKCANARY\
                &X-Amz-Signature=LEAKCANARYSIG&token%5B%5D=LEAKCANARYT&b=x+y";
    let kept = "api_key=[redacted]&a=%5B1%5D&confirmation%43ode=[redacted]\
                &X-Amz-Signature=[redacted]&token%5B%5D=[redacted]&b=x+y";
    let http = reqwest::Client::new();
    let answer = http
        .get(format!("{base}/api/payments/x/status?{sent}"))
        .send()
        .await
        .expect("answered");
    assert_eq!(answer.status(), 400);
    let listed: Value = http
        .get(format!("{base}/_proxy/exchanges"))
        .send()
        .await
        .expect("an answer")
        .json()
        .await
        .expect("JSON");
    let detail = http
        .get(format!("{base}/_proxy/ui/exchanges/1"))
        .send()
        .await
        .expect("a page")
        .text()
        .await
        .expect("text");
    let (_, stderr) = stop(child);
    let recording = std::fs::read_to_string(&record).expect("a recording");
    let line: Value =
        serde_json::from_str(recording.lines().next().expect("a line")).expect("JSON");
    assert_eq!(line["request"]["query"], kept, "{recording}");
    for (what, text) in [
        ("the recording", recording.as_str()),
        ("/_proxy/exchanges", &listed.to_string()),
        ("an exchange's page", &detail),
        ("the log", &stderr),
    ] {
        assert!(!text.contains("LEAKCANARY"), "{what}:\n{text}");
    }
}
