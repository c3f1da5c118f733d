//! Text beyond ASCII on the console's pages: invisible characters shown,
//! and a path sent percent-encoded read decoded, as sent kept.

use axum::body::Body;
use axum::http::{Method, Request};
use serde_json::json;
use tower::ServiceExt as _;

use crate::config::Config;
use crate::state::AppState;

const MERCHANT: &str = "6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60";

/// `method uri` (with `body`, JSON) on `state`'s server: the status and
/// the body as text.
async fn send(state: &AppState, method: Method, uri: &str, body: Option<String>) -> (u16, String) {
    let mut request = Request::builder().method(method).uri(uri);
    if body.is_some() {
        request = request.header("content-type", "application/json");
    }
    let request = request
        .body(body.map_or_else(Body::empty, Body::from))
        .expect("a request");
    let response = crate::http::app(state.clone())
        .oneshot(request)
        .await
        .expect("infallible");
    let status = response.status().as_u16();
    let body = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .expect("a body");
    (status, String::from_utf8_lossy(&body).into_owned())
}

/// Initiates a transaction with `reference`; its id.
async fn initiated(state: &AppState, reference: &str) -> String {
    let body = json!({
        "merchantId": MERCHANT,
        "referenceNo": reference,
        "amount": 15000,
        "productCode": "TOPUP",
        "storeId": "S1",
        "payerId": "60123456789",
    });
    let (status, answer) = send(
        state,
        Method::POST,
        "/api/payments/initiate",
        Some(body.to_string()),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    let answer: serde_json::Value = serde_json::from_str(&answer).expect("JSON");
    answer["data"]["transactionId"]
        .as_str()
        .expect("an id")
        .to_owned()
}

/// References that differ only by invisible characters do not read alike
/// on the list, and one of a zero-width space alone is not blank: the
/// console shows what the CLI escapes.
#[tokio::test]
async fn invisible_characters_in_a_reference_are_shown() {
    let state = AppState::new(Config::default());
    let blank = initiated(&state, "\u{200b}").await;
    for reference in ["\u{200b}X", "\u{feff}X", "X\u{feff}Y", "X"] {
        initiated(&state, reference).await;
    }
    let (status, list) = send(&state, Method::GET, "/_mock/ui/", None).await;
    assert_eq!(status, 200, "{list}");
    for shown in [
        ">&#60;U+200B&#62;<",
        ">&#60;U+200B&#62;X<",
        ">&#60;U+FEFF&#62;X<",
        ">X&#60;U+FEFF&#62;Y<",
        ">X<",
    ] {
        assert_eq!(list.matches(shown).count(), 1, "{shown}: {list}");
    }
    assert!(
        !list.contains(['\u{200b}', '\u{feff}']),
        "a raw one: {list}"
    );
    let (status, page) = send(
        &state,
        Method::GET,
        &format!("/_mock/ui/transactions/{blank}"),
        None,
    )
    .await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("<bdi>&#60;U+200B&#62;</bdi>"), "{page}");
    assert!(!page.contains('\u{200b}'), "a raw one: {page}");
}

/// A status read by a reference beyond ASCII: the request pages show
/// its path decoded, and as sent.
#[tokio::test]
async fn a_path_sent_percent_encoded_reads_decoded() {
    let state = AppState::new(Config::default());
    let sent = "/api/payments/reference/%E8%AB%8B%E6%B1%82%E2%80%8B/status";
    let read = "/api/payments/reference/請求&#60;U+200B&#62;/status";
    let (status, _) = send(&state, Method::GET, sent, None).await;
    assert_eq!(status, 404);

    let (status, list) = send(&state, Method::GET, "/_mock/ui/requests", None).await;
    assert_eq!(status, 200, "{list}");
    assert!(
        list.contains(&format!(
            r#"title="As sent: {sent}">GET <bdi>{read}</bdi></a>"#
        )),
        "{list}"
    );
    let (_, feed) = send(&state, Method::GET, "/_mock/ui/requests/feed?after=0", None).await;
    assert!(feed.contains(&format!("<bdi>{read}</bdi>")), "{feed}");

    let (status, page) = send(&state, Method::GET, "/_mock/ui/requests/1", None).await;
    assert_eq!(status, 200, "{page}");
    assert!(
        page.contains(&format!("<h1>GET <bdi>{read}</bdi></h1>")),
        "{page}"
    );
    assert!(
        page.contains(&format!("<dd><code><bdi>{sent}</bdi></code></dd>")),
        "{page}"
    );

    // A path that reads as it was sent has no second form.
    send(
        &state,
        Method::GET,
        "/api/payments/reference/INV-1/status",
        None,
    )
    .await;
    let (_, page) = send(&state, Method::GET, "/_mock/ui/requests/2", None).await;
    assert!(
        page.contains("<h1>GET <bdi>/api/payments/reference/INV-1/status</bdi></h1>"),
        "{page}"
    );
    assert!(!page.contains("As sent"), "{page}");
}

/// The transaction's page lists its requests the same way.
#[tokio::test]
async fn the_transactions_requests_read_decoded() {
    let state = AppState::new(Config::default());
    let id = initiated(&state, "請求").await;
    let sent = "/api/payments/reference/%E8%AB%8B%E6%B1%82/status";
    let (status, _) = send(&state, Method::GET, sent, None).await;
    assert_eq!(status, 200);
    let (_, page) = send(
        &state,
        Method::GET,
        &format!("/_mock/ui/transactions/{id}"),
        None,
    )
    .await;
    assert!(
        page.contains(&format!(
            r#"title="As sent: {sent}">GET <bdi>/api/payments/reference/請求/status</bdi></a>"#
        )),
        "{page}"
    );
}
