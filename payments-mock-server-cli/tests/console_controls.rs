//! The console's controls (CONTRACT section 14): the clock, the
//! catalogue, reset, and a keyed mock's console.

use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode};

use crate::common::{advance, clock_offset, count, get, initiated, journal, send, service};
use crate::console::{assert_page, form, text};

#[tokio::test]
async fn the_clock_page_shows_and_moves_the_clock() {
    let (state, router) = service();
    let page = assert_page(&get(&router, "/_mock/ui/clock").await, 200);
    assert!(page.contains("none: real time"));
    let reply = form(
        &router,
        "/_mock/ui/clock",
        "seconds=960",
        Some("http://127.0.0.1:8080"),
    )
    .await;
    assert_eq!(reply.status, StatusCode::SEE_OTHER);
    assert_eq!(
        reply.headers["location"],
        "../../_mock/ui/clock?advanced=960"
    );
    assert_eq!(clock_offset(&state).await, 960_000_000_000);
    let page = assert_page(&get(&router, "/_mock/ui/clock?advanced=960").await, 200);
    assert!(page.contains("moved forward by 960 s"), "{page}");
    assert!(page.contains("16m"), "{page}");
    // A link cannot claim a move the clock never made.
    for claim in ["961", "999999", "%3Cb%3E", "-1"] {
        let page = assert_page(
            &get(&router, &format!("/_mock/ui/clock?advanced={claim}")).await,
            200,
        );
        assert!(!page.contains("moved forward"), "{claim}: {page}");
    }

    for (body, says) in [
        (
            "seconds=-5",
            "Whole seconds to move forward must be a whole number of seconds",
        ),
        (
            "seconds=soon",
            "Whole seconds to move forward must be a whole number of seconds",
        ),
        (
            "seconds=1.5",
            "Whole seconds to move forward must be a whole number of seconds",
        ),
        (
            "seconds=+5",
            "Whole seconds to move forward must be a whole number of seconds",
        ),
        ("seconds=", "Whole seconds to move forward is required"),
        ("", "Whole seconds to move forward is required"),
        (
            "seconds=1e400",
            "Whole seconds to move forward must be a whole number of seconds",
        ),
        (
            "seconds=99999999999999",
            "Whole seconds to move forward must be at most",
        ),
    ] {
        let reply = form(&router, "/_mock/ui/clock", body, None).await;
        let page = assert_page(&reply, 400);
        assert!(page.contains(says), "{body}: {page}");
        // Tied to its field, which takes the focus; the title says so.
        assert!(page.contains("<title>Error: Clock"), "{body}: {page}");
        assert!(
            page.contains(r#"id="seconds-error""#)
                && page
                    .contains(r#"aria-invalid="true" aria-describedby="seconds-error" autofocus"#),
            "{body}: {page}"
        );
    }
    let before = clock_offset(&state).await;
    let reply = form(
        &router,
        "/_mock/ui/clock",
        "seconds=60",
        Some("https://evil.example"),
    )
    .await;
    assert_page(&reply, 403);
    let json_body = Request::post("/_mock/ui/clock")
        .header("content-type", "application/json")
        .body(Body::from(r#"{"seconds":60}"#))
        .expect("request");
    assert_page(&send(&router, json_body).await, 415);
    let huge = format!("seconds=1&pad={}", "x".repeat(30_000));
    assert_page(&form(&router, "/_mock/ui/clock", &huge, None).await, 413);
    assert_eq!(clock_offset(&state).await, before, "nothing moved");
    // Past the clock's end (about 292 years): refused, as the JSON control.
    for _ in 0..2 {
        let reply = form(&router, "/_mock/ui/clock", "seconds=3153600000", None).await;
        assert_eq!(reply.status, 303);
    }
    let moved = clock_offset(&state).await;
    let reply = form(&router, "/_mock/ui/clock", "seconds=3153600000", None).await;
    let page = assert_page(&reply, 400);
    assert!(page.contains("forward must be at most 2916"), "{page}");
    assert_eq!(clock_offset(&state).await, moved, "nothing moved");
}

#[tokio::test]
async fn the_catalogue_page_says_what_each_product_does() {
    let (_, router) = service();
    let page = assert_page(&get(&router, "/_mock/ui/catalog").await, 200);
    for expected in [
        "TOPUP",
        "BILLPAY",
        "CONFIRMED, then SUCCESSFUL 2s later",
        "GIFTCARD",
        "quantity 1–10",
        "EWALLET",
        "with confirmationCode 123456: SUCCESSFUL",
        "DECLINED",
        "FAILED (declined by provider)",
        "ONLINEBANKING",
        "redirect (payer window 10m)",
        "returnUrl required",
        "payerId required",
        "expire after 15m",
    ] {
        assert!(page.contains(expected), "{expected} missing: {page}");
    }
}

/// A confirmation code lets the product's outcome happen, it does not
/// replace it: a declining product with a code still declines, an async
/// one settles later; and the catalogue's own text shows bidirectional
/// controls as symbols, as every other page.
#[tokio::test]
async fn the_catalogue_page_says_what_a_code_does_and_shows_controls() {
    let catalog = payments_mock_server::Catalog::from_toml_str(
        "[[product]]\ncode = \"DC\"\noutcome = \"decline\"\ndecline_message = \"nope\"\nconfirmation_code = \"111\"\n\
         [[product]]\ncode = \"AC\"\noutcome = \"async\"\nsettle_after = \"5s\"\nconfirmation_code = \"222\"\n\
         [[product]]\ncode = \"EVIL\"\ndescription = \"x \\u202e y\"\n",
    )
    .expect("a catalogue");
    let mut config = payments_mock_server::Config::default();
    config.catalog = catalog;
    let (_, router) = crate::common::service_with(config);
    let page = assert_page(&get(&router, "/_mock/ui/catalog").await, 200);
    for expected in [
        "with confirmationCode 111: FAILED (nope); any other code → FAILED (invalid confirmation code)",
        "with confirmationCode 222: CONFIRMED, then SUCCESSFUL 5s later",
        "x &#60;U+202E&#62; y",
    ] {
        assert!(page.contains(expected), "{expected} missing: {page}");
    }
    assert!(!page.contains('\u{202e}'), "a raw override: {page}");
}

#[tokio::test]
async fn reset_asks_first_then_forgets_everything() {
    let (state, router) = service();
    initiated(&router, "R-1", "TOPUP").await;
    advance(&state, Duration::from_secs(60)).await;
    let page = assert_page(&get(&router, "/_mock/ui/reset").await, 200);
    assert!(
        page.contains("forgets all 1 transactions and the 1 requests"),
        "{page}"
    );
    let reply = form(&router, "/_mock/ui/reset", "", Some("https://evil.example")).await;
    assert_page(&reply, 403);
    assert_eq!(count(&state).await, 1);
    let reply = form(
        &router,
        "/_mock/ui/reset",
        "",
        Some("http://127.0.0.1:8080"),
    )
    .await;
    assert_eq!(reply.status, StatusCode::SEE_OTHER);
    assert_eq!(reply.headers["location"], "../../_mock/ui/?reset=done");
    assert_eq!(count(&state).await, 0);
    assert!(journal(&state).await.is_empty());
    assert_eq!(clock_offset(&state).await, 0);
    let page = assert_page(&get(&router, "/_mock/ui/?reset=done").await, 200);
    assert!(page.contains("The mock was reset"));

    // The form has no fields, so a POST with no body (and no content type)
    // resets as well: the document says the body is optional.
    initiated(&router, "R-2", "TOPUP").await;
    let bare = Request::post("/_mock/ui/reset")
        .header("host", "127.0.0.1:8080")
        .body(Body::empty())
        .expect("request");
    let reply = send(&router, bare).await;
    assert_eq!(reply.status, StatusCode::SEE_OTHER);
    assert_eq!(count(&state).await, 0);
}

/// A keyed mock's console needs no key (CONTRACT section 14), and its own
/// forms still work, while the API stays behind the key.
#[tokio::test]
async fn a_keyed_mock_serves_its_console_without_a_key() {
    let mut config = payments_mock_server::Config::default();
    config.api_keys = vec!["sk_console".parse().expect("a key")];
    config.fail_rate = 1.0;
    let (state, router) = crate::common::service_with(config);
    let refused = get(&router, "/api/payments/x/status").await;
    assert_eq!(refused.status, 401);
    for page in [
        "/_mock/ui/",
        "/_mock/ui/transactions/rows",
        "/_mock/ui/requests",
        "/_mock/ui/requests/feed",
        "/_mock/ui/requests/1",
        "/_mock/ui/clock",
        "/_mock/ui/catalog",
        "/_mock/ui/reset",
    ] {
        let reply = get(&router, page).await;
        assert_eq!(reply.status, 200, "{page}: {}", text(&reply));
    }
    let reply = form(
        &router,
        "/_mock/ui/clock",
        "seconds=60",
        Some("http://127.0.0.1:8080"),
    )
    .await;
    assert_eq!(reply.status, StatusCode::SEE_OTHER);
    assert_eq!(clock_offset(&state).await, 60_000_000_000);
}
