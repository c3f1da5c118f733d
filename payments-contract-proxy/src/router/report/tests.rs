//! The live report streamed: the same bytes as the trail's own writers,
//! whatever the pieces and chunks, and the judge free while a client does
//! not read.

use std::time::Duration;

use futures::StreamExt as _;
use serde_json::{Value, json};

use super::*;
use crate::ProxyConfig;
use crate::exchange::Exchange;
use crate::rules::test_support::{exchange, failure, initiate_body};

fn proxy() -> ProxyState {
    ProxyState::new(ProxyConfig::new(
        "http://127.0.0.1:9".parse().expect("a URL"),
    ))
    .expect("a proxy")
}

/// Exchange `seq` of every kind the writers tell apart: each endpoint,
/// outside them, violations, undocumented answers, not judged.
fn varied(seq: u64) -> (Exchange, bool) {
    let reference = format!("REF-{seq}");
    let mut e = match seq % 6 {
        0 => exchange(
            "POST",
            "/api/payments/initiate",
            initiate_body(&reference, 100),
            400,
            failure(&format!("NOT_A_CODE_{seq}_<&>")),
        ),
        1 => exchange(
            "GET",
            &format!("/api/payments/t{seq}/status"),
            Value::Null,
            502,
            json!("<html>"),
        ),
        2 => exchange(
            "POST",
            "/api/payments/confirm",
            json!({ "transactionId": format!("t{seq}"), "referenceNo": reference }),
            429,
            json!({}),
        ),
        3 => exchange(
            "GET",
            &format!("/api/payments/reference/{reference}/status"),
            Value::Null,
            404,
            failure("NOT_FOUND"),
        ),
        4 => exchange(
            "DELETE",
            &format!("/api/x/{seq}"),
            Value::Null,
            404,
            json!({}),
        ),
        _ => exchange(
            "GET",
            &format!("/api/payments/t{seq}/status"),
            Value::Null,
            200,
            json!("unjudged"),
        ),
    };
    e.seq = seq;
    e.duration_ms = f64::from(u32::try_from(seq).expect("a few")) * 1.25;
    (e, seq % 6 != 5)
}

fn judged(exchanges: u64) -> ProxyState {
    let proxy = proxy();
    for seq in 1..=exchanges {
        let (e, judged) = varied(seq);
        proxy.judge(e, judged);
    }
    proxy
}

/// The document as the trail writes it whole (the files at the stop).
fn whole(proxy: &ProxyState, format: Format) -> Vec<u8> {
    let judge = proxy.lock();
    let mut out = Vec::new();
    match format {
        Format::Junit => judge.trail.write_junit(&mut out, false),
        Format::Sarif => judge.trail.write_sarif(&mut out, None),
    }
    .expect("written");
    out
}

async fn collect(stream: impl futures::Stream<Item = io::Result<Bytes>>) -> Vec<u8> {
    let mut out = Vec::new();
    let mut stream = std::pin::pin!(stream);
    while let Some(piece) = stream.next().await {
        out.extend_from_slice(&piece.expect("a piece"));
    }
    out
}

#[tokio::test]
async fn streamed_the_same_bytes_as_written_whole_whatever_the_pieces() {
    let proxy = judged(120);
    for format in [Format::Junit, Format::Sarif] {
        let expected = whole(&proxy, format);
        let text = String::from_utf8_lossy(&expected);
        assert!(
            text.contains("envelope.shape") && text.contains("http.undocumented"),
            "{text}"
        );
        for (piece, copied) in [(1, 1), (7, 100), (PIECE, COPIED), (1 << 20, 1 << 30)] {
            let streamed = collect(streamed(
                proxy.clone(),
                format,
                (piece, copied, STALL),
                None,
            ))
            .await;
            assert!(
                streamed == expected,
                "{format:?} in pieces of {piece}, chunks of {copied}: {}",
                String::from_utf8_lossy(&streamed)
            );
        }
    }
}

/// A client that stops reading in the middle of the exchanges: the writer
/// waits on it, the judge does not (an exchange is judged meanwhile), and
/// the document then read is of the exchanges judged before it began.
#[tokio::test]
async fn a_client_that_does_not_read_holds_no_judging_up() {
    for (format, within) in [(Format::Junit, "<testcase"), (Format::Sarif, "\"ruleId\"")] {
        let proxy = judged(60);
        let expected = whole(&proxy, format);
        // Everything copied at once: a writer holding the judge while it
        // writes a chunk would hold it now.
        let mut stream = std::pin::pin!(streamed(
            proxy.clone(),
            format,
            (16, usize::MAX, STALL),
            None
        ));
        let mut read = Vec::new();
        while !String::from_utf8_lossy(&read).contains(within) {
            let piece = tokio::time::timeout(Duration::from_secs(30), stream.next())
                .await
                .expect("a piece in time")
                .expect("more")
                .expect("a piece");
            read.extend_from_slice(&piece);
        }
        // The client reads no more: an exchange is judged meanwhile.
        let judging = proxy.clone();
        let (done, finished) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let (e, judged) = varied(1000);
            judging.judge(e, judged);
            let _ = done.send(());
        });
        finished
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|_| panic!("{format:?}: the judge is held while the client waits"));
        while let Some(piece) = stream.next().await {
            read.extend_from_slice(&piece.expect("a piece"));
        }
        assert!(
            read == expected,
            "{format:?}: the exchanges judged before the request, whole"
        );
        assert_eq!(proxy.lock().trail.len(), 61);
    }
}

