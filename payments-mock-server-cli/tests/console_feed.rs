//! The request journal's feed under a burst: it answers the oldest page
//! after the position asked, names the newest row it returned, and says
//! where the journal dropped requests the page never read (not to a
//! merchant's key); a position the journal never reached (it started
//! again) is answered from its oldest.

use axum::Router;
use axum::http::Method;

use crate::admin_access::{ADMIN_KEY, guarded_config};
use crate::common::{Reply, get, request, send, service, service_with};
use crate::console::text;
use crate::security::{KEY_A, KEY_B};

/// `GET uri` with `key` as the bearer.
async fn get_as(router: &Router, uri: &str, key: &str) -> Reply {
    let mut req = request(Method::GET, uri, None);
    req.headers_mut().insert(
        "authorization",
        format!("Bearer {key}").parse().expect("a header"),
    );
    send(router, req).await
}

/// The journal seqs of the rows a feed answer links to, in its order.
fn seqs(rows: &str) -> Vec<u64> {
    rows.split("_mock/ui/requests/")
        .skip(1)
        .filter_map(|s| s.split('"').next()?.parse().ok())
        .collect()
}

async fn burst(router: &Router, n: usize) {
    for i in 0..n {
        get(router, &format!("/api/payments/reference/BURST{i}/status")).await;
    }
}

/// Polls the feed as the page's script does, from `after`, until it
/// answers nothing new: every row seen, and the gap lines.
async fn poll_all(router: &Router, mut after: u64) -> (Vec<u64>, Vec<String>) {
    let (mut seen, mut gaps) = (Vec::new(), Vec::new());
    for _ in 0..100 {
        let feed = get(router, &format!("/_mock/ui/requests/feed?after={after}")).await;
        assert_eq!(feed.status.as_u16(), 200);
        let rows = text(&feed);
        let page = seqs(&rows);
        assert!(page.len() <= 50, "a page at most: {}", page.len());
        assert!(
            page.windows(2).all(|w| w[0] > w[1]),
            "newest first: {page:?}"
        );
        if let Some(line) = rows.split(r#"<tr class="gap"><td colspan="7">"#).nth(1) {
            gaps.push(line.split('<').next().unwrap_or_default().to_owned());
        }
        let next: u64 = feed.headers["x-journal-seq"]
            .to_str()
            .expect("visible")
            .parse()
            .expect("a seq");
        if let Some(newest) = page.first() {
            assert_eq!(next, *newest, "the header names the newest row returned");
        }
        seen.extend(page.into_iter().rev());
        if next == after {
            return (seen, gaps);
        }
        after = next;
    }
    panic!("the feed never caught up");
}

#[tokio::test]
async fn a_burst_larger_than_a_page_is_fed_whole_over_the_next_polls() {
    let (_, router) = service();
    burst(&router, 130).await;
    let first = get(&router, "/_mock/ui/requests/feed?after=0").await;
    assert_eq!(
        first.headers["x-journal-seq"], "50",
        "the oldest page first"
    );
    let (seen, gaps) = poll_all(&router, 0).await;
    assert_eq!(seen, (1..=130).collect::<Vec<u64>>());
    assert!(gaps.is_empty(), "{gaps:?}");
    // From the middle of the burst: the rest, nothing twice.
    let (seen, _) = poll_all(&router, 77).await;
    assert_eq!(seen, (78..=130).collect::<Vec<u64>>());
}

#[tokio::test]
async fn requests_the_journal_dropped_unread_are_said_at_the_hole() {
    let (_, router) = service();
    burst(&router, 1_060).await;
    // The journal keeps 61..=1060: a page that last saw 20 lost 21..=60.
    let (seen, gaps) = poll_all(&router, 20).await;
    assert_eq!(seen, (61..=1_060).collect::<Vec<u64>>());
    assert_eq!(gaps.len(), 1, "{gaps:?}");
    assert!(
        gaps[0].starts_with("40 requests here are no longer kept"),
        "{gaps:?}"
    );
    // The line is below the rows it came with (the hole is under them).
    let rows = text(&get(&router, "/_mock/ui/requests/feed?after=20").await);
    assert!(
        rows.find("requests/61\"").expect("row 61")
            < rows.find("no longer kept").expect("the line"),
        "{rows}"
    );
    // Nothing lost after the journal's oldest: no line.
    let rows = text(&get(&router, "/_mock/ui/requests/feed?after=60").await);
    assert!(!rows.contains("no longer kept"), "{rows}");
}

#[tokio::test]
async fn a_merchants_feed_never_marks_requests_the_journal_dropped() {
    let (_, router) = service_with(guarded_config());
    get_as(&router, "/api/payments/reference/MINE/status", KEY_A).await;
    // Only the other merchant's requests push the journal past 1,000.
    for i in 0..1_060 {
        get_as(
            &router,
            &format!("/api/payments/reference/B{i}/status"),
            KEY_B,
        )
        .await;
    }
    let mine = get_as(&router, "/_mock/ui/requests/feed?after=1", KEY_A).await;
    assert_eq!(mine.status.as_u16(), 200);
    let rows = text(&mine);
    assert!(
        !rows.contains("no longer kept") && !rows.contains("class=\"gap\""),
        "another merchant's traffic is not told: {rows}"
    );
    assert!(!rows.contains("_mock/ui/requests/"), "none of A's: {rows}");
    // The admin key is told of the hole.
    let all = text(&get_as(&router, "/_mock/ui/requests/feed?after=1", ADMIN_KEY).await);
    assert!(all.contains("requests here are no longer kept"), "{all}");
}

#[tokio::test]
async fn a_position_the_journal_never_reached_is_answered_from_its_oldest() {
    // The page last saw 130; the mock restarted and has 5 entries since.
    let (_, router) = service();
    burst(&router, 5).await;
    let feed = get(&router, "/_mock/ui/requests/feed?after=130").await;
    assert_eq!(feed.status.as_u16(), 200);
    assert_eq!(
        feed.headers["x-journal-seq"], "5",
        "the journal's real newest"
    );
    let rows = text(&feed);
    assert_eq!(seqs(&rows), vec![5, 4, 3, 2, 1], "{rows}");
    assert!(rows.contains("The journal started again"), "{rows}");
    assert!(
        rows.find("requests/1\"").expect("row 1") < rows.find("started again").expect("the line"),
        "the line is below the new journal's rows: {rows}"
    );
    // The next poll goes on from there, without the line.
    let (seen, gaps) = poll_all(&router, 5).await;
    assert!(seen.is_empty() && gaps.is_empty(), "{seen:?} {gaps:?}");
    // Nothing recorded yet since the restart: no row, the header 0, the line.
    let (_, router) = service();
    let feed = get(&router, "/_mock/ui/requests/feed?after=7").await;
    assert_eq!(feed.headers["x-journal-seq"], "0");
    assert!(text(&feed).contains("The journal started again"));
    // More than a page since: the oldest page first.
    let (_, router) = service();
    burst(&router, 70).await;
    let feed = get(&router, "/_mock/ui/requests/feed?after=500").await;
    assert_eq!(feed.headers["x-journal-seq"], "50");
    // A position it reached is no restart.
    let rows = text(&get(&router, "/_mock/ui/requests/feed?after=70").await);
    assert!(!rows.contains("started again"), "{rows}");
}
