//! The PostgreSQL store (`--store postgres://…`, CONTRACT section 15): one
//! database shared by any number of mock processes, which then behave as
//! one service.
//!
//! Nothing that decides behaviour lives in a process: each verb is one
//! statement (or one transaction) whose conditions the database checks, so
//! exactly-once holds across replicas without a lock in any of them:
//!
//! - create: `INSERT … ON CONFLICT (merchant_id, reference_no) DO NOTHING
//!   RETURNING` (the unique constraint decides which initiate wins);
//! - confirm: `UPDATE … WHERE id = $1 AND confirmed_at IS NULL AND
//!   expires_at > $now RETURNING` (a second confirm re-checks the row its
//!   rival committed and matches nothing);
//! - decide: `UPDATE … WHERE decision IS NULL AND page_deadline > $now
//!   RETURNING`, else a later submit is counted;
//! - the clock is one row every replica reads per request.
//!
//! The journal is the one thing written behind the answers: each replica
//! sends its new entries every 100 ms, stamped with when they were
//! answered, and they are numbered (`seq`) in stamp order once every live
//! replica has written all it answered before them, so the journal lists
//! requests in the order they were answered, whichever replicas served
//! them. Numbers come from a counter row, under its lock: numbers follow
//! commit order, a write that fails gives its numbers back, and a reader
//! that sees the counter sees every entry up to it (polling "after n"
//! never skips one). It is exact: a read waits until every replica has
//! written what it answered before the read started, and numbers what is
//! due then; a reset moves an epoch on that drops what was served before
//! it (`replicas.rs`).
//!
//! `open.rs` connects and migrates; `inserts.rs` creates and seeds
//! transactions; `journal.rs` writes and resets the journal, `reads.rs`
//! reads it; `replicas.rs` makes it exact across replicas; `sandboxes.rs`
//! keeps the sandboxes the replicas share; `settings.rs` keeps the
//! catalogue and expiry; `fresh.rs` refuses `--fresh` under live replicas
//! and logs what it deleted; `rows.rs` decodes rows and maps errors.
//!
//! Every call is bounded by [`STORE_TIMEOUT`]: a database that is gone
//! makes requests answer 503 within seconds, and the pool reconnects by
//! itself once it is back.

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use chrono::{DateTime, Utc};
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use tokio_postgres::NoTls;
use tokio_postgres::types::ToSql;
use uuid::Uuid;

use super::spec::PostgresUrl;
use super::sql::{COLUMNS, ConfirmColumns, JOURNAL_COLUMNS, JournalRow, Row, millis, new_row};
use super::{
    ClockReading, Confirmation, Decided, InsertRefusal, JournalStats, LookupError, NewTransaction,
    Order, Page, PageQuery, PayerAction, PayerRefusal, PaymentPage, PaymentPageKey, STORE_TIMEOUT,
    Settings, Store, StoreError, Transition,
};
use crate::domain::catalog::InitialState;
use crate::domain::clock::{Clock, NoRoom};
use crate::domain::journal::{CAPACITY, Capture, JournalEntry};
use crate::domain::transaction::{Ids, Record, issued_id};
use crate::error::Error;

mod clock;
mod fresh;
mod inserts;
mod journal;
mod nul_escape;
mod open;
mod outage;
mod pending;
mod queries;
mod reads;
mod replicas;
mod rows;
mod sandboxes;
#[cfg(test)]
mod scale;
mod settings;

use queries::PageParam;
use reads::Taking;

/// The virtual now in milliseconds as the statement runs: the database's
/// clock and the offset of the sandbox `$11` (the root's, the nil id, is
/// `mock_clock`'s).
const DATABASE_NOW: &str = "(floor(extract(epoch from clock_timestamp()) * 1000)::bigint + \
     (CASE WHEN $11 = '00000000-0000-0000-0000-000000000000'::uuid \
     THEN (SELECT offset_nanos FROM mock_clock WHERE id = 1) \
     ELSE (SELECT offset_nanos FROM mock_sandboxes WHERE id = $11) END) / 1000000)";

use journal::{Clear, Pending, detached};
use replicas::Signals;
use rows::*;
use sandboxes::sandbox_gone;

pub(super) mod migrations {
    refinery::embed_migrations!("migrations/postgres");
}

/// The table refinery records applied migrations in.
const SCHEMA_TABLE: &str = "mock_schema_history";
/// Advisory lock key: migrations (one replica at a time).
const MIGRATION_LOCK: i64 = 0x6d6f_636b_0001;
/// How often a replica writes its journal entries: a `kill -9` loses at
/// most this much of them (and a write in flight).
const JOURNAL_EVERY: Duration = Duration::from_millis(100);
/// Connections per replica.
const POOL_SIZE: usize = 16;

