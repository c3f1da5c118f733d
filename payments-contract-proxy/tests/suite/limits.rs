//! What keeps one exchange from holding the proxy: a request body that
//! stops coming, an answer that stops mid-stream, a client that never
//! reads, a request the proxy refuses; each recorded as the proxy's own,
//! `unchecked`, with the verdict header like every answer.

use std::time::Duration;

use axum::http::Method;
use payments_contract_proxy::JUDGE_LIMIT;

use crate::passthrough::pattern;
use crate::rig::{Reply, Rig, Setup, initiate_body, initiate_data};
use crate::targets::raw_get;
use crate::upstream::Canned;

/// A short upstream timeout: these tests wait for it.
fn short() -> Setup {
    Setup {
        upstream_timeout: Duration::from_millis(300),
        ..Setup::default()
    }
}

#[tokio::test]
async fn a_request_body_that_stops_coming_is_400_within_the_timeout_and_never_forwarded() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let rig = Rig::with(short()).await;
    let mut stream = tokio::net::TcpStream::connect(rig.proxy.addr())
        .await
        .expect("connect to the proxy");
    // Promises 100 bytes, sends 10, then nothing.
    stream
        .write_all(
            b"POST /api/payments/initiate HTTP/1.1\r\nHost: proxy.test\r\n\
              Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"merchan",
        )
        .await
        .expect("write");
    let mut answer = vec![0; 4096];
    let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut answer))
        .await
        .expect("the proxy answers a stalled body, never waits for ever")
        .expect("read");
    let head = String::from_utf8_lossy(&answer[..n]);
    assert!(head.starts_with("HTTP/1.1 400"), "{head}");
    assert!(
        head.to_ascii_lowercase()
            .contains("x-contract-verdict: unchecked"),
        "{head}"
    );
    assert!(head.contains("VALIDATION_ERROR"), "{head}");
    assert!(
        head.contains("the request body paused for longer than"),
        "{head}"
    );
    assert_eq!(rig.upstream.count(), 0, "nothing forwarded");
    let summary = rig.proxy.summary();
    assert_eq!(summary.exchanges, 1);
    assert_eq!(summary.verdicts.get("unchecked"), Some(&1));
}

/// A chunked body whose framing is malformed is answered at once in the
/// mock's words ("request body could not be read"), never said to have
/// paused (it said "broke off or paused for longer than 30s" at once).
#[tokio::test]
async fn a_malformed_chunked_body_is_400_saying_it_could_not_be_read() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let rig = Rig::with(short()).await;
    for size in ["zz", "-5", "0x15"] {
        let mut stream = tokio::net::TcpStream::connect(rig.proxy.addr())
            .await
            .expect("connect to the proxy");
        stream
            .write_all(
                format!(
                    "POST /api/payments/initiate HTTP/1.1\r\nHost: proxy.test\r\n\
                     Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n\
                     {size}\r\n{{}}\r\n0\r\n\r\n"
                )
                .as_bytes(),
            )
            .await
            .expect("write");
        let mut answer = vec![0; 4096];
        let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut answer))
            .await
            .expect("answered")
            .expect("read");
        let text = String::from_utf8_lossy(&answer[..n]);
        if text.is_empty() {
            // The HTTP library closed it without an answer: no claim made.
            continue;
        }
        assert!(text.starts_with("HTTP/1.1 400"), "{size}: {text}");
        assert!(!text.contains("paused"), "{size}: {text}");
    }
    assert_eq!(rig.upstream.count(), 0, "nothing forwarded");
}

#[tokio::test]
async fn an_answer_that_stops_mid_stream_ends_the_applications_body_with_an_error() {
    let rig = Rig::with(short()).await;
    // Over the judging limit, so it streams; then the upstream goes quiet.
    rig.upstream
        .push(Canned::raw(200, pattern(JUDGE_LIMIT + 1024 * 1024)).then_stall());
    let response = rig
        .client
        .get(rig.url("/api/payments/t-quiet/status"))
        .send()
        .await
        .expect("the head arrives");
    assert_eq!(response.status(), 200);
    let body = tokio::time::timeout(Duration::from_secs(10), response.bytes())
        .await
        .expect("the body ends: an idle upstream does not hold it open");
    assert!(
        body.is_err(),
        "a cut-off body is an error, never a short success"
    );
}

#[tokio::test]
async fn shutdown_is_bounded_by_a_client_that_never_reads() {
    let Rig {
        upstream,
        proxy,
        client,
    } = Rig::with(short()).await;
    upstream.push(Canned::raw(200, pattern(JUDGE_LIMIT + 32 * 1024 * 1024)));
    // The head only: the body is never read, so the exchange stays open.
    let response = client
        .get(format!("{}/api/payments/t-slow/status", proxy.base_url()))
        .send()
        .await
        .expect("the head arrives");
    assert_eq!(response.status(), 200);
    let summary = tokio::time::timeout(Duration::from_secs(20), proxy.shutdown())
        .await
        .expect("shutdown ends after the upstream timeout and a second, not never");
    assert_eq!(summary.exchanges, 1);
    drop(response);
}

#[tokio::test]
async fn a_compressed_request_is_forwarded_untouched_and_unchecked() {
    let rig = Rig::start().await;
    // Judged, this answer would be initiate.accepted-invalid.
    rig.upstream
        .push(Canned::ok(initiate_data("t-gz", "R-gz", 1050)));
    let reply = Reply::of(
        rig.client
            .post(rig.url("/api/payments/initiate"))
            .header("content-type", "application/json")
            .header("content-encoding", "gzip")
            .body(vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3])
            .send()
            .await
            .expect("the proxy answers"),
    )
    .await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.verdict(), "unchecked");
    assert_eq!(
        rig.upstream.only_request().body.as_ref(),
        [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3],
        "the compressed bytes, not decoded"
    );
    assert!(rig.proxy.summary().rules.is_empty());
}

#[tokio::test]
async fn a_refused_dot_segment_is_recorded_as_the_proxys_own_unchecked_answer() {
    let rig = Rig::start().await;
    assert_eq!(raw_get(rig.proxy.addr(), "/api/../admin", "").await, 404);
    assert_eq!(rig.upstream.count(), 0);
    let exchanges = rig.proxy.exchanges();
    let (exchange, verdict, findings) = exchanges.last().expect("recorded");
    assert!(exchange.proxy_answer);
    assert_eq!(exchange.response.status, 404);
    assert_eq!(verdict.as_str(), "unchecked");
    assert!(findings.is_empty());
    // The next exchange is judged as usual.
    let reply = rig
        .exchange(
            &Method::POST,
            "/api/payments/initiate",
            Some(&initiate_body("R-next", 1050)),
            Canned::ok(initiate_data("t-next", "R-next", 1050)),
        )
        .await;
    assert_eq!(reply.verdict(), "pass", "{:?}", reply.json());
    assert_eq!(rig.proxy.summary().verdicts.get("pass"), Some(&1));
}
