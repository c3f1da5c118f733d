//! The writer's unit tests: answers, journal flushes, the warning that is
//! not one.

use super::*;
use crate::store::test_support::fields;

/// A fresh in-memory database of the current schema, with triggers
/// that refuse two references: `REFUSED` undoes its own statement,
/// `ROLLBACK` the whole transaction.
pub(super) fn database() -> Connection {
    let mut conn = Connection::open_in_memory().expect("in memory");
    super::super::migrations::migrations::runner()
        .set_migration_table_name(SCHEMA_TABLE)
        .run(&mut conn)
        .expect("schema");
    conn.execute_batch(
        "CREATE TRIGGER refuse BEFORE INSERT ON mock_transactions \
           WHEN NEW.reference_no = 'REFUSED' BEGIN SELECT RAISE(ABORT, 'refused'); END; \
         CREATE TRIGGER roll_back BEFORE INSERT ON mock_transactions \
           WHEN NEW.reference_no = 'ROLLBACK' BEGIN SELECT RAISE(ROLLBACK, 'rolled back'); END;",
    )
    .expect("triggers");
    conn
}

/// A writer and the root's view, whose clock is not moved.
pub(super) struct Tested<'c> {
    pub(super) writer: Writer<'c>,
    pub(super) conn: &'c Connection,
    pub(super) shared: Arc<Shared>,
    offset_nanos: i64,
}

impl Tested<'_> {
    /// Runs `batch` as jobs of the root's view.
    pub(super) fn commit(&mut self, batch: &mut Vec<Job>) {
        let root = Arc::clone(&self.shared);
        self.commit_on(&root, batch);
    }

    /// Runs `batch` as jobs of `view`.
    fn commit_on(&mut self, view: &Arc<Shared>, batch: &mut Vec<Job>) {
        let mut sent: Vec<Sent> = batch
            .drain(..)
            .map(|j| (Arc::clone(view), j, claim::Claim::default()))
            .collect();
        self.writer.commit(&mut sent);
        assert!(sent.is_empty());
        self.offset_nanos = self.shared.writer_offset.load(Ordering::SeqCst);
    }
}

pub(super) fn writer(conn: &Connection) -> Tested<'_> {
    Tested {
        writer: Writer::new(conn, Arc::new(super::watch::Watch::new(Path::new("")))),
        conn,
        shared: Arc::new(Shared::new(None, "test", 0, 0)),
        offset_nanos: 0,
    }
}

type Created = oneshot::Receiver<Result<Result<Record, InsertRefusal>, StoreError>>;

fn create(reference: &str) -> (Job, Created) {
    let (reply, answer) = oneshot::channel();
    let job = Job::Create {
        new: Box::new(fields(reference)),
        initial: InitialState::Initiated,
        expiry: Duration::from_secs(900),
        reply,
    };
    (job, answer)
}

type Advanced = Result<Result<ClockReading, NoRoom>, StoreError>;

fn advance(by: Duration) -> (Job, oneshot::Receiver<Advanced>) {
    let (reply, answer) = oneshot::channel();
    let job = Job::Advance { by, reply };
    (job, answer)
}

fn references(writer: &Tested<'_>) -> Vec<String> {
    let mut statement = writer
        .conn
        .prepare("SELECT reference_no FROM mock_transactions ORDER BY reference_no")
        .expect("prepare");
    statement
        .query_map([], |r| r.get(0))
        .expect("query")
        .collect::<rusqlite::Result<_>>()
        .expect("rows")
}

/// What the writer logs while `f` runs on this thread (the journal's
/// tests read it too).
pub(in crate::store::sqlite) fn logged(f: impl FnOnce()) -> String {
    #[derive(Clone, Default)]
    struct Log(Arc<Mutex<Vec<u8>>>);
    impl std::io::Write for Log {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let log = Log::default();
    let into = log.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || into.clone())
        .with_ansi(false)
        .finish();
    tracing::subscriber::with_default(subscriber, f);
    let bytes = log.0.lock().unwrap_or_else(PoisonError::into_inner).clone();
    String::from_utf8_lossy(&bytes).into_owned()
}

