//! What every store keeps besides transactions: the clock, the journal,
//! the settings; and what a database store keeps across a reopen.

use std::collections::HashSet;
use std::time::Duration;

use axum::http::{HeaderMap, HeaderValue, Method};
use chrono::{DateTime, Utc};
use payments_mock_server::PayerAction;
use payments_mock_server::domain::clock::NoRoom;
use payments_mock_server::domain::journal::Capture;
use payments_mock_server::domain::port::{PaymentPageKey, Store};
use payments_mock_server::domain::settings::Settings;
use payments_mock_server::domain::transaction::Record;

use crate::behaviour::{MERCHANT, MINUTE, OTHER, all, create, page_confirmation, token};

/// The clock starts at real time, moves forward up to its end and refuses
/// to go past it, and a reset brings it back; ids made at a later virtual
/// time sort later.
pub async fn the_clock_moves_forward_and_resets<S: Store>(store: &S) {
    let real = Utc::now();
    let start = store.clock().await.expect("answers");
    assert_eq!(start.offset_nanos, 0);
    assert!((start.now - real).num_seconds().abs() < 5);
    let moved = store
        .advance_clock(Duration::from_millis(90_500))
        .await
        .expect("answers")
        .expect("room for it");
    assert_eq!(moved.offset_nanos, 90_500_000_000);
    assert!(moved.now - start.now >= chrono::TimeDelta::seconds(90));
    assert_eq!(
        store.clock().await.expect("answers").offset_nanos,
        90_500_000_000
    );
    let later = create(store, MERCHANT, "LATER").await;
    assert!(later.created_at >= moved.now);
    let (seconds, _) = later.id.get_timestamp().expect("a v7 id").to_unix();
    assert!(seconds >= u64::try_from(moved.now.timestamp()).expect("after 1970"));
    // Past the clock's end (i64::MAX nanoseconds), an advance is refused
    // and moves nothing, as the HTTP control refuses it: the clock never
    // stops short of what was asked while the caller goes on.
    for by in [Duration::MAX, Duration::from_secs(u64::MAX / 2)] {
        let refused = store.advance_clock(by).await.expect("answers");
        assert_eq!(
            refused,
            Err(NoRoom {
                offset_nanos: 90_500_000_000
            }),
            "{by:?}"
        );
    }
    let room = Duration::from_nanos((i64::MAX - 90_500_000_000).unsigned_abs());
    let end = store.advance_clock(room).await.expect("answers");
    assert_eq!(end.map(|r| r.offset_nanos), Ok(i64::MAX), "all the room");
    let past = store.advance_clock(Duration::from_nanos(1)).await;
    assert_eq!(
        past.expect("answers"),
        Err(NoRoom {
            offset_nanos: i64::MAX
        })
    );
    assert_eq!(store.clock().await.expect("answers").offset_nanos, i64::MAX);
    store.reset().await.expect("answers");
    assert_eq!(store.clock().await.expect("answers").offset_nanos, 0);
}

/// A request journaled for tests of the journal.
pub fn capture(path: &str) -> Capture {
    let mut headers = HeaderMap::new();
    headers.insert(
        "authorization",
        HeaderValue::from_static("Bearer sk_canary"),
    );
    headers.insert("x-odd", HeaderValue::from_static("a \"b\""));
    let mut capture = Capture::new(
        &Method::POST,
        &path.parse().expect("a URI"),
        &headers,
        "rid-1",
        DateTime::from_timestamp_millis(1_795_000_000_123).expect("a time"),
    );
    capture.set_body(b"{\"a\":\"\\u00e9\"}");
    capture
}

