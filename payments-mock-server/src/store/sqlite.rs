//! The SQLite store (`--store sqlite:PATH`, CONTRACT section 15): one file,
//! owned by one process, that keeps everything across restarts.
//!
//! - **Writes** go to one writer thread that owns the only writing
//!   connection. It takes every job waiting, runs them in one transaction
//!   (each in a savepoint, so one failing job does not undo the others),
//!   commits once, and only then answers each: many requests share one
//!   commit, none is answered before it. One writer also makes each verb
//!   atomic: create, confirm and decide check and change with nobody in
//!   between.
//! - **Reads** run on the caller's thread on a small pool of read
//!   connections; in WAL mode they never wait for the writer and always see
//!   the last commit.
//! - **The clock, the transaction count and the journal** are also kept in
//!   the process (one owner: nobody else changes them) and written through:
//!   the clock and count after each commit that changes them, the journal
//!   behind the answers, at most every 250 ms and at most its last 1,000
//!   entries (it reports no change, so no request waits for it).
//! - **Ownership**: a second process on the same file refuses to start,
//!   naming the holder (an OS lock on `PATH.lock`, which holds its pid).
//! - **Opening never changes a file it refuses**: the header is checked
//!   (magic, truncation) and the schema version read before anything is
//!   written.

use std::fs::File;
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use chrono::{DateTime, Utc};
use rusqlite::{Connection, OpenFlags, OptionalExtension as _, params};
use tokio::sync::{mpsc, oneshot};
use uuid::Uuid;

use super::journal::{CAPACITY, Capture, Journal, JournalEntry};
use super::sql::{COLUMNS, ConfirmColumns, JOURNAL_COLUMNS, JournalRow, Row, millis, new_row};
use super::{
    ClockReading, Confirmation, Decided, Durability, InsertRefusal, JournalStats, LookupError,
    NewTransaction, Order, Page, PageQuery, PayerAction, PayerRefusal, PaymentPage, PaymentPageKey,
    STORE_TIMEOUT, Settings, Store, StoreError, Transition,
};
use crate::domain::catalog::InitialState;
use crate::domain::clock::Clock;
use crate::domain::transaction::{ConfirmResult, Record, id_at, issued_id};
use crate::error::Error;

mod migrations {
    refinery::embed_migrations!("migrations/sqlite");
}

/// The table refinery records applied migrations in.
const SCHEMA_TABLE: &str = "mock_schema_history";
/// Jobs taken into one commit at most.
const BATCH: usize = 512;
/// How often the journal is written behind the answers.
const JOURNAL_EVERY: Duration = Duration::from_millis(250);
/// Read connections kept open between reads.
const IDLE_READERS: usize = 8;

type Reply<T> = oneshot::Sender<Result<T, StoreError>>;

/// A page named by its token or its transaction, owned (jobs cross threads).
#[derive(Debug, Clone)]
enum PageKey {
    Token(String),
    Transaction(Uuid),
}

/// What the writer thread does for the store.
#[derive(Debug)]
enum Job {
    Create {
        new: Box<NewTransaction>,
        initial: InitialState,
        expiry: Duration,
        reply: Reply<Result<Record, InsertRefusal>>,
    },
    Confirm {
        id: Uuid,
        now: DateTime<Utc>,
        confirmation: Box<Confirmation>,
        reply: Reply<Transition>,
    },
    Decide {
        key: PageKey,
        scope: Option<Uuid>,
        action: PayerAction,
        now: DateTime<Utc>,
        reply: Reply<Result<Decided, PayerRefusal>>,
    },
    Advance {
        by: Duration,
        reply: Reply<ClockReading>,
    },
    Reset {
        erase: bool,
        reply: Reply<()>,
    },
    SaveSettings {
        settings: Settings,
        reply: Reply<()>,
    },
    Journal {
        entries: Vec<JournalEntry>,
        last_seq: u64,
    },
}

/// What a committed job changes in the process's copies.
#[derive(Debug, Clone, Copy)]
enum Effect {
    None,
    Created,
    Clock(i64),
    Reset { erase: bool },
}

/// What the store and its two threads share.
#[derive(Debug)]
struct Shared {
    clock: Clock,
    count: AtomicUsize,
    journal: Journal,
    /// The `seq` of the last journal entry handed to the writer.
    journal_written: AtomicU64,
    stop: AtomicBool,
}

/// A SQLite file behind the mock.
#[derive(Debug)]
pub struct SqliteStore {
    shown: String,
    path: PathBuf,
    shared: Arc<Shared>,
    jobs: mpsc::Sender<Job>,
    readers: Mutex<Vec<Connection>>,
    writer: Option<JoinHandle<()>>,
    flusher: Option<JoinHandle<()>>,
    /// The OS lock that makes this process the file's only owner; released
    /// when the store is dropped.
    _owner: File,
}

fn open_error(shown: &str, reason: impl Into<String>) -> Error {
    Error::StoreOpen {
        store: shown.to_owned(),
        reason: reason.into(),
    }
}

fn store_error(e: &rusqlite::Error) -> StoreError {
    StoreError::new(format!("SQLite: {e}"))
}

/// The lock file beside a store: `PATH.lock`.
fn lock_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