pub(super) fn recorded(writer: &Tested<'_>, path: &str) {
    writer.shared.journal.record(Capture::new(
        &axum::http::Method::GET,
        &path.parse().expect("a path"),
        &axum::http::HeaderMap::new(),
        "rid",
        DateTime::<Utc>::UNIX_EPOCH,
    ));
}

pub(super) fn journal_job(writer: &Tested<'_>) -> Job {
    let (entries, last_seq) = writer.shared.unwritten().expect("something to write");
    Job::Journal {
        entries,
        last_seq,
        closing: false,
    }
}

pub(super) fn journal_rows(writer: &Tested<'_>) -> Vec<(i64, String)> {
    let mut statement = writer
        .conn
        .prepare("SELECT seq, path FROM mock_journal ORDER BY seq")
        .expect("prepare");
    statement
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("query")
        .collect::<rusqlite::Result<_>>()
        .expect("rows")
}

// Issue 33: every journal write logged "the request journal could not
// be written to the SQLite store … the writer gave no answer".
#[test]
fn a_journal_write_that_succeeds_logs_nothing() {
    let conn = database();
    let mut writer = writer(&conn);
    recorded(&writer, "/api/one");
    recorded(&writer, "/api/two");
    let mut batch = vec![journal_job(&writer)];
    let log = logged(|| writer.commit(&mut batch));
    assert_eq!(log, "", "a write that worked is not a warning");
    assert_eq!(
        journal_rows(&writer),
        [(1, "/api/one".to_owned()), (2, "/api/two".to_owned())]
    );
}

#[test]
fn a_journal_write_that_fails_says_so() {
    let conn = database();
    conn.execute_batch(
        "CREATE TRIGGER refuse_journal BEFORE INSERT ON mock_journal \
           BEGIN SELECT RAISE(ABORT, 'journal refused'); END;",
    )
    .expect("a trigger");
    let mut writer = writer(&conn);
    recorded(&writer, "/api/one");
    let mut batch = vec![journal_job(&writer)];
    let log = logged(|| writer.commit(&mut batch));
    assert!(
        log.contains("the request journal could not be written to the SQLite store")
            && log.contains("journal refused"),
        "{log}"
    );
}

#[test]
fn a_journal_write_taken_before_a_reset_brings_nothing_back() {
    for reset_first in [true, false] {
        let conn = database();
        let mut writer = writer(&conn);
        recorded(&writer, "/api/before-1");
        recorded(&writer, "/api/before-2");
        // The flusher took these, then a reset came: in either order
        // in the writer, nothing from before the reset stays.
        let journal = journal_job(&writer);
        let (reply, mut answer) = oneshot::channel();
        let reset = Job::Reset {
            erase: false,
            reply,
        };
        let mut batch = if reset_first {
            vec![reset, journal]
        } else {
            vec![journal, reset]
        };
        writer.commit(&mut batch);
        answer.try_recv().expect("answered").expect("reset");
        assert_eq!(journal_rows(&writer), [], "reset first: {reset_first}");
        assert_eq!(writer.shared.journal.stats().len, 0);
        recorded(&writer, "/api/after");
        let mut batch = vec![journal_job(&writer)];
        writer.commit(&mut batch);
        assert_eq!(journal_rows(&writer), [(3, "/api/after".to_owned())]);
        assert_eq!(writer.shared.journal.since(0, 10).len(), 1);
    }
}

