//! The `/_mock/` controls, `/openapi.json`, and the library API
//! (CONTRACT section 10).

use std::time::Duration;

use axum::http::Method;
use payments_mock_server::MockServer;
use serde_json::{Value, json};

use crate::common::{
    MERCHANT, OTHER_MERCHANT, advance, clock_offset, confirm, count, get, initiate, initiate_body,
    initiated, journal, post, redact, request, send, service,
};

#[tokio::test]
async fn health_reports_time_and_count() {
    let (_, router) = service();
    initiated(&router, "H-1", "TOPUP").await;
    let reply = get(&router, "/_mock/health").await;
    assert_eq!(reply.data()["status"], "ok");
    assert_eq!(reply.data()["transactions"], 1);
    insta::assert_snapshot!(crate::common::pretty(&redact(&reply.body)));
}

#[tokio::test]
async fn clock_advances_by_fractional_seconds_and_rejects_bad_values() {
    let (_, router) = service();
    let reply = post(
        &router,
        "/_mock/clock/advance",
        &serde_json::from_str(r#"{"seconds": 1.5}"#).expect("json"),
    )
    .await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.data()["offsetSeconds"].to_string(), "1.5");
    let reply = get(&router, "/_mock/clock").await;
    assert_eq!(reply.data()["offsetSeconds"].to_string(), "1.5");

    for (body, message) in [
        (
            json!({ "seconds": -1 }),
            "seconds must be greater than or equal to 0",
        ),
        (json!({ "seconds": "5" }), "seconds must be a number"),
        (json!({}), "seconds is required"),
    ] {
        let reply = post(&router, "/_mock/clock/advance", &body).await;
        assert_eq!(
            (reply.status.as_u16(), reply.code()),
            (400, "VALIDATION_ERROR")
        );
        assert_eq!(reply.message(), message);
    }
    let reply = post(
        &router,
        "/_mock/clock/advance",
        &serde_json::from_str(r#"{"seconds": 1e400}"#).expect("json"),
    )
    .await;
    assert_eq!(reply.status, 400);
}

#[tokio::test]
async fn transactions_filter_and_page() {
    let (_, router) = service();
    for i in 0..5 {
        initiated(&router, &format!("L-{i}"), "TOPUP").await;
    }
    let mut other = initiate_body("L-X", "TOPUP");
    other["merchantId"] = json!(OTHER_MERCHANT);
    initiate(&router, &other).await;

    let page = get(&router, "/_mock/transactions?limit=2").await;
    let items = page.data()["items"].as_array().expect("items").clone();
    assert_eq!(items.len(), 2);
    assert_eq!(items[0]["referenceNo"], "L-0");
    assert_eq!(items[0]["amountMinor"], 15000);
    assert_eq!(items[0]["merchantId"], MERCHANT);
    let next = page.data()["next"].as_str().expect("next").to_owned();
    let page = get(
        &router,
        &format!("/_mock/transactions?limit=10&after={next}"),
    )
    .await;
    let refs: Vec<_> = page.data()["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| i["referenceNo"].clone())
        .collect();
    assert_eq!(
        refs,
        [json!("L-2"), json!("L-3"), json!("L-4"), json!("L-X")]
    );
    assert!(page.data()["next"].is_null());

    let page = get(
        &router,
        &format!("/_mock/transactions?merchantId={OTHER_MERCHANT}"),
    )
    .await;
    assert_eq!(page.data()["items"].as_array().map(Vec::len), Some(1));
    let page = get(&router, "/_mock/transactions?status=SUCCESSFUL").await;
    assert_eq!(page.data()["items"].as_array().map(Vec::len), Some(0));
    let page = get(&router, "/_mock/transactions?limit=1001").await;
    assert_eq!(page.code(), "VALIDATION_ERROR");
    insta::assert_snapshot!(
        "transactions_first_item",
        crate::common::pretty(&redact(&items[0]))
    );
}

#[tokio::test]
async fn requests_journal_keeps_api_calls_newest_last() {
    let (_, router) = service();
    let id = initiated(&router, "J-1", "TOPUP").await;
    confirm(&router, &id, "J-1", None).await;
    get(&router, "/_mock/health").await;
    let reply = get(&router, "/_mock/requests").await;
    let items = reply.data()["items"].as_array().expect("items");
    assert_eq!(items.len(), 2);
    assert_eq!(items[1]["path"], "/api/payments/confirm");
    assert_eq!(items[1]["status"], 200);
    assert!(items[0]["body"].as_str().is_some_and(|b| b.contains("J-1")));
    let reply = get(
        &router,
        "/_mock/requests?limit=1&path=/api/payments/initiate",
    )
    .await;
    assert_eq!(reply.data()["items"].as_array().map(Vec::len), Some(1));
}

#[tokio::test]
async fn requests_carry_a_growing_seq_and_page_after_it() {
    let (_, router) = service();
    for n in 0..5 {
        get(&router, &format!("/api/payments/reference/SEQ-{n}/status")).await;
    }
    let all = get(&router, "/_mock/requests").await;
    let items = all.data()["items"].as_array().expect("items").clone();
    let seqs: Vec<u64> = items.iter().filter_map(|i| i["seq"].as_u64()).collect();
    assert_eq!(seqs, [1, 2, 3, 4, 5]);
    // A page is the oldest after the given seq; paging again with the
    // last seq seen goes on where it stopped.
    let page = get(&router, "/_mock/requests?after=1&limit=2").await;
    let page: Vec<u64> = page.data()["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|i| i["seq"].as_u64())
        .collect();
    assert_eq!(page, [2, 3]);
    let page = get(&router, "/_mock/requests?after=3&limit=2").await;
    assert_eq!(page.data()["items"][0]["seq"], 4);
    assert_eq!(
        page.data()["items"][1]["path"],
        "/api/payments/reference/SEQ-4/status"
    );
    let page = get(&router, "/_mock/requests?after=5").await;
    assert_eq!(page.data()["items"], json!([]));
    let page = get(
        &router,
        "/_mock/requests?after=0&limit=1&path=/api/payments/reference/SEQ-3/status",
    )
    .await;
    assert_eq!(page.data()["items"][0]["seq"], 4);
    // Without after: the newest `limit`. Across a reset the numbers go on.
    let newest = get(&router, "/_mock/requests?limit=1").await;
    assert_eq!(newest.data()["items"][0]["seq"], 5);
    send(&router, request(Method::POST, "/_mock/reset", None)).await;
    get(&router, "/api/payments/reference/AFTER/status").await;
    let after = get(&router, "/_mock/requests?after=5").await;
    let items = after.data()["items"].as_array().expect("items");
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["seq"], 6);
    let leading = get(&router, "/_mock/requests?after=0005").await;
    assert_eq!(leading.data()["items"], after.data()["items"]);
    let top = get(&router, "/_mock/requests?after=9223372036854775807").await;
    assert_eq!(
        (top.status.as_u16(), top.data()["items"].clone()),
        (200, json!([]))
    );
}

#[tokio::test]
async fn requests_refuse_an_after_that_is_no_seq() {
    let (_, router) = service();
    get(&router, "/api/payments/reference/X/status").await;
    for bad in [
        "-1",
        "",
        "abc",
        "1.5",
        "1e3",
        "+1",
        "%201",
        "1%20",
        "0x10",
        "%EF%BC%91",
        "9223372036854775808",
        "18446744073709551616",
        "99999999999999999999999999999999999999999999999999",
    ] {
        let reply = get(&router, &format!("/_mock/requests?after={bad}")).await;
        assert_eq!(
            (reply.status.as_u16(), reply.code()),
            (400, "VALIDATION_ERROR"),
            "after={bad}"
        );
        assert_eq!(
            reply.message(),
            "after must be a whole number from 0 to 9223372036854775807: the seq of the last entry seen",
            "after={bad}"
        );
    }
    let reply = get(&router, "/_mock/requests?after=x&limit=0").await;
    assert!(
        reply.message().contains("limit must be") && reply.message().contains("after must be"),
        "every failed rule: {}",
        reply.message()
    );
}

#[tokio::test]
async fn reset_forgets_everything_and_returns_to_real_time() {
    let (state, router) = service();
    initiated(&router, "R-1", "TOPUP").await;
    advance(&state, Duration::from_secs(3600)).await;
    let reply = send(&router, request(Method::POST, "/_mock/reset", None)).await;
    assert_eq!(reply.status, 200);
    assert_eq!(count(&state).await, 0);
    assert!(journal(&state).await.is_empty());
    assert_eq!(clock_offset(&state).await, 0);
}

/// A page of another site must not change the mock through a visitor's
/// browser: a plain form can post to `/_mock/reset` (no body, so no
/// content type to refuse). Browsers send `Origin` with such a post; tools
/// send none.
#[tokio::test]
async fn controls_refuse_another_sites_page_and_change_nothing() {
    let (state, router) = service();
    let id = initiated(&router, "R-1", "TOPUP").await;
    let with_origin = |path: &str, origin: &str, content_type: &str, body: &str| {
        axum::http::Request::post(path)
            .header("host", "127.0.0.1:8080")
            .header("origin", origin)
            .header("content-type", content_type)
            .body(axum::body::Body::from(body.to_owned()))
            .expect("request")
    };
    for origin in ["https://evil.example", "http://127.0.0.1:9999", "null"] {
        for (path, content_type, body) in [
            ("/_mock/reset", "text/plain", ""),
            ("/_mock/reset", "application/x-www-form-urlencoded", "a=b"),
            (
                "/_mock/clock/advance",
                "application/json",
                r#"{"seconds":60}"#,
            ),
            (
                &*format!("/_mock/transactions/{id}/payer"),
                "application/json",
                r#"{"action":"pay"}"#,
            ),
        ] {
            let reply = send(&router, with_origin(path, origin, content_type, body)).await;
            assert_eq!(reply.status, 403, "{origin} {path}: {}", reply.body);
            assert_eq!(reply.code(), "FORBIDDEN");
        }
    }
    assert_eq!(count(&state).await, 1);
    assert_eq!(clock_offset(&state).await, 0);

    // The mock's own pages (same origin) and tools (no Origin) may.
    let own = with_origin(
        "/_mock/clock/advance",
        "http://127.0.0.1:8080",
        "application/json",
        r#"{"seconds":60}"#,
    );
    assert_eq!(send(&router, own).await.status, 200);
    let reply = send(&router, request(Method::POST, "/_mock/reset", None)).await;
    assert_eq!(reply.status, 200);
    assert_eq!(count(&state).await, 0);
}

#[tokio::test]
async fn openapi_describes_every_route_and_error_code() {
    let (_, router) = service();
    let reply = get(&router, "/openapi.json").await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.headers["content-type"], "application/json");
    let doc = &reply.body;
    assert!(doc["openapi"].as_str().is_some_and(|v| v.starts_with("3.")));
    for path in [
        "/api/payments/initiate",
        "/api/payments/confirm",
        "/api/payments/{transactionId}/status",
        "/api/payments/reference/{referenceNo}/status",
        "/_mock/health",
        "/_mock/transactions",
        "/_mock/reset",
        "/_mock/clock",
        "/_mock/clock/advance",
        "/_mock/requests",
        "/openapi.json",
    ] {
        assert!(doc["paths"][path].is_object(), "missing {path}");
    }
    let text = String::from_utf8_lossy(&reply.raw);
    for code in [
        "VALIDATION_ERROR",
        "INVALID_TRANSACTION_ID",
        "INVALID_REFERENCE_NO",
        "TRANSACTION_NOT_FOUND",
        "DUPLICATE_REFERENCE_NO",
        "TRANSACTION_ALREADY_CONFIRMED",
        "TRANSACTION_EXPIRED",
        "AMBIGUOUS_REFERENCE_NO",
        "UNAUTHORIZED",
        "FORBIDDEN",
        "NOT_FOUND",
        "METHOD_NOT_ALLOWED",
        "PAYLOAD_TOO_LARGE",
        "UNSUPPORTED_MEDIA_TYPE",
        "RATE_LIMITED",
        "INTERNAL_ERROR",
    ] {
        assert!(text.contains(code), "missing {code}");
    }
}

#[tokio::test]
async fn library_api_drives_the_running_server() {
    let server = MockServer::start().await;
    let base = server.base_url();
    assert!(base.starts_with("http://127.0.0.1:") && !base.ends_with('/'));
    assert_eq!(
        server.addr().port(),
        base.rsplit(':')
            .next()
            .and_then(|p| p.parse::<u16>().ok())
            .expect("port")
    );

    let client = reqwest::Client::new();
    let mut body = initiate_body("LIB-1", "BILLPAY");
    body["currencyCode"] = json!("JPY");
    let reply: Value = client
        .post(format!("{base}/api/payments/initiate"))
        .header("content-type", "application/json")
        .body((body).to_string())
        .send()
        .await
        .expect("sent")
        .bytes()
        .await
        .map(|b| serde_json::from_slice(&b).expect("envelope"))
        .expect("body");
    let id = reply["data"]["transactionId"]
        .as_str()
        .expect("id")
        .to_owned();
    let confirm: Value = client
        .post(format!("{base}/api/payments/confirm"))
        .header("content-type", "application/json")
        .body((json!({ "transactionId": id, "referenceNo": "LIB-1" })).to_string())
        .send()
        .await
        .expect("sent")
        .bytes()
        .await
        .map(|b| serde_json::from_slice(&b).expect("envelope"))
        .expect("body");
    assert_eq!(confirm["data"]["status"], "CONFIRMED");

    let before = server.now().await;
    server.advance_clock(Duration::from_secs(2)).await;
    assert!(server.now().await - before >= chrono::TimeDelta::seconds(2));
    let stored = server.transactions().await;
    assert_eq!(stored.len(), 1);
    let t = &stored[0];
    assert_eq!(
        (t.transaction_id.as_str(), t.status.as_str()),
        (id.as_str(), "SUCCESSFUL")
    );
    assert_eq!((t.amount_minor, t.currency_code.as_str()), (15000, "JPY"));
    assert_eq!(t.merchant_id.to_string(), MERCHANT);
    assert!(t.confirmed_at.is_some() && t.provider_reference.is_some());
    assert!(t.last_modified_at > t.confirmed_at);
    assert_eq!(server.requests().await.len(), 2);

    server.reset().await;
    assert!(server.transactions().await.is_empty() && server.requests().await.is_empty());
    server.shutdown().await;
    assert!(
        client
            .get(format!("{base}/_mock/health"))
            .send()
            .await
            .is_err()
    );
}

#[tokio::test]
async fn dropping_the_server_stops_it() {
    let server = MockServer::start().await;
    let base = server.base_url();
    drop(server);
    // Accepting stops once the serve task sees the signal; yield until then.
    let mut stopped = false;
    for _ in 0..200 {
        tokio::task::yield_now().await;
        if tokio::net::TcpStream::connect(base.trim_start_matches("http://"))
            .await
            .is_err()
        {
            stopped = true;
            break;
        }
    }
    assert!(stopped);
}

#[tokio::test]
async fn builder_takes_a_listener_and_rejects_bad_options() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    let server = MockServer::builder()
        .listener(listener)
        .start()
        .await
        .expect("start");
    assert_eq!(server.addr(), addr);
    assert!(MockServer::builder().fail_rate(1.5).start().await.is_err());
    let catalog = payments_mock_server::Catalog::from_toml_str("[[product]]\ncode = \"ONLY\"\n")
        .expect("catalog");
    let server = MockServer::builder()
        .catalog(catalog)
        .expiry(Duration::from_secs(60))
        .api_key("sk", None)
        .start()
        .await
        .expect("start");
    let reply = reqwest::Client::new()
        .post(format!("{}/api/payments/initiate", server.base_url()))
        .bearer_auth("sk")
        .header("content-type", "application/json")
        .body((initiate_body("C-1", "TOPUP")).to_string())
        .send()
        .await
        .expect("sent");
    let body: Value =
        serde_json::from_slice(&reply.bytes().await.expect("body")).expect("envelope");
    assert_eq!(body["message"], "productCode TOPUP is not offered");
}