/// Takes the store's OS lock, writing this process's id into the lock
/// file, or says who holds it. Also whether the lock file is new (a store
/// refused then takes it away again).
fn take_ownership(path: &Path, shown: &str) -> Result<(File, bool), Error> {
    let lock = lock_path(path);
    let created = !lock.exists();
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&lock)
        .map_err(|e| {
            open_error(
                shown,
                format!("cannot create its lock file {}: {e}", lock.display()),
            )
        })?;
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            let holder = holder.trim();
            let holder = if holder.is_empty() {
                "another process".to_owned()
            } else {
                format!("another process ({holder})")
            };
            return Err(open_error(
                shown,
                format!(
                    "the file is held by {holder}; one server process owns a SQLite store (use PostgreSQL for several)"
                ),
            ));
        }
        Err(std::fs::TryLockError::Error(e)) => {
            return Err(open_error(
                shown,
                format!("cannot lock {}: {e}", lock.display()),
            ));
        }
    }
    let me = format!("pid {}, payments-mock-server", std::process::id());
    let _ = file.set_len(0).and_then(|()| file.write_all(me.as_bytes()));
    Ok((file, created))
}

/// Checks a file that exists before SQLite opens it: the header's magic,
/// and that it is as long as the header says (a truncated copy fails
/// here, before anything could write to it).
fn check_header(path: &Path, shown: &str) -> Result<(), Error> {
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(open_error(shown, format!("cannot read it: {e}"))),
    };
    if meta.is_dir() {
        return Err(open_error(shown, "it is a directory, not a SQLite file"));
    }
    if meta.len() == 0 {
        // SQLite's own reading of an empty file: an empty database.
        return Ok(());
    }
    let mut header = [0u8; 100];
    let mut file =
        File::open(path).map_err(|e| open_error(shown, format!("cannot read it: {e}")))?;
    let read = file
        .read(&mut header)
        .map_err(|e| open_error(shown, format!("cannot read it: {e}")))?;
    if read < header.len() || &header[..16] != b"SQLite format 3\0" {
        return Err(open_error(
            shown,
            "it is not a SQLite database (no SQLite header); the file was left as it is",
        ));
    }
    let page_size = match u16::from_be_bytes([header[16], header[17]]) {
        1 => 65_536,
        n => u64::from(n),
    };
    let pages = u64::from(u32::from_be_bytes([
        header[28], header[29], header[30], header[31],
    ]));
    let valid_for = &header[92..96];
    let change_counter = &header[24..28];
    let expected = page_size * pages;
    if valid_for == change_counter && pages > 0 && meta.len() < expected {
        return Err(open_error(
            shown,
            format!(
                "the database is damaged: the file has {} bytes, its header says {expected} (truncated?); the file was left as it is",
                meta.len()
            ),
        ));
    }
    Ok(())
}

/// The newest schema version this build knows.
fn supported_version() -> i64 {
    migrations::migrations::runner()
        .get_migrations()
        .iter()
        .map(|m| i64::from(m.version()))
        .max()
        .unwrap_or(0)
}

/// The schema version the file records, read without writing anything.
fn recorded_version(conn: &Connection) -> rusqlite::Result<Option<i64>> {
    let exists: bool = conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1)",
        [SCHEMA_TABLE],
        |r| r.get(0),
    )?;
    if !exists {
        return Ok(None);
    }
    conn.query_row(
        &format!("SELECT MAX(version) FROM {SCHEMA_TABLE}"),
        [],
        |r| r.get(0),
    )
}

fn configure(conn: &Connection, durability: Durability) -> rusqlite::Result<()> {
    conn.busy_timeout(STORE_TIMEOUT)?;
    let synchronous = match durability {
        Durability::Process => "NORMAL",
        Durability::Power => "FULL",
    };
    conn.execute_batch(&format!(
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = {synchronous}; PRAGMA foreign_keys = OFF;"
    ))
}

fn open_reader(path: &Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(STORE_TIMEOUT)?;
    conn.execute_batch("PRAGMA query_only = ON;")?;
    Ok(conn)
}

fn uuid_of(bytes: &[u8]) -> rusqlite::Result<Uuid> {
    Uuid::from_slice(bytes).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Blob, Box::new(e))
    })
}

/// A transaction row, in [`COLUMNS`] order.
fn row_of(r: &rusqlite::Row<'_>) -> rusqlite::Result<Row> {
    let confirmed_at: Option<i64> = r.get(18)?;
    let result: Option<String> = r.get(19)?;
    let confirm = match (
        confirmed_at,
        result.as_deref().and_then(ConfirmColumns::result_of),
    ) {
        (Some(confirmed_at), Some(result)) => Some(ConfirmColumns {
            confirmed_at,
            result,
            settles_at: r.get(20)?,
            error_message: r.get(21)?,
            provider_reference: r.get(22)?,
            confirm_extra: r.get(23)?,
            page_token: r.get(24)?,
            page_deadline: r.get(25)?,
        }),
        _ => None,
    };
    Ok(Row {
        id: uuid_of(&r.get::<_, Vec<u8>>(0)?)?,
        merchant_id: uuid_of(&r.get::<_, Vec<u8>>(1)?)?,
        reference_no: r.get(2)?,
        description: r.get(3)?,
        amount_minor: r.get(4)?,
        currency_code: r.get(5)?,
        currency_exponent: r.get(6)?,
        product_code: r.get(7)?,
        quantity: r.get(8)?,
        country_code: r.get(9)?,
        store_id: r.get(10)?,
        device_id: r.get(11)?,
        payer_id: r.get(12)?,
        return_url: r.get(13)?,
        extra_properties: r.get(14)?,
        initial: r.get(15)?,
        created_at: r.get(16)?,
        expires_at: r.get(17)?,
        confirm,
        decision: r.get(26)?,
        decided_at: r.get(27)?,
        later_submits: r.get(28)?,
    })
}

