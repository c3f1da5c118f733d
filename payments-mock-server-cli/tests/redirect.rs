//! Redirect-based payments (CONTRACT section 13): the confirm's payment
//! page, the payer's decision once, the window, the return address, and
//! every bad input to the page (the admin control and
//! the embedded server's payer API: `payer_control.rs`).

use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use payments_mock_server::Config;
use serde_json::{Value, json};

use crate::common::{
    MERCHANT, Reply, advance, confirm, get, initiate, now, record, send, service, service_with,
    status,
};

const RETURN_URL: &str = "https://shop.example/back?order=17#top";

pub(crate) fn online_banking(reference: &str) -> Value {
    json!({
        "merchantId": MERCHANT,
        "referenceNo": reference,
        "amount": 15000,
        "productCode": "ONLINEBANKING",
        "storeId": "S1",
        "returnUrl": RETURN_URL,
        "description": "Order 17",
    })
}

/// Initiates and confirms ONLINEBANKING; the id and the page's path.
pub(crate) async fn confirmed(router: &Router, reference: &str) -> (String, String) {
    confirmed_with(router, online_banking(reference)).await
}

async fn confirmed_with(router: &Router, body: Value) -> (String, String) {
    let reference = body["referenceNo"]
        .as_str()
        .expect("a reference")
        .to_owned();
    let reply = initiate(router, &body).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let id = reply.data()["transactionId"]
        .as_str()
        .expect("an id")
        .to_owned();
    let reply = confirm(router, &id, &reference, None).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let url = payment_url(&reply);
    let path = url
        .strip_prefix("http://localhost")
        .expect("the in-process default base")
        .to_owned();
    (id, path)
}

fn payment_url(reply: &Reply) -> String {
    let extra = reply.data()["extraProperties"]
        .as_str()
        .expect("extraProperties is a JSON string");
    let extra: Value = serde_json::from_str(extra).expect("JSON");
    extra["paymentUrl"].as_str().expect("paymentUrl").to_owned()
}

pub(crate) fn text(reply: &Reply) -> String {
    String::from_utf8_lossy(&reply.raw).into_owned()
}

async fn submit(router: &Router, path: &str, form: &str) -> Reply {
    let request = Request::post(path)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(Body::from(form.to_owned()))
        .expect("request");
    send(router, request).await
}

pub(crate) fn location(reply: &Reply) -> String {
    reply
        .headers
        .get("location")
        .expect("a Location")
        .to_str()
        .expect("visible")
        .to_owned()
}

pub(crate) fn assert_page(reply: &Reply, status: u16) {
    assert_eq!(reply.status.as_u16(), status, "{}", text(reply));
    assert_eq!(
        reply.headers["content-type"],
        "text/html; charset=utf-8",
        "{}",
        text(reply)
    );
    let csp = reply.headers["content-security-policy"]
        .to_str()
        .expect("visible");
    assert!(csp.contains("default-src 'none'"), "{csp}");
    assert!(!csp.contains("script-src"), "{csp}");
    assert_eq!(reply.headers["referrer-policy"], "no-referrer");
    assert_eq!(reply.headers["cache-control"], "no-store");
}