/// Reads `stream` to its end: the bytes, and whether it ended with an
/// error (broken off) rather than whole.
async fn drain(stream: impl futures::Stream<Item = io::Result<Bytes>>) -> (Vec<u8>, bool) {
    let mut stream = std::pin::pin!(stream);
    let mut read = Vec::new();
    while let Some(piece) = tokio::time::timeout(Duration::from_secs(30), stream.next())
        .await
        .expect("a piece or the end in time")
    {
        match piece {
            Ok(piece) => read.extend_from_slice(&piece),
            Err(_) => return (read, true),
        }
    }
    (read, false)
}

/// A client that stops reading with the connection open: after the
/// stall the writer stops (its blocking thread and its place let go), and
/// the client then sees the body broken off, never a short document as
/// if whole.
#[tokio::test]
async fn a_client_that_stops_reading_lets_the_writer_go_after_the_stall() {
    let proxy = judged(600);
    for format in [Format::Junit, Format::Sarif] {
        let expected = whole(&proxy, format);
        // The writers buffer 8 KiB before a piece goes out: many more
        // pieces than the channel holds.
        assert!(
            expected.len() > 4 * (AHEAD + 1) * 8 * 1024,
            "{}",
            expected.len()
        );
        let streams = Streams::new(1, Duration::from_millis(100));
        let permit = Arc::clone(&streams.permits)
            .try_acquire_owned()
            .expect("a place");
        let mut stream = Box::pin(streamed(
            proxy.clone(),
            format,
            (16, usize::MAX, streams.stall),
            Some(permit),
        ));
        let first = stream.next().await.expect("a piece").expect("written");
        assert!(expected.starts_with(&first));
        // The client reads no more: the place comes back.
        let place = tokio::time::timeout(Duration::from_secs(30), streams.permits.acquire())
            .await
            .unwrap_or_else(|_| panic!("{format:?}: the writer is held by a client that stalls"))
            .expect("the semaphore is open");
        drop(place);
        let (rest, broken) = drain(stream).await;
        assert!(broken, "{format:?}: the body ends broken off");
        assert!(rest.len() + first.len() < expected.len(), "{format:?}");
        // A client that reads gets it whole with the same short stall.
        let (read, broken) = drain(streamed(
            proxy.clone(),
            format,
            (16, usize::MAX, streams.stall),
            None,
        ))
        .await;
        assert!(!broken && read == expected, "{format:?}: whole");
    }
}

fn report_request(format: &str) -> axum::http::Request<Body> {
    axum::http::Request::get(format!("/_proxy/report?format={format}"))
        .header("host", "127.0.0.1")
        .body(Body::empty())
        .expect("a request")
}

/// As many reports at once as the proxy writes, each with a client that
/// does not read: one more is answered 503 with `Retry-After` and the
/// error envelope; when one of them goes away, the next is served.
#[tokio::test]
async fn one_report_more_than_written_at_once_is_answered_503() {
    use tower::ServiceExt as _;
    // Each writer blocks on its full channel: the document is far longer
    // than the pieces written ahead.
    let proxy = judged(3000);
    assert!(whole(&proxy, Format::Junit).len() > 2 * (AHEAD + 1) * PIECE);
    let router = crate::router::router(proxy.clone());
    let mut held = Vec::new();
    for n in 0..AT_ONCE {
        let format = if n % 2 == 0 { "junit" } else { "sarif" };
        let response = router
            .clone()
            .oneshot(report_request(format))
            .await
            .expect("answered");
        assert_eq!(response.status(), 200, "report {n}");
        held.push(response);
    }
    let refused = router
        .clone()
        .oneshot(report_request("junit"))
        .await
        .expect("answered");
    assert_eq!(refused.status(), 503);
    assert_eq!(refused.headers()["retry-after"], "5");
    let body = axum::body::to_bytes(refused.into_body(), usize::MAX)
        .await
        .expect("the body");
    let envelope: Value = serde_json::from_slice(&body).expect("JSON");
    assert_eq!(envelope["isSuccess"], json!(false), "{envelope}");
    assert_eq!(envelope["errorCode"], json!("RATE_LIMITED"), "{envelope}");
    // The summary is no stream: never refused.
    let summary = router
        .clone()
        .oneshot(report_request("json"))
        .await
        .expect("answered");
    assert_eq!(summary.status(), 200);
    // A client goes away: its writer stops, and its place is free.
    held.pop();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let response = router
            .clone()
            .oneshot(report_request("junit"))
            .await
            .expect("answered");
        if response.status() == 200 {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the place of a client that went away is never freed"
        );
        tokio::task::yield_now().await;
    }
}
