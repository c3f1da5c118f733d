//! Injected faults (CONTRACT section 10) against a running server; resets
//! are checked over raw TCP: not one response byte may arrive.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

use payments_mock_server::{Fault, MockServer};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::common::initiate_body;

/// Sends raw bytes and reads until the server closes; a guard against a
/// hang, not a sleep.
async fn raw(addr: SocketAddr, request: &[u8]) -> Vec<u8> {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    stream.write_all(request).await.expect("write");
    let mut out = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), async {
        let mut buf = [0u8; 4096];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => out.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    assert!(read.is_ok(), "the server neither answered nor closed");
    out
}

fn initiate_request(reference: &str, fault: Option<&str>) -> Vec<u8> {
    let body = initiate_body(reference, "TOPUP").to_string();
    let fault = fault
        .map(|f| format!("X-Mock-Fault: {f}\r\n"))
        .unwrap_or_default();
    format!(
        "POST /api/payments/initiate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
         Connection: close\r\n{fault}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

async fn initiate_http(server: &MockServer, reference: &str, fault: Option<&str>) -> (u16, Value) {
    let mut req = reqwest::Client::new()
        .post(format!("{}/api/payments/initiate", server.base_url()))
        .header("content-type", "application/json")
        .body((initiate_body(reference, "TOPUP")).to_string());
    if let Some(fault) = fault {
        req = req.header("x-mock-fault", fault);
    }
    let response = req.send().await.expect("a response");
    let status = response.status().as_u16();
    (
        status,
        serde_json::from_slice(&response.bytes().await.expect("body")).expect("envelope"),
    )
}

#[tokio::test]
async fn reset_closes_the_connection_with_no_bytes_and_changes_nothing() {
    let server = MockServer::start().await;
    let bytes = raw(server.addr(), &initiate_request("RST-1", Some("reset"))).await;
    assert!(bytes.is_empty(), "{}", String::from_utf8_lossy(&bytes));
    assert!(server.transactions().await.is_empty());
    let journal = server.requests().await;
    assert_eq!(journal[0].fault.as_deref(), Some("reset"));
    assert_eq!(journal[0].status, None);
}

#[tokio::test]
async fn commit_then_reset_commits_and_closes_with_no_bytes() {
    let server = MockServer::start().await;
    let bytes = raw(
        server.addr(),
        &initiate_request("RST-2", Some("commit-then-reset")),
    )
    .await;
    assert!(bytes.is_empty(), "{}", String::from_utf8_lossy(&bytes));
    let stored = server.transactions().await;
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].reference_no, "RST-2");
}

#[tokio::test]
async fn a_normal_raw_request_gets_bytes() {
    let server = MockServer::start().await;
    let bytes = raw(server.addr(), &initiate_request("RAW-1", None)).await;
    assert!(bytes.starts_with(b"HTTP/1.1 200"));
}

#[tokio::test]
async fn internal_error_changes_nothing() {
    let server = MockServer::start().await;
    let (status, body) = initiate_http(&server, "IE-1", Some("internal-error")).await;
    assert_eq!(
        (status, body["errorCode"].as_str()),
        (500, Some("INTERNAL_ERROR"))
    );
    assert!(server.transactions().await.is_empty());
}

#[tokio::test]
async fn commit_then_error_commits_and_answers_500() {
    let server = MockServer::start().await;
    let (status, body) = initiate_http(&server, "CE-1", Some("commit-then-error, delay=5")).await;
    assert_eq!(
        (status, body["errorCode"].as_str()),
        (500, Some("INTERNAL_ERROR"))
    );
    assert_eq!(server.transactions().await.len(), 1);
    let (status, body) = initiate_http(&server, "CE-1", None).await;
    assert_eq!(
        (status, body["errorCode"].as_str()),
        (400, Some("DUPLICATE_REFERENCE_NO"))
    );
    assert_eq!(
        server.requests().await[0].fault.as_deref(),
        Some("commit-then-error,delay=5")
    );
}

#[tokio::test]
async fn queued_faults_are_taken_one_per_request() {
    let server = MockServer::start().await;
    server.inject_faults([Fault::Reset, Fault::RateLimit, Fault::CommitThenError]);
    let bytes = raw(server.addr(), &initiate_request("Q-1", None)).await;
    assert!(bytes.is_empty());
    let (status, _) = initiate_http(&server, "Q-1", None).await;
    assert_eq!(status, 429);
    let (status, _) = initiate_http(&server, "Q-1", None).await;
    assert_eq!(status, 500);
    let (status, body) = initiate_http(&server, "Q-1", None).await;
    assert_eq!(
        (status, body["errorCode"].as_str()),
        (400, Some("DUPLICATE_REFERENCE_NO"))
    );
}

