//! The SQLite store (`--store sqlite:PATH`, CONTRACT section 15): one file,
//! owned by one process, that keeps everything across restarts.
//!
//! - **Writes** go to one writer thread that owns the only writing
//!   connection. It takes every job waiting, runs them in one transaction
//!   (when one fails, the transaction is rolled back and the jobs run again
//!   each in a savepoint, so one failing job does not undo the others),
//!   commits once, and only then answers each: many requests share one
//!   commit, none is answered before it. One writer also makes each verb
//!   atomic: create, confirm and decide check and change with nobody in
//!   between.
//! - **Reads** run on a small pool of read connections; in WAL mode they
//!   never wait for the writer and always see the last commit. The quick
//!   ones (by id, reference or page token) run on the caller's thread; a
//!   page of transactions reads in batches on Tokio's blocking threads
//!   (`page.rs`). A look-up by id is answered from a copy of the
//!   transactions read lately when there is one (`cache.rs`): the writer
//!   drops a copy after the commit that changes its row and before it
//!   answers, so no read after an answer sees the row from before it.
//! - **The clock, the transaction count and the journal** are also kept in
//!   the process (one owner: nobody else changes them) and written through:
//!   the clock and count after each commit that changes them, the journal
//!   behind the answers, at most every 250 ms and at most its last 1,000
//!   entries (it reports no change, so no request waits for it).
//! - **Sandboxes** (CONTRACT section 19) live in the same tables, told
//!   apart by a `sandbox` column (empty for the root, the id's 16 bytes for
//!   a sandbox): each has its own view of the file ([`SqliteStore`] with
//!   its own clock, count and journal) over the one writer and the one
//!   pool of readers; `mock_sandboxes` keeps what each is, its clock
//!   offset and its journal's last number, so they come back at a restart.
//! - **Ownership**: a second process on the same file refuses to start,
//!   naming the holder: an OS lock on the database file itself (on Linux;
//!   whatever name reaches it, a symlink or a hard link) and one on
//!   `PATH.lock` beside the file a symlink leads to, which holds its pid.
//! - **Opening never changes a file it refuses**: the header is checked
//!   (magic, truncation) and the schema version read before anything is
//!   written; a write-ahead log left beside it (`kill -9`, or a copy put
//!   in place beside a dead process's log) has the store checked first
//!   (`leftover.rs`), and a refused open never copies the log into the
//!   file as it closes.
//!
//! `open.rs` opens and owns the file; `writer.rs` is the writer thread and
//! the journal's write-behind; `rows.rs` the statements and row decoding;
//! `verbs.rs` the `Store` verbs, as jobs for the writer and reads.

use std::fs::File;
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use chrono::{DateTime, Utc};
use rusqlite::{Connection, OpenFlags, OptionalExtension as _, params};
use tokio::sync::{mpsc, oneshot};
use uuid::Uuid;

use super::journal::Journal;
use super::sql::{COLUMNS, ConfirmColumns, JOURNAL_COLUMNS, JournalRow, Row, millis, new_row};
use super::{
    ClockReading, Confirmation, Decided, Durability, InsertRefusal, JournalStats, KeptSandbox,
    LookupError, NewTransaction, Order, Page, PageQuery, PayerAction, PayerRefusal, PaymentPage,
    PaymentPageKey, STORE_TIMEOUT, Settings, Store, StoreError, Transition,
};
use crate::domain::catalog::InitialState;
use crate::domain::clock::{Clock, NoRoom};
use crate::domain::journal::{CAPACITY, Capture, JournalEntry};
use crate::domain::transaction::{Ids, Record, issued_id};
use crate::error::Error;

mod cache;
mod claim;
#[cfg(test)]
mod claim_tests;
mod held;
#[cfg(test)]
mod journal_tests;
mod leftover;
mod names;
mod open;
mod page;
mod rows;
mod sandboxes;
#[cfg(test)]
mod scale_tests;
mod start_lock;
mod verbs;
mod watch;
mod writer;

