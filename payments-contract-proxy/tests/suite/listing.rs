//! `GET /_proxy/exchanges` (issue 44): the last judged exchanges, short,
//! oldest first, paged with `after` by the order they were judged in; each
//! with its verdict, its findings' rules and levels, and the transaction
//! it is about when the exchange or the proxy's memory knows it. Bad
//! `after` and `limit` values are 400 `VALIDATION_ERROR`, never a panic.

use std::sync::Arc;

use axum::http::Method;
use serde_json::{Value, json};

use crate::rig::{Rig, confirm_body, initiate_body, initiate_data, status_data};
use crate::upstream::Canned;

const ID: &str = "0193e8b1-7c2a-7d4e-9f10-2b3c4d5e6f70";

/// The envelope of `GET /_proxy/exchanges{query}`, asserted a success.
async fn listing(rig: &Rig, query: &str) -> Vec<Value> {
    let reply = rig
        .client
        .get(rig.url(&format!("/_proxy/exchanges{query}")))
        .send()
        .await
        .expect("the proxy answers");
    assert_eq!(reply.status(), 200, "{query}");
    let envelope: Value = reply.json().await.expect("an envelope");
    assert_eq!(envelope["isSuccess"], true, "{envelope}");
    envelope["data"]["items"]
        .as_array()
        .expect("data.items")
        .clone()
}

fn seqs(items: &[Value]) -> Vec<u64> {
    items
        .iter()
        .map(|i| i["seq"].as_u64().expect("a seq"))
        .collect()
}

#[tokio::test]
async fn each_exchange_is_listed_with_its_verdict_findings_and_transaction() {
    let rig = Rig::start().await;
    assert_eq!(listing(&rig, "").await, Vec::<Value>::new(), "none yet");
    rig.exchange(
        &Method::POST,
        "/api/payments/initiate",
        Some(&initiate_body("INV-44", 1050)),
        Canned::ok(initiate_data(ID, "INV-44", 1050)).header("x-request-id", "rq-initiate"),
    )
    .await;
    // A status by id the service answers 500 with an HTML page: a violation.
    rig.exchange(
        &Method::GET,
        &format!("/api/payments/{ID}/status"),
        None,
        Canned::raw(500, "<html>oops</html>"),
    )
    .await;
    // A status by reference: the proxy remembers its transaction.
    rig.exchange(
        &Method::GET,
        "/api/payments/reference/INV-44/status?x=1",
        None,
        Canned::ok(status_data(ID, "INV-44", "INITIATED", "10.50")),
    )
    .await;
    rig.exchange(
        &Method::POST,
        "/api/payments/confirm",
        Some(&confirm_body(ID, "INV-44")),
        Canned::failure(400, "TRANSACTION_EXPIRED"),
    )
    .await;

    let items = listing(&rig, "").await;
    assert_eq!(seqs(&items), [1, 2, 3, 4]);
    let initiate = &items[0];
    assert_eq!(initiate["method"], "POST");
    assert_eq!(initiate["path"], "/api/payments/initiate");
    assert_eq!(initiate["query"], Value::Null);
    assert_eq!(initiate["status"], 200);
    assert_eq!(initiate["verdict"], "pass");
    assert_eq!(initiate["findings"], json!([]));
    assert_eq!(initiate["errorCode"], Value::Null);
    assert_eq!(initiate["requestId"], "rq-initiate");
    assert_eq!(initiate["referenceNo"], "INV-44");
    assert_eq!(initiate["transactionId"], ID);
    assert!(initiate["durationMs"].as_f64().is_some(), "{initiate}");
    assert!(
        initiate["time"].as_str().is_some_and(|t| t.ends_with('Z')),
        "{initiate}"
    );

    let by_id = &items[1];
    assert_eq!(by_id["status"], 500);
    assert_eq!(by_id["verdict"], "violation");
    let findings = by_id["findings"].as_array().expect("findings");
    assert!(
        findings.contains(&json!({"rule": "envelope.shape", "level": "violation"})),
        "{by_id}"
    );
    assert!(
        findings
            .iter()
            .all(|f| f.as_object().is_some_and(|f| f.len() == 2)),
        "rule and level only: {by_id}"
    );
    assert_eq!(by_id["transactionId"], ID);
    assert_eq!(by_id["referenceNo"], "INV-44", "remembered of its initiate");

    let by_reference = &items[2];
    assert_eq!(by_reference["query"], "x=1");
    assert_eq!(by_reference["referenceNo"], "INV-44");
    assert_eq!(by_reference["transactionId"], ID);

    let confirm = &items[3];
    assert_eq!(confirm["errorCode"], "TRANSACTION_EXPIRED");
    assert_eq!(confirm["verdict"], "undocumented");
    assert_eq!(confirm["referenceNo"], "INV-44");
    assert_eq!(confirm["transactionId"], ID);

    // Pages: the newest `limit` without `after`; after a seq, what came
    // after it.
    assert_eq!(seqs(&listing(&rig, "?limit=2").await), [3, 4]);
    assert_eq!(seqs(&listing(&rig, "?after=1").await), [2, 3, 4]);
    assert_eq!(seqs(&listing(&rig, "?after=1&limit=1").await), [2]);
    assert_eq!(seqs(&listing(&rig, "?after=4").await), Vec::<u64>::new());
    assert_eq!(
        seqs(&listing(&rig, "?after=0&limit=1000").await),
        [1, 2, 3, 4]
    );
    // The console's summary counts findings, not exchanges (one exchange
    // may have several): it says so.
    let page = rig
        .client
        .get(rig.url("/_proxy/ui/"))
        .send()
        .await
        .expect("the console answers")
        .text()
        .await
        .expect("a page");
    assert!(
        page.contains("4 exchanges had been checked, with findings: "),
        "{page}"
    );
}