/// The journal keeps the last 1,000 entries, numbered on across a reset,
/// `Authorization` redacted, each naming its replica.
pub async fn the_journal_keeps_the_last_thousand<S: Store>(store: &S) {
    for n in 0..1005 {
        store.record_request(capture(&format!("/api/{n}?q=%20")));
    }
    let stats = store.journal_stats().await.expect("answers");
    assert_eq!(stats.len, 1000);
    assert_eq!(stats.last_seq, 1005);
    let newest = store.requests_since(0, 3).await.expect("answers");
    let seqs: Vec<u64> = newest.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, [1003, 1004, 1005]);
    let entry = &newest[2];
    assert_eq!(entry.path, "/api/1004");
    assert_eq!(entry.query.as_deref(), Some("q=%20"));
    assert_eq!(entry.body, "{\"a\":\"\\u00e9\"}");
    assert_eq!(entry.replica, super::backends::REPLICA);
    assert!(
        entry
            .headers
            .contains(&("authorization".to_owned(), "[redacted]".to_owned()))
    );
    assert!(!format!("{newest:?}").contains("sk_canary"));
    assert_eq!(
        store.request(1004).await.expect("answers").map(|e| e.path),
        Some("/api/1003".to_owned())
    );
    assert_eq!(store.request(5).await.expect("answers"), None, "dropped");
    store.reset().await.expect("answers");
    assert_eq!(store.journal_stats().await.expect("answers").len, 0);
    store.record_request(capture("/api/after"));
    let after = store.requests_since(1005, 10).await.expect("answers");
    assert_eq!(after.len(), 1);
    assert_eq!(after[0].seq, 1006, "numbering goes on across a reset");
    // A body may hold a NUL (which PostgreSQL's text cannot) and U+FFFF:
    // kept as sent by every store.
    let mut odd = capture("/api/odd");
    odd.set_body("{\0}\u{FFFF}0\u{FFFF}\u{FFFF}\0".as_bytes());
    store.record_request(odd);
    let kept = store.requests_since(1006, 10).await.expect("answers");
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0].body, "{\0}\u{FFFF}0\u{FFFF}\u{FFFF}\0");
}

/// A page after a position (`requests_after`) is what the whole read
/// above it (`requests_since(after, 1000)`) cut to its oldest `limit` was,
/// entry for entry, over a full journal of 1,000; and the store returns
/// the page alone.
pub async fn the_journal_pages_after_a_position_as_the_whole_read_did<S: Store>(store: &S) {
    for n in 0..1010 {
        let mut entry = capture(&format!("/api/page/{n}?n={n}"));
        entry.set_body(format!("{{\"n\":{n}}}").as_bytes());
        store.record_request(entry);
    }
    let stats = store.journal_stats().await.expect("answers");
    assert_eq!((stats.len, stats.last_seq), (1000, 1010));
    assert_eq!(stats.oldest_seq, 11, "the oldest kept");
    let whole = store.requests_since(0, 1000).await.expect("answers");
    assert_eq!(whole.len(), 1000);
    for after in [0, 5, 10, 11, 12, 500, 1008, 1009, 1010, 5000] {
        for limit in [0, 1, 7, 50, 1000] {
            let old: Vec<_> = store
                .requests_since(after, 1000)
                .await
                .expect("answers")
                .into_iter()
                .take(limit)
                .collect();
            let page = store.requests_after(after, limit).await.expect("answers");
            assert_eq!(page, old, "after {after}, limit {limit}");
        }
    }
    // Paged through whole, 64 at a time: the journal, each entry once.
    let (mut seen, mut after) = (Vec::new(), 0);
    loop {
        let page = store.requests_after(after, 64).await.expect("answers");
        // The page alone: the whole read above 0 was 1,000 entries.
        assert!(page.len() <= 64, "{}", page.len());
        let Some(last) = page.last() else { break };
        after = last.seq;
        seen.extend(page);
    }
    assert_eq!(seen, whole);
    assert_eq!(
        store.requests_after(0, 3).await.expect("answers").len(),
        3,
        "the oldest three, not the journal"
    );
    // Forgotten: nothing above any position; the oldest kept is none.
    store.reset().await.expect("answers");
    assert!(
        store
            .requests_after(0, 10)
            .await
            .expect("answers")
            .is_empty()
    );
    assert_eq!(store.journal_stats().await.expect("answers").oldest_seq, 0);
}

