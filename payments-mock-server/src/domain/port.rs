//! The domain's port to where state is kept (CONTRACT section 15): one
//! boundary, [`Store`], with the domain's verbs and the types they take and
//! return. The stores (`crate::store`: memory, SQLite, PostgreSQL)
//! implement it; nothing here knows them.
//!
//! The rules (validation, the state machine, which refusal comes first)
//! live beside it, in `lifecycle.rs`; a store only keeps,
//! and promises that each verb is atomic. Exactly-once comes from that
//! promise: two initiates of one reference cannot both create
//! ([`Store::create`]), two confirms of one transaction cannot both move it
//! ([`Store::confirm`]), two payer submits cannot both decide
//! ([`Store::decide`]). Each store keeps it its own way: the memory store
//! under one lock, SQLite by one writer thread, PostgreSQL by conditional
//! statements (`INSERT … ON CONFLICT`, `UPDATE … WHERE … RETURNING`), so
//! that any number of replicas on one database keep it too.
//!
//! # Implementing a store
//!
//! A store over a `HashMap` shows what each verb owes (the real memory
//! store adds indexes and the journal, nothing else):
//!
//! ```text
//! create(new, initial, expiry):
//!     lock; if map has (new.merchant, new.reference) → Err(Duplicate(id));
//!     now = clock.now(); id = ids.at(now);      // stamped under the lock:
//!     insert Record { id, created_at: now, expires_at: now + expiry, .. }
//! confirm(id, now, confirmation):
//!     lock; record unconfirmed and now < expires_at → set it, Moved;
//!     else Unmoved(record) (the caller says why), or Missing
//! ```
//!
//! Every failure of the database behind a store (unreachable, a broken
//! connection, a statement that timed out) is a [`StoreError`]: the HTTP
//! layer answers it 503 `STORE_UNAVAILABLE`, and the next request tries
//! again, so serving resumes by itself when the database is back.

use std::future::Future;
use std::time::Duration;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::domain::catalog::InitialState;
use crate::domain::clock::NoRoom;
use crate::domain::journal::{Capture, JournalEntry};
use crate::domain::settings::Settings;
use crate::domain::transaction::{Confirmation, NewTransaction, PayerAction, PaymentPage, Record};

/// How long a store may take over one verb before the request is answered
/// 503 `STORE_UNAVAILABLE` (CONTRACT section 15: within 5 s, no hang).
pub const STORE_TIMEOUT: Duration = Duration::from_secs(4);

/// The database behind a store failed: unreachable, a broken connection, a
/// timeout, an error it answered; or a failure that waiting will not mend
/// ([`StoreError::lost`], [`StoreError::unreadable`]). Never carries a
/// password.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{reason}", kind.lead())]
pub struct StoreError {
    reason: String,
    kind: StoreErrorKind,
}

/// What kind of failure a [`StoreError`] is: what the HTTP layer answers
/// and whether a retry can help.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreErrorKind {
    /// The database failed or could not be reached: 503
    /// `STORE_UNAVAILABLE`, and a retry may succeed once it is back.
    Unavailable,
    /// The sandbox the request was served in was removed: 404
    /// `SANDBOX_NOT_FOUND`.
    SandboxGone,
    /// The store can no longer keep changes until the mock is restarted
    /// (its SQLite file was removed or replaced): 503 `STORE_UNAVAILABLE`,
    /// and no retry helps.
    Lost,
    /// The store holds a row it cannot read (changed outside the mock): a
    /// lasting fault, not an outage, 500 `INTERNAL_ERROR`.
    Unreadable,
}

impl StoreErrorKind {
    fn lead(self) -> &'static str {
        match self {
            Self::Unavailable | Self::SandboxGone => "the store is unavailable: ",
            Self::Lost => "the store can no longer keep changes: ",
            Self::Unreadable => "the store holds a row it cannot read: ",
        }
    }
}

impl StoreError {
    /// A failure, described without secrets.
    pub fn new(reason: impl Into<String>) -> Self {
        Self {
            reason: reason.into(),
            kind: StoreErrorKind::Unavailable,
        }
    }

    /// Not a failure of the database: the sandbox the request was served
    /// in was removed (by a `DELETE`, its time to live, or another
    /// replica) while it ran; answered as every request in a removed
    /// sandbox is, 404 `SANDBOX_NOT_FOUND`, never 503.
    pub fn sandbox_gone() -> Self {
        Self {
            reason: "the sandbox was removed".to_owned(),
            kind: StoreErrorKind::SandboxGone,
        }
    }

