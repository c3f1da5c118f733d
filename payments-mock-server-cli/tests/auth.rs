//! Authentication on and off, and the merchant binding (CONTRACT section 9).

use axum::Router;
use axum::body::Body;
use axum::http::Request;
use payments_mock_server::Config;
use payments_mock_server::state::AppState;
use serde_json::{Value, json};

use crate::common::{MERCHANT, OTHER_MERCHANT, Reply, initiate_body, send, service, service_with};

fn keyed() -> (AppState, Router) {
    let mut config = Config::default();
    config.api_keys = vec![
        "sk_open".parse().expect("key"),
        format!("sk_mine={MERCHANT}").parse().expect("key"),
        format!("sk_theirs={OTHER_MERCHANT}").parse().expect("key"),
    ];
    service_with(config)
}

async fn call(
    router: &Router,
    key: Option<&str>,
    method: &str,
    uri: &str,
    body: Option<Value>,
) -> Reply {
    let mut req = Request::builder().method(method).uri(uri);
    if let Some(key) = key {
        req = req.header("authorization", key);
    }
    let body = body.map_or_else(Body::empty, |b| Body::from(b.to_string()));
    send(router, req.body(body).expect("request")).await
}

async fn initiate_as(router: &Router, key: &str, body: Value) -> Reply {
    call(
        router,
        Some(key),
        "POST",
        "/api/payments/initiate",
        Some(body),
    )
    .await
}

#[tokio::test]
async fn without_keys_the_api_is_open() {
    let (_, router) = service();
    let reply = call(
        &router,
        None,
        "POST",
        "/api/payments/initiate",
        Some(initiate_body("O-1", "TOPUP")),
    )
    .await;
    assert_eq!(reply.status, 200);
}

#[tokio::test]
async fn with_keys_a_missing_or_wrong_key_is_401() {
    let (_, router) = keyed();
    for key in [
        None,
        Some("Bearer nope"),
        Some("Basic sk_open"),
        Some("Bearer"),
        Some("sk_open"),
    ] {
        let reply = call(&router, key, "GET", "/api/payments/x/status", None).await;
        assert_eq!(reply.status, 401, "{key:?}");
        assert_eq!(reply.code(), "UNAUTHORIZED");
        assert_eq!(reply.headers["www-authenticate"], "Bearer");
    }
}

#[tokio::test]
async fn the_scheme_is_case_insensitive() {
    let (_, router) = keyed();
    for scheme in ["Bearer", "bearer", "BEARER", "bEaReR"] {
        let reply = call(
            &router,
            Some(&format!("{scheme} sk_open")),
            "GET",
            "/api/payments/x/status",
            None,
        )
        .await;
        assert_eq!(reply.status, 404, "{scheme}");
    }
}

#[tokio::test]
async fn mock_controls_are_never_behind_the_key() {
    let (_, router) = keyed();
    assert_eq!(
        call(&router, None, "GET", "/_mock/health", None)
            .await
            .status,
        200
    );
    assert_eq!(
        call(&router, None, "GET", "/openapi.json", None)
            .await
            .status,
        200
    );
}

#[tokio::test]
async fn a_bound_key_may_initiate_only_for_its_merchant() {
    let (_, router) = keyed();
    assert_eq!(
        initiate_as(&router, "Bearer sk_mine", initiate_body("B-1", "TOPUP"))
            .await
            .status,
        200
    );
    let reply = initiate_as(&router, "Bearer sk_theirs", initiate_body("B-2", "TOPUP")).await;
    assert_eq!(reply.status, 403);
    assert_eq!(reply.code(), "FORBIDDEN");
}

#[tokio::test]
async fn a_bound_key_sees_only_its_merchants_transactions() {
    let (_, router) = keyed();
    let reply = initiate_as(&router, "Bearer sk_mine", initiate_body("SEEN", "TOPUP")).await;
    let id = reply.data()["transactionId"]
        .as_str()
        .expect("id")
        .to_owned();

    let path = format!("/api/payments/{id}/status");
    let reply = call(&router, Some("Bearer sk_theirs"), "GET", &path, None).await;
    assert_eq!(
        (reply.status.as_u16(), reply.code()),
        (404, "TRANSACTION_NOT_FOUND")
    );
    assert!(!reply.message().contains("SEEN"));

    // A query naming another merchant than the key's is refused, as an
    // initiate naming one is (whether or not that merchant has the
    // reference: nothing leaks).
    let path = format!("/api/payments/reference/SEEN/status?merchantId={MERCHANT}");
    let reply = call(&router, Some("Bearer sk_theirs"), "GET", &path, None).await;
    assert_eq!((reply.status.as_u16(), reply.code()), (403, "FORBIDDEN"));
    assert!(!reply.message().contains("SEEN"));

    let body = json!({ "transactionId": id, "referenceNo": "SEEN" });
    let reply = call(
        &router,
        Some("Bearer sk_theirs"),
        "POST",
        "/api/payments/confirm",
        Some(body.clone()),
    )
    .await;
    assert_eq!(
        (reply.status.as_u16(), reply.code()),
        (400, "TRANSACTION_NOT_FOUND")
    );

    // An unbound key sees everything.
    let reply = call(
        &router,
        Some("Bearer sk_open"),
        "POST",
        "/api/payments/confirm",
        Some(body),
    )
    .await;
    assert_eq!(reply.status, 200);
}

#[tokio::test]
async fn the_journal_never_shows_the_key() {
    let (state, router) = keyed();
    call(
        &router,
        Some("Bearer sk_open"),
        "GET",
        "/api/payments/x/status",
        None,
    )
    .await;
    let entries = crate::common::journal(&state).await;
    let auth = entries[0]
        .headers
        .iter()
        .find(|(k, _)| k == "authorization")
        .map(|(_, v)| v.as_str());
    assert_eq!(auth, Some("[redacted]"));
    let reply = call(&router, None, "GET", "/_mock/requests", None).await;
    assert!(!String::from_utf8_lossy(&reply.raw).contains("sk_open"));
}
