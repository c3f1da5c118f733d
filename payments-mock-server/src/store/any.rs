//! [`AnyStore`]: the store a server runs on, whichever `--store` chose. An
//! enum rather than a boxed trait object, so the memory store's calls stay
//! direct (its futures are ready at once and inline into the handler).

use std::time::Duration;

use chrono::{DateTime, Utc};
use uuid::Uuid;

#[cfg(feature = "postgres")]
use super::PostgresStore;
#[cfg(feature = "sqlite")]
use super::SqliteStore;
use super::{
    ClockReading, Confirmation, Decided, Durability, InsertRefusal, JournalStats, LookupError,
    MemoryStore, NewTransaction, Page, PageQuery, PayerAction, PayerRefusal, PaymentPage,
    PaymentPageKey, Settings, Store, StoreError, StoreSpec, Transition,
};
use crate::domain::catalog::InitialState;
use crate::domain::clock::NoRoom;
use crate::domain::journal::{Capture, Fence, JournalEntry};
use crate::domain::transaction::Record;
use crate::error::Error;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
use crate::metrics::{self, StoreOp};

/// One of the three stores.
#[derive(Debug)]
#[non_exhaustive]
// The memory store stays inline (the hot path reads it without a pointer
// to follow); beside the SQLite and PostgreSQL stores (`Arc`s) clippy
// counts that as a size difference.
#[allow(clippy::large_enum_variant)]
pub enum AnyStore {
    /// In the process.
    Memory(MemoryStore),
    /// A SQLite file (feature `sqlite`).
    #[cfg(feature = "sqlite")]
    Sqlite(SqliteStore),
    /// A PostgreSQL database shared by replicas (feature `postgres`).
    #[cfg(feature = "postgres")]
    Postgres(PostgresStore),
}

/// `$call` on whichever store this is, awaited. The SQLite and PostgreSQL
/// futures are boxed: they wait on a thread or a database, and their state
/// (several KiB) would otherwise make every request's future that large,
/// to be moved at each level above (measured: 8k instructions of `memcpy`
/// per status read, BENCHMARKS.md, "The hot paths at the framework's
/// limit").
///
/// The SQLite and PostgreSQL calls are timed and their failures counted as
/// `$op` (`GET /metrics`, feature `metrics`); the memory store's are too
/// cheap to time.
macro_rules! awaited {
    ($self:ident, $op:ident, $store:ident => $call:expr) => {
        match $self {
            AnyStore::Memory($store) => $call.await,
            #[cfg(feature = "sqlite")]
            AnyStore::Sqlite($store) => {
                let started = metrics::store_started();
                let result = Box::pin($call).await;
                $store
                    .counts()
                    .record(StoreOp::$op, started, result.is_err());
                result
            }
            #[cfg(feature = "postgres")]
            AnyStore::Postgres($store) => {
                let started = metrics::store_started();
                let result = Box::pin($call).await;
                $store
                    .counts()
                    .record(StoreOp::$op, started, result.is_err());
                result
            }
        }
    };
}

/// `$body` on whichever store this is.
macro_rules! each {
    ($self:ident, $store:ident => $body:expr) => {
        match $self {
            AnyStore::Memory($store) => $body,
            #[cfg(feature = "sqlite")]
            AnyStore::Sqlite($store) => $body,
            #[cfg(feature = "postgres")]
            AnyStore::Postgres($store) => $body,
        }
    };
}

impl AnyStore {
    /// [`Store::advance_clock`]: moves the clock forward by `by` if it has
    /// room for all of it, the check and the add one atomic step of the
    /// store; otherwise moves nothing and says the offset it met
    /// ([`NoRoom`]). The clock controls use it.
    ///
    /// # Errors
    ///
    /// [`StoreError`]: the store failed.
    pub async fn advance_clock_within(
        &self,
        by: Duration,
    ) -> Result<Result<ClockReading, NoRoom>, StoreError> {
        self.advance_clock(by).await
    }

    /// Journals `capture` ([`Store::record_request`]) and calls `admitted`
    /// as its entry is admitted: for the memory and SQLite stores under
    /// the journal's lock, where a reset's fence is (`Journal::fence_with`);
    /// for PostgreSQL once it is pending, to be written.
    pub(crate) fn record_admitted(&self, capture: Capture, admitted: impl FnOnce()) {
        match self {
            AnyStore::Memory(s) => {
                s.journal().record_with(capture, admitted);
            }
            #[cfg(feature = "sqlite")]
            AnyStore::Sqlite(s) => {
                s.journal().record_with(capture, admitted);
            }
            #[cfg(feature = "postgres")]
            AnyStore::Postgres(s) => {
                s.record_request(capture);
                admitted();
            }
        }
    }