/// Every (operation, status, errorCode) the service produces is documented:
/// the OpenAPI response exists and, for failures, lists the code.
#[tokio::test]
async fn openapi_documents_every_status_and_code_the_service_answers() {
    let (_, router) = service();
    let doc = get(&router, "/openapi.json").await.body;
    let id = initiated(&router, "OA-1", "TOPUP").await;
    let confirm_body = json!({ "transactionId": id, "referenceNo": "OA-1" });
    let cases: Vec<(Method, &str, String, Option<Value>)> = vec![
        (
            Method::POST,
            "/api/payments/initiate",
            "/api/payments/initiate".into(),
            Some(initiate_body("OA-2", "TOPUP")),
        ),
        (
            Method::POST,
            "/api/payments/initiate",
            "/api/payments/initiate".into(),
            Some(initiate_body("OA-2", "TOPUP")),
        ),
        (
            Method::POST,
            "/api/payments/initiate",
            "/api/payments/initiate".into(),
            Some(json!({})),
        ),
        (
            Method::POST,
            "/api/payments/confirm",
            "/api/payments/confirm".into(),
            Some(confirm_body.clone()),
        ),
        (
            Method::POST,
            "/api/payments/confirm",
            "/api/payments/confirm".into(),
            Some(confirm_body),
        ),
        (
            Method::POST,
            "/api/payments/confirm",
            "/api/payments/confirm".into(),
            Some(json!({ "transactionId": "x", "referenceNo": "y" })),
        ),
        (
            Method::GET,
            "/api/payments/{transactionId}/status",
            format!("/api/payments/{id}/status"),
            None,
        ),
        (
            Method::GET,
            "/api/payments/{transactionId}/status",
            "/api/payments/nope/status".into(),
            None,
        ),
        (
            Method::GET,
            "/api/payments/{transactionId}/status",
            "/api/payments//status".into(),
            None,
        ),
        (
            Method::GET,
            "/api/payments/reference/{referenceNo}/status",
            "/api/payments/reference/OA-1/status".into(),
            None,
        ),
        (
            Method::GET,
            "/api/payments/reference/{referenceNo}/status",
            "/api/payments/reference/NOPE/status".into(),
            None,
        ),
        (
            Method::GET,
            "/api/payments/reference/{referenceNo}/status",
            "/api/payments/reference//status".into(),
            None,
        ),
        (
            Method::GET,
            "/api/payments/reference/{referenceNo}/status",
            "/api/payments/reference/OA-1/status?merchantId=x".into(),
            None,
        ),
        (Method::GET, "/_mock/health", "/_mock/health".into(), None),
        (
            Method::GET,
            "/_mock/transactions",
            "/_mock/transactions".into(),
            None,
        ),
        (
            Method::GET,
            "/_mock/transactions",
            "/_mock/transactions?limit=0".into(),
            None,
        ),
        (Method::GET, "/_mock/clock", "/_mock/clock".into(), None),
        (
            Method::POST,
            "/_mock/clock/advance",
            "/_mock/clock/advance".into(),
            Some(json!({ "seconds": 1 })),
        ),
        (
            Method::POST,
            "/_mock/clock/advance",
            "/_mock/clock/advance".into(),
            Some(json!({ "seconds": -1 })),
        ),
        (
            Method::GET,
            "/_mock/requests",
            "/_mock/requests".into(),
            None,
        ),
        (Method::POST, "/_mock/reset", "/_mock/reset".into(), None),
    ];
    for (method, template, uri, body) in cases {
        let text = body.map(|b| b.to_string());
        let reply = send(&router, request(method.clone(), &uri, text.as_deref())).await;
        let op = &doc["paths"][template][method.as_str().to_ascii_lowercase()];
        let response = &op["responses"][reply.status.as_str()];
        assert!(
            response.is_object(),
            "{method} {uri}: {} undocumented",
            reply.status
        );
        if reply.body["isSuccess"] == false {
            let examples = &response["content"]["application/json"]["examples"];
            assert!(
                examples[reply.code()].is_object(),
                "{method} {uri}: {} {} undocumented",
                reply.status,
                reply.code()
            );
        }
    }
    // Faults and auth apply to every /api/ operation.
    let faulted = axum::http::Request::get(format!("/api/payments/{id}/status"))
        .header("x-mock-fault", "rate-limit")
        .body(axum::body::Body::empty())
        .expect("request");
    assert_eq!(send(&router, faulted).await.status, 429);
    for path in [
        "/api/payments/initiate",
        "/api/payments/confirm",
        "/api/payments/{transactionId}/status",
    ] {
        let ops = doc["paths"][path].as_object().expect("path");
        for op in ops.values() {
            for status in ["429", "500"] {
                assert!(op["responses"][status].is_object(), "{path} {status}");
            }
            // An open server takes no key: no 401, no security.
            assert!(op["responses"]["401"].is_null(), "{path}");
        }
    }
    // A keyed server's document says so on every /api/ operation.
    let mut config = payments_mock_server::Config::default();
    config.api_keys = vec!["sk_doc".parse().expect("a key")];
    let keyed = payments_mock_server::state::AppState::new(config);
    let _router = payments_mock_server::http::app(keyed.clone());
    let doc: Value = serde_json::from_slice(&keyed.openapi_json()).expect("a document");
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for op in item.as_object().expect("operations").values() {
            let api = path.starts_with("/api/");
            assert_eq!(op["responses"]["401"].is_object(), api, "{path}");
            assert_eq!(op["security"] == json!([{ "bearer": [] }]), api, "{path}");
        }
    }
    assert_eq!(
        doc["components"]["securitySchemes"]["bearer"]["scheme"],
        "bearer"
    );
}
