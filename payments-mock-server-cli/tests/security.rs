//! Access control with API keys on (CONTRACT section 9, issue #8): no
//! `/api/` route without a valid key, and no way across merchants. That no
//! key leaks into any output is `secrets.rs`.

use axum::Router;
use axum::body::Body;
use axum::http::Request;
use payments_mock_server::Config;
use payments_mock_server::state::AppState;
use serde_json::{Value, json};

use crate::common::{
    MERCHANT, OTHER_MERCHANT, Reply, count, initiate_body, records, send, service_with,
};

/// Distinctive, so a leak anywhere is found by a plain substring search.
pub(crate) const KEY_A: &str = "sk_live_SECRET_A_7f3c9e";
pub(crate) const KEY_B: &str = "sk_live_SECRET_B_2d81aa";
pub(crate) const KEY_OPEN: &str = "sk_live_SECRET_OPEN_5b0d";

fn keyed() -> (AppState, Router) {
    let mut config = Config::default();
    config.api_keys = vec![
        format!("{KEY_A}={MERCHANT}").parse().expect("key"),
        format!("{KEY_B}={OTHER_MERCHANT}").parse().expect("key"),
        KEY_OPEN.parse().expect("key"),
    ];
    service_with(config)
}

async fn call(
    router: &Router,
    auth: Option<&str>,
    method: &str,
    uri: &str,
    body: Option<&Value>,
) -> Reply {
    let mut req = Request::builder().method(method).uri(uri);
    if let Some(auth) = auth {
        req = req.header("authorization", auth);
    }
    if body.is_some() {
        req = req.header("content-type", "application/json");
    }
    let body = body.map_or_else(Body::empty, |b| Body::from(b.to_string()));
    send(router, req.body(body).expect("request")).await
}

pub(crate) fn bearer(key: &str) -> String {
    format!("Bearer {key}")
}

/// Every `/api/` operation of the OpenAPI document, with a plausible body.
fn api_operations() -> Vec<(String, String, Option<Value>)> {
    let doc: Value = serde_json::from_slice(&payments_mock_server_document()).expect("document");
    let mut ops = Vec::new();
    for (template, methods) in doc["paths"].as_object().expect("paths") {
        if !template.starts_with("/api/") {
            continue;
        }
        let path = template
            .replace("{transactionId}", "0197a0a0-0000-7000-8000-000000000000")
            .replace("{referenceNo}", "R-1");
        for method in methods.as_object().expect("operations").keys() {
            let body = match template.as_str() {
                "/api/payments/initiate" => Some(initiate_body("NOKEY-1", "TOPUP")),
                "/api/payments/confirm" => Some(json!({
                    "transactionId": "0197a0a0-0000-7000-8000-000000000000",
                    "referenceNo": "R-1",
                })),
                _ => None,
            };
            ops.push((method.to_ascii_uppercase(), path.clone(), body));
        }
    }
    assert!(ops.len() >= 4, "{ops:?}");
    ops
}

fn payments_mock_server_document() -> bytes::Bytes {
    // The document a server generates for itself.
    let (state, _router) = keyed();
    state.openapi_json()
}

