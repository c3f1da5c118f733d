//! A query's secrets: the parameters the mock's journal redacts (one
//! rule, `payments_serve::redacted_query`), `confirmationCode` and
//! `payerId`, each replaced in place and the rest kept byte for byte; and
//! a request's path as its spans show it.

use axum::http::{HeaderMap, Method, Uri};
use serde_json::json;

use super::*;
use crate::rules::test_support::exchange;

fn recorded_query(redactor: &Redactor, query: &str) -> Option<String> {
    let mut e = exchange(
        "GET",
        "/api/payments/x/status",
        json!(null),
        404,
        json!(null),
    );
    e.request.query = Some(query.to_owned());
    redactor.exchange(&e).request.query
}

#[test]
fn credentials_in_the_query_are_recorded_as_the_mocks_journal_shows_them() {
    let redactor = Redactor::new();
    for query in [
        "api_key=sk_test_LEAKCANARY123",
        "merchantId=m&token=t0k&access_token=at-LEAKCANARY&password=pw",
        "X-Amz-Signature=abcdef0123456789&X-Amz-Date=20260101T000000Z",
        "api%5fkey=sk_test_LEAKCANARY123&token[]=a&apiKey=k",
        "pageToken=p&idempotency_key=i&token=&token",
    ] {
        let recorded = recorded_query(&redactor, query);
        assert_eq!(
            recorded.as_deref(),
            Some(&*payments_serve::redacted_query(query)),
            "{query}"
        );
        assert!(
            !recorded.as_deref().unwrap_or_default().contains("CANARY"),
            "{recorded:?}"
        );
    }
    assert_eq!(
        recorded_query(&redactor, "api_key=sk_test_LEAKCANARY123").as_deref(),
        Some("api_key=[redacted]")
    );
}

#[test]
fn what_is_not_replaced_stays_as_sent_byte_for_byte() {
    let redactor = Redactor::new();
    let token = redactor.token("PAYER CANARY+1");
    let recorded = recorded_query(
        &redactor,
        "a=%5B1%5D&confirmation%43ode=123456&b=x+y&payerId=PAYER+CANARY%2B1&c=%7e",
    );
    assert_eq!(
        recorded.as_deref(),
        Some(
            format!("a=%5B1%5D&confirmation%43ode=[redacted]&b=x+y&payerId={token}&c=%7e").as_str()
        )
    );
    // Nothing to replace: the query as sent.
    assert_eq!(
        recorded_query(&redactor, "a=%5B1%5D&b=x+y").as_deref(),
        Some("a=%5B1%5D&b=x+y")
    );
}

#[test]
fn a_query_credential_echoed_elsewhere_is_replaced_there_too() {
    let redactor = Redactor::new();
    let mut e = exchange(
        "GET",
        "/api/payments/reference/REF-sk_test_LEAKCANARY123/status",
        json!(null),
        404,
        json!({ "message": "no reference REF-sk_test_LEAKCANARY123" }),
    );
    e.request.query = Some("api_key=sk_test_LEAKCANARY123".to_owned());
    let redacted = redactor.exchange(&e);
    let text = serde_json::to_string(&redacted).expect("serializes");
    assert!(!text.contains("LEAKCANARY"), "{text}");
    assert_eq!(
        redacted.request.path,
        "/api/payments/reference/REF-[redacted]/status"
    );
}

fn span_path(redactor: &Redactor, earlier: &Earlier, target: &str, key: Option<&str>) -> String {
    let uri: Uri = target.parse().expect("a target");
    let mut headers = HeaderMap::new();
    if let Some(key) = key {
        let value = format!("Bearer {key}").parse().expect("a header value");
        headers.insert(axum::http::header::AUTHORIZATION, value);
    }
    redactor
        .span_path(&Method::GET, &uri, &headers, earlier)
        .unwrap_or_else(|| uri.path().to_owned())
}

#[test]
fn a_spans_path_is_the_recordings() {
    let redactor = Redactor::new().also("upstream-password");
    let earlier = Earlier::default();
    let key = "sk_test_SPANCANARY42";
    let reference = format!("/api/payments/reference/REF-{key}/status");
    assert_eq!(
        span_path(&redactor, &earlier, &reference, Some(key)),
        "/api/payments/reference/REF-[redacted]/status"
    );
    assert_eq!(
        span_path(
            &redactor,
            &earlier,
            &format!("{reference}?api_key={key}"),
            None
        ),
        "/api/payments/reference/REF-[redacted]/status"
    );
    assert_eq!(
        span_path(
            &redactor,
            &earlier,
            "/api/payments/reference/R-upstream-password/status",
            None
        ),
        "/api/payments/reference/R-[redacted]/status"
    );
    // A payer id an initiate carried, in its reference: the same token as
    // the recording's.
    let initiate = exchange(
        "POST",
        "/api/payments/initiate",
        json!({ "referenceNo": "TOPUP-PAYERCANARY60999-1", "payerId": "PAYERCANARY60999" }),
        200,
        json!({ "isSuccess": true, "data": { "transactionId": "t-1", "referenceNo": "TOPUP-PAYERCANARY60999-1" } }),
    );
    let parsed = crate::exchange::Parsed::of(&initiate);
    let plan = redactor.plan(&initiate, parsed.request.as_ref(), Secrets::new());
    earlier.keep(&parsed, plan.carried.clone());
    let token = redactor.token("PAYERCANARY60999");
    let status = "/api/payments/reference/TOPUP-PAYERCANARY60999-1/status";
    let shown = span_path(&redactor, &earlier, status, None);
    assert_eq!(
        shown,
        format!("/api/payments/reference/TOPUP-{token}-1/status")
    );
    let mut read = exchange("GET", status, json!(null), 404, json!(null));
    read.request.query = None;
    let parsed = crate::exchange::Parsed::of(&read);
    let recorded = redactor
        .plan(&read, None, earlier.of(&parsed))
        .apply(read.clone());
    assert_eq!(recorded.request.path, shown, "as the recording shows it");
    // Nothing secret: nothing replaced.
    assert_eq!(
        redactor.span_path(
            &Method::GET,
            &"/api/payments/abc/status".parse().expect("a target"),
            &HeaderMap::new(),
            &earlier
        ),
        None
    );
}
