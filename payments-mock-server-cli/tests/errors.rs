//! Every error code of CONTRACT section 8, with its HTTP status, pinned by
//! a snapshot of the exact envelope.

use std::time::Duration;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use payments_mock_server::Config;
use serde_json::json;

use crate::common::{
    MERCHANT, OTHER_MERCHANT, advance, confirm, count, get, initiate, initiate_body, initiated,
    journal, redact, request, send, service, service_with, status,
};

fn assert_envelope(reply: &crate::common::Reply, status: u16, code: &str) {
    assert_eq!(reply.status.as_u16(), status, "{}", reply.body);
    assert_eq!(reply.code(), code);
    assert_eq!(reply.body["isSuccess"], false);
    assert!(reply.body["data"].is_null());
    assert_eq!(
        reply.headers.get("content-type").map(|v| v.as_bytes()),
        Some(&b"application/json"[..])
    );
    assert!(reply.headers.contains_key("x-request-id"));
}

#[tokio::test]
async fn empty_body_is_not_valid_json() {
    let (_, router) = service();
    let reply = send(
        &router,
        request(Method::POST, "/api/payments/initiate", Some("")),
    )
    .await;
    assert_envelope(&reply, 400, "VALIDATION_ERROR");
    insta::assert_snapshot!(crate::common::pretty(&reply.body));
}

#[tokio::test]
async fn malformed_body_is_not_valid_json() {
    let (_, router) = service();
    let reply = send(
        &router,
        request(Method::POST, "/api/payments/initiate", Some("{\"a\":")),
    )
    .await;
    assert_envelope(&reply, 400, "VALIDATION_ERROR");
    insta::assert_snapshot!(crate::common::pretty(&reply.body));
}

#[tokio::test]
async fn array_body_is_not_an_object() {
    let (_, router) = service();
    let reply = send(
        &router,
        request(Method::POST, "/api/payments/confirm", Some("[1]")),
    )
    .await;
    assert_envelope(&reply, 400, "VALIDATION_ERROR");
    insta::assert_snapshot!(crate::common::pretty(&reply.body));
}

#[tokio::test]
async fn empty_transaction_id_segment_is_invalid_transaction_id() {
    let (_, router) = service();
    let reply = get(&router, "/api/payments//status").await;
    assert_envelope(&reply, 400, "INVALID_TRANSACTION_ID");
    insta::assert_snapshot!(crate::common::pretty(&reply.body));
    let reply = get(&router, "/api/payments/%20%20/status").await;
    assert_envelope(&reply, 400, "INVALID_TRANSACTION_ID");
}

#[tokio::test]
async fn empty_reference_segment_is_invalid_reference_no() {
    let (_, router) = service();
    let reply = get(&router, "/api/payments/reference//status").await;
    assert_envelope(&reply, 400, "INVALID_REFERENCE_NO");
    insta::assert_snapshot!(crate::common::pretty(&reply.body));
    let reply = get(&router, "/api/payments/reference/%20/status").await;
    assert_envelope(&reply, 400, "INVALID_REFERENCE_NO");
}

#[tokio::test]
async fn confirm_of_unknown_id_is_400_transaction_not_found() {
    let (_, router) = service();
    let reply = confirm(&router, "01936f5e-0000-7000-8000-000000000000", "R1", None).await;
    assert_envelope(&reply, 400, "TRANSACTION_NOT_FOUND");
    insta::assert_snapshot!(crate::common::pretty(&redact(&reply.body)));
    let reply = confirm(&router, "not-a-uuid", "R1", None).await;
    assert_envelope(&reply, 400, "TRANSACTION_NOT_FOUND");
}

#[tokio::test]
async fn status_of_unknown_id_is_404_transaction_not_found() {
    let (_, router) = service();
    let reply = status(&router, "01936f5e-0000-7000-8000-000000000000").await;
    assert_envelope(&reply, 404, "TRANSACTION_NOT_FOUND");
    insta::assert_snapshot!(crate::common::pretty(&redact(&reply.body)));
    let reply = status(&router, "not-a-uuid").await;
    assert_envelope(&reply, 404, "TRANSACTION_NOT_FOUND");
}