fn record_of(r: &rusqlite::Row<'_>) -> rusqlite::Result<Result<Record, StoreError>> {
    Ok(row_of(r)?.into_record())
}

fn journal_row_of(r: &rusqlite::Row<'_>) -> rusqlite::Result<JournalRow> {
    Ok(JournalRow {
        seq: r.get(0)?,
        at: r.get(1)?,
        method: r.get(2)?,
        path: r.get(3)?,
        query: r.get(4)?,
        headers: r.get(5)?,
        body: r.get(6)?,
        status: r.get(7)?,
        error_code: r.get(8)?,
        request_id: r.get(9)?,
        fault: r.get(10)?,
        replica: r.get(11)?,
    })
}

/// One transaction by id.
fn select_id(conn: &Connection, id: Uuid) -> Result<Option<Record>, StoreError> {
    let mut statement = conn
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM mock_transactions WHERE id = ?1"
        ))
        .map_err(|e| store_error(&e))?;
    statement
        .query_row([id.as_bytes().as_slice()], record_of)
        .optional()
        .map_err(|e| store_error(&e))?
        .transpose()
}

fn select_page(conn: &Connection, key: &PageKey) -> Result<Option<Record>, StoreError> {
    match key {
        PageKey::Transaction(id) => select_id(conn, *id),
        PageKey::Token(token) => {
            let mut statement = conn
                .prepare_cached(&format!(
                    "SELECT {COLUMNS} FROM mock_transactions WHERE page_token = ?1"
                ))
                .map_err(|e| store_error(&e))?;
            statement
                .query_row([token], record_of)
                .optional()
                .map_err(|e| store_error(&e))?
                .transpose()
        }
    }
}

fn setting(conn: &Connection, key: &str) -> rusqlite::Result<Option<String>> {
    conn.query_row(
        "SELECT value FROM mock_settings WHERE key = ?1",
        [key],
        |r| r.get(0),
    )
    .optional()
}

fn put_setting(conn: &Connection, key: &str, value: &str) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO mock_settings (key, value) VALUES (?1, ?2) \
         ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        params![key, value],
    )
    .map(|_| ())
}

/// The writer thread's state: the connection and the clock offset as of
/// the jobs it has run (committed or about to be).
struct Writer {
    conn: Connection,
    shared: Arc<Shared>,
    offset_nanos: i64,
}

impl Writer {
    fn now(&self) -> DateTime<Utc> {
        Clock::at_offset(self.offset_nanos)
    }

    fn run(mut self, mut jobs: mpsc::Receiver<Job>) {
        let mut batch = Vec::with_capacity(BATCH);
        while let Some(first) = jobs.blocking_recv() {
            batch.push(first);
            while batch.len() < BATCH {
                match jobs.try_recv() {
                    Ok(job) => batch.push(job),
                    Err(_) => break,
                }
            }
            self.commit(&mut batch);
        }
    }

    /// Runs `batch` in one transaction and answers each job after the
    /// commit (or with the failure, when it fails).
    fn commit(&mut self, batch: &mut Vec<Job>) {
        let start_offset = self.offset_nanos;
        let mut done: Vec<(Job, Result<Effect, StoreError>, Outcome)> =
            Vec::with_capacity(batch.len());
        if let Err(e) = self.conn.execute_batch("BEGIN IMMEDIATE") {
            let error = store_error(&e);
            for job in batch.drain(..) {
                fail(job, &error);
            }
            return;
        }
        for job in batch.drain(..) {
            let _ = self.conn.execute_batch("SAVEPOINT job");
            let (effect, outcome) = match self.apply(&job) {
                Ok(done) => {
                    let _ = self.conn.execute_batch("RELEASE job");
                    (Ok(done.0), done.1)
                }
                Err(e) => {
                    let _ = self.conn.execute_batch("ROLLBACK TO job; RELEASE job");
                    (Err(e), Outcome::None)
                }
            };
            done.push((job, effect, outcome));
        }
        if let Err(e) = self.conn.execute_batch("COMMIT") {
            let _ = self.conn.execute_batch("ROLLBACK");
            self.offset_nanos = start_offset;
            let error = store_error(&e);
            for (job, _, _) in done {
                fail(job, &error);
            }
            return;
        }
        for (job, effect, outcome) in done {
            if let Ok(effect) = &effect {
                self.shared.apply(*effect);
            }
            answer(job, effect, outcome);
        }
    }