    /// Tells `fence` whenever a reset forgets this store's journal, at the
    /// moment it does; whether the store can (PostgreSQL cannot: its
    /// replicas forget in the database, each process later).
    pub(crate) fn fence_with(&self, fence: std::sync::Arc<dyn Fence>) -> bool {
        match self {
            AnyStore::Memory(s) => s.journal().fence_with(fence),
            #[cfg(feature = "sqlite")]
            AnyStore::Sqlite(s) => s.journal().fence_with(fence),
            #[cfg(feature = "postgres")]
            AnyStore::Postgres(_) => {
                let _ = fence;
                false
            }
        }
    }

    /// Opens the store `spec` names; `replica` names this process in the
    /// journal.
    ///
    /// # Errors
    ///
    /// As [`SqliteStore::open`] and [`PostgresStore::open`].
    pub async fn open(
        spec: &StoreSpec,
        durability: Durability,
        replica: &str,
    ) -> Result<Self, Error> {
        #[cfg(not(feature = "sqlite"))]
        let _ = durability;
        Ok(match spec {
            StoreSpec::Memory => Self::Memory(MemoryStore::new(replica)),
            #[cfg(feature = "sqlite")]
            StoreSpec::Sqlite(path) => {
                let (path, replica) = (path.clone(), replica.to_owned());
                // Opening reads the file (with a million transactions: the
                // count and the journal) off the runtime's threads.
                let opened = tokio::task::spawn_blocking(move || {
                    SqliteStore::open(&path, durability, &replica)
                })
                .await
                .map_err(|e| Error::StoreOpen {
                    store: spec.to_string(),
                    reason: format!("opening stopped: {e}"),
                })?;
                Self::Sqlite(opened?)
            }
            #[cfg(feature = "postgres")]
            StoreSpec::Postgres(url) => Self::Postgres(PostgresStore::open(url, replica).await?),
            #[allow(unreachable_patterns)]
            other => {
                return Err(Error::StoreSpec(format!(
                    "{other} needs a payments-mock-server built with the feature {}",
                    if matches!(other, StoreSpec::Sqlite(_)) {
                        "sqlite"
                    } else {
                        "postgres"
                    }
                )));
            }
        })
    }

    /// The counts of its operations for this server's `GET /metrics`: the
    /// SQLite and PostgreSQL stores' own (each store its own, so servers in
    /// one process never mix them); none for the memory store.
    pub(crate) fn counts(&self) -> Option<crate::metrics::StoreCounts> {
        match self {
            Self::Memory(_) => None,
            #[cfg(feature = "sqlite")]
            Self::Sqlite(s) => Some(s.counts().clone()),
            #[cfg(feature = "postgres")]
            Self::Postgres(s) => Some(s.counts().clone()),
        }
    }

    /// Whether replicas share this store (PostgreSQL).
    pub fn is_shared(&self) -> bool {
        #[cfg(feature = "postgres")]
        if matches!(self, Self::Postgres(_)) {
            return true;
        }
        false
    }

    /// `--fresh` before serving: [`Store::erase`]. On PostgreSQL it is
    /// refused while other replicas serve the database, and what it
    /// deleted is logged.
    ///
    /// # Errors
    ///
    /// [`Error::FreshWhileServed`] (exit 2); [`Error::StoreOpen`] when the
    /// store fails.
    pub(crate) async fn fresh(&self) -> Result<(), Error> {
        #[cfg(feature = "postgres")]
        if let Self::Postgres(s) = self {
            // A unit without the `metrics` feature.
            #[allow(clippy::let_unit_value)]
            let started = metrics::store_started();
            let result = s.fresh().await;
            s.counts().record(StoreOp::Erase, started, result.is_err());
            return result;
        }
        self.erase().await.map_err(|e| Error::StoreOpen {
            store: self.shown(),
            reason: e.reason().to_owned(),
        })
    }

    /// The store as the console and the log name it: `memory`,
    /// `sqlite:PATH`, or the PostgreSQL URL with its password as `***`.
    pub fn shown(&self) -> String {
        match self {
            Self::Memory(_) => "memory".to_owned(),
            #[cfg(feature = "sqlite")]
            Self::Sqlite(s) => s.shown().to_owned(),
            #[cfg(feature = "postgres")]
            Self::Postgres(s) => s.shown().to_owned(),
        }
    }

    /// The memory store, when it is one (white-box tests and benchmarks
    /// preload it directly).
    pub fn as_memory(&self) -> Option<&MemoryStore> {
        match self {
            Self::Memory(s) => Some(s),
            #[allow(unreachable_patterns)]
            _ => None,
        }
    }
}

impl Store for AnyStore {
    async fn now(&self) -> Result<DateTime<Utc>, StoreError> {
        awaited!(self, Now, s => s.now())
    }

    async fn clock(&self) -> Result<ClockReading, StoreError> {
        awaited!(self, Clock, s => s.clock())
    }

