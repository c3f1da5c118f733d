//! A merchant's request list and feed: the position they give it is its
//! own newest row's, never the journal's newest number (which counts
//! other merchants' requests), and paging by it misses none of its rows.

use axum::body::Body;
use axum::http::{HeaderMap, Method, Request};
use chrono::{DateTime, Utc};
use tower::ServiceExt as _;
use uuid::Uuid;

use super::SEQ_HEADER;
use crate::config::Config;
use crate::domain::access::ApiKey;
use crate::domain::journal::Capture;
use crate::domain::port::Store as _;
use crate::state::AppState;

const A: Uuid = Uuid::from_u128(0xa);
const B: Uuid = Uuid::from_u128(0xb);
const KEY_A: &str = "sk_shop_a";
const ADMIN: &str = "adm_0123456789";

/// A server with A's key, B's key and an admin key.
fn shared() -> AppState {
    AppState::new(Config {
        api_keys: vec![
            ApiKey::new(KEY_A, Some(A)),
            ApiKey::new("sk_shop_b", Some(B)),
        ],
        admin_keys: vec![ADMIN.parse().expect("a key")],
        ..Config::default()
    })
}

/// Journals an initiate for `merchant`, with request id `id`.
fn initiated(state: &AppState, merchant: Uuid, id: &str) {
    let mut capture = Capture::new(
        &Method::POST,
        &"/api/payments/initiate".parse().expect("a URI"),
        &HeaderMap::new(),
        id,
        DateTime::<Utc>::UNIX_EPOCH,
    );
    capture.set_body(format!(r#"{{"merchantId":"{merchant}"}}"#).as_bytes());
    capture.status = Some(500);
    state.store.record_request(capture);
}

/// `GET uri` with `key`: the `X-Journal-Seq` header and the body.
async fn get(state: &AppState, uri: &str, key: &str) -> (Option<u64>, String) {
    let request = Request::get(uri)
        .header("authorization", format!("Bearer {key}"))
        .body(Body::empty())
        .expect("a request");
    let response = crate::http::app(state.clone())
        .oneshot(request)
        .await
        .expect("infallible");
    assert_eq!(response.status(), 200, "{uri}");
    let seq = response
        .headers()
        .get(SEQ_HEADER)
        .map(|v| v.to_str().expect("ASCII").parse().expect("a number"));
    let body = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .expect("a body");
    (seq, String::from_utf8_lossy(&body).into_owned())
}

#[tokio::test]
async fn a_merchants_feed_moves_on_to_its_own_newest_row_not_the_journals() {
    let state = shared();
    initiated(&state, B, "b-1");
    initiated(&state, B, "b-2");
    // No row of A's yet: its list starts from 0, not from B's 2.
    let (_, page) = get(&state, "/_mock/ui/requests", KEY_A).await;
    assert!(page.contains(r#"data-after="0""#), "{page}");
    let (seq, rows) = get(&state, "/_mock/ui/requests/feed?after=0", KEY_A).await;
    assert_eq!(seq, Some(0));
    assert!(!rows.contains("b-"), "{rows}");

    initiated(&state, A, "a-3");
    initiated(&state, B, "b-4");
    initiated(&state, B, "b-5");
    let (seq, rows) = get(&state, "/_mock/ui/requests/feed?after=0", KEY_A).await;
    assert_eq!(seq, Some(3), "A's newest row, not the journal's 5");
    assert!(rows.contains("a-3") && !rows.contains("b-"), "{rows}");
    // Nothing new of A's: the position stays.
    let (seq, rows) = get(&state, "/_mock/ui/requests/feed?after=3&id=a-3", KEY_A).await;
    assert_eq!(seq, Some(3));
    assert!(!rows.contains("a-3"), "{rows}");

    // A's next row, after more of B's, is not missed.
    initiated(&state, B, "b-6");
    initiated(&state, A, "a-7");
    initiated(&state, B, "b-8");
    let (seq, rows) = get(&state, "/_mock/ui/requests/feed?after=3&id=a-3", KEY_A).await;
    assert_eq!(seq, Some(7));
    assert!(rows.contains("a-7") && !rows.contains("b-"), "{rows}");

    // The admin's feed still moves on to the journal's newest.
    let (seq, _) = get(&state, "/_mock/ui/requests/feed?after=0", ADMIN).await;
    assert_eq!(seq, Some(8));
    let (_, page) = get(&state, "/_mock/ui/requests", KEY_A).await;
    assert!(page.contains(r#"data-after="7""#), "{page}");
}
