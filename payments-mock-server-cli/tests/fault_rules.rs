//! Scripted faults (CONTRACT section 19): `/_mock/faults` over HTTP and
//! the library's rules, every kind as a client meets it over a real
//! socket, the journal naming the rule, and bad rules.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use payments_mock_server::{Endpoint, Fault, FaultRule, MockServer};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::common::initiate_body;

mod shutdown;

async fn call(
    server: &MockServer,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
    key: Option<&str>,
) -> (u16, Value) {
    let mut req = reqwest::Client::new().request(method, format!("{}{path}", server.base_url()));
    if let Some(body) = body {
        req = req.json(&body);
    }
    if let Some(key) = key {
        req = req.bearer_auth(key);
    }
    let response = req.send().await.expect("an answer");
    let status = response.status().as_u16();
    let bytes = response.bytes().await.expect("a body");
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or_else(|_| json!(String::from_utf8_lossy(&bytes))),
    )
}

async fn add_rule(server: &MockServer, rule: Value) -> Value {
    let (status, envelope) = call(
        server,
        reqwest::Method::POST,
        "/_mock/faults",
        Some(rule),
        None,
    )
    .await;
    assert_eq!(status, 201, "{envelope}");
    envelope["data"].clone()
}

/// Sends `request` on a fresh connection and reads until the server
/// closes it or `patience` passes: (the bytes, whether it closed).
async fn raw(addr: SocketAddr, request: &[u8], patience: Duration) -> (Vec<u8>, bool) {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    stream.write_all(request).await.expect("write");
    let mut out = Vec::new();
    let closed = tokio::time::timeout(patience, async {
        let mut buf = [0u8; 4096];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => out.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await
    .is_ok();
    (out, closed)
}

fn initiate_request(reference: &str) -> Vec<u8> {
    let body = initiate_body(reference, "TOPUP").to_string();
    format!(
        "POST /api/payments/initiate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
         Connection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

async fn initiate(server: &MockServer, reference: &str) -> reqwest::Response {
    reqwest::Client::new()
        .post(format!("{}/api/payments/initiate", server.base_url()))
        .json(&initiate_body(reference, "TOPUP"))
        .send()
        .await
        .expect("an answer")
}

#[tokio::test]
async fn a_rule_is_added_listed_counted_and_removed() {
    let server = MockServer::start().await;
    let rule = add_rule(
        &server,
        json!({"match": {"endpoint": "initiate", "referenceNo": "R-1"}, "fault": "internal-error", "times": 2}),
    )
    .await;
    assert_eq!(rule["fault"], "internal-error");
    assert_eq!(
        (rule["after"].clone(), rule["probability"].clone()),
        (json!(0), json!(1.0))
    );
    assert_eq!(
        (
            rule["met"].clone(),
            rule["fired"].clone(),
            rule["remaining"].clone()
        ),
        (json!(0), json!(0), json!(2))
    );
    // Another reference passes; R-1 fails twice, then is created.
    assert_eq!(initiate(&server, "R-2").await.status(), 200);
    assert_eq!(initiate(&server, "R-1").await.status(), 500);
    assert_eq!(initiate(&server, "R-1").await.status(), 500);
    assert_eq!(initiate(&server, "R-1").await.status(), 200);
    let (_, list) = call(&server, reqwest::Method::GET, "/_mock/faults", None, None).await;
    let listed = &list["data"]["items"][0];
    assert_eq!(
        (
            listed["met"].clone(),
            listed["fired"].clone(),
            listed["remaining"].clone()
        ),
        (json!(2), json!(2), json!(0))
    );
    let id = rule["id"].as_str().expect("an id");
    let (status, _) = call(
        &server,
        reqwest::Method::DELETE,
        &format!("/_mock/faults/{id}"),
        None,
        None,
    )
    .await;
    assert_eq!(status, 200);
    let (status, gone) = call(
        &server,
        reqwest::Method::DELETE,
        &format!("/_mock/faults/{id}"),
        None,
        None,
    )
    .await;
    assert_eq!(
        (status, gone["errorCode"].clone()),
        (404, json!("NOT_FOUND"))
    );
    for bad in [
        "x",
        "01937e1c",
        "%00",
        "01937e1c-0000-7000-8000-0000000000c1-1",
    ] {
        let (status, answer) = call(
            &server,
            reqwest::Method::DELETE,
            &format!("/_mock/faults/{bad}"),
            None,
            None,
        )
        .await;
        assert_eq!(status, 400, "{bad}: {answer}");
        assert_eq!(answer["errorCode"], "VALIDATION_ERROR");
    }
    add_rule(&server, json!({"fault": "hang"})).await;
    add_rule(&server, json!({"fault": "reset"})).await;
    let (status, cleared) = call(
        &server,
        reqwest::Method::DELETE,
        "/_mock/faults",
        None,
        None,
    )
    .await;
    assert_eq!(
        (status, cleared["data"]["removed"].clone()),
        (200, json!(2))
    );
    assert!(server.fault_rules().is_empty());
    // A reset forgets the rules too.
    add_rule(&server, json!({"fault": "hang"})).await;
    call(&server, reqwest::Method::POST, "/_mock/reset", None, None).await;
    assert!(server.fault_rules().is_empty());
    server.shutdown().await;
}

#[tokio::test]
async fn bad_rules_are_400_naming_the_field() {
    let server = MockServer::start().await;
    for (body, field) in [
        (json!({}), "fault"),
        (json!({"fault": "explode"}), "fault"),
        (json!({"fault": "gateway=500"}), "fault"),
        (json!({"fault": "slow-body=0"}), "fault"),
        (json!({"fault": "hang", "after": -1}), "after"),
        (json!({"fault": "hang", "times": -3}), "times"),
        (json!({"fault": "hang", "times": 4294967296u64}), "times"),
        (json!({"fault": "hang", "probability": 1.5}), "probability"),
        (
            json!({"fault": "hang", "probability": -0.01}),
            "probability",
        ),
        (
            json!({"fault": "hang", "match": {"endpoint": "refund"}}),
            "match.endpoint",
        ),
        (
            json!({"fault": "hang", "match": {"merchantId": "not-a-uuid"}}),
            "match.merchantId",
        ),
        (
            json!({"fault": "hang", "match": {"transactionId": 7}}),
            "match.transactionId",
        ),
        (
            json!({"fault": "hang", "match": {"referenceNo": "x".repeat(65)}}),
            "match.referenceNo",
        ),
        (json!({"fault": "hang", "match": {"extra": 1}}), "match"),
        (json!({"fault": "hang", "unknown": true}), "body"),
    ] {
        let (status, answer) = call(
            &server,
            reqwest::Method::POST,
            "/_mock/faults",
            Some(body.clone()),
            None,
        )
        .await;
        assert_eq!(status, 400, "{body}: {answer}");
        assert_eq!(answer["errorCode"], "VALIDATION_ERROR");
        let message = answer["message"].as_str().expect("a message");
        assert!(
            message.starts_with(&format!("{field}: ")),
            "{body}: {message}"
        );
    }
    // Not JSON, not an object, empty, huge.
    let client = reqwest::Client::new();
    let url = format!("{}/_mock/faults", server.base_url());
    for (body, status) in [
        ("{".to_owned(), 400),
        ("[]".to_owned(), 400),
        (String::new(), 400),
        (
            format!(
                "{{\"fault\":\"hang\",\"x\":\"{}\"}}",
                "a".repeat(100 * 1024)
            ),
            413,
        ),
    ] {
        let answer = client
            .post(&url)
            .header("content-type", "application/json")
            .body(body.clone())
            .send()
            .await
            .expect("an answer");
        assert_eq!(
            answer.status().as_u16(),
            status,
            "{}",
            &body[..body.len().min(40)]
        );
    }
    assert!(server.fault_rules().is_empty(), "nothing installed");
    server.shutdown().await;
}

#[tokio::test]
async fn the_header_wins_over_rules_and_the_journal_names_the_rule() {
    let server = MockServer::start().await;
    let rule = add_rule(&server, json!({"fault": "gateway=503", "times": 0})).await;
    let with_header = reqwest::Client::new()
        .post(format!("{}/api/payments/initiate", server.base_url()))
        .header("x-mock-fault", "delay=0")
        .json(&initiate_body("H-1", "TOPUP"))
        .send()
        .await
        .expect("an answer");
    assert_eq!(with_header.status(), 200);
    let faulted = initiate(&server, "H-2").await;
    assert_eq!(faulted.status(), 503);
    assert_eq!(faulted.headers()["content-type"], "text/html");
    let page = faulted.text().await.expect("a page");
    assert!(
        page.contains("<h1>503 Service Temporarily Unavailable</h1>")
            || page.contains("<h1>503 Service Unavailable</h1>"),
        "{page}"
    );
    // Before any change.
    assert_eq!(server.transactions().await.len(), 1);
    let journal = server.requests().await;
    assert_eq!(journal[0].fault.as_deref(), Some("delay=0"));
    assert_eq!(journal[0].fault_rule, None);
    assert_eq!(journal[1].fault.as_deref(), Some("gateway=503"));
    assert_eq!(journal[1].fault_rule.as_deref(), rule["id"].as_str());
    let (_, requests) = call(&server, reqwest::Method::GET, "/_mock/requests", None, None).await;
    assert_eq!(requests["data"]["items"][1]["faultRule"], rule["id"]);
    server.shutdown().await;
}

#[tokio::test]
async fn rules_match_by_transaction_merchant_and_reference_after_a_lookup() {
    let server = MockServer::start().await;
    let a: Value = initiate(&server, "M-A").await.json().await.expect("json");
    let b: Value = initiate(&server, "M-B").await.json().await.expect("json");
    let (a, b) = (
        a["data"]["transactionId"].as_str().unwrap().to_owned(),
        b["data"]["transactionId"].as_str().unwrap().to_owned(),
    );
    // A status read by id names no reference: the rule looks it up.
    add_rule(&server, json!({"match": {"endpoint": "status", "referenceNo": "M-B"}, "fault": "rate-limit", "times": 0})).await;
    add_rule(
        &server,
        json!({"match": {"transactionId": a}, "fault": "internal-error", "times": 0}),
    )
    .await;
    let status = |id: String| {
        let url = format!("{}/api/payments/{id}/status", server.base_url());
        async move {
            reqwest::get(url)
                .await
                .expect("an answer")
                .status()
                .as_u16()
        }
    };
    assert_eq!(status(b.clone()).await, 429);
    assert_eq!(status(a.clone()).await, 500);
    assert_eq!(
        status("01937e1c-0000-7000-8000-0000000000c1".to_owned()).await,
        404
    );
    // Polled again (the transaction's reference now known without a
    // look-up): the same answers.
    for _ in 0..3 {
        assert_eq!(status(b.clone()).await, 429);
        assert_eq!(status(a.clone()).await, 500);
    }
    // A reset removes the rules and what they knew: B is gone, and a read
    // of its id is 404 again under the same rule.
    server.reset().await;
    add_rule(&server, json!({"match": {"endpoint": "status", "referenceNo": "M-B"}, "fault": "rate-limit", "times": 0})).await;
    assert_eq!(status(b.clone()).await, 404);
    server.clear_fault_rules();
    // The merchant named, by the initiate's body.
    let other_merchant = uuid::Uuid::new_v4();
    server
        .add_fault_rule(
            FaultRule::new(Fault::InternalError)
                .merchant(other_merchant)
                .times(0),
        )
        .expect("valid");
    let mut body = initiate_body("M-C", "TOPUP");
    body["merchantId"] = json!(other_merchant.to_string());
    let answer = reqwest::Client::new()
        .post(format!("{}/api/payments/initiate", server.base_url()))
        .json(&body)
        .send()
        .await
        .expect("an answer");
    assert_eq!(answer.status(), 500);
    assert_eq!(
        initiate(&server, "M-D").await.status(),
        200,
        "the usual merchant passes"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn after_times_and_a_seeded_probability_repeat() {
    let run = |seed| async move {
        let server = MockServer::builder()
            .fault_seed(seed)
            .start()
            .await
            .expect("started");
        server
            .add_fault_rule(
                FaultRule::new(Fault::InternalError)
                    .on(Endpoint::Initiate)
                    .after(2)
                    .times(0)
                    .probability(0.5),
            )
            .expect("valid");
        let mut statuses = Vec::new();
        for i in 0..40 {
            statuses.push(initiate(&server, &format!("P-{i}")).await.status().as_u16());
        }
        server.shutdown().await;
        statuses
    };
    let first = run(11).await;
    assert_eq!(&first[..2], &[200, 200], "after 2");
    assert!(
        first.contains(&500) && first[2..].contains(&200),
        "{first:?}"
    );
    assert_eq!(first, run(11).await, "the seed repeats the run");
}

#[tokio::test]
async fn commit_then_hang_commits_and_a_client_times_out() {
    let server = MockServer::start().await;
    server
        .add_fault_rule(FaultRule::new(Fault::CommitThenHang).on(Endpoint::Initiate))
        .expect("valid");
    let client = reqwest::Client::builder()
        .timeout(Duration::from_millis(500))
        .build()
        .expect("a client");
    let error = client
        .post(format!("{}/api/payments/initiate", server.base_url()))
        .json(&initiate_body("CTH-1", "TOPUP"))
        .send()
        .await
        .expect_err("no answer");
    assert!(error.is_timeout(), "{error}");
    let stored = server.transactions().await;
    assert_eq!(stored.len(), 1, "the change was made");
    assert_eq!(stored[0].reference_no, "CTH-1");
    tokio::time::timeout(Duration::from_secs(30), server.shutdown())
        .await
        .expect("not held");
}

#[tokio::test]
async fn truncate_commits_and_sends_half_the_promised_body() {
    let server = MockServer::start().await;
    server
        .add_fault_rule(FaultRule::new(Fault::Truncate))
        .expect("valid");
    let (bytes, closed) = raw(
        server.addr(),
        &initiate_request("TR-1"),
        Duration::from_secs(10),
    )
    .await;
    assert!(closed, "the connection closes");
    let text = String::from_utf8_lossy(&bytes);
    let (head, body) = text.split_once("\r\n\r\n").expect("a head");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let promised: usize = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-length: ")
                .map(str::to_owned)
        })
        .expect("a Content-Length")
        .parse()
        .expect("a number");
    assert_eq!(body.len(), promised / 2, "half of {promised}");
    assert!(serde_json::from_str::<Value>(body).is_err());
    assert_eq!(server.transactions().await.len(), 1, "the change was made");
    // reqwest meets it as a body error.
    server
        .add_fault_rule(FaultRule::new(Fault::Truncate))
        .expect("valid");
    let answer = initiate(&server, "TR-2").await;
    assert!(answer.bytes().await.is_err());
    server.shutdown().await;
}

#[tokio::test]
async fn slow_body_trickles_the_right_answer() {
    let server = MockServer::start().await;
    server
        .add_fault_rule(FaultRule::new(Fault::SlowBody(200)))
        .expect("valid");
    let started = Instant::now();
    let answer = initiate(&server, "SB-1").await;
    assert_eq!(answer.status(), 200);
    let envelope: Value = answer.json().await.expect("the whole envelope");
    let elapsed = started.elapsed();
    assert_eq!(envelope["data"]["referenceNo"], "SB-1");
    let length = envelope.to_string().len();
    // 20 bytes every 100 ms: at least that long (a lower bound only).
    let least = Duration::from_millis(100) * u32::try_from(length / 20 - 1).expect("small");
    assert!(elapsed >= least, "{elapsed:?} for {length} bytes");
    assert_eq!(
        server.requests().await[0].fault.as_deref(),
        Some("slow-body=200")
    );
    server.shutdown().await;
}

#[tokio::test]
async fn the_seven_header_kinds_work_as_rules() {
    let server = MockServer::start().await;
    let first: Value = initiate(&server, "K-0").await.json().await.expect("json");
    for (fault, status, stored) in [
        ("internal-error", 500, 1),
        ("commit-then-error", 500, 2),
        ("rate-limit", 429, 2),
        ("delay=1", 200, 3),
        ("answer-other", 200, 4),
    ] {
        add_rule(&server, json!({"fault": fault})).await;
        let answer = initiate(&server, &format!("K-{fault}")).await;
        assert_eq!(answer.status().as_u16(), status, "{fault}");
        if fault == "answer-other" {
            let envelope: Value = answer.json().await.expect("json");
            assert_ne!(envelope["data"]["referenceNo"], "K-answer-other");
            assert!(envelope["data"]["referenceNo"].as_str().is_some());
        }
        assert_eq!(server.transactions().await.len(), stored, "{fault}");
    }
    for (fault, stored) in [("reset", 4), ("commit-then-reset", 5)] {
        add_rule(&server, json!({"fault": fault})).await;
        let (bytes, closed) = raw(
            server.addr(),
            &initiate_request(&format!("K-{fault}")),
            Duration::from_secs(10),
        )
        .await;
        assert!(closed && bytes.is_empty(), "{fault}");
        assert_eq!(server.transactions().await.len(), stored, "{fault}");
    }
    assert!(first["isSuccess"].as_bool().unwrap_or(false));
    server.shutdown().await;
}

#[tokio::test]
async fn with_an_admin_key_the_rules_are_the_admins() {
    let merchant = uuid::Uuid::new_v4();
    let server = MockServer::builder()
        .admin_key("ak_rules_admin_key_0123456789")
        .api_key("sk_rules_merchant_0123456789", Some(merchant))
        .start()
        .await
        .expect("started");
    let rule = json!({"fault": "hang"});
    for (method, path) in [
        (reqwest::Method::GET, "/_mock/faults"),
        (reqwest::Method::POST, "/_mock/faults"),
        (reqwest::Method::DELETE, "/_mock/faults"),
        (
            reqwest::Method::DELETE,
            "/_mock/faults/01937e1c-0000-7000-8000-0000000000c1",
        ),
    ] {
        let body = (method == reqwest::Method::POST).then(|| rule.clone());
        let (anonymous, _) = call(&server, method.clone(), path, body.clone(), None).await;
        let (merchant_key, _) = call(
            &server,
            method.clone(),
            path,
            body.clone(),
            Some("sk_rules_merchant_0123456789"),
        )
        .await;
        assert_eq!((anonymous, merchant_key), (401, 403), "{method} {path}");
    }
    let (status, _) = call(
        &server,
        reqwest::Method::POST,
        "/_mock/faults",
        Some(rule),
        Some("ak_rules_admin_key_0123456789"),
    )
    .await;
    assert_eq!(status, 201);
    server.clear_fault_rules();
    server.shutdown().await;
}