    /// One job inside the transaction: what it changes in the process and
    /// what it answers.
    fn apply(&mut self, job: &Job) -> Result<(Effect, Outcome), StoreError> {
        let conn = &self.conn;
        match job {
            Job::Create {
                new,
                initial,
                expiry,
                ..
            } => {
                let now = self.now();
                let id = id_at(now);
                let row = new_row(
                    id,
                    (**new).clone(),
                    *initial,
                    now,
                    crate::domain::clock::add(now, *expiry),
                );
                let inserted = insert(conn, &row).map_err(|e| store_error(&e))?;
                if inserted {
                    let record = row.into_record()?;
                    Ok((Effect::Created, Outcome::Created(Ok(record))))
                } else {
                    let existing: Vec<u8> = conn
                        .query_row(
                            "SELECT id FROM mock_transactions WHERE merchant_id = ?1 AND reference_no = ?2",
                            params![new.merchant_id.as_bytes().as_slice(), new.reference_no],
                            |r| r.get(0),
                        )
                        .map_err(|e| store_error(&e))?;
                    let existing = uuid_of(&existing).map_err(|e| store_error(&e))?;
                    Ok((
                        Effect::None,
                        Outcome::Created(Err(InsertRefusal::Duplicate(existing))),
                    ))
                }
            }
            Job::Confirm {
                id,
                now,
                confirmation,
                ..
            } => {
                let c = ConfirmColumns::of(confirmation);
                let changed = conn
                    .prepare_cached(
                        "UPDATE mock_transactions SET confirmed_at = ?2, result = ?3, settles_at = ?4, \
                         error_message = ?5, provider_reference = ?6, confirm_extra = ?7, \
                         page_token = ?8, page_deadline = ?9 \
                         WHERE id = ?1 AND confirmed_at IS NULL AND expires_at > ?10",
                    )
                    .and_then(|mut s| {
                        s.execute(params![
                            id.as_bytes().as_slice(),
                            c.confirmed_at,
                            c.result,
                            c.settles_at,
                            c.error_message,
                            c.provider_reference,
                            c.confirm_extra,
                            c.page_token,
                            c.page_deadline,
                            millis(*now),
                        ])
                    })
                    .map_err(|e| store_error(&e))?;
                let transition = match select_id(conn, *id)? {
                    None => Transition::Missing,
                    Some(record) if changed == 1 => Transition::Moved(record),
                    Some(record) => Transition::Unmoved(record),
                };
                Ok((Effect::None, Outcome::Confirmed(transition)))
            }
            Job::Decide {
                key,
                scope,
                action,
                now,
                ..
            } => {
                let Some(record) = select_page(conn, key)?
                    .filter(|r| scope.is_none_or(|m| m == r.fields.merchant_id))
                else {
                    return Ok((Effect::None, Outcome::Decided(Err(PayerRefusal::NotFound))));
                };
                let Some(page) = record.payment_page() else {
                    let refusal = match key {
                        PageKey::Token(_) => PayerRefusal::NotFound,
                        PageKey::Transaction(_) => PayerRefusal::NoPaymentPage,
                    };
                    return Ok((Effect::None, Outcome::Decided(Err(refusal))));
                };
                let decided_now = page.is_open(*now);
                let id = record.id.as_bytes().to_vec();
                if decided_now {
                    conn.execute(
                        "UPDATE mock_transactions SET decision = ?2, decided_at = ?3 WHERE id = ?1",
                        params![id, action.as_str(), millis(*now)],
                    )
                } else {
                    conn.execute(
                        "UPDATE mock_transactions SET later_submits = MIN(later_submits + 1, 4294967295) WHERE id = ?1",
                        params![id],
                    )
                }
                .map_err(|e| store_error(&e))?;
                let record = select_id(conn, record.id)?
                    .ok_or_else(|| StoreError::new("a decided transaction vanished"))?;
                Ok((
                    Effect::None,
                    Outcome::Decided(Ok(Decided {
                        record,
                        decided_now,
                    })),
                ))
            }
            Job::Advance { by, .. } => {
                let add = i64::try_from(by.as_nanos()).unwrap_or(i64::MAX);
                let offset = self.offset_nanos.saturating_add(add);
                conn.execute(
                    "UPDATE mock_clock SET offset_nanos = ?1 WHERE id = 1",
                    [offset],
                )
                .map_err(|e| store_error(&e))?;
                self.offset_nanos = offset;
                Ok((
                    Effect::Clock(offset),
                    Outcome::Clock(ClockReading {
                        now: self.now(),
                        offset_nanos: offset,
                    }),
                ))
            }
            Job::Reset { erase, .. } => {
                let mut sql = String::from(
                    "DELETE FROM mock_transactions; DELETE FROM mock_journal; \
                     UPDATE mock_clock SET offset_nanos = 0 WHERE id = 1;",
                );
                if *erase {
                    sql.push_str("DELETE FROM mock_settings;");
                } else {
                    let last = self.shared.journal.last_seq();
                    sql.push_str(&format!(
                        "INSERT INTO mock_settings (key, value) VALUES ('journal_last_seq', '{last}') \
                         ON CONFLICT (key) DO UPDATE SET value = excluded.value;"
                    ));
                }
                conn.execute_batch(&sql).map_err(|e| store_error(&e))?;
                self.offset_nanos = 0;
                Ok((Effect::Reset { erase: *erase }, Outcome::Done))
            }
            Job::SaveSettings { settings, .. } => {
                let expiry = settings.expiry_millis().to_string();
                for (key, value) in [
                    ("catalog", settings.catalog.to_toml()),
                    ("expiry_ms", expiry),
                ] {
                    conn.execute(
                        "INSERT INTO mock_settings (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO NOTHING",
                        params![key, value],
                    )
                    .map_err(|e| store_error(&e))?;
                }
                Ok((Effect::None, Outcome::Done))
            }
            Job::Journal { entries, last_seq } => {
                let mut insert = conn
                    .prepare_cached(&format!(
                        "INSERT OR REPLACE INTO mock_journal ({JOURNAL_COLUMNS}) \
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)"
                    ))
                    .map_err(|e| store_error(&e))?;
                for entry in entries {
                    let r = JournalRow::of(entry);
                    insert
                        .execute(params![
                            r.seq,
                            r.at,
                            r.method,
                            r.path,
                            r.query,
                            r.headers,
                            r.body,
                            r.status,
                            r.error_code,
                            r.request_id,
                            r.fault,
                            r.replica
                        ])
                        .map_err(|e| store_error(&e))?;
                }
                let keep_from =
                    i64::try_from(last_seq.saturating_sub(CAPACITY as u64)).unwrap_or(0);
                conn.execute("DELETE FROM mock_journal WHERE seq <= ?1", [keep_from])
                    .and_then(|_| put_setting(conn, "journal_last_seq", &last_seq.to_string()))
                    .map_err(|e| store_error(&e))?;
                Ok((Effect::None, Outcome::Done))
            }
        }
    }
}

