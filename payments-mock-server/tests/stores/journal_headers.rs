//! Every store keeps the same bounded headers of a journal entry: a value
//! over 1 KiB cut and marked, an entry's names and values up to 8 KiB, the
//! cut said by a last `(cut)` pair with the bytes before it; ordinary
//! headers whole. The bound is made before any store keeps the entry.

use axum::http::{HeaderMap, HeaderName, HeaderValue, Method};
use chrono::DateTime;
use payments_mock_server::domain::journal::{Capture, JournalEntry};
use payments_mock_server::domain::port::Store;

use crate::backends;

const BUDGET: usize = 8 * 1024;
const CUT: usize = 1024;
const MARK: &str = "…[cut]";

fn capture(path: &str, extra: &[(String, String)]) -> Capture {
    let mut headers = HeaderMap::new();
    headers.insert(
        "authorization",
        HeaderValue::from_static("Bearer sk_canary"),
    );
    for (name, value) in extra {
        headers.append(
            HeaderName::from_bytes(name.as_bytes()).expect("a name"),
            HeaderValue::from_str(value).expect("a value"),
        );
    }
    let mut capture = Capture::new(
        &Method::POST,
        &path.parse().expect("a URI"),
        &headers,
        "rid-1",
        DateTime::from_timestamp_millis(1_795_000_000_123).expect("a time"),
    );
    capture.set_body(b"{}");
    capture
}

/// A 60 KiB value; ninety headers of 650 bytes; an ordinary request with
/// a value of exactly 1 KiB.
fn record<S: Store>(store: &S) {
    let big = [("x-big".to_owned(), "b".repeat(60 * 1024))];
    store.record_request(capture("/api/big", &big));
    let many: Vec<(String, String)> = (0..90)
        .map(|n| (format!("x-many-{n:02}"), "m".repeat(640)))
        .collect();
    store.record_request(capture("/api/many", &many));
    let plain = [("x-plain".to_owned(), "p".repeat(CUT))];
    store.record_request(capture("/api/plain", &plain));
}

fn size(entry: &JournalEntry) -> usize {
    entry.headers.iter().map(|(n, v)| n.len() + v.len()).sum()
}

/// The entries `store` keeps of [`record`], checked, as read back.
async fn bounded<S: Store>(store: &S) -> Vec<JournalEntry> {
    let entries = store.requests_since(0, 10).await.expect("answers");
    assert_eq!(entries.len(), 3);
    let redacted = ("authorization".to_owned(), "[redacted]".to_owned());
    for entry in &entries {
        assert!(entry.headers.contains(&redacted), "{:?}", entry.path);
        assert!(!format!("{entry:?}").contains("sk_canary"));
        let one = store.request(entry.seq).await.expect("answers");
        assert_eq!(one.as_ref(), Some(entry), "one as in the list");
    }
    let (big, many, plain) = (&entries[0], &entries[1], &entries[2]);
    for cut in [big, many] {
        let last = cut.headers.last().expect("headers");
        assert_eq!(last.0, "(cut)", "{:?}", cut.path);
        let whole: usize = last.1.parse().expect("a length");
        assert!(whole > 58_000, "{whole}");
        assert!(size(cut) <= BUDGET + 20, "{}", size(cut));
    }
    let value = |e: &JournalEntry, name: &str| {
        e.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    assert_eq!(
        value(big, "x-big"),
        Some(format!("{}{MARK}", "b".repeat(CUT)))
    );
    let kept = many
        .headers
        .iter()
        .filter(|(n, _)| n.starts_with("x-many-"));
    assert!((1..90).contains(&kept.count()));
    assert_eq!(value(plain, "x-plain"), Some("p".repeat(CUT)), "whole");
    assert_eq!(plain.headers.len(), 2, "{:?}", plain.headers);
    entries
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_store_keeps_the_same_bounded_headers() {
    let memory = backends::memory().await.expect("a memory store");
    record(&*memory.store);
    let expected = bounded(&*memory.store).await;
    let headers = |entries: &[JournalEntry]| -> Vec<Vec<(String, String)>> {
        entries.iter().map(|e| e.headers.clone()).collect()
    };

    let (_dir, path) = backends::sqlite_path();
    let open = || {
        payments_mock_server::store::SqliteStore::open(
            &path,
            payments_mock_server::Durability::Process,
            backends::REPLICA,
        )
        .expect("a SQLite store")
    };
    let sqlite = open();
    record(&sqlite);
    assert_eq!(headers(&bounded(&sqlite).await), headers(&expected));
    drop(sqlite);
    let again = open();
    let reopened = bounded(&again).await;
    assert_eq!(headers(&reopened), headers(&expected), "from its file");

    let test = "every_store_keeps_the_same_bounded_headers";
    let Some(url) = backends::postgres_database(test).await else {
        return;
    };
    let spec: payments_mock_server::StoreSpec = url.parse().expect("a URL");
    let payments_mock_server::StoreSpec::Postgres(pg) = spec else {
        unreachable!("a postgres:// URL")
    };
    let postgres = payments_mock_server::store::PostgresStore::open(&pg, backends::REPLICA)
        .await
        .expect("a PostgreSQL store");
    record(&postgres);
    assert_eq!(headers(&bounded(&postgres).await), headers(&expected));
}
