//! The listing's pages, places and limits.

use serde_json::json;

use super::*;
use crate::rules::test_support::exchange;

fn item(seq: u64) -> Item {
    let mut e = exchange("GET", "/api/payments/x/status", json!(null), 404, json!({}));
    e.seq = seq;
    Item::of(&e, Verdict::Pass, &[], Facts::default())
}

fn seqs(shown: &Shown) -> Vec<u64> {
    shown.items.iter().map(|i| i.seq).collect()
}

fn page(query: &str) -> Page {
    Page::parse(Some(query)).expect("a good query")
}

#[test]
fn pages_are_read_and_refused_with_a_reason() {
    assert_eq!(
        Page::parse(None),
        Ok(Page {
            after: None,
            after_judged: None,
            limit: KEEPS
        })
    );
    assert_eq!(
        page("after=7&limit=2&other=x"),
        Page {
            after: Some(7),
            after_judged: None,
            limit: 2
        }
    );
    assert_eq!(page("after=9223372036854775807").after, Some(SEQ_MAX));
    assert_eq!(page("afterJudged=12&after=3").after_judged, Some(12));
    let problem = Page::parse(Some("afterJudged=-1")).expect_err("a negative place");
    assert!(
        problem.starts_with("afterJudged must be a whole number"),
        "{problem}"
    );
    for bad in [
        "after=",
        "after=-1",
        "after=+1",
        "after=1.5",
        "after=%201",
        "after=abc",
        "after=9223372036854775808",
        "after=99999999999999999999999",
    ] {
        let problem = Page::parse(Some(bad)).expect_err(bad);
        assert!(
            problem.starts_with("after must be a whole number"),
            "{bad}: {problem}"
        );
    }
    for bad in [
        "limit=",
        "limit=0",
        "limit=1001",
        "limit=-5",
        "limit=1e3",
        "limit=x",
    ] {
        let problem = Page::parse(Some(bad)).expect_err(bad);
        assert_eq!(
            problem, "limit must be a whole number from 1 to 1000",
            "{bad}"
        );
    }
    let both = Page::parse(Some("after=x&limit=0")).expect_err("two problems");
    assert!(
        both.contains("after must") && both.contains("; limit must"),
        "{both}"
    );
}

/// A status read answered about another transaction: the item names
/// the transaction asked, never paired with the other one's reference
/// (it showed the path's id beside the answer's referenceNo).
#[test]
fn an_answer_about_another_transaction_is_not_paired_with_what_was_asked() {
    use crate::rules::test_support::{ok, status_data};
    let asked = "01a2f000-0000-7000-8000-00000000000a";
    let other = "01a2f000-0000-7000-8000-00000000000b";
    let e = exchange(
        "GET",
        &format!("/api/payments/{asked}/status"),
        json!(null),
        200,
        ok(status_data(other, "REF-OTHER", "INITIATED", "10.50")),
    );
    let facts = Facts::of(&Parsed::of(&e), &Memory::default());
    assert_eq!(facts.transaction_id.as_deref(), Some(asked));
    assert_eq!(facts.reference_no, None, "{facts:?}");
    // About the one asked: its reference is the item's.
    let e = exchange(
        "GET",
        &format!("/api/payments/{asked}/status"),
        json!(null),
        200,
        ok(status_data(asked, "REF-ASKED", "INITIATED", "10.50")),
    );
    let facts = Facts::of(&Parsed::of(&e), &Memory::default());
    assert_eq!(facts.reference_no.as_deref(), Some("REF-ASKED"));
}

#[test]
fn the_ring_keeps_the_last_thousand() {
    let mut listing = Listing::default();
    for seq in 1..=1500 {
        listing.push(item(seq));
    }
    assert_eq!(listing.len(), KEEPS);
    let newest = listing.page(page("limit=3"));
    assert_eq!(seqs(&newest), [1498, 1499, 1500]);
    let all = listing.page(Page::parse(None).expect("no query"));
    assert_eq!(all.items.first().map(|i| i.seq), Some(501));
    assert_eq!(all.items.len(), KEEPS);
}

#[test]
fn after_pages_by_the_order_judged_so_a_slow_exchange_is_not_skipped() {
    let mut listing = Listing::default();
    // 2 was slow: judged after 3.
    for seq in [1, 3, 2, 4] {
        listing.push(item(seq));
    }
    assert_eq!(seqs(&listing.page(page("after=3"))), [2, 4]);
    assert_eq!(seqs(&listing.page(page("after=2"))), [4]);
    assert_eq!(seqs(&listing.page(page("after=1&limit=2"))), [3, 2]);
    assert_eq!(seqs(&listing.page(page("after=4"))), Vec::<u64>::new());
    // Not kept: those numbered above it.
    assert_eq!(seqs(&listing.page(page("after=0"))), [1, 3, 2, 4]);
    assert_eq!(seqs(&listing.page(page("after=99"))), Vec::<u64>::new());
}