    async fn advance_clock(
        &self,
        by: Duration,
    ) -> Result<Result<ClockReading, NoRoom>, StoreError> {
        awaited!(self, AdvanceClock, s => s.advance_clock(by))
    }

    async fn create(
        &self,
        new: NewTransaction,
        initial: InitialState,
        expiry: Duration,
    ) -> Result<Result<Record, InsertRefusal>, StoreError> {
        awaited!(self, Create, s => s.create(new, initial, expiry))
    }

    async fn confirm(
        &self,
        id: Uuid,
        now: DateTime<Utc>,
        confirmation: Confirmation,
    ) -> Result<Transition, StoreError> {
        awaited!(self, Confirm, s => s.confirm(id, now, confirmation))
    }

    async fn seed(&self, record: Record) -> Result<Result<(), InsertRefusal>, StoreError> {
        awaited!(self, Seed, s => s.seed(record))
    }

    async fn decide(
        &self,
        key: PaymentPageKey<'_>,
        scope: Option<Uuid>,
        action: PayerAction,
        now: DateTime<Utc>,
    ) -> Result<Result<Decided, PayerRefusal>, StoreError> {
        awaited!(self, Decide, s => s.decide(key, scope, action, now))
    }

    async fn with_id<T: Send>(
        &self,
        id: Uuid,
        scope: Option<Uuid>,
        f: impl FnOnce(&Record) -> T + Send,
    ) -> Result<Option<T>, StoreError> {
        awaited!(self, WithId, s => s.with_id(id, scope, f))
    }

    async fn with_reference<T: Send>(
        &self,
        reference_no: &str,
        scope: Option<Uuid>,
        f: impl FnOnce(&Record) -> T + Send,
    ) -> Result<Result<T, LookupError>, StoreError> {
        awaited!(self, WithReference, s => s.with_reference(reference_no, scope, f))
    }

    async fn with_payment_page<T: Send>(
        &self,
        key: PaymentPageKey<'_>,
        f: impl FnOnce(&Record, &PaymentPage) -> T + Send,
    ) -> Result<Option<T>, StoreError> {
        awaited!(self, WithPaymentPage, s => s.with_payment_page(key, f))
    }

    async fn page<T: Send>(
        &self,
        query: &PageQuery,
        keep: impl FnMut(&Record) -> bool + Send,
        f: impl FnMut(&Record) -> T + Send,
    ) -> Result<Option<Page<T>>, StoreError> {
        awaited!(self, Page, s => s.page(query, keep, f))
    }

    async fn count(&self) -> Result<usize, StoreError> {
        awaited!(self, Count, s => s.count())
    }

    async fn count_of_merchant(&self, merchant: Uuid) -> Result<usize, StoreError> {
        awaited!(self, Count, s => s.count_of_merchant(merchant))
    }

    async fn still_here(&self) -> Result<(), StoreError> {
        match self {
            AnyStore::Memory(s) => s.still_here().await,
            #[cfg(feature = "sqlite")]
            AnyStore::Sqlite(s) => s.still_here().await,
            #[cfg(feature = "postgres")]
            AnyStore::Postgres(s) => Box::pin(s.still_here()).await,
        }
    }

    fn now_hint(&self) -> DateTime<Utc> {
        each!(self, s => s.now_hint())
    }

    fn record_request(&self, capture: Capture) {
        each!(self, s => s.record_request(capture));
    }

    async fn requests_since(
        &self,
        after: u64,
        limit: usize,
    ) -> Result<Vec<JournalEntry>, StoreError> {
        awaited!(self, RequestsSince, s => s.requests_since(after, limit))
    }

    async fn requests_after(
        &self,
        after: u64,
        limit: usize,
    ) -> Result<Vec<JournalEntry>, StoreError> {
        awaited!(self, RequestsAfter, s => s.requests_after(after, limit))
    }

    async fn request(&self, seq: u64) -> Result<Option<JournalEntry>, StoreError> {
        awaited!(self, Request, s => s.request(seq))
    }

    async fn journal_stats(&self) -> Result<JournalStats, StoreError> {
        awaited!(self, JournalStats, s => s.journal_stats())
    }

    async fn reset(&self) -> Result<(), StoreError> {
        awaited!(self, Reset, s => s.reset())
    }

    async fn settings(&self) -> Result<Option<Settings>, StoreError> {
        awaited!(self, Settings, s => s.settings())
    }

    async fn save_settings(&self, settings: &Settings) -> Result<(), StoreError> {
        awaited!(self, SaveSettings, s => s.save_settings(settings))
    }

    async fn erase(&self) -> Result<(), StoreError> {
        awaited!(self, Erase, s => s.erase())
    }

    async fn check(&self) -> Result<(), StoreError> {
        awaited!(self, Check, s => s.check())
    }
}