/// A job's answer, made inside the transaction and sent after the commit.
enum Outcome {
    None,
    Done,
    Created(Result<Record, InsertRefusal>),
    Confirmed(Transition),
    Decided(Result<Decided, PayerRefusal>),
    Clock(ClockReading),
}

fn fail(job: Job, error: &StoreError) {
    answer(job, Err(error.clone()), Outcome::None);
}

fn answer(job: Job, effect: Result<Effect, StoreError>, outcome: Outcome) {
    fn send<T>(reply: Reply<T>, value: Result<T, StoreError>) {
        let _ = reply.send(value);
    }
    let missing = || StoreError::new("the writer gave no answer");
    match (job, effect, outcome) {
        (Job::Create { reply, .. }, Ok(_), Outcome::Created(r)) => send(reply, Ok(r)),
        (Job::Confirm { reply, .. }, Ok(_), Outcome::Confirmed(r)) => send(reply, Ok(r)),
        (Job::Decide { reply, .. }, Ok(_), Outcome::Decided(r)) => send(reply, Ok(r)),
        (Job::Advance { reply, .. }, Ok(_), Outcome::Clock(r)) => send(reply, Ok(r)),
        (Job::Reset { reply, .. } | Job::SaveSettings { reply, .. }, Ok(_), Outcome::Done) => {
            send(reply, Ok(()));
        }
        (job, effect, _) => {
            let error = effect.err().unwrap_or_else(missing);
            match job {
                Job::Create { reply, .. } => send(reply, Err(error)),
                Job::Confirm { reply, .. } => send(reply, Err(error)),
                Job::Decide { reply, .. } => send(reply, Err(error)),
                Job::Advance { reply, .. } => send(reply, Err(error)),
                Job::Reset { reply, .. } | Job::SaveSettings { reply, .. } => {
                    send(reply, Err(error));
                }
                Job::Journal { .. } => {
                    tracing::warn!(error = %error, "the request journal could not be written to the SQLite store");
                }
            }
        }
    }
}

/// Inserts a new transaction unless its merchant holds its reference;
/// whether it did.
fn insert(conn: &Connection, row: &Row) -> rusqlite::Result<bool> {
    let mut statement = conn.prepare_cached(&format!(
        "INSERT INTO mock_transactions ({COLUMNS}) VALUES \
         (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, \
         ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29) \
         ON CONFLICT (merchant_id, reference_no) DO NOTHING"
    ))?;
    let c = row.confirm.as_ref();
    let changed = statement.execute(params![
        row.id.as_bytes().as_slice(),
        row.merchant_id.as_bytes().as_slice(),
        row.reference_no,
        row.description,
        row.amount_minor,
        row.currency_code,
        row.currency_exponent,
        row.product_code,
        row.quantity,
        row.country_code,
        row.store_id,
        row.device_id,
        row.payer_id,
        row.return_url,
        row.extra_properties,
        row.initial,
        row.created_at,
        row.expires_at,
        c.map(|c| c.confirmed_at),
        c.map(|c| c.result),
        c.and_then(|c| c.settles_at),
        c.and_then(|c| c.error_message.clone()),
        c.and_then(|c| c.provider_reference.clone()),
        c.and_then(|c| c.confirm_extra.clone()),
        c.and_then(|c| c.page_token.clone()),
        c.and_then(|c| c.page_deadline),
        row.decision,
        row.decided_at,
        row.later_submits,
    ])?;
    Ok(changed == 1)
}

impl Shared {
    fn apply(&self, effect: Effect) {
        match effect {
            Effect::None => {}
            Effect::Created => {
                self.count.fetch_add(1, Ordering::SeqCst);
            }
            Effect::Clock(offset) => self.clock.set_offset_nanos(offset),
            Effect::Reset { erase } => {
                self.count.store(0, Ordering::SeqCst);
                self.clock.reset();
                if erase {
                    self.journal.erase();
                } else {
                    self.journal.clear();
                }
                self.journal_written
                    .store(self.journal.last_seq(), Ordering::SeqCst);
            }
        }
    }

    /// The journal entries not yet handed to the writer (at most the last
    /// [`CAPACITY`]), and the newest number.
    fn unwritten(&self) -> Option<(Vec<JournalEntry>, u64)> {
        let written = self.journal_written.load(Ordering::SeqCst);
        let last = self.journal.last_seq();
        if last <= written {
            return None;
        }
        let entries = self.journal.since(written, CAPACITY);
        self.journal_written.store(last, Ordering::SeqCst);
        Some((entries, last))
    }
}