#[tokio::test]
async fn no_api_route_answers_without_a_valid_key() {
    let (state, router) = keyed();
    let near_misses = [
        None,
        Some(String::new()),
        Some("Bearer".to_owned()),
        Some("Bearer ".to_owned()),
        Some(KEY_A.to_owned()),
        Some(format!("Basic {KEY_A}")),
        Some(format!("Token {KEY_A}")),
        Some(bearer(&KEY_A[..KEY_A.len() - 1])),
        Some(bearer(&format!("{KEY_A}x"))),
        Some(bearer(&format!("{}X", &KEY_A[..KEY_A.len() - 1]))),
        Some(bearer(&format!("X{}", &KEY_A[1..]))),
        Some(bearer(&KEY_A.to_ascii_lowercase())),
        Some(bearer(&format!("{KEY_A}={MERCHANT}"))),
        Some(format!("Bearer {KEY_A} {KEY_B}")),
        Some(format!("Bearer {KEY_A},{KEY_B}")),
    ];
    for (method, path, body) in api_operations() {
        for auth in &near_misses {
            for fault in [None, Some("commit-then-error")] {
                let mut req = Request::builder().method(method.as_str()).uri(&path);
                if let Some(auth) = auth {
                    req = req.header("authorization", auth.as_str());
                }
                if let Some(fault) = fault {
                    req = req.header("x-mock-fault", fault);
                }
                let req = req
                    .header("content-type", "application/json")
                    .body(
                        body.as_ref()
                            .map_or_else(Body::empty, |b| Body::from(b.to_string())),
                    )
                    .expect("request");
                let reply = send(&router, req).await;
                assert_eq!(
                    (reply.status.as_u16(), reply.code()),
                    (401, "UNAUTHORIZED"),
                    "{method} {path} with {auth:?}"
                );
                assert_eq!(reply.headers["www-authenticate"], "Bearer");
            }
        }
        // The right key gets through (whatever the answer, it is not 401).
        let reply = call(
            &router,
            Some(&bearer(KEY_OPEN)),
            &method,
            &path,
            body.as_ref(),
        )
        .await;
        assert_ne!(reply.status, 401, "{method} {path}");
    }
    // Nothing was created by any refused request.
    assert_eq!(
        count(&state).await,
        1,
        "only the one keyed initiate may have created a transaction"
    );
}

