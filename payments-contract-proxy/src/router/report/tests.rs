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
            let streamed = collect(streamed(proxy.clone(), format, piece, copied)).await;
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
        let mut stream = std::pin::pin!(streamed(proxy.clone(), format, 16, usize::MAX));
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