#[tokio::test]
async fn a_slow_exchange_judged_after_a_later_one_is_not_skipped() {
    let rig = Rig::start().await;
    // The slow answer waits until the quick one was judged and listed.
    let release = Arc::new(tokio::sync::Notify::new());
    rig.upstream
        .push(Canned::raw(200, "slow").held_until(Arc::clone(&release)));
    let slow = {
        let client = rig.client.clone();
        let url = rig.url("/api/payments/slow/status");
        tokio::spawn(async move { client.get(url).send().await.expect("answered").status() })
    };
    rig.upstream.until_received(1).await;
    rig.exchange(
        &Method::GET,
        "/api/payments/quick/status",
        None,
        Canned::raw(200, "quick"),
    )
    .await;
    // A follower has seen the quick one (2) only.
    let seen = listing(&rig, "").await;
    assert_eq!(seqs(&seen), [2]);
    release.notify_one();
    assert_eq!(slow.await.expect("the slow request"), 200);
    // Asking after the last it saw gives the slow one (1), judged later.
    assert_eq!(seqs(&listing(&rig, "?after=2").await), [1]);
    assert_eq!(
        seqs(&listing(&rig, "").await),
        [2, 1],
        "in the order judged"
    );
}

#[tokio::test]
async fn bad_after_and_limit_are_refused_with_the_reason() {
    let rig = Rig::start().await;
    rig.exchange(
        &Method::GET,
        "/api/payments/x/status",
        None,
        Canned::raw(200, "x"),
    )
    .await;
    let long = "9".repeat(10_000);
    let cases = [
        (
            "after=",
            "after must be a whole number from 0 to 9223372036854775807",
        ),
        ("after=-1", "after must be"),
        ("after=%2B1", "after must be"),
        ("after=1.0", "after must be"),
        ("after=%201", "after must be"),
        ("after=%FF%FE", "after must be"),
        ("after=0x10", "after must be"),
        ("after=9223372036854775808", "after must be"),
        ("after=18446744073709551616", "after must be"),
        (&format!("after={long}"), "after must be"),
        ("limit=", "limit must be a whole number from 1 to 1000"),
        ("limit=0", "limit must be a whole number from 1 to 1000"),
        ("limit=1001", "limit must be"),
        ("limit=-1", "limit must be"),
        ("limit=18446744073709551616", "limit must be"),
        ("limit=ten", "limit must be"),
        ("after=x&limit=0", "; limit must be"),
    ];
    for (query, expected) in cases {
        let reply = rig
            .client
            .get(rig.url(&format!("/_proxy/exchanges?{query}")))
            .send()
            .await
            .expect("the proxy answers");
        assert_eq!(reply.status(), 400, "{query:.60}");
        let envelope: Value = reply.json().await.expect("an envelope");
        assert_eq!(envelope["isSuccess"], false);
        assert_eq!(envelope["errorCode"], "VALIDATION_ERROR");
        assert_eq!(envelope["data"], Value::Null);
        let message = envelope["message"].as_str().expect("a message");
        assert!(message.contains(expected), "{query:.60}: {message}");
        assert!(
            message.len() < 300,
            "the value is not echoed: {message:.80}"
        );
    }
    // The proxy still serves, and a repeated parameter takes its first.
    assert_eq!(seqs(&listing(&rig, "?after=0&after=x").await), [1]);
    assert_eq!(seqs(&listing(&rig, "?unknown=1").await), [1]);
}