#[test]
fn a_batch_without_failures_commits_every_job_and_answers_after() {
    let conn = database();
    let mut writer = writer(&conn);
    let (a, mut a_answer) = create("A");
    let (b, mut b_answer) = create("B");
    let (taken, mut taken_answer) = create("A");
    let mut batch = vec![a, b, taken];
    writer.commit(&mut batch);
    assert!(batch.is_empty());
    let a = a_answer
        .try_recv()
        .expect("answered")
        .expect("ok")
        .expect("created");
    let b = b_answer
        .try_recv()
        .expect("answered")
        .expect("ok")
        .expect("created");
    assert_eq!(
        (&*a.fields.reference_no, &*b.fields.reference_no),
        ("A", "B")
    );
    assert!(matches!(
        taken_answer.try_recv().expect("answered").expect("ok"),
        Err(InsertRefusal::Duplicate(id)) if id == a.id
    ));
    assert_eq!(references(&writer), ["A", "B"]);
    assert_eq!(writer.shared.count.load(Ordering::SeqCst), 2);
    assert!(writer.conn.is_autocommit(), "the transaction was committed");
}

#[test]
fn a_failing_job_fails_alone_and_the_clock_moves_once() {
    let conn = database();
    let mut writer = writer(&conn);
    let (first, mut first_answer) = advance(Duration::from_secs(60));
    let (a, mut a_answer) = create("A");
    let (refused, mut refused_answer) = create("REFUSED");
    let (b, mut b_answer) = create("B");
    let (second, mut second_answer) = advance(Duration::from_secs(1));
    let mut batch = vec![first, a, refused, b, second];
    writer.commit(&mut batch);
    let error = refused_answer
        .try_recv()
        .expect("answered")
        .expect_err("refused");
    assert!(error.reason().contains("refused"), "{}", error.reason());
    a_answer
        .try_recv()
        .expect("answered")
        .expect("ok")
        .expect("created");
    b_answer
        .try_recv()
        .expect("answered")
        .expect("ok")
        .expect("created");
    assert_eq!(references(&writer), ["A", "B"]);
    assert_eq!(writer.shared.count.load(Ordering::SeqCst), 2);
    // The run without savepoints moved the clock before it was rolled
    // back; the run that counts moves it once per job.
    let first = first_answer.try_recv().expect("answered").expect("ok");
    let second = second_answer.try_recv().expect("answered").expect("ok");
    let (first, second) = (first.expect("room"), second.expect("room"));
    assert_eq!(first.offset_nanos, 60_000_000_000);
    assert_eq!(second.offset_nanos, 61_000_000_000);
    assert_eq!(writer.offset_nanos, 61_000_000_000);
    let kept: i64 = writer
        .conn
        .query_row(
            "SELECT offset_nanos FROM mock_clock WHERE id = 1",
            [],
            |r| r.get(0),
        )
        .expect("clock");
    assert_eq!(kept, 61_000_000_000);
    assert!(writer.conn.is_autocommit(), "the transaction was committed");
}

#[test]
fn a_transaction_rolled_back_by_sqlite_fails_every_job_and_keeps_nothing() {
    let conn = database();
    let mut writer = writer(&conn);
    let (moved, mut moved_answer) = advance(Duration::from_secs(60));
    let (a, mut a_answer) = create("A");
    let (rolled, mut rolled_answer) = create("ROLLBACK");
    let (b, mut b_answer) = create("B");
    let mut batch = vec![moved, a, rolled, b];
    writer.commit(&mut batch);
    assert!(batch.is_empty());
    for error in [
        a_answer.try_recv().expect("answered").expect_err("failed"),
        rolled_answer
            .try_recv()
            .expect("answered")
            .expect_err("failed"),
        b_answer.try_recv().expect("answered").expect_err("failed"),
    ] {
        assert!(error.reason().contains("rolled back"), "{}", error.reason());
    }
    moved_answer
        .try_recv()
        .expect("answered")
        .expect_err("failed");
    assert!(references(&writer).is_empty(), "B did not run on its own");
    assert_eq!(writer.shared.count.load(Ordering::SeqCst), 0);
    assert_eq!(writer.offset_nanos, 0);
    assert!(writer.conn.is_autocommit());
    // The next batch runs as usual.
    let (c, mut c_answer) = create("C");
    writer.commit(&mut vec![c]);
    c_answer
        .try_recv()
        .expect("answered")
        .expect("ok")
        .expect("created");
    assert_eq!(references(&writer), ["C"]);
}

