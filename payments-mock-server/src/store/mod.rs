//! Where the mock keeps its state (CONTRACT section 15): the
//! implementations of the domain's port, [`crate::domain::port::Store`].
//! The rules live in the domain; a store only keeps, and keeps each verb
//! atomic.
//!
//! - `memory.rs` — [`MemoryStore`]: in the process (the default), with
//!   `memory_payer.rs` (the payer's decision under its lock), its
//!   containers (`records.rs`: chunked records and shared codes;
//!   `index.rs`: sharded position indexes) and `journal.rs` (the journal
//!   ring it keeps in memory).
//! - `sqlite/` — `SqliteStore` (feature `sqlite`): one file, one owning
//!   process, a writer thread that groups commits.
//! - `postgres/` — `PostgresStore` (feature `postgres`): one database
//!   shared by replicas.
//! - `sql.rs` — the row form of a transaction, shared by the two databases.
//! - `spec.rs` — [`StoreSpec`], what `--store` names.
//! - `any.rs` — [`AnyStore`], the store a server runs on, whichever it is.

mod any;
pub(crate) mod index;
pub(crate) mod journal;
mod memory;
mod memory_payer;
#[cfg(test)]
mod memory_reset_tests;
#[cfg(feature = "postgres")]
mod postgres;
pub(crate) mod records;
mod sandboxes;
mod spec;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod sql;
#[cfg(feature = "sqlite")]
mod sqlite;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod stored_settings;
#[cfg(test)]
pub(crate) mod test_support;

use chrono::{DateTime, Utc};
use uuid::Uuid;

// What every store implements and returns: the domain's port, imported
// once here for the stores below (not re-exported).
#[allow(unused_imports)]
use crate::domain::port::{
    ClockReading, Decided, InsertRefusal, JournalStats, LookupError, Order, Page, PageQuery,
    PayerRefusal, PaymentPageKey, STORE_TIMEOUT, Store, StoreError, Transition,
};
#[allow(unused_imports)]
use crate::domain::settings::Settings;
#[allow(unused_imports)]
use crate::domain::transaction::{
    ConfirmResult, Confirmation, NewTransaction, PayerAction, PaymentPage, Record, Status,
};

pub use any::AnyStore;

/// A sandbox as a store that keeps sandboxes writes it down (CONTRACT
/// section 19): what `GET /_mock/sandboxes` shows of it. Times are wall
/// clock (a sandbox's time to live is real time).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KeptSandbox {
    pub id: Uuid,
    pub owner: Option<Uuid>,
    pub label: Option<String>,
    pub created_at: DateTime<Utc>,
    pub ttl: std::time::Duration,
    pub expires_at: DateTime<Utc>,
}
pub use memory::MemoryStore;
#[cfg(feature = "postgres")]
#[cfg_attr(docsrs, doc(cfg(feature = "postgres")))]
pub use postgres::PostgresStore;
pub use spec::{Durability, PostgresUrl, StoreSpec};
#[cfg(feature = "sqlite")]
#[cfg_attr(docsrs, doc(cfg(feature = "sqlite")))]
pub use sqlite::SqliteStore;