#[tokio::test]
async fn confirm_of_a_redirect_product_hands_out_a_payment_page() {
    let (_, router) = service();
    let reply = initiate(&router, &online_banking("OB-1")).await;
    assert_eq!(reply.data()["status"], "INITIATED");
    let id = reply.data()["transactionId"]
        .as_str()
        .expect("id")
        .to_owned();
    let reply = confirm(&router, &id, "OB-1", None).await;
    assert_eq!(reply.status, 200);
    let data = reply.data();
    assert_eq!(data["status"], "CONFIRMED");
    assert!(data["providerReference"].is_string());
    assert!(data["errorMessage"].is_null());
    let url = payment_url(&reply);
    let token = url
        .strip_prefix("http://localhost/pay/")
        .expect("under the base");
    assert_eq!(token.len(), 32);
    assert!(token.bytes().all(|b| b.is_ascii_alphanumeric()), "{token}");
    assert!(!token.contains(&id[..8]) && !url.contains(&id));

    let reply = status(&router, &id).await;
    assert_eq!(reply.data()["status"], "CONFIRMED");
    assert_eq!(reply.data()["message"], "awaiting the payer");
    assert_eq!(reply.data()["lastModifiedAt"], data["confirmedAt"]);
    let extra: Value =
        serde_json::from_str(reply.data()["extraProperties"].as_str().expect("a string"))
            .expect("JSON");
    assert_eq!(extra["paymentUrl"], url.as_str());
    // A second confirm is refused as for any product.
    let again = confirm(&router, &id, "OB-1", None).await;
    assert_eq!(again.code(), "TRANSACTION_ALREADY_CONFIRMED");
}

#[tokio::test]
async fn tokens_are_different_for_every_transaction() {
    let (_, router) = service();
    let mut seen = std::collections::HashSet::new();
    for n in 0..20 {
        let (_, path) = confirmed(&router, &format!("OB-{n}")).await;
        assert!(seen.insert(path));
    }
}

#[tokio::test]
async fn initiate_of_a_redirect_product_needs_an_absolute_http_return_url() {
    let (_, router) = service();
    let mut body = online_banking("OB-1");
    body.as_object_mut().expect("object").remove("returnUrl");
    let reply = initiate(&router, &body).await;
    assert_eq!(reply.code(), "VALIDATION_ERROR");
    assert_eq!(
        reply.message(),
        "returnUrl is required for product ONLINEBANKING"
    );
    for bad in [
        json!(null),
        json!("javascript:alert(1)"),
        json!("/relative/back"),
        json!("//shop.example/back"),
        json!("data:text/html,<script>alert(1)</script>"),
        json!(17),
    ] {
        body["returnUrl"] = bad.clone();
        let reply = initiate(&router, &body).await;
        assert_eq!(reply.status, 400, "{bad}");
        assert!(
            reply.message().contains("returnUrl"),
            "{bad}: {}",
            reply.message()
        );
    }
}

/// The payer reads the merchant's reference and description as they are:
/// a bidirectional control is shown, never obeyed (`INV-<U+202E>9999-VNI`
/// would read `INV-INV-9999`, a description could claim another amount).
#[tokio::test]
async fn the_page_shows_bidirectional_controls_instead_of_obeying_them() {
    let (_, router) = service();
    let mut body = online_banking("INV-\u{202e}9999-VNI");
    body["description"] = json!("Total charged: \u{202e}RYM 00.1");
    let (_, path) = confirmed_with(&router, body).await;
    let page = text(&get(&router, &path).await);
    assert!(!page.contains('\u{202e}'), "obeyed: {page}");
    assert!(page.contains("INV-&#60;U+202E&#62;9999-VNI"), "{page}");
    assert!(
        page.contains("Total charged: &#60;U+202E&#62;RYM 00.1"),
        "{page}"
    );
}

/// An absolute http URL is one in any letter case of its scheme, and with
/// an IPv6 host (a test shop on [::1]): the payer is sent back there.
#[tokio::test]
async fn a_return_url_may_have_an_upper_case_scheme_or_an_ipv6_host() {
    let (_, router) = service();
    for (n, back) in [
        "HTTPS://shop.example/back",
        "http://[::1]:8080/back?order=1",
    ]
    .into_iter()
    .enumerate()
    {
        let mut body = online_banking(&format!("OB-URL-{n}"));
        body["returnUrl"] = json!(back);
        let (id, path) = confirmed_with(&router, body).await;
        let reply = submit(&router, &path, "action=pay").await;
        assert_eq!(reply.status, StatusCode::SEE_OTHER, "{back}");
        let sent_to = location(&reply);
        assert!(
            sent_to.to_lowercase().starts_with(&back.to_lowercase())
                && sent_to.contains(&format!("transactionId={id}")),
            "{back}: {sent_to}"
        );
    }
}