/// The rows of `table` in the sandbox column `key`.
fn rows_in(conn: &Connection, table: &str, key: &[u8]) -> i64 {
    conn.query_row(
        &format!("SELECT count(*) FROM {table} WHERE sandbox = ?1"),
        [key],
        |r| r.get(0),
    )
    .expect("count")
}

#[test]
fn a_sandbox_is_its_own_world_in_the_same_tables() {
    let conn = database();
    let mut writer = writer(&conn);
    let id = Uuid::new_v4();
    let sandbox = Arc::new(Shared::new(Some(id), "test", 0, 0));
    let (reply, mut kept) = oneshot::channel();
    let now = Utc::now();
    writer.commit_on(
        &sandbox,
        &mut vec![Job::KeepSandbox {
            kept: Box::new(KeptSandbox {
                id,
                owner: None,
                label: Some("ci job 7".into()),
                created_at: now,
                ttl: Duration::from_secs(3600),
                expires_at: now,
            }),
            reply,
        }],
    );
    kept.try_recv().expect("answered").expect("kept");
    // The same reference in both: each its own.
    let (a, mut a_answer) = create("A");
    writer.commit(&mut vec![a]);
    let (b, mut b_answer) = create("A");
    let (again, mut again_answer) = create("A");
    let (moved, mut moved_answer) = advance(Duration::from_secs(3600));
    writer.commit_on(&sandbox, &mut vec![b, again, moved]);
    let root_a = a_answer
        .try_recv()
        .expect("answered")
        .expect("ok")
        .expect("made");
    let sandbox_a = b_answer
        .try_recv()
        .expect("answered")
        .expect("ok")
        .expect("made");
    assert_ne!(root_a.id, sandbox_a.id);
    assert!(matches!(
        again_answer.try_recv().expect("answered").expect("ok"),
        Err(InsertRefusal::Duplicate(id)) if id == sandbox_a.id
    ));
    assert_eq!(
        moved_answer
            .try_recv()
            .expect("answered")
            .expect("ok")
            .expect("room")
            .offset_nanos,
        3_600_000_000_000
    );
    assert_eq!(writer.offset_nanos, 0, "the root's clock did not move");
    assert_eq!(sandbox.clock.offset_nanos(), 3_600_000_000_000);
    let offset: i64 = conn
        .query_row(
            "SELECT offset_nanos FROM mock_sandboxes WHERE id = ?1",
            [id.as_bytes().as_slice()],
            |r| r.get(0),
        )
        .expect("kept");
    assert_eq!(offset, 3_600_000_000_000);
    // Each view finds its own by id, never the other's.
    assert!(
        select_id(&conn, &sandbox.key, root_a.id)
            .expect("read")
            .is_none()
    );
    assert!(select_id(&conn, &[], sandbox_a.id).expect("read").is_none());
    assert!(
        select_id(&conn, &sandbox.key, sandbox_a.id)
            .expect("read")
            .is_some()
    );
    // Its journal is numbered from 1 beside the root's.
    sandbox.journal.record(Capture::new(
        &axum::http::Method::GET,
        &"/api/in-sandbox".parse().expect("a path"),
        &axum::http::HeaderMap::new(),
        "rid",
        DateTime::<Utc>::UNIX_EPOCH,
    ));
    recorded(&writer, "/api/in-root");
    let (entries, last_seq) = sandbox.unwritten().expect("one");
    writer.commit_on(
        &sandbox,
        &mut vec![Job::Journal {
            entries,
            last_seq,
            closing: false,
        }],
    );
    let mut batch = vec![journal_job(&writer)];
    writer.commit(&mut batch);
    assert_eq!(rows_in(&conn, "mock_journal", &sandbox.key), 1);
    assert_eq!(rows_in(&conn, "mock_journal", &[]), 1);
    // A reset of the sandbox leaves the root alone.
    let (reply, mut reset) = oneshot::channel();
    writer.commit_on(
        &sandbox,
        &mut vec![Job::Reset {
            erase: false,
            reply,
        }],
    );
    reset.try_recv().expect("answered").expect("reset");
    assert_eq!(rows_in(&conn, "mock_transactions", &sandbox.key), 0);
    assert_eq!(rows_in(&conn, "mock_journal", &sandbox.key), 0);
    assert_eq!(rows_in(&conn, "mock_transactions", &[]), 1);
    assert_eq!(rows_in(&conn, "mock_journal", &[]), 1);
    assert_eq!(sandbox.clock.offset_nanos(), 0);
    // Removed: its rows go, and a journal write taken before comes to
    // nothing.
    let (b, _) = create("B");
    writer.commit_on(&sandbox, &mut vec![b]);
    sandbox.journal.record(Capture::new(
        &axum::http::Method::GET,
        &"/api/late".parse().expect("a path"),
        &axum::http::HeaderMap::new(),
        "rid",
        DateTime::<Utc>::UNIX_EPOCH,
    ));
    let (entries, last_seq) = sandbox.unwritten().expect("one");
    let (reply, mut forgot) = oneshot::channel();
    writer.commit_on(
        &sandbox,
        &mut vec![
            Job::ForgetSandbox { reply: Some(reply) },
            Job::Journal {
                entries,
                last_seq,
                closing: false,
            },
        ],
    );
    forgot.try_recv().expect("answered").expect("forgot");
    assert_eq!(rows_in(&conn, "mock_transactions", &sandbox.key), 0);
    assert_eq!(rows_in(&conn, "mock_journal", &sandbox.key), 0);
    let left: i64 = conn
        .query_row("SELECT count(*) FROM mock_sandboxes", [], |r| r.get(0))
        .expect("count");
    assert_eq!(left, 0);
    assert_eq!(
        rows_in(&conn, "mock_transactions", &[]),
        1,
        "the root's stays"
    );
}

