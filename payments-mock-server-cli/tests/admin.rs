//! The `/_mock/` controls (CONTRACT section 10): health, the clock, the
//! transactions, the request journal, reset, and other sites refused.

use std::time::Duration;

use axum::http::Method;
use serde_json::json;

use crate::common::{
    MERCHANT, OTHER_MERCHANT, advance, clock_offset, confirm, count, get, initiate, initiate_body,
    initiated, journal, post, redact, request, send, service, service_with,
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

/// The clock goes about 292 years ahead at most: an advance past that is
/// refused (it used to answer "clock advanced" and move nothing), and the
/// clock stays where it was.
#[tokio::test]
async fn an_advance_past_the_clocks_end_is_refused_and_moves_nothing() {
    let (_, router) = service();
    let century = json!({ "seconds": 3_153_600_000_u64 });
    for _ in 0..2 {
        let reply = post(&router, "/_mock/clock/advance", &century).await;
        assert_eq!(reply.status, 200, "{}", reply.body);
    }
    let before = get(&router, "/_mock/clock").await.data()["offsetSeconds"].to_string();
    let reply = post(&router, "/_mock/clock/advance", &century).await;
    assert_eq!(
        (reply.status.as_u16(), reply.code()),
        (400, "VALIDATION_ERROR")
    );
    assert!(
        reply.message().starts_with("seconds must be at most 2916"),
        "{}",
        reply.message()
    );
    let after = get(&router, "/_mock/clock").await.data()["offsetSeconds"].to_string();
    assert_eq!(before, after);
    assert_eq!(before, "6307200000");
    // What is left may still be taken.
    let rest = post(
        &router,
        "/_mock/clock/advance",
        &json!({ "seconds": 2_916_172_036_u64 }),
    )
    .await;
    assert_eq!(rest.status, 200, "{}", rest.body);
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

/// A `traceparent` (CONTRACT section 21): its trace and span id are the
/// journal entry's; a malformed, repeated or missing one leaves them null
/// and never fails the request.
#[tokio::test]
async fn requests_name_the_callers_trace_and_ignore_a_malformed_one() {
    let (_, router) = service();
    let good = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let long = "0".repeat(20_000);
    let sent: [&[&str]; 6] = [
        &[good],
        &["00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01"],
        &["00-00000000000000000000000000000000-00f067aa0ba902b7-01"],
        &["not a trace"],
        &[long.as_str()],
        &[good, good],
    ];
    for (n, headers) in sent.iter().enumerate() {
        let mut request = request(
            Method::POST,
            "/api/payments/initiate",
            Some(&initiate_body(&format!("TRACE-{n}"), "TOPUP").to_string()),
        );
        for value in *headers {
            request
                .headers_mut()
                .append("traceparent", value.parse().expect("a header value"));
        }
        let reply = send(&router, request).await;
        assert_eq!(reply.status.as_u16(), 200, "{n}: {:?}", reply.body);
    }
    let get_status = request(Method::GET, "/api/payments/reference/TRACE-0/status", None);
    let reply = send(&router, get_status).await;
    assert_eq!(reply.status.as_u16(), 200);
    let reply = get(&router, "/_mock/requests").await;
    let items = reply.data()["items"].as_array().expect("items");
    assert_eq!(items.len(), 7);
    assert_eq!(items[0]["traceId"], "4bf92f3577b34da6a3ce929d0e0e4736");
    assert_eq!(items[0]["spanId"], "00f067aa0ba902b7");
    for item in &items[1..] {
        assert!(item["traceId"].is_null(), "{item}");
        assert!(item["spanId"].is_null(), "{item}");
    }
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

/// Behind a reverse proxy that rewrites `Host` (nginx's default), the
/// mock's own pages post from the `--public-url`'s origin: the controls
/// take it (they were 403, as the console's forms were), and still refuse
/// every other site.
#[tokio::test]
async fn controls_take_the_public_urls_origin_behind_a_proxy_that_rewrites_host() {
    let mut config = payments_mock_server::Config::default();
    config.public_url = Some("http://shop.example/mock/".parse().expect("a URL"));
    let (state, router) = service_with(config);
    let advance_from = |origin: &str| {
        axum::http::Request::post("/_mock/clock/advance")
            .header("host", "127.0.0.1:8080")
            .header("origin", origin)
            .header("content-type", "application/json")
            .body(axum::body::Body::from(r#"{"seconds":60}"#))
            .expect("request")
    };
    for other in [
        "https://shop.example",
        "http://evil.example",
        "http://shop.example:81",
    ] {
        let reply = send(&router, advance_from(other)).await;
        assert_eq!(reply.status, 403, "{other}: {}", reply.body);
    }
    assert_eq!(clock_offset(&state).await, 0);
    let reply = send(&router, advance_from("http://shop.example")).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(clock_offset(&state).await, 60_000_000_000);
}
