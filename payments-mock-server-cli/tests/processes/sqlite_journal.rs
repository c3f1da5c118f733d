//! The request journal of a SQLite store across stops (CONTRACT section
//! 15): a clean stop (SIGTERM, SIGINT) keeps every entry, the root's and
//! each sandbox's, whatever order the process drops them in; a `kill -9`
//! loses at most the last entries, and never gives their numbers out
//! again (a poller of `?after=SEQ` would skip what comes next).

use std::time::Duration;

use serde_json::{Value, json};

use crate::mock::{Mock, get, http, initiate_body, post};

/// The journal's items at `base` (`""` the root, `/sandboxes/ID` one).
async fn journal(http: &reqwest::Client, mock: &Mock, base: &str, query: &str) -> Vec<Value> {
    let reply = get(http, &mock.url(&format!("{base}/_mock/requests{query}")))
        .await
        .expect("the journal");
    assert_eq!(reply.status, 200, "{}", reply.text);
    reply.data()["items"].as_array().expect("items").clone()
}

/// What identifies each entry: its number and the reference it carried.
fn entries(items: &[Value]) -> Vec<(u64, String)> {
    items
        .iter()
        .map(|e| {
            let body: Value =
                serde_json::from_str(e["body"].as_str().unwrap_or("null")).unwrap_or(Value::Null);
            (
                e["seq"].as_u64().expect("a seq"),
                body["referenceNo"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// A new sandbox: the prefix of its base URL (`/sandboxes/{id}`).
async fn sandbox(http: &reqwest::Client, mock: &Mock) -> String {
    let reply = post(http, &mock.url("/_mock/sandboxes"), &json!({}))
        .await
        .expect("made");
    assert_eq!(reply.status, 201, "{}", reply.text);
    let id = reply.data()["id"].as_str().expect("an id").to_owned();
    format!("/sandboxes/{id}")
}

/// `n` initiates at `base`, references `PREFIX-0`…, each answered 200.
async fn initiates(http: &reqwest::Client, mock: &Mock, base: &str, prefix: &str, n: usize) {
    for i in 0..n {
        let reply = post(
            http,
            &mock.url(&format!("{base}/api/payments/initiate")),
            &initiate_body(&format!("{prefix}-{i}"), "TOPUP", 100),
        )
        .await
        .expect("answered");
        assert_eq!(reply.status, 200, "{base}: {}", reply.text);
    }
}

/// Sends `signal` and waits for the clean exit.
fn stopped_by(mock: Mock, signal: &str) {
    mock.signal(signal);
    assert_eq!(
        mock.exited_within(Duration::from_secs(30)),
        Some(Some(0)),
        "SIG{signal} stops it cleanly"
    );
}

/// A clean stop with a sandbox live (made in this run, then one only
/// restored from the file) kept every journal entry read before the
/// signal: the root's last entries were lost (20 of 20 here) because the
/// root's view was dropped before the file's last flush could find it.
#[tokio::test]
async fn a_clean_stop_with_a_sandbox_keeps_every_journal_entry() {
    let dir = tempfile::tempdir().expect("a directory");
    let spec = format!("sqlite:{}", dir.path().join("mock.db").display());
    let http = http();
    let mock = Mock::start(&["--store", &spec]);
    let inside = sandbox(&http, &mock).await;
    initiates(&http, &mock, "", "ROOT", 20).await;
    initiates(&http, &mock, &inside, "SANDBOX", 20).await;
    let root = entries(&journal(&http, &mock, "", "").await);
    let kept = entries(&journal(&http, &mock, &inside, "").await);
    assert_eq!((root.len(), kept.len()), (20, 20));
    stopped_by(mock, "TERM");

    // The sandbox now only restored from the file.
    let mock = Mock::start(&["--store", &spec]);
    assert_eq!(entries(&journal(&http, &mock, "", "").await), root);
    assert_eq!(entries(&journal(&http, &mock, &inside, "").await), kept);
    initiates(&http, &mock, "", "AGAIN", 20).await;
    let root = entries(&journal(&http, &mock, "", "").await);
    assert_eq!(root.len(), 40);
    stopped_by(mock, "INT");

    let mock = Mock::start(&["--store", &spec]);
    assert_eq!(entries(&journal(&http, &mock, "", "").await), root);
    assert_eq!(entries(&journal(&http, &mock, &inside, "").await), kept);
}

/// The newest journal number the file holds an entry of, in the root's
/// rows (`root`) or the sandbox's: what the write-behind wrote before the
/// kill.
fn written_up_to(path: &std::path::Path, root: bool) -> u64 {
    let conn = rusqlite::Connection::open(path).expect("the file opens");
    let sql = if root {
        "SELECT COALESCE(MAX(seq), 0) FROM mock_journal WHERE sandbox = x''"
    } else {
        "SELECT COALESCE(MAX(seq), 0) FROM mock_journal WHERE sandbox <> x''"
    };
    let max: i64 = conn.query_row(sql, [], |r| r.get(0)).expect("read");
    u64::try_from(max).expect("a number")
}

/// The `seq` of the newest of `items`.
fn last(items: &[Value]) -> u64 {
    items
        .last()
        .and_then(|e| e["seq"].as_u64())
        .expect("entries")
}

/// A `kill -9` loses the journal's last entries (written behind, every
/// 250 ms); their numbers were given out again after the restart, so a
/// poller of `?after=SEQ` (SEQ the newest it had seen) skipped the new
/// requests. Now the numbers a read showed are reserved in the file first
/// and the restart numbers on after them: a gap, never a reuse. The root
/// and a sandbox alike. Rounds until a kill lands before the write-behind
/// (checked in the file), which nearly every round does.
#[tokio::test]
async fn a_kill_9_never_gives_a_journal_number_out_again() {
    let http = http();
    for _round in 0..30 {
        let dir = tempfile::tempdir().expect("a directory");
        let path = dir.path().join("mock.db");
        let spec = format!("sqlite:{}", path.display());
        let mock = Mock::start(&["--store", &spec]);
        let inside = sandbox(&http, &mock).await;
        initiates(&http, &mock, "", "BEFORE", 10).await;
        initiates(&http, &mock, &inside, "BEFORE", 10).await;
        let seen_root = last(&journal(&http, &mock, "", "").await);
        let seen_sandbox = last(&journal(&http, &mock, &inside, "").await);
        mock.kill9();
        if written_up_to(&path, true) >= seen_root && written_up_to(&path, false) >= seen_sandbox {
            // Everything was written before the kill: nothing lost, no
            // number to give out again. Another round.
            continue;
        }
        let mock = Mock::start(&["--store", &spec]);
        for (base, seen) in [("", seen_root), (inside.as_str(), seen_sandbox)] {
            initiates(&http, &mock, base, "AFTER", 1).await;
            let after = entries(&journal(&http, &mock, base, &format!("?after={seen}")).await);
            assert_eq!(
                after.iter().map(|(_, r)| r.as_str()).collect::<Vec<_>>(),
                ["AFTER-0"],
                "{base:?}: a poller that saw {seen} gets the request made after the restart: {after:?}"
            );
            assert!(after[0].0 > seen, "{after:?}");
        }
        return;
    }
    panic!("no kill landed before the journal's write-behind in 30 rounds");
}

/// The `seq`s the file holds, in the root's rows (`root`) or the
/// sandbox's, oldest first.
fn written(path: &std::path::Path, root: bool) -> Vec<u64> {
    let conn = rusqlite::Connection::open(path).expect("the file opens");
    let sql = if root {
        "SELECT seq FROM mock_journal WHERE sandbox = x'' ORDER BY seq"
    } else {
        "SELECT seq FROM mock_journal WHERE sandbox <> x'' ORDER BY seq"
    };
    let mut statement = conn.prepare(sql).expect("prepare");
    statement
        .query_map([], |r| r.get::<_, i64>(0))
        .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
        .expect("read")
        .into_iter()
        .map(|seq| u64::try_from(seq).expect("a number"))
        .collect()
}

/// Waits until the journal's write-behind has written up to `seq` at the
/// root (`root`) or in the sandbox.
async fn written_through(path: &std::path::Path, root: bool, seq: u64) {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while written_up_to(path, root) < seq {
        assert!(
            std::time::Instant::now() < deadline,
            "the journal was not written up to {seq} within 30 s"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// After a `kill -9` the journal numbers on past the file's reservation
/// (a gap of about a thousand), and the first write after the restart
/// trimmed the file's journal by number: every entry from before the gap
/// looked a thousand old and was deleted, so the next restart showed only
/// the entries made after the kill. The file keeps the newest entries by
/// count, across the gap: the root and a sandbox alike.
#[tokio::test]
async fn the_first_journal_write_after_a_kill_9_keeps_the_older_entries() {
    let http = http();
    let dir = tempfile::tempdir().expect("a directory");
    let path = dir.path().join("mock.db");
    let spec = format!("sqlite:{}", path.display());
    let mock = Mock::start(&["--store", &spec]);
    let inside = sandbox(&http, &mock).await;
    let bases = [("", true), (inside.as_str(), false)];
    for (base, root) in bases {
        initiates(&http, &mock, base, "BEFORE", 3).await;
        written_through(&path, root, 3).await;
    }
    mock.kill9();

    let mock = Mock::start(&["--store", &spec]);
    let mut kept = Vec::new();
    for (base, root) in bases {
        initiates(&http, &mock, base, "AFTER", 1).await;
        let shown = entries(&journal(&http, &mock, base, "").await);
        let references: Vec<&str> = shown.iter().map(|(_, r)| r.as_str()).collect();
        assert_eq!(
            references,
            ["BEFORE-0", "BEFORE-1", "BEFORE-2", "AFTER-0"],
            "{base:?}"
        );
        let (after, _) = shown[3];
        assert!(after > 4, "{base:?}: numbered on past a gap: {shown:?}");
        written_through(&path, root, after).await;
        assert_eq!(
            written(&path, root),
            [1, 2, 3, after],
            "{base:?}: the file keeps the entries from before the gap"
        );
        kept.push(shown);
    }
    mock.kill9();

    let mock = Mock::start(&["--store", &spec]);
    for ((base, _), kept) in bases.into_iter().zip(kept) {
        assert_eq!(
            entries(&journal(&http, &mock, base, "").await),
            kept,
            "{base:?}"
        );
    }
}