#[tokio::test]
async fn queued_commit_then_reset_commits() {
    let server = MockServer::start().await;
    server.inject_faults([Fault::CommitThenReset]);
    let bytes = raw(server.addr(), &initiate_request("Q-2", None)).await;
    assert!(bytes.is_empty());
    assert_eq!(server.transactions().await.len(), 1);
}

#[tokio::test]
async fn fail_rate_one_faults_every_api_request_but_never_mock_controls() {
    let server = MockServer::builder()
        .fail_rate(1.0)
        .fault_seed(7)
        .start()
        .await
        .expect("start");
    for i in 0..8 {
        let _ = raw(server.addr(), &initiate_request(&format!("FR-{i}"), None)).await;
    }
    let journal = server.requests().await;
    assert_eq!(journal.len(), 8);
    assert!(journal.iter().all(|e| e.fault.is_some()));
    let health = reqwest::get(format!("{}/_mock/health", server.base_url()))
        .await
        .expect("health");
    assert_eq!(health.status(), 200);
}

#[tokio::test]
async fn the_same_seed_gives_the_same_faults() {
    let mut runs = Vec::new();
    for _ in 0..2 {
        let server = MockServer::builder()
            .fail_rate(0.5)
            .fault_seed(42)
            .start()
            .await
            .expect("start");
        for i in 0..12 {
            let _ = raw(server.addr(), &initiate_request(&format!("S-{i}"), None)).await;
        }
        runs.push(
            server
                .requests()
                .await
                .into_iter()
                .map(|e| e.fault)
                .collect::<Vec<_>>(),
        );
    }
    assert_eq!(runs[0], runs[1]);
}