/// The journal is exact (issue 33): a read after a recording includes it,
/// with recordings and reads racing on other tasks; `seq` only grows and
/// pages (what comes after an entry's `seq` is everything newer); a reset
/// leaves nothing recorded before it, and numbering goes on above it.
pub async fn the_journal_is_exact_pages_by_seq_and_a_reset_fences_it<S: Store + 'static>(
    store: std::sync::Arc<S>,
) {
    let tasks: Vec<_> = (0..4)
        .map(|t| {
            let store = store.clone();
            tokio::spawn(async move {
                let mut misses = 0;
                for n in 0..25 {
                    let path = format!("/api/exact/{t}/{n}");
                    store.record_request(capture(&path));
                    let seen = store.requests_since(0, 1000).await.expect("answers");
                    if !seen.iter().any(|e| e.path == path) {
                        misses += 1;
                    }
                    assert!(
                        seen.windows(2).all(|w| w[0].seq < w[1].seq),
                        "oldest first, each seq once"
                    );
                }
                misses
            })
        })
        .collect();
    let mut misses = 0;
    for task in tasks {
        misses += task.await.expect("no panic");
    }
    assert_eq!(misses, 0, "a read right after a recording includes it");

    let all = store.requests_since(0, 1000).await.expect("answers");
    assert_eq!(all.len(), 100);
    assert!(all.windows(2).all(|w| w[0].seq < w[1].seq));
    for k in [0, 1, 50, 98, 99] {
        let after = store
            .requests_since(all[k].seq, 1000)
            .await
            .expect("answers");
        assert_eq!(after, all[k + 1..], "what comes after seq {}", all[k].seq);
    }
    let stats = store.journal_stats().await.expect("answers");
    assert_eq!(stats.last_seq, all[99].seq);

    for n in 0..5 {
        store.record_request(capture(&format!("/api/before-reset/{n}")));
    }
    store.reset().await.expect("answers");
    store.record_request(capture("/api/after-reset"));
    let seen = store.requests_since(0, 1000).await.expect("answers");
    let paths: Vec<&str> = seen.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(paths, ["/api/after-reset"], "nothing from before the reset");
    assert!(seen[0].seq > all[99].seq + 5, "numbering goes on");
    assert_eq!(
        store
            .requests_since(seen[0].seq, 1000)
            .await
            .expect("answers"),
        []
    );
}

/// A reset forgets transactions and journal, keeps settings; erase forgets
/// those too. Settings are written once: the first writer's stay.
pub async fn reset_keeps_settings_and_erase_forgets_them<S: Store>(store: &S) {
    assert_eq!(store.settings().await.expect("answers"), None);
    let first = Settings {
        catalog: payments_mock_server::Catalog::default(),
        expiry: Duration::from_secs(42),
    };
    store.save_settings(&first).await.expect("answers");
    let second = Settings {
        expiry: Duration::from_secs(7),
        ..first.clone()
    };
    store.save_settings(&second).await.expect("answers");
    assert_eq!(
        store.settings().await.expect("answers"),
        Some(first.clone())
    );
    create(store, MERCHANT, "R-1").await;
    store.reset().await.expect("answers");
    assert_eq!(store.count().await.expect("answers"), 0);
    assert!(all(store).await.is_empty());
    assert_eq!(store.settings().await.expect("answers"), Some(first));
    store.erase().await.expect("answers");
    assert_eq!(store.settings().await.expect("answers"), None);
    assert!(store.check().await.is_ok());
}

/// Everything a database store keeps, for the reopen test: what to write
/// before and check after.
pub async fn fill<S: Store>(store: &S) -> Vec<Record> {
    store
        .advance_clock(Duration::from_secs(30))
        .await
        .expect("answers")
        .expect("room for it");
    let plain = create(store, MERCHANT, "KEEP-1").await;
    let paid = create(store, OTHER, "KEEP-2").await;
    let now = store.now().await.expect("now");
    store
        .confirm(paid.id, now, page_confirmation(now, &token(9), MINUTE))
        .await
        .expect("answers");
    store
        .decide(
            PaymentPageKey::Token(&token(9)),
            None,
            PayerAction::Decline,
            now,
        )
        .await
        .expect("answers")
        .expect("a page");
    store
        .decide(
            PaymentPageKey::Token(&token(9)),
            None,
            PayerAction::Pay,
            now,
        )
        .await
        .expect("answers")
        .expect("a page");
    store.record_request(capture("/api/kept"));
    store
        .save_settings(&Settings {
            catalog: payments_mock_server::Catalog::default(),
            expiry: Duration::from_secs(123),
        })
        .await
        .expect("answers");
    let _ = plain;
    let stored = all(store).await;
    // Written behind the answers: read once so it is written now.
    let _ = store.requests_since(0, 10).await.expect("answers");
    stored
}

/// After a reopen: the same transactions, clock, journal and settings.
pub async fn kept<S: Store>(store: &S, before: &[Record]) {
    assert_eq!(all(store).await, before);
    let clock = store.clock().await.expect("answers");
    assert_eq!(clock.offset_nanos, 30_000_000_000);
    let journal = store.requests_since(0, 10).await.expect("answers");
    assert_eq!(journal.len(), 1);
    assert_eq!(journal[0].path, "/api/kept");
    assert_eq!(
        store.settings().await.expect("answers").map(|s| s.expiry),
        Some(Duration::from_secs(123))
    );
    let page = before[1].payment_page().expect("a page");
    assert_eq!(page.decision.map(|d| d.action), Some(PayerAction::Decline));
    assert_eq!(page.later_submits, 1);
    let distinct: HashSet<_> = before.iter().map(|r| r.id).collect();
    assert_eq!(distinct.len(), 2);
}
