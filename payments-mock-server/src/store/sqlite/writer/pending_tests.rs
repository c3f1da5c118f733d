//! Journal writes that fail (a full disk): their entries are kept (each
//! view's last 1,000), written with the next write that succeeds and at
//! the stop, and the log says so once per outage and once when it ends
//! (fourteenth review, finding 3: every entry of the outage was lost, even
//! with a clean stop, and the warning came at every flush).

use super::tests::{Tested, database, journal_job, journal_rows, logged, recorded, writer};
use super::*;

/// Makes the file refuse (or take again) every journal row, as a full
/// disk refuses them.
fn refuse(conn: &Connection, refuse: bool) {
    let sql = if refuse {
        "CREATE TRIGGER full_journal BEFORE INSERT ON mock_journal \
           BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END;"
    } else {
        "DROP TRIGGER full_journal;"
    };
    conn.execute_batch(sql).expect("the trigger");
}

fn paths(writer: &Tested<'_>) -> Vec<String> {
    journal_rows(writer).into_iter().map(|(_, p)| p).collect()
}

/// One pass of the write-behind, and what it logged.
fn flush(writer: &mut Tested<'_>) -> String {
    let mut batch = vec![journal_job(writer)];
    logged(|| writer.commit(&mut batch))
}

#[test]
fn the_entries_of_failed_journal_writes_go_with_the_next_and_the_log_says_it_once() {
    let conn = database();
    let mut writer = writer(&conn);
    refuse(&conn, true);
    let mut log = String::new();
    for i in 1..=3 {
        recorded(&writer, &format!("/api/{i}"));
        log += &flush(&mut writer);
    }
    assert_eq!(log.matches("could not be written").count(), 1, "{log}");
    assert!(log.contains("database or disk is full"), "{log}");
    assert_eq!(journal_rows(&writer), []);

    refuse(&conn, false);
    recorded(&writer, "/api/4");
    let log = flush(&mut writer);
    assert!(log.contains("written to the SQLite store again"), "{log}");
    assert!(!log.contains("could not be written"), "{log}");
    assert_eq!(paths(&writer), ["/api/1", "/api/2", "/api/3", "/api/4"]);
    assert!(writer.shared.pending().is_empty());

    // A second outage is said again.
    refuse(&conn, true);
    recorded(&writer, "/api/5");
    let log = flush(&mut writer);
    assert_eq!(log.matches("could not be written").count(), 1, "{log}");
}

#[test]
fn the_entries_kept_are_bounded_as_the_journal_is() {
    let conn = database();
    let mut writer = writer(&conn);
    refuse(&conn, true);
    for round in 0..2 {
        for i in 0..600 {
            recorded(&writer, &format!("/api/{round}-{i}"));
        }
        flush(&mut writer);
    }
    assert_eq!(writer.shared.pending().len(), CAPACITY);
    refuse(&conn, false);
    recorded(&writer, "/api/last");
    flush(&mut writer);
    let rows = journal_rows(&writer);
    assert_eq!(rows.len(), CAPACITY);
    assert_eq!(rows.first().map(|r| r.0), Some(202));
    assert_eq!(rows.last().map(|r| r.1.as_str()), Some("/api/last"));
}

#[test]
fn the_entries_kept_are_written_at_the_stop() {
    let conn = database();
    let mut writer = writer(&conn);
    refuse(&conn, true);
    recorded(&writer, "/api/1");
    recorded(&writer, "/api/2");
    flush(&mut writer);
    refuse(&conn, false);
    // The stop: the write-behind's last pass, nothing recorded since.
    let views = Views::default();
    views.add(&writer.shared);
    views.stop.store(true, Ordering::SeqCst);
    let (jobs, mut taken) = mpsc::channel(8);
    flush_journal(&views, &jobs);
    let mut batch = Vec::new();
    while let Ok(sent) = taken.try_recv() {
        batch.push(sent);
    }
    assert_eq!(batch.len(), 1, "one job for the entries kept");
    writer.writer.commit(&mut batch);
    assert_eq!(paths(&writer), ["/api/1", "/api/2"]);
}