#[tokio::test]
async fn status_of_unknown_reference_is_404_transaction_not_found() {
    let (_, router) = service();
    let reply = get(&router, "/api/payments/reference/NOPE/status").await;
    assert_envelope(&reply, 404, "TRANSACTION_NOT_FOUND");
    insta::assert_snapshot!(crate::common::pretty(&reply.body));
}

#[tokio::test]
async fn second_initiate_of_a_reference_is_duplicate_reference_no_naming_the_first() {
    let (state, router) = service();
    let id = initiated(&router, "DUP-1", "TOPUP").await;
    let reply = initiate(&router, &initiate_body("DUP-1", "TOPUP")).await;
    assert_envelope(&reply, 400, "DUPLICATE_REFERENCE_NO");
    assert!(reply.message().contains(&id));
    assert_eq!(count(&state).await, 1);
    insta::assert_snapshot!(crate::common::pretty(&redact(&reply.body)));
}

#[tokio::test]
async fn confirm_twice_answers_already_confirmed() {
    let (_, router) = service();
    let id = initiated(&router, "TWICE", "TOPUP").await;
    assert_eq!(confirm(&router, &id, "TWICE", None).await.status, 200);
    let reply = confirm(&router, &id, "TWICE", None).await;
    assert_envelope(&reply, 400, "TRANSACTION_ALREADY_CONFIRMED");
    insta::assert_snapshot!(crate::common::pretty(&redact(&reply.body)));
}

#[tokio::test]
async fn confirm_after_expiry_answers_transaction_expired() {
    let (state, router) = service();
    let id = initiated(&router, "LATE", "TOPUP").await;
    advance(&state, Duration::from_secs(15 * 60)).await;
    let reply = confirm(&router, &id, "LATE", None).await;
    assert_envelope(&reply, 400, "TRANSACTION_EXPIRED");
    insta::assert_snapshot!(crate::common::pretty(&redact(&reply.body)));
}

#[tokio::test]
async fn confirm_with_other_reference_is_validation_error() {
    let (_, router) = service();
    let id = initiated(&router, "MINE", "TOPUP").await;
    let reply = confirm(&router, &id, "THEIRS", None).await;
    assert_envelope(&reply, 400, "VALIDATION_ERROR");
    insta::assert_snapshot!(crate::common::pretty(&reply.body));
}

#[tokio::test]
async fn confirm_of_ewallet_without_code_is_validation_error_and_stays_confirmable() {
    let (_, router) = service();
    let id = initiated(&router, "OTP-1", "EWALLET").await;
    let reply = confirm(&router, &id, "OTP-1", None).await;
    assert_envelope(&reply, 400, "VALIDATION_ERROR");
    insta::assert_snapshot!(crate::common::pretty(&reply.body));
    assert_eq!(status(&router, &id).await.data()["status"], "PENDING");
    assert_eq!(
        confirm(&router, &id, "OTP-1", Some("123456")).await.status,
        200
    );
}

#[tokio::test]
async fn reference_held_by_two_merchants_without_scope_is_ambiguous() {
    let (_, router) = service();
    initiated(&router, "SHARED", "TOPUP").await;
    let mut other = initiate_body("SHARED", "TOPUP");
    other["merchantId"] = json!(OTHER_MERCHANT);
    assert_eq!(initiate(&router, &other).await.status, 200);
    let reply = get(&router, "/api/payments/reference/SHARED/status").await;
    assert_envelope(&reply, 400, "AMBIGUOUS_REFERENCE_NO");
    insta::assert_snapshot!(crate::common::pretty(&reply.body));
}

