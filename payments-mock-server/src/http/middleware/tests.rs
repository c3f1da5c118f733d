use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use axum::routing::get;
use http_body_util::BodyExt;
use tower::ServiceExt;
use tower_http::catch_panic::CatchPanicLayer;

use crate::http::app::MockService;

use super::*;

#[test]
fn every_spelling_under_the_mock_prefix_is_behind_the_key() {
    for open in [
        "/_mock/health",
        "/openapi.json",
        "/pay/abc",
        "/",
        "//_mock/reset",
        "/_mock/ui/sign-in",
        "/_mock/ui/static/console.css",
    ] {
        assert_eq!(area(open), Area::Open, "{open}");
    }
    for controls in [
        "/_mock",
        "/_mock/",
        "/_mock/reset",
        "/_mock//reset",
        "/_mock/health/",
        "/_mock/healthz",
        "/_mockx",
        "/_mock/transactions/x/payer",
    ] {
        assert_eq!(area(controls), Area::Controls, "{controls}");
    }
    #[cfg(feature = "metrics")]
    assert_eq!(area("/metrics"), Area::AdminOnly);
    assert_eq!(area("/_mock/coverage"), Area::AdminOnly);
    assert_eq!(area("/_mock/faults"), Area::AdminOnly);
    assert_eq!(area("/_mock/faults/x"), Area::AdminOnly);
    assert_eq!(area("/_mock/coverage/"), Area::Controls);
    assert_eq!(area("/metrics/"), Area::Open);
    #[cfg(feature = "pages")]
    for console in [
        "/_mock/ui",
        "/_mock/ui/",
        "/_mock/ui/reset",
        "/_mock/ui/sign-in/",
        "/_mock/ui/static/console.css/..",
        "/_mock/ui/static/",
    ] {
        assert_eq!(area(console), Area::Console, "{console}");
    }
}

#[test]
fn a_callers_request_id_is_copied_out_of_the_read_buffer() {
    // As hyper hands it over: a slice of the connection's buffer.
    let buffer = bytes::Bytes::from(vec![b'a'; 8192]);
    let given = HeaderValue::from_maybe_shared(buffer.slice(100..136)).expect("visible ASCII");
    let kept = detached(&given);
    assert_eq!(kept, given);
    let inside = buffer.as_ptr_range();
    assert!(
        !inside.contains(&kept.as_bytes().as_ptr()),
        "the kept id must not pin the read buffer"
    );
}

/// `routes` as the service's routes outside `/api/`.
fn with_context(routes: Router) -> MockService {
    MockService::around(AppState::new(crate::config::Config::default()), routes)
}

/// A GET of `/boom` (whose handler panics with `message`) is answered
/// 500 `INTERNAL_ERROR` with the request id and without the message.
async fn assert_boom_is_500(router: &MockService, message: &str) {
    let request = Request::get("/boom")
        .header("x-request-id", "panic-1")
        .body(Body::empty())
        .expect("request");
    let response = router.clone().oneshot(request).await.expect("infallible");
    assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(response.headers()[&REQUEST_ID], "panic-1");
    let body = response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes();
    let text = String::from_utf8_lossy(&body);
    assert!(text.contains("\"errorCode\":\"INTERNAL_ERROR\""), "{text}");
    assert!(!text.contains(message));
}

async fn boom() -> &'static str {
    panic!("handler bug")
}

#[tokio::test]
async fn a_panicking_handler_becomes_500_envelope_and_the_router_keeps_serving() {
    let router = with_context(
        Router::new()
            .route("/boom", get(boom))
            .route("/fine", get(|| async { "fine" }))
            .layer(CatchPanicLayer::custom(panic_response)),
    );
    assert_boom_is_500(&router, "handler bug").await;
    let request = Request::get("/fine").body(Body::empty()).expect("request");
    let response = router.oneshot(request).await.expect("infallible");
    assert_eq!(response.status(), StatusCode::OK);
}

#[tokio::test]
async fn a_panic_below_the_context_without_a_panic_layer_still_gets_the_500_envelope() {
    // No CatchPanicLayer: the service itself must answer (as it does
    // for a panic in the /api/ guard).
    let router = with_context(Router::new().route("/boom", get(boom)));
    assert_boom_is_500(&router, "handler bug").await;
}

#[tokio::test]
async fn a_bare_rejection_is_rewritten_as_the_envelope() {
    let router: Router = Router::new().route(
        "/teapot",
        get(|| async { (StatusCode::IM_A_TEAPOT, "short and stout") }),
    );
    let router = with_context(router);
    let request = Request::get("/teapot")
        .body(Body::empty())
        .expect("request");
    let response = router.oneshot(request).await.expect("infallible");
    assert_eq!(response.status(), StatusCode::IM_A_TEAPOT);
    assert_eq!(response.headers()[header::CONTENT_TYPE], "application/json");
    let body = response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes();
    assert!(String::from_utf8_lossy(&body).contains("VALIDATION_ERROR"));
}
