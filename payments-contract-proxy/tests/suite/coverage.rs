//! Interface coverage through the proxy (CONTRACT section 20): this
//! project's mock behind it, driven to give every answer and transition
//! the interface has that an in-memory mock can give (its keys, faults,
//! limits, clock and payer), is seen to cover every cell but the store's
//! outage (`STORE_UNAVAILABLE`, a database gone); `GET /_proxy/coverage`
//! says the same as [`Proxy::coverage`].

use payments_contract_proxy::{Proxy, ProxyConfig, coverage_table};
use payments_mock_server::{Catalog, MockServer, PayerAction};
use serde_json::{Value, json};

use crate::rig::MERCHANT;

const OPEN: &str = "cov_open_key_7f3a";
const BOUND: &str = "cov_bound_key_91c2";
/// A second merchant, for a reference two merchants hold.
const OTHER_MERCHANT: &str = "0b5e1c2d-3f4a-4b6c-8d7e-9f0a1b2c3d4e";

/// A product for each transition: `OTPBILL` waits on the payer and then
/// settles (`PENDING` → `CONFIRMED`).
const CATALOG: &str = r#"
[[product]]
code = "TOPUP"
[[product]]
code = "EWALLET"
initial = "PENDING"
confirmation_code = "123456"
[[product]]
code = "DECLINED"
outcome = "decline"
[[product]]
code = "BILLPAY"
outcome = "async"
settle_after = "2s"
[[product]]
code = "OTPBILL"
initial = "PENDING"
outcome = "async"
settle_after = "2s"
[[product]]
code = "ONLINEBANKING"
flow = "redirect"
"#;

/// What a request carries beside its method and path.
#[derive(Clone, Copy)]
enum Body<'a> {
    None,
    Json(&'a Value),
    Raw(&'a str, &'a str),
}

struct Pair {
    mock: MockServer,
    proxy: Proxy,
    http: reqwest::Client,
}

impl Pair {
    /// Sends `method path` with `body`, the key `key` (none: `None`) and
    /// the mock's fault `fault`; the status and the envelope.
    async fn call(
        &self,
        method: &str,
        path: &str,
        body: Body<'_>,
        key: Option<&str>,
        fault: Option<&str>,
    ) -> (u16, Value) {
        let url = format!("{}{path}", self.proxy.base_url());
        let mut request = match method {
            "POST" => self.http.post(url),
            _ => self.http.get(url),
        };
        request = match body {
            Body::None => request,
            Body::Json(json) => request.json(json),
            Body::Raw(content_type, text) => request
                .header("content-type", content_type)
                .body(text.to_owned()),
        };
        if let Some(key) = key {
            request = request.bearer_auth(key);
        }
        if let Some(fault) = fault {
            request = request.header("x-mock-fault", fault);
        }
        let response = request.send().await.expect("answered");
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    async fn open(&self, method: &str, path: &str, body: Body<'_>) -> (u16, Value) {
        self.call(method, path, body, Some(OPEN), None).await
    }

    /// Initiates `product` as `reference` (of `merchant`); its id.
    async fn initiate(&self, reference: &str, product: &str, merchant: &str) -> String {
        let mut body = json!({
            "merchantId": merchant, "referenceNo": reference, "amount": 1050,
            "productCode": product, "storeId": "S1",
        });
        if product == "ONLINEBANKING" {
            body["returnUrl"] = json!("https://shop.example/back");
        }
        let (status, answer) = self
            .open("POST", "/api/payments/initiate", Body::Json(&body))
            .await;
        assert_eq!(status, 200, "{answer}");
        answer["data"]["transactionId"]
            .as_str()
            .expect("an id")
            .to_owned()
    }

    async fn confirm(&self, id: &str, reference: &str, code: Option<&str>) -> (u16, Value) {
        let mut body = json!({ "transactionId": id, "referenceNo": reference });
        if let Some(code) = code {
            body["confirmationCode"] = json!(code);
        }
        self.open("POST", "/api/payments/confirm", Body::Json(&body))
            .await
    }

    async fn status(&self, id: &str) -> String {
        let (status, answer) = self
            .open("GET", &format!("/api/payments/{id}/status"), Body::None)
            .await;
        assert_eq!(status, 200, "{answer}");
        answer["data"]["status"]
            .as_str()
            .expect("a status")
            .to_owned()
    }
}

/// A request as (method, path, body, key, fault) and the status expected.
type Case<'a> = (
    &'a str,
    String,
    Body<'a>,
    Option<&'a str>,
    Option<&'a str>,
    u16,
);