#[tokio::test]
async fn missing_key_is_unauthorized_with_www_authenticate() {
    let mut config = Config::default();
    config.api_keys = vec!["sk_test".parse().expect("key")];
    let (_, router) = service_with(config);
    let reply = status(&router, "x").await;
    assert_envelope(&reply, 401, "UNAUTHORIZED");
    assert_eq!(reply.headers["www-authenticate"], "Bearer");
    insta::assert_snapshot!(crate::common::pretty(&reply.body));
}

#[tokio::test]
async fn key_bound_to_another_merchant_is_forbidden() {
    let mut config = Config::default();
    config.api_keys = vec![format!("sk_bound={OTHER_MERCHANT}").parse().expect("key")];
    let (_, router) = service_with(config);
    let body = initiate_body("R-F", "TOPUP").to_string();
    let req = Request::post("/api/payments/initiate")
        .header("authorization", "Bearer sk_bound")
        .header("content-type", "application/json")
        .body(Body::from(body))
        .expect("request");
    let reply = send(&router, req).await;
    assert_envelope(&reply, 403, "FORBIDDEN");
    insta::assert_snapshot!(crate::common::pretty(&redact(&reply.body)));
}

#[tokio::test]
async fn unknown_route_is_not_found() {
    let (_, router) = service();
    for uri in ["/nope", "/api/payments/a/b/status", "/api/payments/x"] {
        let reply = get(&router, uri).await;
        assert_envelope(&reply, 404, "NOT_FOUND");
    }
    insta::assert_snapshot!(crate::common::pretty(&get(&router, "/nope").await.body));
}

#[tokio::test]
async fn wrong_method_is_method_not_allowed() {
    let (_, router) = service();
    let reply = get(&router, "/api/payments/initiate").await;
    assert_envelope(&reply, 405, "METHOD_NOT_ALLOWED");
    insta::assert_snapshot!(crate::common::pretty(&reply.body));
    let reply = send(&router, request(Method::DELETE, "/_mock/reset", None)).await;
    assert_envelope(&reply, 405, "METHOD_NOT_ALLOWED");
}

/// CONTRACT section 8: 405 only where the route exists and the method does
/// not; a path that is no route is 404 `NOT_FOUND` for every method
/// (issue 14: POST on these used to answer 405).
#[tokio::test]
async fn a_path_that_is_no_route_is_not_found_for_every_method() {
    let (_, router) = service();
    let methods = [
        Method::GET,
        Method::HEAD,
        Method::POST,
        Method::PUT,
        Method::PATCH,
        Method::DELETE,
        Method::OPTIONS,
        Method::from_bytes(b"PURGE").expect("an extension method"),
    ];
    let no_routes = [
        "/api/payments/initiate/extra",
        "/api/payments/initiate/",
        "/api/payments/confirm/",
        "/api/payments/foo/bar",
        "/api/payments/x",
        "/api/payments/a/b/status",
        "/api/payments/reference/a/b/status",
        "/api/payments/x/status/",
        "/api/payments/x/status/extra",
        "/api/payments/",
        "/api/payments",
        "/api/",
        "/_mock/health/extra",
        "/_mock/clock/advance/",
        "/_mock/nope",
        "/_mock/transactions/x/payer/extra",
        "/nope",
        // Page paths answer a page instead of the envelope.
        "/pay/",
        "/pay/a/b",
        "/_mock/ui/nope",
    ];
    for uri in no_routes {
        for method in &methods {
            let reply = send(&router, request(method.clone(), uri, None)).await;
            assert_eq!(reply.status.as_u16(), 404, "{method} {uri}");
            // No route, so no method is allowed: never an `Allow` header.
            assert!(
                !reply.headers.contains_key("allow"),
                "{method} {uri}: {:?}",
                reply.headers.get("allow")
            );
            let page = uri.starts_with("/pay/") || uri.starts_with("/_mock/ui/");
            if method != Method::HEAD && !page {
                assert_envelope(&reply, 404, "NOT_FOUND");
            }
        }
    }
}