pub(super) mod migrations {
    refinery::embed_migrations!("migrations/sqlite");
}

/// The table refinery records applied migrations in.
const SCHEMA_TABLE: &str = "mock_schema_history";
/// Jobs taken into one commit at most.
const BATCH: usize = 512;
/// How often the journal is written behind the answers.
const JOURNAL_EVERY: Duration = Duration::from_millis(250);
/// How many journal numbers past the newest one the file reserves: a
/// journal read shows only numbers the file has reserved (it waits for a
/// reservation when the journal has run past it, once per this many),
/// and a restart numbers on after the reservation, so the numbers of
/// entries a `kill -9` lost are never given out again (a gap, not a
/// reuse). A clean stop writes the exact last number back.
const JOURNAL_AHEAD: u64 = 1_000;
/// How long a reset or a sandbox's removal waits for its commit: it
/// deletes every row of the sandbox in one statement (a second or more per
/// 100,000 rows), and the writer cannot stop it half-way.
const ADMIN_TIMEOUT: Duration = Duration::from_secs(120);
/// What the health probe writes (and removes in the same transaction)
/// while the last commit failed: about as much as the biggest write the
/// store makes, a journal batch (1,000 entries of a kilobyte or so, their
/// bodies' 512 KiB budget), so that health says ok again only once such a
/// write fits (a probe of a few bytes fit on a full disk that refused
/// every create).
const PROBE_BYTES: usize = 2 * 1024 * 1024;
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
    Seed {
        record: Box<Record>,
        reply: Reply<Result<(), InsertRefusal>>,
    },
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
    /// Moves the clock by `by`: all of it or nothing (the offset stays
    /// below its end).
    Advance {
        by: Duration,
        reply: Reply<Result<ClockReading, NoRoom>>,
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
        /// The last flush, as the file closes: `last_seq` is written as
        /// the numbering's end, no reservation past it.
        closing: bool,
    },
    /// Reserves the view's journal numbers past its newest one
    /// ([`JOURNAL_AHEAD`]), before a read shows them.
    Reserve {
        reply: Reply<()>,
    },
    /// Writes down a new sandbox (its view's scope is the sandbox).
    KeepSandbox {
        kept: Box<KeptSandbox>,
        reply: Reply<()>,
    },
    /// Removes the view's sandbox with all it holds.
    ForgetSandbox {
        reply: Option<Reply<()>>,
    },
    /// Writes down when the view's sandbox expires now.
    RenewSandbox {
        expires_at: DateTime<Utc>,
    },
    /// Writes [`PROBE_BYTES`] and removes them: whether the file can take
    /// a big write (health, while the last commit failed).
    Probe {
        reply: Reply<()>,
    },
}

/// A job, the view it is for (the root's or a sandbox's), and whether it
/// may still run (`claim.rs`).
type Sent = (Arc<Shared>, Job, claim::Claim);

/// What a committed job changes in the process's copies.
#[derive(Debug, Clone, Copy)]
enum Effect {
    None,
    Created,
    Clock(i64),
    /// The file reserves the journal's numbers up to this one.
    Reserved(u64),
    /// The journal loses every entry numbered up to `floor` (those
    /// recorded before the reset ran in the writer).
    Reset {
        erase: bool,
        floor: u64,
    },
}