    /// The store can keep no change until the mock is restarted: `reason`
    /// says why and what to do (its file was removed or replaced).
    pub fn lost(reason: impl Into<String>) -> Self {
        Self {
            reason: reason.into(),
            kind: StoreErrorKind::Lost,
        }
    }

    /// The store holds a row it cannot read: `reason` says which.
    pub fn unreadable(reason: impl Into<String>) -> Self {
        Self {
            reason: reason.into(),
            kind: StoreErrorKind::Unreadable,
        }
    }

    /// Whether this is [`StoreError::sandbox_gone`].
    pub fn is_sandbox_gone(&self) -> bool {
        self.kind == StoreErrorKind::SandboxGone
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> StoreErrorKind {
        self.kind
    }

    /// What failed.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

/// Why an initiate stored nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InsertRefusal {
    /// The merchant already used the reference for this transaction.
    Duplicate(Uuid),
    /// The store holds as many transactions as it can index (the memory
    /// store: 2^32 − 1; memory runs out long before).
    Full,
}

/// Why a reference look-up found nothing single.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LookupError {
    /// No such reference in scope.
    NotFound,
    /// Several merchants hold it and no scope was given.
    Ambiguous,
}

/// What [`Store::confirm`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transition {
    /// The confirmation is recorded: the transaction after it.
    Moved(Record),
    /// Not recorded: the transaction had a confirmation already, or had
    /// expired at the given instant. It is given as it is, so the caller can
    /// say which.
    Unmoved(Record),
    /// No such transaction (a reset came in between).
    Missing,
}

/// The virtual clock as a store keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockReading {
    /// Virtual now: real time plus the offset, milliseconds.
    pub now: DateTime<Utc>,
    /// The offset from real time, nanoseconds (never negative: the clock
    /// only moves forward, and a reset brings it back to 0).
    pub offset_nanos: i64,
}

/// The order of a [`PageQuery`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Oldest first (`GET /_mock/transactions`); `from` is the last id of
    /// the previous page.
    OldestFirst,
    /// Newest first (the console); `from` is the last id of the previous
    /// page.
    NewestFirst,
}

/// One page of transactions: where it starts, which way, and the filters a
/// store can apply itself. What it cannot (the status, derived from the
/// clock) is the `keep` closure of [`Store::page`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageQuery {
    /// Oldest or newest first.
    pub order: Order,
    /// Start after this id (in `order`); `None` starts at the first.
    pub from: Option<Uuid>,
    /// At most this many items.
    pub limit: usize,
    /// Only this merchant's.
    pub merchant: Option<Uuid>,
    /// Only references containing this text.
    pub reference_contains: Option<String>,
}

impl PageQuery {
    /// Everything, oldest first, `limit` at a time.
    pub fn oldest_first(from: Option<Uuid>, limit: usize) -> Self {
        Self {
            order: Order::OldestFirst,
            from,
            limit,
            merchant: None,
            reference_contains: None,
        }
    }

    /// Whether a record passes the filters a store applies itself (the
    /// memory store applies them here).
    pub fn matches(&self, record: &Record) -> bool {
        self.merchant.is_none_or(|m| m == record.fields.merchant_id)
            && self
                .reference_contains
                .as_deref()
                .is_none_or(|r| record.fields.reference_no.contains(r))
    }
}

/// A page of [`Store::page`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page<T> {
    /// The items, in the query's order.
    pub items: Vec<T>,
    /// Whether more matching transactions follow.
    pub more: bool,
}

/// The journal in brief.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct JournalStats {
    /// The `seq` of the newest entry ever recorded (0 before the first).
    pub last_seq: u64,
    /// How many entries are kept (at most 1,000).
    pub len: usize,
    /// The `seq` of the oldest entry kept (0 when none is): with `len`,
    /// whether entries above a position were dropped, without reading
    /// them.
    pub oldest_seq: u64,
}

