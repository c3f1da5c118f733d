//! The proxy in front of this project's own mock: hundreds of correct
//! exchanges of the four endpoints and every product have no finding at
//! all, and the mock's extensions (its extra codes and statuses) show as
//! `undocumented`, never as a violation.

use futures::StreamExt as _;
use payments_contract_proxy::{Level, Proxy, ProxyConfig, VERDICT_HEADER};
use payments_mock_server::MockServer;

use crate::rig::MERCHANT;
use serde_json::{Value, json};

/// A product, its initiate extras and its confirm body extras.
fn products() -> Vec<(&'static str, Value, Value)> {
    vec![
        ("TOPUP", json!({ "payerId": "60123456789" }), json!({})),
        ("BILLPAY", json!({ "payerId": "ACC-1" }), json!({})),
        ("GIFTCARD", json!({ "quantity": 3 }), json!({})),
        (
            "EWALLET",
            json!({}),
            json!({ "confirmationCode": "123456" }),
        ),
        ("DECLINED", json!({ "currencyCode": "JPY" }), json!({})),
        (
            "ONLINEBANKING",
            json!({ "returnUrl": "https://shop.example/back", "currencyCode": "KWD" }),
            json!({}),
        ),
    ]
}

struct Pair {
    mock: MockServer,
    proxy: Proxy,
    http: reqwest::Client,
}

impl Pair {
    async fn start() -> Self {
        let mock = MockServer::start().await;
        let proxy = Proxy::start(ProxyConfig::new(mock.base_url().parse().expect("a URL")))
            .await
            .expect("a proxy");
        Self {
            mock,
            proxy,
            http: reqwest::Client::new(),
        }
    }

