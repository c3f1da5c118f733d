//! The request list's feed: what it reads, and when it says the journal
//! started again.

use axum::body::Body;
use axum::http::{HeaderMap, Method, Request};
use chrono::{DateTime, Utc};
use tower::ServiceExt as _;

use super::{ID_HEADER, SEQ_HEADER, grouped};
use crate::config::Config;
use crate::domain::journal::Capture;
use crate::domain::port::Store as _;
use crate::state::AppState;
use crate::store::journal::EXPANDED;

/// A server's state whose journal holds `ids.len()` requests, numbered
/// from 1, with these request ids.
fn journal_of(ids: &[String]) -> AppState {
    let state = AppState::new(Config::default());
    for id in ids {
        state.store.record_request(Capture::new(
            &Method::GET,
            &"/api/payments/reference/R/status".parse().expect("a URI"),
            &HeaderMap::new(),
            id,
            DateTime::<Utc>::UNIX_EPOCH,
        ));
    }
    state
}

fn ids(prefix: &str, n: usize) -> Vec<String> {
    (1..=n).map(|k| format!("{prefix}-{k}")).collect()
}

/// What a test reads of an answer.
struct Answer {
    status: u16,
    /// `X-Journal-Seq`.
    seq: String,
    /// `X-Journal-Request-Id`.
    id: Option<String>,
    body: String,
}

/// `GET uri` on `state`'s server.
async fn get(state: &AppState, uri: &str) -> Answer {
    let request = Request::get(uri).body(Body::empty()).expect("a request");
    let response = crate::http::app(state.clone())
        .oneshot(request)
        .await
        .expect("infallible");
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .map(|v| v.to_str().expect("ASCII").to_owned())
    };
    let (seq, id) = (header(SEQ_HEADER).unwrap_or_default(), header(ID_HEADER));
    let status = response.status().as_u16();
    let body = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .expect("a body");
    Answer {
        status,
        seq,
        id,
        body: String::from_utf8_lossy(&body).into_owned(),
    }
}

fn expanded_since_reset() -> usize {
    EXPANDED.with(|n| n.replace(0))
}

#[tokio::test]
async fn a_new_journal_that_numbers_past_the_page_with_other_requests_started_again() {
    // The page showed the old server's requests up to 10 ("old-10").
    let old = journal_of(&ids("old", 10));
    let feed = get(&old, "/_mock/ui/requests/feed?after=10&id=old-10").await;
    assert_eq!((feed.status, feed.seq.as_str()), (200, "10"));
    assert_eq!(
        feed.id.as_deref(),
        Some("old-10"),
        "the same row: sent back"
    );
    assert!(!feed.body.contains("started again"), "{}", feed.body);
    // The list names the request id of the row it starts after.
    let page = get(&old, "/_mock/ui/requests").await.body;
    assert!(
        page.contains(r#"data-after="10" data-after-id="old-10""#),
        "{page}"
    );

    // Restarted with a new store whose journal already numbers past 10:
    // its entry 10 is another request, and the feed starts from its oldest.
    let new = journal_of(&ids("new", 12));
    let feed = get(&new, "/_mock/ui/requests/feed?after=10&id=old-10").await;
    assert_eq!((feed.status, feed.seq.as_str()), (200, "12"));
    assert_eq!(feed.id.as_deref(), Some("new-12"), "the newest row's");
    assert!(
        feed.body.contains("The journal started again"),
        "{}",
        feed.body
    );
    for k in 1..=12 {
        assert!(feed.body.contains(&format!("<code>new-{k}</code>")), "{k}");
    }
    // Polling on from there is no restart.
    let feed = get(&new, "/_mock/ui/requests/feed?after=12&id=new-12").await;
    assert_eq!(feed.seq, "12");
    assert!(!feed.body.contains("started again"), "{}", feed.body);
    // The row the page showed, still there: no restart.
    let feed = get(&new, "/_mock/ui/requests/feed?after=10&id=new-10").await;
    assert!(!feed.body.contains("started again"), "{}", feed.body);
    assert!(feed.body.contains("<code>new-12</code>"), "{}", feed.body);
    // Without the row's id the feed goes by the numbers alone.
    let feed = get(&new, "/_mock/ui/requests/feed?after=10").await;
    assert!(!feed.body.contains("started again"), "{}", feed.body);
    // A position the journal never reached is a restart whatever the id.
    let feed = get(&old, "/_mock/ui/requests/feed?after=30&id=x").await;
    assert!(feed.body.contains("started again"), "{}", feed.body);
    assert_eq!(feed.id.as_deref(), Some("old-10"));
}

#[tokio::test]
async fn the_feed_expands_only_the_page_it_answers() {
    // A full journal (11..=1010); the page last saw 5: the oldest 50
    // above it and one more (to tell that more are waiting), not 1,000.
    let state = journal_of(&ids("r", 1_010));
    expanded_since_reset();
    let feed = get(&state, "/_mock/ui/requests/feed?after=5").await;
    let expanded = expanded_since_reset();
    assert_eq!((feed.status, feed.seq.as_str()), (200, "60"));
    assert!(
        feed.body
            .contains("5 requests here are no longer kept: the journal keeps the last 1,000"),
        "6..=10 dropped: {}",
        feed.body
    );
    assert!(
        expanded <= 51,
        "{expanded} entries expanded for a page of 50"
    );
    // From the middle, with the row's id (and the entry numbered there).
    let feed = get(&state, "/_mock/ui/requests/feed?after=500&id=r-500").await;
    let expanded = expanded_since_reset();
    assert_eq!(
        (feed.seq.as_str(), feed.id.as_deref()),
        ("550", Some("r-550"))
    );
    assert!(
        !feed.body.contains("no longer kept") && !feed.body.contains("started again"),
        "{}",
        feed.body
    );
    assert!(
        expanded <= 52,
        "{expanded} entries expanded for a page of 50"
    );
    // At the journal's oldest: nothing was dropped after it.
    let feed = get(&state, "/_mock/ui/requests/feed?after=10").await;
    assert!(!feed.body.contains("no longer kept"), "{}", feed.body);
    let feed = get(&state, "/_mock/ui/requests/feed?after=9").await;
    assert!(
        feed.body.contains("1 request here is no longer kept"),
        "{}",
        feed.body
    );
}

#[test]
fn lengths_are_grouped_by_thousands() {
    for (n, text) in [
        (0, "0"),
        (999, "999"),
        (1000, "1,000"),
        (65_536, "65,536"),
        (1_234_567, "1,234,567"),
    ] {
        assert_eq!(grouped(n), text);
    }
}