/// The boundary between the rules and where state is kept.
///
/// Each verb is one atomic step of the domain; what a store must guarantee
/// is on each. A store maps every failure of its database to
/// [`StoreError`], and never answers before a change it reports is
/// committed (CONTRACT section 15, durability).
pub trait Store: Send + Sync + std::fmt::Debug + 'static {
    /// Virtual now: real time plus the kept clock offset, in milliseconds.
    /// Replicas of one database share the offset: an advance answered by
    /// one holds for the next request to any.
    fn now(&self) -> impl Future<Output = Result<DateTime<Utc>, StoreError>> + Send;

    /// The clock: now and the offset.
    fn clock(&self) -> impl Future<Output = Result<ClockReading, StoreError>> + Send;

    /// Moves the clock forward by `by` if it has room for all of it (the
    /// offset ends at `i64::MAX` nanoseconds, about 292 years), committed
    /// before it returns; otherwise moves nothing and says the offset it
    /// met ([`NoRoom`]: the HTTP control's 400 says the room left). The
    /// check and the add are one atomic step: of racing advances only one
    /// of which fits, one moves the clock. It never stops short of what
    /// was asked.
    fn advance_clock(
        &self,
        by: Duration,
    ) -> impl Future<Output = Result<Result<ClockReading, NoRoom>, StoreError>> + Send;

    /// Creates a transaction unless `new.merchant_id` already holds
    /// `new.reference_no`; then nothing changes and the refusal names the
    /// holder. The check and the insert are one atomic step.
    ///
    /// The store stamps it: a fresh transactionId from
    /// its clock's [`crate::domain::transaction::Ids`] and `createdAt` from the same
    /// reading of its clock, so ids sort like creation times; it expires
    /// `expiry` after that.
    fn create(
        &self,
        new: NewTransaction,
        initial: InitialState,
        expiry: Duration,
    ) -> impl Future<Output = Result<Result<Record, InsertRefusal>, StoreError>> + Send;

    /// Records the confirmation of transaction `id` if, and only if, it has
    /// none and has not expired at `now` (its status is `PENDING` or
    /// `INITIATED` then). Check and change are one atomic step: of many
    /// concurrent confirms, exactly one is [`Transition::Moved`]. A payment
    /// page in the confirmation is then found by its token.
    fn confirm(
        &self,
        id: Uuid,
        now: DateTime<Utc>,
        confirmation: Confirmation,
    ) -> impl Future<Output = Result<Transition, StoreError>> + Send;

    /// Stores a whole record as it is given (its id, times, confirmation
    /// and payment page): seeding a mock from a proxy recording. Refused,
    /// changing nothing, when its id or its merchant's reference is taken.
    fn seed(
        &self,
        record: Record,
    ) -> impl Future<Output = Result<Result<(), InsertRefusal>, StoreError>> + Send;

    /// The payer's submit on a payment page at `now`: if the page is open
    /// (no decision, `now` before its deadline) it records `action` as the
    /// decision; otherwise it counts a later submit. One atomic step: of
    /// concurrent submits exactly one decides. `scope` limits a look-up by
    /// transaction to one merchant.
    fn decide(
        &self,
        key: PaymentPageKey<'_>,
        scope: Option<Uuid>,
        action: PayerAction,
        now: DateTime<Utc>,
    ) -> impl Future<Output = Result<Result<Decided, PayerRefusal>, StoreError>> + Send;

    /// `f` of the transaction `id`, if it is in `scope`.
    fn with_id<T: Send>(
        &self,
        id: Uuid,
        scope: Option<Uuid>,
        f: impl FnOnce(&Record) -> T + Send,
    ) -> impl Future<Output = Result<Option<T>, StoreError>> + Send;

    /// `f` of the transaction holding `reference_no`: within the merchant
    /// `scope`, or of the only merchant holding it
    /// ([`LookupError::Ambiguous`] when several do).
    fn with_reference<T: Send>(
        &self,
        reference_no: &str,
        scope: Option<Uuid>,
        f: impl FnOnce(&Record) -> T + Send,
    ) -> impl Future<Output = Result<Result<T, LookupError>, StoreError>> + Send;

    /// `f` of the transaction behind a payment page and of its page; `None`
    /// for an unknown key and for a transaction without a page.
    fn with_payment_page<T: Send>(
        &self,
        key: PaymentPageKey<'_>,
        f: impl FnOnce(&Record, &PaymentPage) -> T + Send,
    ) -> impl Future<Output = Result<Option<T>, StoreError>> + Send;

    /// One page of transactions in `query.order`, filtered by the query and
    /// by `keep`, mapped by `f`; `None` when `query.from` is not stored.
    fn page<T: Send>(
        &self,
        query: &PageQuery,
        keep: impl FnMut(&Record) -> bool + Send,
        f: impl FnMut(&Record) -> T + Send,
    ) -> impl Future<Output = Result<Option<Page<T>>, StoreError>> + Send;

    /// How many transactions are stored.
    fn count(&self) -> impl Future<Output = Result<usize, StoreError>> + Send;

    /// How many transactions `merchant` holds (`GET /_mock/health` with a
    /// merchant's key): one count, whatever their number (the databases:
    /// one `count(*)` on the `(sandbox, merchant, reference)` index).
    fn count_of_merchant(
        &self,
        merchant: Uuid,
    ) -> impl Future<Output = Result<usize, StoreError>> + Send;

    /// [`StoreError::sandbox_gone`] when this store is a sandbox's that was
    /// removed (on any replica). A look-up that found nothing asks before
    /// it answers "not found": the sandbox's rows went with it, and its
    /// request is answered as every request in a removed sandbox is.
    fn still_here(&self) -> impl Future<Output = Result<(), StoreError>> + Send {
        async { Ok(()) }
    }

    /// Virtual now without asking the database: exact for the stores that
    /// keep the clock in the process; a PostgreSQL replica uses the offset
    /// it read last (the journal's arrival times, which need no round trip).
    fn now_hint(&self) -> DateTime<Utc>;

    /// Journals one `/api/` request (CONTRACT section 10), before its
    /// answer is sent. Never blocks and never fails the request: a database
    /// store writes the journal behind the answers, in batches (it reports
    /// no change of the service), and the reads below wait for it instead.
    fn record_request(&self, capture: Capture);

    /// The newest `limit` journal entries with a `seq` above `after`,
    /// oldest first, of every replica.
    ///
    /// Exact: a read that starts after an answer was sent, by this process
    /// or any running replica of the store, includes its request. A store
    /// whose replicas write behind the answers waits for their writes here
    /// (at most 1 s for a replica that does not write: one killed a moment
    /// ago). `seq` only grows: an entry recorded later, on any replica, is
    /// numbered higher than every entry a read has returned, so a reader
    /// that saw up to `n` misses nothing by asking for what came after `n`.
    fn requests_since(
        &self,
        after: u64,
        limit: usize,
    ) -> impl Future<Output = Result<Vec<JournalEntry>, StoreError>> + Send;

    /// The oldest `limit` journal entries with a `seq` above `after`,
    /// oldest first, of every replica (exact as [`Store::requests_since`]
    /// is): a page of what came after a position, which reads only those.
    fn requests_after(
        &self,
        after: u64,
        limit: usize,
    ) -> impl Future<Output = Result<Vec<JournalEntry>, StoreError>> + Send;

    /// The journal entry numbered `seq`, while it is kept (exact as
    /// [`Store::requests_since`] is).
    fn request(
        &self,
        seq: u64,
    ) -> impl Future<Output = Result<Option<JournalEntry>, StoreError>> + Send;

    /// The journal in brief (exact as [`Store::requests_since`] is).
    fn journal_stats(&self) -> impl Future<Output = Result<JournalStats, StoreError>> + Send;

    /// `POST /_mock/reset`: forgets every transaction and the journal (its
    /// numbering goes on), and the clock goes back to real time, for every
    /// replica; the settings stay. Committed before it returns.
    ///
    /// No journal entry of a request answered before the reset was asked
    /// for appears afterwards, on any replica, ever (not even one a replica
    /// had not written yet); one answered after the reset returned does.
    fn reset(&self) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// The settings the store holds, if any were written.
    fn settings(&self) -> impl Future<Output = Result<Option<Settings>, StoreError>> + Send;

    /// Writes the settings unless some are stored: of replicas starting
    /// together on an empty database, the first one's stay, and every other
    /// reads them back and compares (the first start on an empty store,
    /// `--fresh` after [`Store::erase`]).
    fn save_settings(
        &self,
        settings: &Settings,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// `--fresh`: a reset that also forgets the sandboxes and the settings.
    /// The memory and SQLite stores number the journal from 1 again; the
    /// PostgreSQL store numbers on (`seq` only grows across the service),
    /// and refuses while another replica is live.
    fn erase(&self) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Whether the database answers (`/_mock/health`).
    fn check(&self) -> impl Future<Output = Result<(), StoreError>> + Send;
}

/// How a payment page is named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaymentPageKey<'a> {
    /// By its token, as the payer's browser does (`/pay/<token>`).
    Token(&'a str),
    /// By the transaction's id, as the admin control does
    /// (`POST /_mock/transactions/{id}/payer`).
    Transaction(&'a str),
}

/// Why no decision could even be looked at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PayerRefusal {
    /// No such token or transaction.
    NotFound,
    /// The transaction exists but has no payment page: not a redirect
    /// product, or not confirmed yet.
    NoPaymentPage,
}

/// The result of a payer's submit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decided {
    /// The transaction after the submit.
    pub record: Record,
    /// `true` when this submit decided; `false` when the payer had already
    /// decided or the window had passed (nothing changed).
    pub decided_now: bool,
}