/// A full disk (SQLite's `max_page_count` on the writer's connection):
/// once a journal batch fails with "database or disk is full", health's
/// probe fails too while a write that size would, and passes once there is
/// room. Its old probe rewrote one row in place, fit, and made health say
/// ok while every create answered 503.
#[test]
fn the_health_probe_fails_while_a_big_write_would() {
    let conn = database();
    let pages: i64 = conn
        .query_row("PRAGMA page_count", [], |r| r.get(0))
        .expect("pages");
    let room = |extra: i64| {
        conn.pragma_update(None, "max_page_count", pages + extra)
            .expect("a limit");
    };
    room(16);
    let mut writer = writer(&conn);
    let long = format!("/api/{}", "x".repeat(600));
    for _ in 0..400 {
        recorded(&writer, &long);
    }
    let mut batch = vec![journal_job(&writer)];
    logged(|| writer.commit(&mut batch));
    let failing = writer.writer.watch.failing().expect("the batch failed");
    assert!(failing.to_string().contains("full"), "{failing}");
    let probe = |writer: &mut Tested<'_>| {
        let (reply, mut answer) = oneshot::channel();
        writer.commit(&mut vec![Job::Probe { reply }]);
        answer.try_recv().expect("answered")
    };
    assert!(probe(&mut writer).is_err(), "no room for a big write");
    assert!(
        writer.writer.watch.failing().is_some(),
        "health still fails"
    );
    room(4 * PROBE_BYTES as i64 / 4096 + 64);
    probe(&mut writer).expect("room again");
    assert!(writer.writer.watch.failing().is_none(), "health ok again");
    assert_eq!(
        setting(writer.conn, "health_probe").expect("read"),
        None,
        "the probe leaves nothing behind"
    );
}
