//! `/openapi.json` (CONTRACT section 10): every route and error code
//! described, every status and code the service answers documented.

use axum::http::Method;
use serde_json::{Value, json};

use crate::common::{get, initiate_body, initiated, request, send, service};

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