#[tokio::test]
async fn the_listing_keeps_the_last_thousand() {
    let rig = Rig::start().await;
    for n in 0..1005 {
        rig.upstream.push(Canned::raw(404, "none"));
        let _ = rig
            .send(&Method::GET, &format!("/api/payments/t-{n}/status"), None)
            .await;
    }
    let items = listing(&rig, "").await;
    assert_eq!(items.len(), 1000);
    assert_eq!(items[0]["seq"], 6);
    assert_eq!(items[999]["seq"], 1005);
    // A seq no longer kept: those numbered above it.
    assert_eq!(seqs(&listing(&rig, "?after=3&limit=2").await), [6, 7]);
}

/// The caller's `traceparent` (CONTRACT section 21): its trace and span
/// id are in the listing, the report line and the recording line of its
/// exchange; a malformed one is ignored (no ids, the exchange passes
/// through as ever).
#[tokio::test]
async fn the_callers_trace_is_listed_reported_and_recorded() {
    let dir = tempfile::tempdir().expect("a directory");
    let rig = Rig::configured(|config| {
        config.report = Some(dir.path().join("report.jsonl"));
        config.record = Some(dir.path().join("run.jsonl"));
    })
    .await;
    let good = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    for (reference, traceparent) in [("TR-1", good), ("TR-2", "00-nonsense-01")] {
        rig.upstream
            .push(Canned::ok(initiate_data(ID, reference, 1050)));
        let reply = rig
            .client
            .post(rig.url("/api/payments/initiate"))
            .header("content-type", "application/json")
            .header("traceparent", traceparent)
            .body(initiate_body(reference, 1050).to_string())
            .send()
            .await
            .expect("the proxy answers");
        assert_eq!(reply.status(), 200);
    }
    let items = listing(&rig, "").await;
    assert_eq!(items[0]["traceId"], "4bf92f3577b34da6a3ce929d0e0e4736");
    assert_eq!(items[0]["spanId"], "00f067aa0ba902b7");
    assert!(items[1].get("traceId").is_none(), "{}", items[1]);
    rig.proxy.finish().await;
    for file in ["report.jsonl", "run.jsonl"] {
        let text = std::fs::read_to_string(dir.path().join(file)).expect("written");
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect();
        assert_eq!(lines.len(), 2, "{file}");
        assert_eq!(
            lines[0]["traceId"], "4bf92f3577b34da6a3ce929d0e0e4736",
            "{file}"
        );
        assert_eq!(lines[0]["spanId"], "00f067aa0ba902b7", "{file}");
        assert!(lines[1].get("traceId").is_none(), "{file}: {}", lines[1]);
    }
}

/// An application that gives up (closes its connection) before the
/// upstream answers: the upstream carried the request out, so the
/// exchange is judged, listed and reported all the same. The handler was
/// dropped with the connection before, and nothing kept the exchange.
#[tokio::test]
async fn an_exchange_the_application_gave_up_on_is_still_judged_and_listed() {
    use tokio::io::AsyncWriteExt as _;
    let rig = Rig::start().await;
    let release = Arc::new(tokio::sync::Notify::new());
    rig.upstream
        .push(Canned::ok(initiate_data(ID, "GAVE-UP", 1050)).held_until(Arc::clone(&release)));
    let body = initiate_body("GAVE-UP", 1050).to_string();
    let mut stream = tokio::net::TcpStream::connect(rig.proxy.addr())
        .await
        .expect("connect to the proxy");
    let request = format!(
        "POST /api/payments/initiate HTTP/1.1\r\nHost: proxy.test\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.expect("sent");
    rig.upstream.until_received(1).await;
    drop(stream);
    release.notify_one();
    // Asked until it is there (each ask is a request to the proxy; a
    // bound, not a pause).
    let items = tokio::time::timeout(std::time::Duration::from_secs(10), async {
        loop {
            let items = listing(&rig, "").await;
            if !items.is_empty() {
                break items;
            }
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("the exchange is listed within 10 s");
    assert_eq!(seqs(&items), [1], "the exchange is listed");
    assert_eq!(items[0]["verdict"], "pass");
    assert_eq!(items[0]["referenceNo"], "GAVE-UP");
}