    async fn call(&self, method: &str, path: &str, body: Option<&Value>) -> (u16, String, Value) {
        let url = format!("{}{path}", self.proxy.base_url());
        let request = match method {
            "POST" => self.http.post(url).json(body.unwrap_or(&Value::Null)),
            _ => self.http.get(url),
        };
        let response = request.send().await.expect("answered");
        let status = response.status().as_u16();
        let verdict = response
            .headers()
            .get(VERDICT_HEADER)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned();
        let body = response.json().await.unwrap_or(Value::Null);
        (status, verdict, body)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hundreds_of_correct_exchanges_have_no_finding_at_all() {
    let pair = Pair::start().await;
    let mut exchanges = 0;
    for round in 0..12 {
        for (product, extra, confirm_extra) in products() {
            let reference = format!("VF-{round}-{product}/ ?#%");
            let mut body = json!({
                "merchantId": MERCHANT, "referenceNo": reference, "amount": 1050 + round,
                "productCode": product, "storeId": "S1", "description": "verified fake",
            });
            for (k, v) in extra.as_object().expect("object") {
                body[k] = v.clone();
            }
            let (status, verdict, initiated) = pair
                .call("POST", "/api/payments/initiate", Some(&body))
                .await;
            assert_eq!((status, verdict.as_str()), (200, "pass"), "{initiated}");
            let id = initiated["data"]["transactionId"]
                .as_str()
                .expect("an id")
                .to_owned();
            let encoded: String = url::form_urlencoded::byte_serialize(reference.as_bytes())
                .collect::<String>()
                .replace('+', "%20");
            for path in [
                format!("/api/payments/{id}/status"),
                format!("/api/payments/reference/{encoded}/status"),
            ] {
                let (status, verdict, read) = pair.call("GET", &path, None).await;
                assert_eq!((status, verdict.as_str()), (200, "pass"), "{path}: {read}");
            }
            let mut confirm = json!({ "transactionId": id, "referenceNo": reference });
            for (k, v) in confirm_extra.as_object().expect("object") {
                confirm[k] = v.clone();
            }
            let (status, verdict, confirmed) = pair
                .call("POST", "/api/payments/confirm", Some(&confirm))
                .await;
            assert_eq!(
                (status, verdict.as_str()),
                (200, "pass"),
                "{product}: {confirmed}"
            );
            if product == "ONLINEBANKING" {
                pair.mock
                    .payer(
                        &id,
                        payments_mock_server::PayerAction::ALL[round as usize % 3],
                    )
                    .await
                    .expect("the payer decides");
            }
            if product == "BILLPAY" {
                pair.mock
                    .advance_clock(std::time::Duration::from_secs(3))
                    .await;
            }
            for path in [
                format!("/api/payments/{id}/status"),
                format!("/api/payments/reference/{encoded}/status"),
            ] {
                let (status, verdict, read) = pair.call("GET", &path, None).await;
                assert_eq!((status, verdict.as_str()), (200, "pass"), "{path}: {read}");
            }
            exchanges += 6;
        }
    }
    let summary = pair.proxy.shutdown().await;
    assert_eq!(summary.exchanges, exchanges);
    assert!(
        summary.rules.is_empty(),
        "no finding at all: {:#?}",
        summary.rules
    );
    assert_eq!(summary.endpoints.len(), 4, "{:?}", summary.endpoints);
    eprintln!(
        "verified fake: {exchanges} correct exchanges, {} findings",
        summary.levels.values().sum::<u64>()
    );
}

/// One reference initiated by two merchants is two transactions (CONTRACT
/// 4), and a status read by reference scoped to either merchant is
/// answered with that merchant's: the proxy finds nothing, in either order
/// of the reads (it once compared a read scoped to the first merchant with
/// the second's transaction, a false `status.agree` violation).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_reference_of_two_merchants_read_by_each_scope_has_no_finding() {
    const OTHER: &str = "0b7e2d51-93c4-4f0a-8d6e-2f1a3b4c5d6e";
    let pair = Pair::start().await;
    let mut ids = Vec::new();
    for merchant in [MERCHANT, OTHER] {
        let body = json!({
            "merchantId": merchant, "referenceNo": "SHARED-1", "amount": 1050,
            "productCode": "TOPUP", "storeId": "S1", "payerId": "60123456789",
        });
        let (status, verdict, initiated) = pair
            .call("POST", "/api/payments/initiate", Some(&body))
            .await;
        assert_eq!((status, verdict.as_str()), (200, "pass"), "{initiated}");
        ids.push(
            initiated["data"]["transactionId"]
                .as_str()
                .expect("an id")
                .to_owned(),
        );
    }
    let scoped = |m: &str| format!("/api/payments/reference/SHARED-1/status?merchantId={m}");
    let reads = [
        format!("/api/payments/{}/status", ids[1]),
        scoped(MERCHANT),
        format!("/api/payments/{}/status", ids[0]),
        scoped(OTHER),
        format!("/api/payments/{}/status", ids[1]),
        scoped(&MERCHANT.to_uppercase()),
        format!("/api/payments/{}/status", ids[0]),
    ];
    for path in &reads {
        let (status, verdict, read) = pair.call("GET", path, None).await;
        assert_eq!((status, verdict.as_str()), (200, "pass"), "{path}: {read}");
    }
    let summary = pair.proxy.shutdown().await;
    assert!(summary.rules.is_empty(), "no finding: {:#?}", summary.rules);
}

/// A body over the mock's limit, forwarded whole by the proxy, comes back
/// as the mock's 413 every time: the mock reads the rest before it answers
/// and closes. It used to answer and close on unread data, and the reset
/// reached the proxy while it still sent, so some came back 502
/// `UPSTREAM_UNAVAILABLE` (44 to 59 of these 600, three runs; it made the
/// coverage test below fail now and then).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_over_the_mocks_limit_is_its_413_every_time() {
    let pair = Pair::start().await;
    let body = format!(r#"{{"transactionId":"{}"}}"#, "x".repeat(200_000));
    let url = format!("{}/api/payments/confirm", pair.proxy.base_url());
    let sends = (0..600).map(|_| {
        let (http, url, body) = (pair.http.clone(), url.clone(), body.clone());
        async move {
            let reply = http
                .post(url)
                .header("content-type", "application/json")
                .body(body)
                .send()
                .await
                .expect("the proxy answers");
            reply.status().as_u16()
        }
    });
    let statuses: Vec<u16> = futures::stream::iter(sends)
        .buffer_unordered(16)
        .collect()
        .await;
    let other: Vec<&u16> = statuses.iter().filter(|s| **s != 413).collect();
    assert!(
        other.is_empty(),
        "{} of 600 not 413: {other:?}",
        other.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mocks_extensions_are_undocumented_never_violations() {
    let pair = Pair::start().await;
    let body = json!({
        "merchantId": MERCHANT, "referenceNo": "EXT-1", "amount": 100,
        "productCode": "TOPUP", "storeId": "S1", "payerId": "1",
    });
    let (_, _, initiated) = pair
        .call("POST", "/api/payments/initiate", Some(&body))
        .await;
    let id = initiated["data"]["transactionId"]
        .as_str()
        .expect("an id")
        .to_owned();
    let duplicate = pair
        .call("POST", "/api/payments/initiate", Some(&body))
        .await;
    assert_eq!((duplicate.0, duplicate.1.as_str()), (400, "undocumented"));
    let confirm = json!({ "transactionId": id, "referenceNo": "EXT-1" });
    pair.call("POST", "/api/payments/confirm", Some(&confirm))
        .await;
    let twice = pair
        .call("POST", "/api/payments/confirm", Some(&confirm))
        .await;
    assert_eq!((twice.0, twice.1.as_str()), (400, "undocumented"));
    let expiring = json!({
        "merchantId": MERCHANT, "referenceNo": "EXT-2", "amount": 100,
        "productCode": "TOPUP", "storeId": "S1", "payerId": "1",
    });
    let (_, _, second) = pair
        .call("POST", "/api/payments/initiate", Some(&expiring))
        .await;
    let second = second["data"]["transactionId"]
        .as_str()
        .expect("an id")
        .to_owned();
    pair.mock
        .advance_clock(std::time::Duration::from_secs(16 * 60))
        .await;
    let expired = pair
        .call("GET", &format!("/api/payments/{second}/status"), None)
        .await;
    assert_eq!(
        (expired.0, expired.1.as_str()),
        (200, "undocumented"),
        "EXPIRED: {}",
        expired.2
    );
    let invalid = pair
        .call(
            "POST",
            "/api/payments/initiate",
            Some(&json!({ "amount": "100" })),
        )
        .await;
    assert_eq!(
        (invalid.0, invalid.1.as_str()),
        (400, "pass"),
        "the application's mistake, a client finding"
    );
    let missing = pair
        .call(
            "GET",
            "/api/payments/00000000-0000-7000-8000-000000000000/status",
            None,
        )
        .await;
    assert_eq!((missing.0, missing.1.as_str()), (404, "pass"));
    let summary = pair.proxy.shutdown().await;
    assert_eq!(summary.count(Level::Violation), 0, "{}", summary.table());
    assert!(
        summary.count(Level::Undocumented) >= 3,
        "{}",
        summary.table()
    );
    assert!(summary.rules.contains_key("request.invalid"));
    assert!(summary.rules.contains_key("code.undocumented"));
    assert!(summary.rules.contains_key("status.undocumented"));
}

/// `X-Mock-Fault: answer-other` (CONTRACT section 10): the mock answers a
/// status by id about another transaction, as a misrouting gateway would.
/// Every field of that answer is right for the transaction it is about,
/// so only `answer.other` sees that it is not the one asked for.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mocks_answer_other_fault_is_an_answer_other_violation() {
    let pair = Pair::start().await;
    let mut ids = Vec::new();
    for reference in ["AO-1", "AO-2"] {
        let body = json!({
            "merchantId": MERCHANT, "referenceNo": reference, "amount": 1050,
            "productCode": "TOPUP", "storeId": "S1", "payerId": "60123456789",
        });
        let (status, verdict, initiated) = pair
            .call("POST", "/api/payments/initiate", Some(&body))
            .await;
        assert_eq!((status, verdict.as_str()), (200, "pass"), "{initiated}");
        ids.push(
            initiated["data"]["transactionId"]
                .as_str()
                .expect("an id")
                .to_owned(),
        );
    }
    let asked = &ids[0];
    let reply = pair
        .http
        .get(format!(
            "{}/api/payments/{asked}/status",
            pair.proxy.base_url()
        ))
        .header("x-mock-fault", "answer-other")
        .send()
        .await
        .expect("answered");
    assert_eq!(reply.status(), 200);
    let verdict = reply.headers()[VERDICT_HEADER]
        .to_str()
        .expect("a verdict")
        .to_owned();
    let answer: Value = reply.json().await.expect("JSON");
    assert_eq!(
        answer["data"]["transactionId"], ids[1],
        "the mock answered about the other transaction"
    );
    assert_eq!(verdict, "violation");
    let exchanges = pair.proxy.exchanges();
    let (_, _, findings) = exchanges.last().expect("kept");
    let rules: Vec<&str> = findings.iter().map(|f| f.rule).collect();
    assert_eq!(rules, ["answer.other"], "{findings:?}");
    assert!(findings[0].message.contains(asked.as_str()), "{findings:?}");
    let summary = pair.proxy.shutdown().await;
    assert_eq!(summary.exit_code(false), 1);
}
