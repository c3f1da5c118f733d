//! The request journal's feed under a burst: it answers the oldest page
//! after the position asked, names the newest row it returned, and says
//! where the journal dropped requests the page never read.

use axum::Router;

use crate::common::{get, service};
use crate::console::text;

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