impl SqliteStore {
    /// Opens (or creates) the store at `path`, owning it: checks the file,
    /// refuses a newer schema, migrates an older one, and starts the
    /// writer.
    ///
    /// # Errors
    ///
    /// [`Error::StoreOpen`] when the file is not a SQLite database, is
    /// damaged, is a directory, cannot be created, or another process holds
    /// it; [`Error::StoreSchemaNewer`] when a newer mock wrote it. A file
    /// refused is left exactly as it was.
    pub fn open(path: &Path, durability: Durability, replica: &str) -> Result<Self, Error> {
        let shown = format!("sqlite:{}", path.display());
        if path.is_dir() {
            return Err(open_error(&shown, "it is a directory, not a SQLite file"));
        }
        let (owner, created) = take_ownership(path, &shown)?;
        let opened = Self::open_owned(path, durability, replica, &shown, owner);
        if opened.is_err() && created {
            // Still ours (the failed open dropped our handle, not the file).
            let _ = std::fs::remove_file(lock_path(path));
        }
        opened
    }

    fn open_owned(
        path: &Path,
        durability: Durability,
        replica: &str,
        shown: &str,
        owner: File,
    ) -> Result<Self, Error> {
        check_header(path, shown)?;
        let why = |e: rusqlite::Error| {
            let text = e.to_string();
            let reason = if text.contains("not a database") {
                "it is not a SQLite database; the file was left as it is".to_owned()
            } else if text.contains("malformed") || text.contains("corrupt") {
                "the database is damaged (SQLite: malformed); the file was left as it is".to_owned()
            } else {
                format!("SQLite: {text}")
            };
            open_error(shown, reason)
        };
        let mut conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(why)?;
        // Reads only, before anything is written: a file SQLite cannot
        // read, or one of a newer schema, is refused unchanged.
        conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| {
            r.get::<_, i64>(0)
        })
        .map_err(why)?;
        let supported = supported_version();
        if let Some(found) = recorded_version(&conn).map_err(why)?
            && found > supported
        {
            return Err(Error::StoreSchemaNewer {
                store: shown.to_owned(),
                found,
                supported,
            });
        }
        configure(&conn, durability).map_err(why)?;
        migrations::migrations::runner()
            .set_migration_table_name(SCHEMA_TABLE)
            .run(&mut conn)
            .map_err(|e| open_error(shown, format!("cannot bring its schema up to date: {e}")))?;
        let offset: i64 = conn
            .query_row(
                "SELECT offset_nanos FROM mock_clock WHERE id = 1",
                [],
                |r| r.get(0),
            )
            .map_err(why)?;
        let count: i64 = conn
            .query_row("SELECT count(*) FROM mock_transactions", [], |r| r.get(0))
            .map_err(why)?;
        let journal = Journal::new(replica);
        let kept = {
            let mut statement = conn
                .prepare(&format!(
                    "SELECT {JOURNAL_COLUMNS} FROM mock_journal ORDER BY seq DESC LIMIT {CAPACITY}"
                ))
                .map_err(why)?;
            let rows = statement.query_map([], journal_row_of).map_err(why)?;
            let mut kept: Vec<JournalEntry> = rows
                .collect::<rusqlite::Result<Vec<_>>>()
                .map_err(why)?
                .into_iter()
                .map(JournalRow::into_entry)
                .collect();
            kept.reverse();
            kept
        };
        let last_seq = setting(&conn, "journal_last_seq")
            .map_err(why)?
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0);
        journal.restore(&kept, last_seq);
        let clock = Clock::new();
        clock.set_offset_nanos(offset);
        let shared = Arc::new(Shared {
            clock,
            count: AtomicUsize::new(usize::try_from(count).unwrap_or(0)),
            journal_written: AtomicU64::new(journal.last_seq()),
            journal,
            stop: AtomicBool::new(false),
        });
        let (jobs, receiver) = mpsc::channel(4 * BATCH);
        let writer = Writer {
            conn,
            shared: shared.clone(),
            offset_nanos: offset,
        };
        let writer = std::thread::Builder::new()
            .name("sqlite-writer".to_owned())
            .spawn(move || writer.run(receiver))
            .map_err(|e| open_error(shown, format!("cannot start its writer: {e}")))?;
        let flusher = {
            let (shared, jobs) = (shared.clone(), jobs.clone());
            std::thread::Builder::new()
                .name("sqlite-journal".to_owned())
                .spawn(move || flush_journal(&shared, &jobs))
                .map_err(|e| open_error(shown, format!("cannot start its journal writer: {e}")))?
        };
        let reader = open_reader(path).map_err(why)?;
        Ok(Self {
            shown: shown.to_owned(),
            path: path.to_owned(),
            shared,
            jobs,
            readers: Mutex::new(vec![reader]),
            writer: Some(writer),
            flusher: Some(flusher),
            _owner: owner,
        })
    }

    /// How the console names it: `sqlite:PATH`.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// Runs `f` on a read connection of the pool.
    fn read<T>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let pooled = self
            .readers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        let conn = match pooled {
            Some(conn) => conn,
            None => open_reader(&self.path).map_err(|e| store_error(&e))?,
        };
        let result = f(&conn);
        let mut readers = self.readers.lock().unwrap_or_else(PoisonError::into_inner);
        if readers.len() < IDLE_READERS {
            readers.push(conn);
        }
        result
    }

    /// Hands a job to the writer and waits for its answer, at most
    /// [`STORE_TIMEOUT`].
    async fn send<T>(&self, job: impl FnOnce(Reply<T>) -> Job) -> Result<T, StoreError> {
        let (reply, answer) = oneshot::channel();
        let gone = || StoreError::new("the SQLite writer has stopped");
        let work = async {
            self.jobs.send(job(reply)).await.map_err(|_| gone())?;
            answer.await.map_err(|_| gone())?
        };
        tokio::time::timeout(STORE_TIMEOUT, work)
            .await
            .map_err(|_| StoreError::new("SQLite did not commit within 4 s"))?
    }

    fn page_now<T>(
        &self,
        query: &PageQuery,
        mut keep: impl FnMut(&Record) -> bool,
        mut f: impl FnMut(&Record) -> T,
    ) -> Result<Option<Page<T>>, StoreError> {
        self.read(|conn| {
            if let Some(from) = query.from
                && select_id(conn, from)?.is_none()
            {
                return Ok(None);
            }
            let (cmp, order) = match query.order {
                Order::OldestFirst => (">", "ASC"),
                Order::NewestFirst => ("<", "DESC"),
            };
            let mut sql = format!("SELECT {COLUMNS} FROM mock_transactions WHERE 1 = 1");
            let mut values: Vec<rusqlite::types::Value> = Vec::new();
            if let Some(from) = query.from {
                values.push(from.as_bytes().to_vec().into());
                sql.push_str(&format!(" AND id {cmp} ?{}", values.len()));
            }
            if let Some(merchant) = query.merchant {
                values.push(merchant.as_bytes().to_vec().into());
                sql.push_str(&format!(" AND merchant_id = ?{}", values.len()));
            }
            if let Some(part) = &query.reference_contains {
                values.push(part.clone().into());
                sql.push_str(&format!(" AND instr(reference_no, ?{}) > 0", values.len()));
            }
            sql.push_str(&format!(" ORDER BY id {order}"));
            let mut statement = conn.prepare_cached(&sql).map_err(|e| store_error(&e))?;
            let mut rows = statement
                .query(rusqlite::params_from_iter(values))
                .map_err(|e| store_error(&e))?;
            let mut items = Vec::with_capacity(query.limit.min(1024));
            let mut more = false;
            while let Some(row) = rows.next().map_err(|e| store_error(&e))? {
                let record = record_of(row).map_err(|e| store_error(&e))??;
                if !keep(&record) {
                    continue;
                }
                if items.len() == query.limit {
                    more = true;
                    break;
                }
                items.push(f(&record));
            }
            Ok(Some(Page { items, more }))
        })
    }
}