/// The places in the order judged: the page's first, the oldest kept,
/// how many were judged.
fn places(shown: &Shown) -> (Option<u64>, Option<u64>, u64) {
    (shown.first_judged, shown.oldest_judged, shown.judged)
}

#[test]
fn after_judged_pages_by_place_and_says_what_is_no_longer_kept() {
    let mut listing = Listing::default();
    assert_eq!(
        places(&listing.page(page("afterJudged=0"))),
        (None, None, 0)
    );
    // 1,100 judged: 2 slow (judged after 3), and 1,099 slow (judged
    // after 1,100, the last).
    for seq in [1, 3, 2].into_iter().chain(4..=1098).chain([1100, 1099]) {
        listing.push(item(seq));
    }
    // Kept: the 101st judged on.
    let newest = listing.page(page("limit=2"));
    assert_eq!(seqs(&newest), [1100, 1099]);
    assert_eq!(places(&newest), (Some(1099), Some(101), 1100));
    let on = listing.page(page("afterJudged=1097"));
    assert_eq!(seqs(&on), [1098, 1100, 1099]);
    assert_eq!(places(&on), (Some(1098), Some(101), 1100));
    // After a place no longer kept: from the oldest kept, which says
    // how many were lost (101 - 37 - 1).
    let lost = listing.page(page("afterJudged=37&limit=2"));
    assert_eq!(seqs(&lost), [101, 102]);
    assert_eq!(places(&lost), (Some(101), Some(101), 1100));
    // Beyond the newest: nothing (a proxy that started again).
    for beyond in ["afterJudged=1100", "afterJudged=9223372036854775807"] {
        let none = listing.page(page(beyond));
        assert_eq!(places(&none), (None, Some(101), 1100), "{beyond}");
    }
    // By `after` too, the places: kept, and no longer kept (those
    // numbered above it: all kept, one after the other).
    let kept = listing.page(page("after=1098"));
    assert_eq!(seqs(&kept), [1100, 1099]);
    assert_eq!(kept.first_judged, Some(1099));
    let above = listing.page(page("after=50"));
    assert_eq!(places(&above), (Some(101), Some(101), 1100));
}

/// `after` a seq no longer kept lists those numbered above it, which
/// skips a slow exchange numbered below it that was judged later;
/// `afterJudged` does not.
#[test]
fn after_judged_never_skips_a_slow_exchange_judged_after_one_forgotten() {
    let mut listing = Listing::default();
    // 5 slow: judged after 6 and 7; 7 (judged 6th) will be forgotten.
    for seq in [1, 2, 3, 4, 6, 7, 5] {
        listing.push(item(seq));
    }
    for seq in 8..=1006 {
        listing.push(item(seq));
    }
    // 7 (the 6th judged) is no longer kept: the oldest is the 7th
    // judged, seq 5.
    let all = listing.page(Page::parse(None).expect("no query"));
    assert_eq!(all.items.first().map(|i| i.seq), Some(5));
    assert_eq!(places(&all), (Some(7), Some(7), 1006));
    // After seq 7 by seq: 5 is skipped (8 is the 8th judged).
    let by_seq = listing.page(page("after=7&limit=2"));
    assert_eq!(seqs(&by_seq), [8, 9]);
    assert_eq!(by_seq.first_judged, Some(8));
    // Numbered above 4 (no longer kept): all kept from the 7th.
    let above = listing.page(page("after=4&limit=3"));
    assert_eq!(seqs(&above), [5, 8, 9]);
    assert_eq!(above.first_judged, Some(7));
    // After the 6th judged: 5 first.
    let by_place = listing.page(page("afterJudged=6&limit=2"));
    assert_eq!(seqs(&by_place), [5, 8]);
    assert_eq!(places(&by_place), (Some(7), Some(7), 1006));
    let json = serde_json::to_value(&by_place).expect("JSON");
    assert_eq!(json["firstJudged"], 7);
    assert_eq!(json["oldestJudged"], 7);
    assert_eq!(json["judged"], 1006);
}

#[test]
fn long_texts_are_cut() {
    let long = format!("/api/{}", "é".repeat(400));
    let mut e = exchange("GET", &long, json!(null), 404, json!({}));
    e.seq = 1;
    let item = Item::of(
        &e,
        Verdict::Pass,
        &[],
        Facts {
            reference_no: Some("R".repeat(10_000)),
            ..Facts::default()
        },
    );
    assert!(item.path.len() <= TEXT + '…'.len_utf8());
    assert!(item.path.ends_with('…'));
    assert!(
        item.reference_no
            .as_deref()
            .is_some_and(|r| r.len() <= TEXT + 3)
    );
}