#[tokio::test]
async fn the_page_shows_amount_reference_and_three_buttons_and_never_the_merchant() {
    let (_, router) = service();
    let (_, path) = confirmed(&router, "INV/2026/17").await;
    let reply = get(&router, &path).await;
    assert_page(&reply, 200);
    let page = text(&reply);
    for expected in [
        "150.00 MYR",
        "INV/2026/17",
        "Order 17",
        r#"name="action" value="pay""#,
        r#"name="action" value="decline""#,
        r#"name="action" value="cancel""#,
        r#"<form method="post""#,
        r#"href="../pay/static/mock.css""#,
        r#"name="viewport""#,
    ] {
        assert!(page.contains(expected), "{expected} missing:\n{page}");
    }
    assert!(!page.contains(MERCHANT), "{page}");
    assert!(!page.contains("<script"), "{page}");
    let css = get(&router, "/pay/static/mock.css").await;
    assert_eq!(css.status, 200);
    assert_eq!(css.headers["content-type"], "text/css; charset=utf-8");
}

#[tokio::test]
async fn hostile_text_on_the_page_is_escaped() {
    let (_, router) = service();
    let mut body = online_banking("<script>alert('ref')</script>\"&");
    body["description"] = json!("<img src=x onerror=alert(1)> \u{202e}evil\u{202c} '\"&");
    let (_, path) = confirmed_with(&router, body).await;
    let page = text(&get(&router, &path).await);
    assert!(!page.contains("<script>alert"), "{page}");
    assert!(!page.contains("<img src=x"), "{page}");
    assert!(
        page.contains("&#60;script&#62;alert(&#39;ref&#39;)"),
        "{page}"
    );
    assert!(
        page.contains("&#60;img src=x onerror=alert(1)&#62;"),
        "{page}"
    );
    // Right-to-left overrides stay inside their own element.
    assert!(page.contains("<bdi>&#60;img src=x"), "{page}");
}