/// The answers each endpoint gives besides its success.
async fn failures(pair: &Pair, id: &str) {
    let initiate = "/api/payments/initiate";
    let confirm = "/api/payments/confirm";
    let by_id = format!("/api/payments/{id}/status");
    let by_ref = "/api/payments/reference/COV-1/status";
    let topup = json!({
        "merchantId": MERCHANT, "referenceNo": "COV-F", "amount": 100,
        "productCode": "TOPUP", "storeId": "S1",
    });
    let duplicate = json!({
        "merchantId": MERCHANT, "referenceNo": "COV-1", "amount": 100,
        "productCode": "TOPUP", "storeId": "S1",
    });
    let foreign = json!({
        "merchantId": OTHER_MERCHANT, "referenceNo": "COV-FOREIGN", "amount": 100,
        "productCode": "TOPUP", "storeId": "S1",
    });
    let confirm_body = json!({ "transactionId": id, "referenceNo": "COV-1" });
    let unknown = json!({
        "transactionId": "00000000-0000-7000-8000-000000000000", "referenceNo": "NOPE",
    });
    let invalid = json!({ "amount": "100" });
    let no_reference = json!({ "transactionId": id });
    let huge = format!(r#"{{"description":"{}"}}"#, "x".repeat(70 * 1024));
    let key = Some(OPEN);
    let cases: Vec<Case<'_>> = vec![
        (
            "POST",
            initiate.into(),
            Body::Json(&invalid),
            key,
            None,
            400,
        ),
        (
            "POST",
            initiate.into(),
            Body::Json(&duplicate),
            key,
            None,
            400,
        ),
        (
            "POST",
            initiate.into(),
            Body::Json(&topup),
            key,
            Some("internal-error"),
            500,
        ),
        (
            "POST",
            initiate.into(),
            Body::Json(&topup),
            key,
            Some("rate-limit"),
            429,
        ),
        ("POST", initiate.into(), Body::Json(&topup), None, None, 401),
        (
            "POST",
            initiate.into(),
            Body::Json(&foreign),
            Some(BOUND),
            None,
            403,
        ),
        (
            "POST",
            initiate.into(),
            Body::Raw("text/plain", "hello"),
            key,
            None,
            415,
        ),
        (
            "POST",
            initiate.into(),
            Body::Raw("application/json", &huge),
            key,
            None,
            413,
        ),
        (
            "POST",
            confirm.into(),
            Body::Json(&no_reference),
            key,
            None,
            400,
        ),
        ("POST", confirm.into(), Body::Json(&unknown), key, None, 400),
        (
            "POST",
            confirm.into(),
            Body::Json(&confirm_body),
            key,
            None,
            400,
        ),
        (
            "POST",
            confirm.into(),
            Body::Json(&unknown),
            key,
            Some("internal-error"),
            500,
        ),
        (
            "POST",
            confirm.into(),
            Body::Json(&unknown),
            key,
            Some("rate-limit"),
            429,
        ),
        (
            "POST",
            confirm.into(),
            Body::Json(&unknown),
            None,
            None,
            401,
        ),
        (
            "POST",
            confirm.into(),
            Body::Raw("text/plain", "hello"),
            key,
            None,
            415,
        ),
        (
            "POST",
            confirm.into(),
            Body::Raw("application/json", &huge),
            key,
            None,
            413,
        ),
        (
            "GET",
            "/api/payments/00000000-0000-7000-8000-000000000000/status".into(),
            Body::None,
            key,
            None,
            404,
        ),
        (
            "GET",
            "/api/payments/%20/status".into(),
            Body::None,
            key,
            None,
            400,
        ),
        (
            "GET",
            by_id.clone(),
            Body::None,
            key,
            Some("internal-error"),
            500,
        ),
        (
            "GET",
            by_id.clone(),
            Body::None,
            key,
            Some("rate-limit"),
            429,
        ),
        ("GET", by_id.clone(), Body::None, None, None, 401),
        (
            "GET",
            "/api/payments/reference/NOPE/status".into(),
            Body::None,
            key,
            None,
            404,
        ),
        (
            "GET",
            "/api/payments/reference/%20/status".into(),
            Body::None,
            key,
            None,
            400,
        ),
        (
            "GET",
            format!("{by_ref}?merchantId=not-a-uuid"),
            Body::None,
            key,
            None,
            400,
        ),
        (
            "GET",
            "/api/payments/reference/COV-AMB/status".into(),
            Body::None,
            key,
            None,
            400,
        ),
        (
            "GET",
            by_ref.into(),
            Body::None,
            key,
            Some("internal-error"),
            500,
        ),
        (
            "GET",
            by_ref.into(),
            Body::None,
            key,
            Some("rate-limit"),
            429,
        ),
        ("GET", by_ref.into(), Body::None, None, None, 401),
    ];
    for (method, path, body, key, fault, expected) in cases {
        let (status, answer) = pair.call(method, &path, body, key, fault).await;
        assert_eq!(status, expected, "{method} {path} ({fault:?}): {answer}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mock_behind_the_proxy_covers_every_cell_but_the_stores_outage() {
    let merchant = MERCHANT.parse().expect("a UUID");
    let mock = MockServer::builder()
        .catalog(Catalog::from_toml_str(CATALOG).expect("a catalogue"))
        .api_key(OPEN, None)
        .api_key(BOUND, Some(merchant))
        .start()
        .await
        .expect("the mock starts");
    let proxy = Proxy::start(ProxyConfig::new(mock.base_url().parse().expect("a URL")))
        .await
        .expect("a proxy");
    let pair = Pair {
        mock,
        proxy,
        http: reqwest::Client::new(),
    };

    // created -> INITIATED -> SUCCESSFUL, read both ways.
    let id = pair.initiate("COV-1", "TOPUP", MERCHANT).await;
    assert_eq!(pair.status(&id).await, "INITIATED");
    assert_eq!(pair.confirm(&id, "COV-1", None).await.0, 200);
    let (status, _) = pair
        .open("GET", "/api/payments/reference/COV-1/status", Body::None)
        .await;
    assert_eq!(status, 200);
    // A reference two merchants hold, asked without a scope.
    pair.initiate("COV-AMB", "TOPUP", MERCHANT).await;
    pair.initiate("COV-AMB", "TOPUP", OTHER_MERCHANT).await;
    failures(&pair, &id).await;

    // created -> PENDING -> SUCCESSFUL, and PENDING -> FAILED.
    let otp = pair.initiate("COV-E1", "EWALLET", MERCHANT).await;
    assert_eq!(pair.confirm(&otp, "COV-E1", Some("123456")).await.0, 200);
    let wrong = pair.initiate("COV-E2", "EWALLET", MERCHANT).await;
    assert_eq!(pair.confirm(&wrong, "COV-E2", Some("000000")).await.0, 200);
    // INITIATED -> FAILED.
    let declined = pair.initiate("COV-D", "DECLINED", MERCHANT).await;
    assert_eq!(pair.confirm(&declined, "COV-D", None).await.0, 200);
    // INITIATED -> CONFIRMED -> SUCCESSFUL; PENDING -> CONFIRMED.
    let bill = pair.initiate("COV-B", "BILLPAY", MERCHANT).await;
    assert_eq!(pair.confirm(&bill, "COV-B", None).await.0, 200);
    let pending_bill = pair.initiate("COV-P", "OTPBILL", MERCHANT).await;
    assert_eq!(pair.confirm(&pending_bill, "COV-P", None).await.0, 200);
    // CONFIRMED -> FAILED: the payer declines on the payment page.
    let bank = pair.initiate("COV-O", "ONLINEBANKING", MERCHANT).await;
    assert_eq!(pair.confirm(&bank, "COV-O", None).await.0, 200);
    pair.mock
        .payer(&bank, PayerAction::Decline)
        .await
        .expect("the payer declines");
    assert_eq!(pair.status(&bank).await, "FAILED");
    pair.mock
        .advance_clock(std::time::Duration::from_secs(3))
        .await;
    assert_eq!(pair.status(&bill).await, "SUCCESSFUL");
    // INITIATED and PENDING -> EXPIRED; a confirm of an expired one.
    let late = pair.initiate("COV-X1", "TOPUP", MERCHANT).await;
    let late_otp = pair.initiate("COV-X2", "EWALLET", MERCHANT).await;
    pair.mock
        .advance_clock(std::time::Duration::from_secs(16 * 60))
        .await;
    assert_eq!(pair.status(&late).await, "EXPIRED");
    assert_eq!(pair.status(&late_otp).await, "EXPIRED");
    let (status, answer) = pair.confirm(&late, "COV-X1", None).await;
    assert_eq!(
        (status, answer["errorCode"].as_str()),
        (400, Some("TRANSACTION_EXPIRED"))
    );

    let coverage = pair.proxy.coverage();
    let table = coverage_table(&coverage);
    eprintln!("{table}");
    for (cell, count) in coverage.cells() {
        let name = cell.to_string();
        if name.ends_with(" STORE_UNAVAILABLE") {
            assert_eq!(*count, 0, "{name}: no database to lose");
        } else {
            assert!(*count > 0, "{name} was never seen:\n{table}");
        }
    }
    assert!(coverage.outside().is_empty(), "{table}");
    let unreachable = payments_interface::Endpoint::ALL.len();
    let expected = payments_interface::coverage::percent(
        coverage.cells().len() - unreachable,
        coverage.cells().len(),
    );
    assert_eq!(coverage.percent(), expected);

    // GET /_proxy/coverage: the same, as an envelope.
    let shown: Value = pair
        .http
        .get(format!("{}/_proxy/coverage", pair.proxy.base_url()))
        .send()
        .await
        .expect("answered")
        .json()
        .await
        .expect("JSON");
    assert_eq!(shown["isSuccess"], true, "{shown}");
    let data = &shown["data"];
    assert_eq!(data["total"], coverage.cells().len());
    assert_eq!(data["covered"], coverage.cells().len() - unreachable);
    assert_eq!(data["percent"], (expected * 10.0).round() / 10.0);
    let cells = data["cells"].as_array().expect("cells");
    for ((cell, count), shown) in coverage.cells().iter().zip(cells) {
        assert_eq!(shown["name"], cell.to_string());
        assert_eq!(shown["count"], *count);
        assert_eq!(
            shown["whose"],
            if cell.is_documented() {
                "document"
            } else {
                "contract"
            }
        );
    }
    assert_eq!(data["outside"], json!([]));
    let finished = pair.proxy.finish().await;
    assert_eq!(finished.coverage.cells(), coverage.cells());
}