/// One view of the file (the root's or a sandbox's), as the store and its
/// two threads share it.
#[derive(Debug)]
struct Shared {
    /// Its rows' `sandbox` column: empty for the root, the id's bytes for
    /// a sandbox.
    key: Vec<u8>,
    /// The sandbox it is, `None` for the root.
    sandbox: Option<Uuid>,
    /// Transactions read lately (`cache.rs`); the root's only (a sandbox's
    /// reads go to the file: tests, not load, and a copy per sandbox would
    /// cost more memory than the sandbox).
    cache: Option<cache::ReadCache>,
    clock: Clock,
    /// The ids of this view's clock (one per clock: `Ids`).
    ids: Ids,
    count: AtomicUsize,
    journal: Journal,
    /// The `seq` of the last journal entry handed to the writer.
    journal_written: AtomicU64,
    /// The writer's own: the clock offset as of the jobs it has run
    /// (committed or about to be)...
    writer_offset: AtomicI64,
    /// ...and the newest `seq` a reset has forgotten (see the writer)...
    journal_floor: AtomicU64,
    /// ...and the journal numbers reserved in the file (committed or
    /// about to be).
    writer_reserved: AtomicU64,
    /// The journal numbers the file has reserved (committed): a read
    /// shows no number past them ([`JOURNAL_AHEAD`]).
    journal_reserved: AtomicU64,
    /// Removed: nothing more of it is written.
    gone: AtomicBool,
    /// The writer's own: journal entries whose write failed (a full
    /// disk), oldest first, at most [`CAPACITY`]: written with the next
    /// journal write, and at the stop.
    journal_pending: Mutex<Vec<JournalEntry>>,
}

impl Shared {
    fn new(sandbox: Option<Uuid>, replica: &str, offset: i64, count: usize) -> Self {
        let clock = Clock::new();
        clock.set_offset_nanos(offset);
        Self {
            key: sandbox.map_or_else(Vec::new, |id| id.as_bytes().to_vec()),
            sandbox,
            cache: sandbox.is_none().then(cache::ReadCache::default),
            clock,
            ids: Ids::default(),
            count: AtomicUsize::new(count),
            journal: Journal::new(replica),
            journal_written: AtomicU64::new(0),
            writer_offset: AtomicI64::new(offset),
            journal_floor: AtomicU64::new(0),
            writer_reserved: AtomicU64::new(0),
            journal_reserved: AtomicU64::new(0),
            gone: AtomicBool::new(false),
            journal_pending: Mutex::new(Vec::new()),
        }
    }
}

/// The views whose journals the flusher writes behind, and its stop.
///
/// Each is held here, not only by its store: the stores go in whatever
/// order the server drops them (the root's before a sandbox's, whose store
/// still holds the file), and the last flush, when the file closes, must
/// still find every view's entries (a view only here had lost its last
/// quarter second of entries at a clean stop).
#[derive(Debug, Default)]
struct Views {
    stop: AtomicBool,
    live: Mutex<Vec<Arc<Shared>>>,
}

impl Views {
    fn add(&self, view: &Arc<Shared>) {
        let mut live = self.live.lock().unwrap_or_else(PoisonError::into_inner);
        live.push(Arc::clone(view));
    }

    /// Every view a store still holds, and those no store holds any more
    /// while they have entries not yet handed to the writer (kept until
    /// the flush after that); a removed sandbox's never.
    fn all(&self) -> Vec<Arc<Shared>> {
        let mut live = self.live.lock().unwrap_or_else(PoisonError::into_inner);
        live.retain(|v| {
            !v.gone.load(Ordering::SeqCst)
                && (Arc::strong_count(v) > 1
                    || v.journal.last_seq() > v.journal_written.load(Ordering::SeqCst))
        });
        live.clone()
    }
}

/// What every view of one file shares: its threads, its readers, its
/// owner lock.
#[derive(Debug)]
struct Opened {
    shown: String,
    path: PathBuf,
    replica: String,
    jobs: mpsc::Sender<Sent>,
    readers: Mutex<Vec<Connection>>,
    views: Arc<Views>,
    writer: Option<JoinHandle<()>>,
    flusher: Option<JoinHandle<()>>,
    /// The OS lock that makes this process the file's only owner; released
    /// when the store is dropped.
    _owner: open::Owner,
    /// Whether the file is still the one opened and can be written.
    watch: Arc<watch::Watch>,
    /// Its operations, for the server's `GET /metrics`.
    counts: StoreCounts,
    /// A journal read went on without its reservation (a full disk): said
    /// once in the log, until a reservation succeeds again.
    unreserved: AtomicBool,
}