/// The journal's write-behind: every [`JOURNAL_EVERY`], what is new.
fn flush_journal(shared: &Shared, jobs: &mpsc::Sender<Job>) {
    loop {
        let stopping = shared.stop.load(Ordering::SeqCst);
        if let Some((entries, last_seq)) = shared.unwritten() {
            let _ = jobs.blocking_send(Job::Journal { entries, last_seq });
        }
        if stopping {
            return;
        }
        std::thread::park_timeout(JOURNAL_EVERY);
    }
}

impl Drop for SqliteStore {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        if let Some(flusher) = self.flusher.take() {
            flusher.thread().unpark();
            let _ = flusher.join();
        }
        // The writer ends when the last sender is gone: ours, now (the
        // flusher's went with it).
        let (closed, _) = mpsc::channel(1);
        drop(std::mem::replace(&mut self.jobs, closed));
        if let Some(writer) = self.writer.take() {
            let _ = writer.join();
        }
    }
}

impl Store for SqliteStore {
    async fn now(&self) -> Result<DateTime<Utc>, StoreError> {
        Ok(self.shared.clock.now())
    }

    async fn clock(&self) -> Result<ClockReading, StoreError> {
        Ok(ClockReading {
            now: self.shared.clock.now(),
            offset_nanos: self.shared.clock.offset_nanos(),
        })
    }

    async fn advance_clock(&self, by: Duration) -> Result<ClockReading, StoreError> {
        self.send(|reply| Job::Advance { by, reply }).await
    }

    async fn create(
        &self,
        new: NewTransaction,
        initial: InitialState,
        expiry: Duration,
    ) -> Result<Result<Record, InsertRefusal>, StoreError> {
        self.send(|reply| Job::Create {
            new: Box::new(new),
            initial,
            expiry,
            reply,
        })
        .await
    }

    async fn confirm(
        &self,
        id: Uuid,
        now: DateTime<Utc>,
        confirmation: Confirmation,
    ) -> Result<Transition, StoreError> {
        self.send(|reply| Job::Confirm {
            id,
            now,
            confirmation: Box::new(confirmation),
            reply,
        })
        .await
    }

    async fn decide(
        &self,
        key: PaymentPageKey<'_>,
        scope: Option<Uuid>,
        action: PayerAction,
        now: DateTime<Utc>,
    ) -> Result<Result<Decided, PayerRefusal>, StoreError> {
        let key = match key {
            PaymentPageKey::Token(token) if crate::domain::redirect::is_token(token) => {
                PageKey::Token(token.to_owned())
            }
            PaymentPageKey::Transaction(id) => match issued_id(id) {
                Some(id) => PageKey::Transaction(id),
                None => return Ok(Err(PayerRefusal::NotFound)),
            },
            PaymentPageKey::Token(_) => return Ok(Err(PayerRefusal::NotFound)),
        };
        self.send(|reply| Job::Decide {
            key,
            scope,
            action,
            now,
            reply,
        })
        .await
    }