/// A PostgreSQL database behind the mock.
#[derive(Debug, Clone)]
pub struct PostgresStore {
    inner: Arc<Inner>,
    /// Which sandbox of the database this store is (CONTRACT section 19).
    view: Arc<View>,
}

/// The sandbox a [`PostgresStore`] serves: the root (the nil id) or one
/// of the sandboxes the replicas share (`sandboxes.rs`).
#[derive(Debug)]
struct View {
    sandbox: Uuid,
    /// The last clock offset read: the journal's arrival times use it, so
    /// journaling costs no round trip.
    offset_hint: AtomicI64,
    /// The ids this replica makes on this view's clock (one per clock:
    /// `Ids`).
    ids: Ids,
}

impl View {
    fn new(sandbox: Uuid, offset: i64) -> Arc<Self> {
        Arc::new(Self {
            sandbox,
            offset_hint: AtomicI64::new(offset),
            ids: Ids::default(),
        })
    }
}

#[derive(Debug)]
struct Inner {
    shown: String,
    pool: Pool,
    /// How to connect outside the pool: the listening connection, and the
    /// last journal write when the store is dropped. Holds the password;
    /// its `Debug` does not show it.
    config: tokio_postgres::Config,
    replica: String,
    /// This process among the replicas: its row of
    /// `mock_journal_replicas`.
    instance: Uuid,
    /// The notification a journal read on this replica sends.
    own_read: String,
    /// Journal entries not yet written.
    pending: Mutex<Pending>,
    /// Serializes this replica's journal writes (a read flushes first).
    flushing: tokio::sync::Mutex<()>,
    /// Notifications for the writer and for reads waiting on other replicas.
    signals: Arc<Signals>,
    /// Dropped with the store: the listening task stops.
    _alive: tokio::sync::watch::Sender<()>,
    /// Its operations, for the server's `GET /metrics`.
    counts: crate::metrics::StoreCounts,
    /// Whether the last connection could not be made (`outage.rs`).
    down: AtomicBool,
    /// Whether the store's tables were found gone (`outage.rs`): said
    /// once in the log, and the database is never said to serve again.
    tables_gone: AtomicBool,
}

/// A store dropped (the process stops, SIGTERM included) writes what its
/// journal has pending and leaves the replicas: only a `kill -9` loses
/// entries.
impl Drop for Inner {
    fn drop(&mut self) {
        let pending = std::mem::take(
            self.pending
                .get_mut()
                .unwrap_or_else(PoisonError::into_inner),
        );
        let config = self.config.clone();
        let (instance, replica) = (self.instance, self.replica.clone());
        let last = std::thread::Builder::new()
            .name("journal-last-write".to_owned())
            .spawn(move || journal::last_write(&config, pending, instance, &replica));
        if let Ok(last) = last {
            let _ = last.join();
        }
    }
}

impl Store for PostgresStore {
    async fn now(&self) -> Result<DateTime<Utc>, StoreError> {
        bounded(async {
            let client = self.client().await?;
            Ok(Clock::at_offset(self.offset(&client).await?))
        })
        .await
    }

    async fn clock(&self) -> Result<ClockReading, StoreError> {
        bounded(async {
            let client = self.client().await?;
            let offset = self.offset(&client).await?;
            Ok(ClockReading {
                now: Clock::at_offset(offset),
                offset_nanos: offset,
            })
        })
        .await
    }

    async fn advance_clock(
        &self,
        by: Duration,
    ) -> Result<Result<ClockReading, NoRoom>, StoreError> {
        self.advance_within(by).await
    }

    async fn create(
        &self,
        new: NewTransaction,
        initial: InitialState,
        expiry: Duration,
    ) -> Result<Result<Record, InsertRefusal>, StoreError> {
        self.insert_new(new, initial, expiry).await
    }

    async fn seed(&self, record: Record) -> Result<Result<(), InsertRefusal>, StoreError> {
        self.insert_seeded(record).await
    }