/// The other half of the rule: a route that exists answers 405 with
/// `Allow` for each method it does not take.
#[tokio::test]
async fn a_route_that_exists_answers_405_with_allow_for_other_methods() {
    let (_, router) = service();
    let routes: [(&str, &[&str]); 13] = [
        ("/api/payments/x/status", &["GET", "HEAD"]),
        ("/api/payments/reference/INV-1/status", &["GET", "HEAD"]),
        ("/api/payments//status", &["GET", "HEAD"]),
        ("/api/payments/initiate", &["POST"]),
        ("/api/payments/confirm", &["POST"]),
        ("/_mock/reset", &["POST"]),
        ("/_mock/health", &["GET", "HEAD"]),
        ("/_mock/clock", &["GET", "HEAD"]),
        ("/_mock/clock/advance", &["POST"]),
        ("/_mock/transactions", &["GET", "HEAD"]),
        ("/_mock/transactions/x/payer", &["POST"]),
        ("/_mock/requests", &["GET", "HEAD"]),
        ("/openapi.json", &["GET", "HEAD"]),
    ];
    let methods = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];
    for (uri, allowed) in routes {
        for method in methods.iter().filter(|m| !allowed.contains(m)) {
            let method = Method::from_bytes(method.as_bytes()).expect("a method");
            let reply = send(&router, request(method.clone(), uri, None)).await;
            if method == Method::HEAD {
                assert_eq!(reply.status.as_u16(), 405, "HEAD {uri}");
            } else {
                assert_envelope(&reply, 405, "METHOD_NOT_ALLOWED");
            }
            let allow = reply
                .headers
                .get("allow")
                .map(|v| v.to_str().expect("visible").replace(' ', ""));
            let allow = allow.unwrap_or_else(|| panic!("{method} {uri}: no Allow header"));
            for a in allowed {
                assert!(allow.split(',').any(|m| m == *a), "{method} {uri}: {allow}");
            }
        }
    }
}

#[tokio::test]
async fn body_over_64_kib_is_payload_too_large() {
    let (_, router) = service();
    let big = format!("{{\"x\":\"{}\"}}", "a".repeat(70 * 1024));
    let reply = send(
        &router,
        request(Method::POST, "/api/payments/initiate", Some(&big)),
    )
    .await;
    assert_envelope(&reply, 413, "PAYLOAD_TOO_LARGE");
    insta::assert_snapshot!(crate::common::pretty(&reply.body));
    let reply = send(
        &router,
        request(Method::POST, "/_mock/clock/advance", Some(&big)),
    )
    .await;
    assert_envelope(&reply, 413, "PAYLOAD_TOO_LARGE");
}

#[tokio::test]
async fn a_declared_body_over_64_kib_is_refused_before_authentication_and_journaled() {
    let mut config = Config::default();
    config.api_keys = vec!["sk_test".parse().expect("key")];
    let (state, router) = service_with(config);
    let big = "a".repeat(70 * 1024);
    let req = Request::post("/api/payments/initiate")
        .header("content-type", "application/json")
        .header("content-length", big.len())
        .body(Body::from(big))
        .expect("request");
    let reply = send(&router, req).await;
    assert_envelope(&reply, 413, "PAYLOAD_TOO_LARGE");
    let entries = journal(&state).await;
    let last = entries.last().expect("journaled");
    assert_eq!(last.status, Some(413));
    assert_eq!(last.path, "/api/payments/initiate");
    // Undeclared (streamed) and over the limit: authentication comes first.
    let req = Request::post("/api/payments/initiate")
        .header("content-type", "application/json")
        .body(Body::from("b".repeat(70 * 1024)))
        .expect("request");
    assert_envelope(&send(&router, req).await, 401, "UNAUTHORIZED");
}

#[tokio::test]
async fn non_json_content_type_is_unsupported_media_type() {
    let (_, router) = service();
    let req = Request::post("/api/payments/initiate")
        .header("content-type", "text/plain")
        .body(Body::from("{}"))
        .expect("request");
    let reply = send(&router, req).await;
    assert_envelope(&reply, 415, "UNSUPPORTED_MEDIA_TYPE");
    insta::assert_snapshot!(crate::common::pretty(&reply.body));
}