/// A SQLite file behind the mock: the root's view of it, or a sandbox's
/// (made for a sandbox by the store itself).
#[derive(Debug)]
pub struct SqliteStore {
    file: Arc<Opened>,
    shared: Arc<Shared>,
}

use crate::metrics::StoreCounts;
use open::open_reader;
use rows::*;

impl SqliteStore {
    /// How the console names it: `sqlite:PATH`.
    pub fn shown(&self) -> &str {
        &self.file.shown
    }

    /// Its operations' counts (`GET /metrics`).
    pub(crate) fn counts(&self) -> &StoreCounts {
        &self.file.counts
    }

    /// Runs `f` on a read connection of the pool, on the caller's thread:
    /// for the quick reads only (a look-up by id, reference or page token;
    /// a page of transactions goes off the async workers, `page.rs`).
    fn read<T>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let conn = self.file.reader()?;
        let result = f(&conn);
        if let Err(e) = &result {
            self.noted(e);
        }
        self.file.give_back(conn);
        result
    }

    /// Hands a job to the writer and waits for its answer, at most
    /// [`STORE_TIMEOUT`].
    async fn send<T>(&self, job: impl FnOnce(Reply<T>) -> Job) -> Result<T, StoreError> {
        self.send_within(STORE_TIMEOUT, job).await
    }

    /// Hands a job to the writer and waits for its answer, at most
    /// `timeout` for the writer to start it: [`ADMIN_TIMEOUT`] for a reset
    /// or a sandbox's removal, whose one `DELETE` of a big sandbox takes
    /// seconds. A job not started by then never runs, and the answer says
    /// nothing was written; one started by then is waited for to its real
    /// answer (`claim.rs`).
    async fn send_within<T>(
        &self,
        timeout: Duration,
        job: impl FnOnce(Reply<T>) -> Job,
    ) -> Result<T, StoreError> {
        let deadline = tokio::time::Instant::now() + timeout;
        let (reply, answer) = oneshot::channel();
        let claim = claim::Claim::waited();
        let late = || {
            StoreError::new(format!(
                "SQLite did not commit within {} s: nothing was written",
                timeout.as_secs()
            ))
        };
        let sent = (Arc::clone(&self.shared), job(reply), claim.clone());
        let result = match tokio::time::timeout_at(deadline, self.file.jobs.send(sent)).await {
            Ok(Ok(())) => claim::answer(&claim, deadline, answer, late).await,
            Ok(Err(_)) => Err(claim::writer_gone()),
            // Never handed over: it cannot run.
            Err(_) => Err(late()),
        };
        if let Err(e) = &result {
            self.noted(e);
        }
        result
    }

    /// A failure the log hears of once: a row the store cannot read.
    fn noted(&self, e: &StoreError) {
        if e.kind() == crate::domain::port::StoreErrorKind::Unreadable {
            self.file.watch.unreadable(e);
        }
    }
}

impl Opened {
    /// A read connection: one of the pool's, or a new one.
    fn reader(&self) -> Result<Connection, StoreError> {
        let pooled = self
            .readers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        match pooled {
            Some(conn) => Ok(conn),
            None => open_reader(&self.path).map_err(|e| store_error(&e)),
        }
    }

    /// Puts a read connection back in the pool (when it has room).
    fn give_back(&self, conn: Connection) {
        let mut readers = self.readers.lock().unwrap_or_else(PoisonError::into_inner);
        if readers.len() < IDLE_READERS {
            readers.push(conn);
        }
    }
}

impl Drop for Opened {
    fn drop(&mut self) {
        self.views.stop.store(true, Ordering::SeqCst);
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
        // Every connection closed, then a replaced file's log set aside.
        self.readers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
        self.watch.set_aside_logs();
    }
}