    /// The expiry is checked at the database's now (its clock and the
    /// sandbox's offset, as the statement runs, after any other confirm of
    /// the row), no earlier than the caller's: a confirm that read the
    /// clock before another one was refused as expired cannot succeed after
    /// it. (The replicas read the clock of their own host; on hosts whose
    /// clocks differ the order holds to within that difference.)
    async fn confirm(
        &self,
        id: Uuid,
        now: DateTime<Utc>,
        confirmation: Confirmation,
    ) -> Result<Transition, StoreError> {
        let c = ConfirmColumns::of(&confirmation);
        bounded(async {
            let client = self.client().await?;
            let statement = client
                .prepare_cached(&format!(
                    "UPDATE mock_transactions SET confirmed_at = $2, result = $3, settles_at = $4, \
                     error_message = $5, provider_reference = $6, confirm_extra = $7, \
                     page_token = $8, page_deadline = $9 \
                     WHERE id = $1 AND sandbox = $11 AND confirmed_at IS NULL \
                     AND expires_at > GREATEST($10, {DATABASE_NOW}) \
                     RETURNING {COLUMNS}"
                ))
                .await
                .map_err(|e| store_error(&e))?;
            let moved = client
                .query_opt(
                    &statement,
                    &[
                        &id,
                        &c.confirmed_at,
                        &c.result,
                        &c.settles_at,
                        &c.error_message,
                        &c.provider_reference,
                        &c.confirm_extra,
                        &c.page_token,
                        &c.page_deadline,
                        &millis(now),
                        &self.view.sandbox,
                    ],
                )
                .await
                .map_err(|e| store_error(&e))?;
            if let Some(row) = moved {
                return Ok(Transition::Moved(record_of(&row)?));
            }
            // Read with a share lock: a confirm that won the row and has
            // not committed yet is waited for, so an UPDATE that missed
            // the row because its expiry had passed at this statement's
            // now sees the winner's confirmation (already confirmed), not
            // the row before it (expired: two answers that cannot both
            // be true).
            Ok(
                match Self::select_one(
                    &client,
                    "id = $1 AND sandbox = $2 FOR SHARE",
                    &[&id, &self.view.sandbox],
                )
                .await?
                {
                    Some(record) => Transition::Unmoved(record),
                    None => Transition::Missing,
                },
            )
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
        let Some((filter, param)) = Self::page_filter(key) else {
            return Ok(Err(PayerRefusal::NotFound));
        };
        let by_token = matches!(param, PageParam::Token(_));
        bounded(async {
            let client = self.client().await?;
            let scope_filter = "($2::uuid IS NULL OR merchant_id = $2) AND sandbox = $3";
            // The window judged at this statement's now, never earlier than
            // the caller's (as confirm's expiry): a submit that read the
            // clock before the deadline cannot decide after a read has
            // seen the window closed (FAILED, then SUCCESSFUL).
            let now_here = DATABASE_NOW.replace("$11", "$3");
            let decide = client
                .prepare_cached(&format!(
                    "UPDATE mock_transactions SET decision = $4, decided_at = GREATEST($5, {now_here}) \
                     WHERE {filter} AND {scope_filter} AND page_token IS NOT NULL \
                     AND decision IS NULL AND page_deadline > GREATEST($5, {now_here}) RETURNING {COLUMNS}"
                ))
                .await
                .map_err(|e| store_error(&e))?;
            let at = millis(now);
            let decided = client
                .query_opt(
                    &decide,
                    &[
                        param.value(),
                        &scope,
                        &self.view.sandbox,
                        &action.as_str(),
                        &at,
                    ],
                )
                .await
                .map_err(|e| store_error(&e))?;
            if let Some(row) = decided {
                return Ok(Ok(Decided {
                    record: record_of(&row)?,
                    decided_now: true,
                }));
            }
            let later = client
                .prepare_cached(&format!(
                    "UPDATE mock_transactions SET later_submits = LEAST(later_submits + 1, 4294967295) \
                     WHERE {filter} AND {scope_filter} AND page_token IS NOT NULL RETURNING {COLUMNS}"
                ))
                .await
                .map_err(|e| store_error(&e))?;
            let counted = client
                .query_opt(&later, &[param.value(), &scope, &self.view.sandbox])
                .await
                .map_err(|e| store_error(&e))?;
            if let Some(row) = counted {
                return Ok(Ok(Decided {
                    record: record_of(&row)?,
                    decided_now: false,
                }));
            }
            let exists = !by_token
                && Self::select_one(
                    &client,
                    &format!("{filter} AND {scope_filter}"),
                    &[param.value(), &scope, &self.view.sandbox],
                )
                .await?
                .is_some();
            Ok(Err(if exists {
                PayerRefusal::NoPaymentPage
            } else {
                PayerRefusal::NotFound
            }))
        })
        .await
    }

    async fn with_id<T: Send>(
        &self,
        id: Uuid,
        scope: Option<Uuid>,
        f: impl FnOnce(&Record) -> T + Send,
    ) -> Result<Option<T>, StoreError> {
        let record = bounded(async {
            let client = self.client().await?;
            Self::select_one(
                &client,
                "id = $1 AND sandbox = $2",
                &[&id, &self.view.sandbox],
            )
            .await
        })
        .await?;
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
        // No reference holds a NUL (the interface refuses control
        // characters), and PostgreSQL's text cannot take one: not found,
        // as on the other stores, never a 503 (which also made a merchant's
        // journal unreadable while such a request was in it).
        if reference_no.contains('\0') {
            return Ok(Err(LookupError::NotFound));
        }
        let found = bounded(async {
            let client = self.client().await?;
            match scope {
                Some(merchant) => {
                    Self::select(
                        &client,
                        "merchant_id = $1 AND reference_no = $2 AND sandbox = $3",
                        &[&merchant, &reference_no, &self.view.sandbox],
                    )
                    .await
                }
                None => {
                    Self::select(
                        &client,
                        "sandbox = $2 AND reference_no = $1 LIMIT 2",
                        &[&reference_no, &self.view.sandbox],
                    )
                    .await
                }
            }
        })
        .await?;
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
        let Some((filter, param)) = Self::page_filter(key) else {
            return Ok(None);
        };
        let record = bounded(async {
            let client = self.client().await?;
            Self::select_one(
                &client,
                &format!("{filter} AND sandbox = $2"),
                &[param.value(), &self.view.sandbox],
            )
            .await
        })
        .await?;
        Ok(record.and_then(|r| r.payment_page().map(|page| f(&r, page))))
    }

    async fn page<T: Send>(
        &self,
        query: &PageQuery,
        keep: impl FnMut(&Record) -> bool + Send,
        f: impl FnMut(&Record) -> T + Send,
    ) -> Result<Option<Page<T>>, StoreError> {
        self.page_within(query, keep, f).await
    }

    async fn count(&self) -> Result<usize, StoreError> {
        bounded(async {
            let client = self.client().await?;
            let n: i64 = client
                .query_one(
                    "SELECT count(*) FROM mock_transactions WHERE sandbox = $1",
                    &[&self.view.sandbox],
                )
                .await
                .map_err(|e| store_error(&e))?
                .get(0);
            Ok(usize::try_from(n).unwrap_or(0))
        })
        .await
    }

    async fn count_of_merchant(&self, merchant: Uuid) -> Result<usize, StoreError> {
        self.count_merchant(merchant).await
    }

    async fn still_here(&self) -> Result<(), StoreError> {
        // A sandbox's clock is its row: gone with it.
        self.now().await.map(drop)
    }

    fn now_hint(&self) -> DateTime<Utc> {
        Clock::at_offset(self.offset_hint())
    }

    fn record_request(&self, capture: Capture) {
        let mut entry = capture.entry();
        // Kept as the memory and SQLite journals keep it.
        super::journal::headers::bound(&mut entry.headers);
        entry.replica.clone_from(&self.inner.replica);
        self.inner
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(self.view.sandbox, entry);
    }

    async fn requests_since(
        &self,
        after: u64,
        limit: usize,
    ) -> Result<Vec<JournalEntry>, StoreError> {
        self.read_since(after, limit, Taking::Newest).await
    }

    async fn requests_after(
        &self,
        after: u64,
        limit: usize,
    ) -> Result<Vec<JournalEntry>, StoreError> {
        self.read_since(after, limit, Taking::Oldest).await
    }

    async fn request(&self, seq: u64) -> Result<Option<JournalEntry>, StoreError> {
        self.read_one(seq).await
    }

    async fn journal_stats(&self) -> Result<JournalStats, StoreError> {
        self.read_stats().await
    }

    async fn reset(&self) -> Result<(), StoreError> {
        // Numbered on across a reset: entries dropped unwritten keep their
        // numbers taken.
        let store = self.clone();
        if !self.is_root() {
            return detached(async move { store.reset_sandbox().await }).await;
        }
        detached(async move { store.clear_journal(Clear::Reset).await })
            .await
            .map(drop)
    }

    async fn settings(&self) -> Result<Option<Settings>, StoreError> {
        self.read_settings().await
    }

    async fn save_settings(&self, settings: &Settings) -> Result<(), StoreError> {
        self.write_settings(settings).await
    }

    async fn erase(&self) -> Result<(), StoreError> {
        // Refused while another replica is live; numbered on.
        self.erase_refusing().await
    }

    /// The database answers and still holds the store's tables.
    async fn check(&self) -> Result<(), StoreError> {
        let checked = bounded(async {
            let client = self.client().await?;
            client
                .query_opt("SELECT 1 FROM mock_clock WHERE id = 1", &[])
                .await
                .map_err(|e| store_error(&e))?;
            Ok(())
        })
        .await;
        if let Err(e) = &checked {
            self.inner.noted(e);
        }
        checked
    }
}