#[tokio::test]
async fn json_content_type_with_parameters_and_absent_content_type_are_accepted() {
    let (_, router) = service();
    let body = initiate_body("CT-1", "TOPUP").to_string();
    let req = Request::post("/api/payments/initiate")
        .header("content-type", "application/json; charset=utf-8")
        .body(Body::from(body))
        .expect("request");
    assert_eq!(send(&router, req).await.status, StatusCode::OK);
    let body = initiate_body("CT-2", "TOPUP").to_string();
    let req = Request::post("/api/payments/initiate")
        .body(Body::from(body))
        .expect("request");
    assert_eq!(send(&router, req).await.status, StatusCode::OK);
}

#[tokio::test]
async fn rate_limit_fault_is_rate_limited_with_retry_after() {
    let (_, router) = service();
    let req = Request::get("/api/payments/x/status")
        .header("x-mock-fault", "rate-limit")
        .body(Body::empty())
        .expect("request");
    let reply = send(&router, req).await;
    assert_envelope(&reply, 429, "RATE_LIMITED");
    assert_eq!(reply.headers["retry-after"], "1");
    insta::assert_snapshot!(crate::common::pretty(&reply.body));
}

#[tokio::test]
async fn internal_error_fault_is_internal_error() {
    let (_, router) = service();
    let req = Request::get("/api/payments/x/status")
        .header("x-mock-fault", "internal-error")
        .body(Body::empty())
        .expect("request");
    let reply = send(&router, req).await;
    assert_envelope(&reply, 500, "INTERNAL_ERROR");
    insta::assert_snapshot!(crate::common::pretty(&reply.body));
}

#[tokio::test]
async fn unknown_fault_token_is_validation_error() {
    let (_, router) = service();
    let req = Request::get("/api/payments/x/status")
        .header("x-mock-fault", "explode")
        .body(Body::empty())
        .expect("request");
    let reply = send(&router, req).await;
    assert_envelope(&reply, 400, "VALIDATION_ERROR");
    insta::assert_snapshot!(crate::common::pretty(&reply.body));
}

#[tokio::test]
async fn merchant_scope_comes_from_the_query() {
    let (_, router) = service();
    initiated(&router, "SCOPED", "TOPUP").await;
    let reply = get(
        &router,
        &format!("/api/payments/reference/SCOPED/status?merchantId={OTHER_MERCHANT}"),
    )
    .await;
    assert_envelope(&reply, 404, "TRANSACTION_NOT_FOUND");
    let reply = get(
        &router,
        &format!(
            "/api/payments/reference/SCOPED/status?merchantId={}",
            MERCHANT.to_uppercase()
        ),
    )
    .await;
    assert_eq!(reply.status, 200);
}

#[tokio::test]
async fn other_spellings_of_an_issued_transaction_id_are_unknown() {
    let (_, router) = service();
    let id = initiated(&router, "SPELL-1", "TOPUP").await;
    let uuid = uuid::Uuid::parse_str(&id).expect("a UUID");
    assert_eq!(
        id,
        uuid.hyphenated().to_string(),
        "issued lower-case hyphenated"
    );
    for other in [
        id.to_uppercase(),
        format!("{{{id}}}"),
        format!("urn:uuid:{id}"),
        uuid.simple().to_string(),
    ] {
        let encoded = other.replace('{', "%7B").replace('}', "%7D");
        let reply = status(&router, &encoded).await;
        assert_envelope(&reply, 404, "TRANSACTION_NOT_FOUND");
        let reply = confirm(&router, &other, "SPELL-1", None).await;
        assert_envelope(&reply, 400, "TRANSACTION_NOT_FOUND");
    }
    // Still confirmable under its one id.
    let reply = status(&router, &id).await;
    assert_eq!(reply.data()["status"], "INITIATED");
    let reply = confirm(&router, &id, "SPELL-1", None).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
}