#[tokio::test]
async fn pay_decides_once_and_sends_the_browser_to_the_return_address() {
    let (state, router) = service();
    let (id, path) = confirmed(&router, "INV/17").await;
    advance(&state, Duration::from_secs(30)).await;
    let decided_at = now(&state).await;
    let reply = submit(&router, &path, "action=pay").await;
    assert_eq!(reply.status, StatusCode::SEE_OTHER);
    // A changed cookie makes browsers drop the page from their
    // back/forward cache: the back button shows the outcome.
    let cookie = reply.headers["set-cookie"].to_str().expect("visible");
    assert!(
        cookie.starts_with("payment-decided=") && !cookie.contains("Path="),
        "{cookie}"
    );
    assert_eq!(
        location(&reply),
        format!(
            "https://shop.example/back?order=17&transactionId={id}&referenceNo=INV%2F17&status=SUCCESSFUL#top"
        )
    );
    let read = status(&router, &id).await;
    assert_eq!(read.data()["status"], "SUCCESSFUL");
    assert!(read.data()["message"].is_null());
    let modified = read.data()["lastModifiedAt"]
        .as_str()
        .expect("a time")
        .to_owned();
    let modified = chrono::DateTime::parse_from_rfc3339(&modified).expect("RFC 3339");
    assert!((modified.timestamp_millis() - decided_at.timestamp_millis()).abs() < 1000);

    // A double click, the back button and a late Decline change nothing.
    for form in ["action=pay", "action=decline", "action=cancel"] {
        advance(&state, Duration::from_secs(5)).await;
        let again = submit(&router, &path, form).await;
        assert_eq!(again.status, StatusCode::SEE_OTHER);
        assert!(location(&again).contains("status=SUCCESSFUL"), "{form}");
        assert_eq!(status(&router, &id).await.body, read.body);
    }
    // The page now shows the outcome and the way back.
    let page = get(&router, &path).await;
    assert_page(&page, 200);
    let page = text(&page);
    assert!(page.contains("Payment successful"), "{page}");
    assert!(page.contains("Return to the merchant"), "{page}");
    assert!(page.contains("status=SUCCESSFUL"), "{page}");
    assert!(!page.contains(r#"value="pay""#), "{page}");
}

#[tokio::test]
async fn decline_and_cancel_fail_with_their_messages() {
    for (action, message, headline) in [
        ("decline", "declined by bank", "declined by the bank"),
        ("cancel", "cancelled by payer", "Payment cancelled"),
    ] {
        let (_, router) = service();
        let (id, path) = confirmed(&router, "OB-1").await;
        let reply = submit(&router, &path, &format!("action={action}")).await;
        assert_eq!(reply.status, StatusCode::SEE_OTHER);
        assert!(location(&reply).contains("status=FAILED"));
        let read = status(&router, &id).await;
        assert_eq!(read.data()["status"], "FAILED");
        assert_eq!(read.data()["message"], message);
        let by_reference = get(&router, "/api/payments/reference/OB-1/status").await;
        assert_eq!(by_reference.body, read.body);
        let page = text(&get(&router, &path).await);
        assert!(page.contains(headline), "{page}");
        assert!(page.contains(message), "{page}");
    }
}

#[tokio::test]
async fn a_payer_who_does_nothing_fails_at_the_end_of_the_window() {
    let (state, router) = service();
    let (id, path) = confirmed(&router, "OB-1").await;
    let confirmed_at = status(&router, &id).await.data()["lastModifiedAt"].clone();
    advance(&state, Duration::from_secs(599)).await;
    assert_eq!(status(&router, &id).await.data()["status"], "CONFIRMED");
    advance(&state, Duration::from_secs(1)).await;
    let read = status(&router, &id).await;
    assert_eq!(read.data()["status"], "FAILED");
    assert_eq!(read.data()["message"], "payer did not complete the payment");
    let deadline = chrono::DateTime::parse_from_rfc3339(confirmed_at.as_str().expect("a time"))
        .expect("RFC 3339")
        + chrono::TimeDelta::minutes(10);
    assert_eq!(
        read.data()["lastModifiedAt"],
        deadline
            .to_utc()
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
    );
    // Too late to pay: the page answers with the outcome, nothing changes.
    let late = submit(&router, &path, "action=pay").await;
    assert_eq!(late.status, StatusCode::SEE_OTHER);
    assert!(location(&late).contains("status=FAILED"));
    assert_eq!(status(&router, &id).await.body, read.body);
    let page = text(&get(&router, &path).await);
    assert!(page.contains("not completed in time"), "{page}");
}

#[tokio::test]
async fn the_payer_window_comes_from_the_catalogue() {
    let catalog = payments_mock_server::Catalog::from_toml_str(
        "[[product]]\ncode = \"BANK\"\nflow = \"redirect\"\npayer_timeout = \"30s\"\n",
    )
    .expect("a catalogue");
    let mut config = Config::default();
    config.catalog = catalog;
    let (state, router) = service_with(config);
    let mut body = online_banking("B-1");
    body["productCode"] = json!("BANK");
    let (id, _) = confirmed_with(&router, body).await;
    advance(&state, Duration::from_secs(30)).await;
    assert_eq!(status(&router, &id).await.data()["status"], "FAILED");
}

#[tokio::test]
async fn an_unconfirmed_redirect_transaction_expires_like_any_other() {
    let (state, router) = service();
    let reply = initiate(&router, &online_banking("OB-1")).await;
    let id = reply.data()["transactionId"]
        .as_str()
        .expect("id")
        .to_owned();
    advance(&state, Duration::from_secs(15 * 60)).await;
    assert_eq!(status(&router, &id).await.data()["status"], "EXPIRED");
    assert_eq!(
        confirm(&router, &id, "OB-1", None).await.code(),
        "TRANSACTION_EXPIRED"
    );
}

#[tokio::test]
async fn bad_input_to_the_page_gets_a_clear_page_and_changes_nothing() {
    let (_, router) = service();
    let (id, path) = confirmed(&router, "OB-1").await;
    let token = path.strip_prefix("/pay/").expect("a token").to_owned();
    let before = status(&router, &id).await.body;

    // Unknown tokens, and tokens of the wrong length or alphabet: 404 pages.
    let mut wrong = token.clone();
    wrong.replace_range(0..1, if token.starts_with('A') { "B" } else { "A" });
    for bad in [
        wrong.clone(),
        token[1..].to_owned(),
        format!("{token}A"),
        format!("{}-", &token[1..]),
        format!("{}%41", &token[1..]),
        "x".repeat(5000),
        String::new(),
        format!("{token}/extra"),
    ] {
        let path = format!("/pay/{bad}");
        assert_page(&get(&router, &path).await, 404);
        assert_page(&submit(&router, &path, "action=pay").await, 404);
    }
    // Forms that name no known action: 400 pages.
    for form in [
        "",
        "action=",
        "action=refund",
        "action=PAY",
        "action=pay&action=decline",
        "act=pay",
        "action=%3Cscript%3Ealert(1)%3C%2Fscript%3E",
    ] {
        let reply = submit(&router, &path, form).await;
        assert_page(&reply, 400);
        assert!(!text(&reply).contains("<script>alert"), "{}", text(&reply));
    }
    let invalid_utf8 = Request::post(path.as_str())
        .header("content-type", "application/x-www-form-urlencoded")
        .body(Body::from(vec![0x61, 0x63, 0xff, 0xfe, 0x3d, 0x00]))
        .expect("request");
    assert_page(&send(&router, invalid_utf8).await, 400);
    // Not a form, too large a form (declared or streamed), a wrong method.
    let json_body = Request::post(path.as_str())
        .header("content-type", "application/json")
        .body(Body::from(r#"{"action":"pay"}"#))
        .expect("request");
    assert_page(&send(&router, json_body).await, 415);
    let huge = format!("action=pay&pad={}", "x".repeat(8 * 1024));
    assert_page(&submit(&router, &path, &huge).await, 413);
    let over_limit = format!("action=pay&pad={}", "x".repeat(70 * 1024));
    assert_page(&submit(&router, &path, &over_limit).await, 413);
    let streamed = Request::post(path.as_str())
        .header("content-type", "application/x-www-form-urlencoded")
        .body(Body::from_stream(futures::stream::iter(
            (0..40).map(|_| Ok::<_, std::io::Error>(vec![b'x'; 1024])),
        )))
        .expect("request");
    assert_page(&send(&router, streamed).await, 413);
    for method in [Method::PUT, Method::DELETE, Method::PATCH] {
        let reply = send(&router, crate::common::request(method, &path, None)).await;
        assert_page(&reply, 405);
        assert!(reply.headers.contains_key("allow"));
    }
    assert_page(&get(&router, "/pay/").await, 404);

    assert_eq!(status(&router, &id).await.body, before);
}

#[tokio::test]
async fn concurrent_submits_decide_exactly_once() {
    let (state, router) = service();
    let (id, path) = confirmed(&router, "OB-1").await;
    let submits = (0..48).map(|n| {
        let (router, path) = (router.clone(), path.clone());
        let action = ["pay", "decline", "cancel"][n % 3];
        tokio::spawn(async move { submit(&router, &path, &format!("action={action}")).await })
    });
    let replies = futures::future::join_all(submits).await;
    let final_status = status(&router, &id).await.data()["status"].clone();
    let final_status = final_status.as_str().expect("a status").to_owned();
    for reply in replies {
        let reply = reply.expect("no panic");
        assert_eq!(reply.status, StatusCode::SEE_OTHER);
        assert!(
            location(&reply).ends_with(&format!("status={final_status}#top")),
            "{}",
            location(&reply)
        );
    }
    let stored = record(&state, &id).await.expect("stored");
    let decision = stored.payment_page().and_then(|p| p.decision);
    assert!(decision.is_some());
}