/// A raw `Connection: close` request with an optional JSON body.
fn raw_request(method: &str, path: &str, body: Option<&str>) -> Vec<u8> {
    let body = body.unwrap_or("");
    format!(
        "{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
         Connection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Runs `work` for every index of `order`: one after another, or all at
/// once on spawned tasks.
async fn each<F, Fut>(order: &[usize], concurrent: bool, work: F)
where
    F: Fn(usize) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    if concurrent {
        let tasks: Vec<_> = order.iter().map(|&i| tokio::spawn(work(i))).collect();
        for task in tasks {
            task.await.expect("task");
        }
    } else {
        for &i in order {
            work(i).await;
        }
    }
}

const REFERENCES: usize = 24;

/// Drives one server through the same logical requests in the given order:
/// every initiate twice (a request and its retry), then for every stored
/// transaction two confirms, a status by id and a status by reference.
async fn drive(server: &MockServer, order: &[usize], concurrent: bool) {
    let addr = server.addr();
    each(order, concurrent, move |i| async move {
        let body = initiate_body(&format!("DET-{i}"), "TOPUP").to_string();
        for _ in 0..2 {
            let _ = raw(
                addr,
                &raw_request("POST", "/api/payments/initiate", Some(&body)),
            )
            .await;
        }
    })
    .await;
    let ids: BTreeMap<String, String> = server
        .transactions()
        .await
        .into_iter()
        .map(|t| (t.reference_no, t.transaction_id))
        .collect();
    let ids = std::sync::Arc::new(ids);
    each(order, concurrent, move |i| {
        let ids = ids.clone();
        async move {
            let reference = format!("DET-{i}");
            let Some(id) = ids.get(&reference) else {
                return;
            };
            let body = serde_json::json!({ "transactionId": id, "referenceNo": reference });
            for _ in 0..2 {
                let _ = raw(
                    addr,
                    &raw_request("POST", "/api/payments/confirm", Some(&body.to_string())),
                )
                .await;
            }
            let _ = raw(
                addr,
                &raw_request("GET", &format!("/api/payments/{id}/status"), None),
            )
            .await;
            let _ = raw(
                addr,
                &raw_request(
                    "GET",
                    &format!("/api/payments/reference/{reference}/status"),
                    None,
                ),
            )
            .await;
        }
    })
    .await;
}

/// What each logical request drew, from the journal: (call, referenceNo)
/// → the faults of its attempts in the order they were sent. Ids are
/// mapped back to references: they differ from server to server.
async fn decisions(server: &MockServer) -> BTreeMap<(String, String), Vec<Option<String>>> {
    let references: BTreeMap<String, String> = server
        .transactions()
        .await
        .into_iter()
        .map(|t| (t.transaction_id, t.reference_no))
        .collect();
    let mut out: BTreeMap<(String, String), Vec<Option<String>>> = BTreeMap::new();
    for entry in server.requests().await {
        let body: Value = serde_json::from_str(&entry.body).unwrap_or(Value::Null);
        let body_reference = body["referenceNo"].as_str().unwrap_or("").to_owned();
        let key = match (entry.method.as_str(), entry.path.as_str()) {
            ("POST", "/api/payments/initiate") => ("initiate".to_owned(), body_reference),
            ("POST", "/api/payments/confirm") => ("confirm".to_owned(), body_reference),
            (_, path) => match path.strip_prefix("/api/payments/reference/") {
                Some(rest) => (
                    "status by reference".to_owned(),
                    rest.trim_end_matches("/status").to_owned(),
                ),
                None => {
                    let id = path
                        .trim_start_matches("/api/payments/")
                        .trim_end_matches("/status");
                    let reference = references.get(id).expect("a stored id").clone();
                    ("status by id".to_owned(), reference)
                }
            },
        };
        out.entry(key).or_default().push(entry.fault);
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_seed_gives_each_request_the_same_faults_in_any_order() {
    let in_order: Vec<usize> = (0..REFERENCES).collect();
    // Another order: reversed, interleaved, and sent all at once.
    let mut shuffled: Vec<usize> = (0..REFERENCES).rev().collect();
    shuffled.rotate_left(REFERENCES / 3);
    let mut runs = Vec::new();
    for (order, concurrent) in [(&in_order, false), (&shuffled, true)] {
        let server = MockServer::builder()
            .fail_rate(0.5)
            .fault_seed(42)
            .latency(Duration::ZERO..=Duration::from_millis(2))
            .start()
            .await
            .expect("start");
        drive(&server, order, concurrent).await;
        let mut held: Vec<_> = server
            .transactions()
            .await
            .into_iter()
            .map(|t| (t.reference_no, t.status))
            .collect();
        held.sort();
        runs.push((decisions(&server).await, held));
        server.shutdown().await;
    }
    let (first, held_first) = &runs[0];
    let (second, held_second) = &runs[1];
    assert_eq!(first, second);
    assert_eq!(held_first, held_second);
    // The draws are a real mix: faults and clean requests, all four
    // failures, on every kind of call.
    let faults: Vec<&str> = first
        .values()
        .flatten()
        .flatten()
        .map(String::as_str)
        .collect();
    for fault in [
        "internal-error",
        "commit-then-error",
        "reset",
        "commit-then-reset",
    ] {
        assert!(faults.contains(&fault), "{fault} never drawn: {first:?}");
    }
    assert!(first.values().flatten().any(Option::is_none));
    for call in ["initiate", "confirm", "status by id", "status by reference"] {
        assert!(first.keys().any(|(c, _)| c == call), "no {call}: {first:?}");
    }
    // A retry draws afresh: not every request repeats its first draw.
    assert!(
        first
            .values()
            .any(|attempts| attempts.windows(2).any(|w| w[0] != w[1])),
        "{first:?}"
    );
}

#[tokio::test]
async fn without_a_seed_the_random_one_is_told_and_repeats_the_run() {
    let server = MockServer::builder()
        .fail_rate(0.5)
        .start()
        .await
        .expect("start");
    let seed = server.fault_seed();
    let order: Vec<usize> = (0..REFERENCES).collect();
    drive(&server, &order, false).await;
    let first = decisions(&server).await;
    let again = MockServer::builder()
        .fail_rate(0.5)
        .fault_seed(seed)
        .start()
        .await
        .expect("start");
    assert_eq!(again.fault_seed(), seed);
    drive(&again, &order, true).await;
    assert_eq!(decisions(&again).await, first);
    // `/_mock/reset` forgets how often each request was seen: the same
    // requests draw the same faults again.
    again.reset().await;
    drive(&again, &order, false).await;
    assert_eq!(decisions(&again).await, first);
}

#[tokio::test]
async fn rate_limit_answers_429_with_retry_after_beyond_the_limit() {
    let server = MockServer::builder()
        .rate_limit(2)
        .start()
        .await
        .expect("start");
    let client = reqwest::Client::new();
    let url = format!("{}/api/payments/x/status", server.base_url());
    let mut statuses = Vec::new();
    let mut retry_after = None;
    for _ in 0..3 {
        let r = client.get(&url).send().await.expect("response");
        statuses.push(r.status().as_u16());
        if r.status() == 429 {
            retry_after = r.headers().get("retry-after").cloned();
        }
    }
    assert_eq!(statuses, [404, 404, 429]);
    assert_eq!(retry_after.as_ref().map(|v| v.as_bytes()), Some(&b"1"[..]));
    // Admin endpoints are never limited.
    for _ in 0..3 {
        let r = client
            .get(format!("{}/_mock/health", server.base_url()))
            .send()
            .await
            .expect("ok");
        assert_eq!(r.status(), 200);
    }
}

#[tokio::test]
async fn latency_delays_but_answers() {
    let server = MockServer::builder()
        .latency(Duration::from_millis(1)..=Duration::from_millis(3))
        .start()
        .await
        .expect("start");
    let (status, _) = initiate_http(&server, "LAT-1", None).await;
    assert_eq!(status, 200);
}

/// `answer-other`: the change is made, then the answer is the same
/// endpoint's answer about the newest other transaction; with none, the
/// truth.
#[tokio::test]
async fn answer_other_makes_the_change_and_answers_about_another_transaction() {
    let server = MockServer::start().await;
    let (status, body) = initiate_http(&server, "AO-1", Some("answer-other")).await;
    assert_eq!(status, 200);
    assert_eq!(body["data"]["referenceNo"], "AO-1", "nothing else to show");
    let (status, body) = initiate_http(&server, "AO-2", Some("answer-other")).await;
    assert_eq!(status, 200);
    assert_eq!(body["data"]["referenceNo"], "AO-1", "{body}");
    assert_eq!(body["data"]["status"], "INITIATED");
    let stored: Vec<String> = server
        .transactions()
        .await
        .into_iter()
        .map(|t| t.reference_no)
        .collect();
    assert_eq!(stored, ["AO-1", "AO-2"], "AO-2 was created all the same");
    let journal = server.requests().await;
    assert_eq!(journal[1].fault.as_deref(), Some("answer-other"));

    // A status read is answered about the other one, a confirm too once
    // another transaction is confirmed.
    let ids: Vec<String> = server
        .transactions()
        .await
        .into_iter()
        .map(|t| t.transaction_id.to_string())
        .collect();
    let client = reqwest::Client::new();
    let base = server.base_url();
    let read = |fault: &'static str, id: &str| {
        client
            .get(format!("{base}/api/payments/{id}/status"))
            .header("x-mock-fault", fault)
            .send()
    };
    let answer: Value = read("answer-other", &ids[1])
        .await
        .expect("an answer")
        .json()
        .await
        .expect("json");
    assert_eq!(answer["data"]["transactionId"], ids[0].as_str());
    let confirm = |id: &str, reference: &str, fault: Option<&'static str>| {
        let mut request = client
            .post(format!("{base}/api/payments/confirm"))
            .json(&serde_json::json!({ "transactionId": id, "referenceNo": reference }));
        if let Some(fault) = fault {
            request = request.header("x-mock-fault", fault);
        }
        request.send()
    };
    let answer: Value = confirm(&ids[1], "AO-2", Some("answer-other"))
        .await
        .expect("an answer")
        .json()
        .await
        .expect("json");
    assert_eq!(
        answer["data"]["referenceNo"], "AO-2",
        "no other is confirmed"
    );
    let stored = server.transactions().await;
    assert_eq!(stored[1].status, "SUCCESSFUL");
    confirm(&ids[0], "AO-1", None).await.expect("confirmed");
    let (status, _) = initiate_http(&server, "AO-3", None).await;
    assert_eq!(status, 200);
    let id3 = server.transactions().await[2].transaction_id.to_string();
    let answer: Value = confirm(&id3, "AO-3", Some("answer-other"))
        .await
        .expect("an answer")
        .json()
        .await
        .expect("json");
    // AO-2, the newest other confirmed one (its confirm was carried out).
    assert_eq!(answer["data"]["transactionId"], ids[1].as_str(), "{answer}");
    assert_eq!(server.transactions().await[2].status, "SUCCESSFUL");
}