#[tokio::test]
async fn a_key_bound_to_merchant_a_cannot_create_read_or_confirm_for_merchant_b() {
    let (state, router) = keyed();
    let (a, b) = (bearer(KEY_A), bearer(KEY_B));
    let initiate = "/api/payments/initiate";
    let mut theirs = initiate_body("B-ONLY", "TOPUP");
    theirs["merchantId"] = json!(OTHER_MERCHANT);
    let reply = call(&router, Some(&b), "POST", initiate, Some(&theirs)).await;
    assert_eq!(reply.status, 200);
    let their_id = reply.data()["transactionId"]
        .as_str()
        .expect("id")
        .to_owned();
    let mut shared_b = initiate_body("SHARED", "TOPUP");
    shared_b["merchantId"] = json!(OTHER_MERCHANT);
    assert_eq!(
        call(&router, Some(&b), "POST", initiate, Some(&shared_b))
            .await
            .status,
        200
    );
    let reply = call(
        &router,
        Some(&a),
        "POST",
        initiate,
        Some(&initiate_body("SHARED", "TOPUP")),
    )
    .await;
    assert_eq!(reply.status, 200);
    let my_shared = reply.data()["transactionId"]
        .as_str()
        .expect("id")
        .to_owned();
    let before = count(&state).await;

    let mut answers = Vec::new();
    // Create for B: refused, nothing stored, even with a fresh reference.
    for reference in ["A-FOR-B", "B-ONLY"] {
        let mut body = initiate_body(reference, "TOPUP");
        body["merchantId"] = json!(OTHER_MERCHANT);
        let reply = call(&router, Some(&a), "POST", initiate, Some(&body)).await;
        assert_eq!((reply.status.as_u16(), reply.code()), (403, "FORBIDDEN"));
        answers.push(reply);
    }
    // A's own reference space is its own: B's reference is free for A, and
    // the answer is not B's DUPLICATE naming B's transaction.
    let reply = call(
        &router,
        Some(&a),
        "POST",
        initiate,
        Some(&initiate_body("B-ONLY", "TOPUP")),
    )
    .await;
    assert_eq!(reply.status, 200);
    assert_ne!(reply.data()["transactionId"], their_id.as_str());
    let after_own = count(&state).await;
    assert_eq!(after_own, before + 1);

    // Read B's transaction by id and by reference, with and without scope.
    let paths = [
        format!("/api/payments/{their_id}/status"),
        format!("/api/payments/{}/status", their_id.to_uppercase()),
        "/api/payments/reference/B-ONLY/status".to_owned(),
        format!("/api/payments/reference/B-ONLY/status?merchantId={OTHER_MERCHANT}"),
        format!(
            "/api/payments/reference/B-ONLY/status?merchantId={}",
            OTHER_MERCHANT.to_uppercase()
        ),
        format!("/api/payments/reference/B-ONLY/status?merchantId={MERCHANT}"),
    ];
    for path in &paths {
        let reply = call(&router, Some(&a), "GET", path, None).await;
        if reply.status == 200 {
            // Only A's own B-ONLY may answer.
            assert_ne!(reply.data()["transactionId"], their_id.as_str(), "{path}");
        } else if path.to_lowercase().contains(&OTHER_MERCHANT.to_lowercase()) {
            // Naming another merchant with A's key is refused whatever
            // that merchant holds: the same answer for B-ONLY as for any
            // reference.
            assert_eq!(
                (reply.status.as_u16(), reply.code()),
                (403, "FORBIDDEN"),
                "{path}"
            );
        } else {
            assert_eq!(
                (reply.status.as_u16(), reply.code()),
                (404, "TRANSACTION_NOT_FOUND"),
                "{path}"
            );
        }
        answers.push(reply);
    }
    // A reference both hold: A's, never ambiguous; a query naming B is
    // refused rather than answered with A's.
    let path = "/api/payments/reference/SHARED/status";
    let reply = call(&router, Some(&a), "GET", path, None).await;
    assert_eq!(reply.status, 200, "{path}");
    assert_eq!(reply.data()["transactionId"], my_shared.as_str(), "{path}");
    let path = format!("/api/payments/reference/SHARED/status?merchantId={OTHER_MERCHANT}");
    let reply = call(&router, Some(&a), "GET", &path, None).await;
    assert_eq!(
        (reply.status.as_u16(), reply.code()),
        (403, "FORBIDDEN"),
        "{path}"
    );
    // An empty merchantId is not a UUID, bound key or not (CONTRACT section 5).
    for query in ["?merchantId=", "?merchantId=x"] {
        let path = format!("/api/payments/reference/SHARED/status{query}");
        let reply = call(&router, Some(&a), "GET", &path, None).await;
        assert_eq!(
            (reply.status.as_u16(), reply.code()),
            (400, "VALIDATION_ERROR"),
            "{path}"
        );
    }

    // Confirm B's transaction: unknown to A, and it stays unconfirmed.
    for reference in ["B-ONLY", "SHARED"] {
        let body = json!({ "transactionId": their_id, "referenceNo": reference });
        let reply = call(
            &router,
            Some(&a),
            "POST",
            "/api/payments/confirm",
            Some(&body),
        )
        .await;
        assert_eq!(
            (reply.status.as_u16(), reply.code()),
            (400, "TRANSACTION_NOT_FOUND")
        );
        answers.push(reply);
    }
    let stored = records(&state).await;
    let theirs_now = stored
        .iter()
        .find(|r| r.id.to_string() == their_id)
        .expect("stored");
    assert!(
        theirs_now.confirmation.is_none(),
        "A confirmed B's transaction"
    );

    // What A learns about B's transaction is exactly what it learns about
    // one that never existed (the answers only echo what A sent).
    let never = "0197a0a0-0000-7000-8000-00000000abcd";
    for (path, body) in [
        (format!("/api/payments/{their_id}/status"), None),
        (
            "/api/payments/confirm".to_owned(),
            Some(json!({ "transactionId": their_id, "referenceNo": "B-ONLY" })),
        ),
    ] {
        let method = if body.is_some() { "POST" } else { "GET" };
        let theirs = call(&router, Some(&a), method, &path, body.as_ref()).await;
        let path_never = path.replace(&their_id, never);
        let body_never = body.map(|b| {
            serde_json::from_str::<Value>(&b.to_string().replace(&their_id, never)).expect("json")
        });
        let none = call(&router, Some(&a), method, &path_never, body_never.as_ref()).await;
        assert_eq!(theirs.status, none.status, "{path}");
        assert_eq!(
            String::from_utf8_lossy(&theirs.raw).replace(&their_id, never),
            String::from_utf8_lossy(&none.raw),
            "{path}"
        );
    }
    for reply in &answers {
        let text = String::from_utf8_lossy(&reply.raw);
        assert!(
            !text.contains(OTHER_MERCHANT) || reply.code() == "FORBIDDEN",
            "{text}"
        );
    }
    // B still sees its own, unchanged.
    let reply = call(
        &router,
        Some(&b),
        "GET",
        &format!("/api/payments/{their_id}/status"),
        None,
    )
    .await;
    assert_eq!(reply.data()["status"], "INITIATED");
}