    async fn with_id<T: Send>(
        &self,
        id: Uuid,
        scope: Option<Uuid>,
        f: impl FnOnce(&Record) -> T + Send,
    ) -> Result<Option<T>, StoreError> {
        let record = self.read(|conn| select_id(conn, id))?;
        Ok(record
            .filter(|r| scope.is_none_or(|m| m == r.fields.merchant_id))
            .as_ref()
            .map(f))
    }

    async fn with_reference<T: Send>(
        &self,
        reference_no: &str,
        scope: Option<Uuid>,
        f: impl FnOnce(&Record) -> T + Send,
    ) -> Result<Result<T, LookupError>, StoreError> {
        let found = self.read(|conn| {
            let mut records = Vec::with_capacity(1);
            let map = |e: rusqlite::Error| store_error(&e);
            match scope {
                Some(merchant) => {
                    let mut s = conn
                        .prepare_cached(&format!(
                            "SELECT {COLUMNS} FROM mock_transactions WHERE merchant_id = ?1 AND reference_no = ?2"
                        ))
                        .map_err(map)?;
                    for r in s
                        .query_map(params![merchant.as_bytes().as_slice(), reference_no], record_of)
                        .map_err(map)?
                    {
                        records.push(r.map_err(map)??);
                    }
                }
                None => {
                    let mut s = conn
                        .prepare_cached(&format!(
                            "SELECT {COLUMNS} FROM mock_transactions WHERE reference_no = ?1 LIMIT 2"
                        ))
                        .map_err(map)?;
                    for r in s.query_map([reference_no], record_of).map_err(map)? {
                        records.push(r.map_err(map)??);
                    }
                }
            }
            Ok(records)
        })?;
        Ok(match found.as_slice() {
            [] => Err(LookupError::NotFound),
            [one] => Ok(f(one)),
            _ => Err(LookupError::Ambiguous),
        })
    }

    async fn with_payment_page<T: Send>(
        &self,
        key: PaymentPageKey<'_>,
        f: impl FnOnce(&Record, &PaymentPage) -> T + Send,
    ) -> Result<Option<T>, StoreError> {
        let key = match key {
            PaymentPageKey::Token(token) if crate::domain::redirect::is_token(token) => {
                PageKey::Token(token.to_owned())
            }
            PaymentPageKey::Transaction(id) => match issued_id(id) {
                Some(id) => PageKey::Transaction(id),
                None => return Ok(None),
            },
            PaymentPageKey::Token(_) => return Ok(None),
        };
        let record = self.read(|conn| select_page(conn, &key))?;
        Ok(
            record.and_then(|r| match &r.confirmation.as_deref()?.result {
                ConfirmResult::AwaitingPayer(page) => Some(f(&r, page)),
                _ => None,
            }),
        )
    }

    async fn page<T: Send>(
        &self,
        query: &PageQuery,
        keep: impl FnMut(&Record) -> bool + Send,
        f: impl FnMut(&Record) -> T + Send,
    ) -> Result<Option<Page<T>>, StoreError> {
        self.page_now(query, keep, f)
    }

    async fn count(&self) -> Result<usize, StoreError> {
        Ok(self.shared.count.load(Ordering::SeqCst))
    }

    fn now_hint(&self) -> DateTime<Utc> {
        self.shared.clock.now()
    }

    fn record_request(&self, capture: Capture) {
        self.shared.journal.record(capture);
    }

    async fn requests_since(
        &self,
        after: u64,
        limit: usize,
    ) -> Result<Vec<JournalEntry>, StoreError> {
        Ok(self.shared.journal.since(after, limit.min(CAPACITY)))
    }

    async fn request(&self, seq: u64) -> Result<Option<JournalEntry>, StoreError> {
        Ok(self.shared.journal.get(seq))
    }

    async fn journal_stats(&self) -> Result<JournalStats, StoreError> {
        Ok(JournalStats {
            last_seq: self.shared.journal.last_seq(),
            len: self.shared.journal.len(),
        })
    }

    async fn reset(&self) -> Result<(), StoreError> {
        self.send(|reply| Job::Reset {
            erase: false,
            reply,
        })
        .await
    }

    async fn settings(&self) -> Result<Option<Settings>, StoreError> {
        self.read(|conn| {
            let catalog = setting(conn, "catalog").map_err(|e| store_error(&e))?;
            let expiry = setting(conn, "expiry_ms").map_err(|e| store_error(&e))?;
            match (catalog, expiry) {
                (Some(catalog), Some(expiry)) => {
                    let expiry = expiry
                        .parse::<i64>()
                        .map_err(|_| StoreError::new("the stored expiry is not a number"))?;
                    Settings::from_stored(&catalog, expiry)
                        .map(Some)
                        .map_err(StoreError::new)
                }
                _ => Ok(None),
            }
        })
    }

    async fn save_settings(&self, settings: &Settings) -> Result<(), StoreError> {
        let settings = settings.clone();
        self.send(|reply| Job::SaveSettings { settings, reply })
            .await
    }

    async fn erase(&self) -> Result<(), StoreError> {
        self.send(|reply| Job::Reset { erase: true, reply }).await
    }

    async fn check(&self) -> Result<(), StoreError> {
        self.read(|conn| {
            conn.query_row("SELECT 1", [], |_| Ok(()))
                .map_err(|e| store_error(&e))
        })
    }
}
