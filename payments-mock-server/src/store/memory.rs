//! The memory store: every transaction, the clock and the journal in this
//! process, gone when it ends (the default, `--store memory`).
//!
//! Each verb is atomic by one lock:
//!
//! * create checks `(merchantId, referenceNo)`, stamps the id and the
//!   creation time and inserts under one write lock, so two creates of the
//!   same pair cannot both see "absent", and positions, ids and creation
//!   times all follow one order;
//! * confirm and decide check and change under one write lock;
//! * reads take the read lock and never write: expiry and settlement are
//!   derived from the stored facts and the clock at read time
//!   ([`Record::view`]), so no background task and no read changes anything.
//!
//! Reads hand `f` a borrowed record under the read lock, so a status read
//! copies nothing out of the store.

use std::sync::{Mutex, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::journal::Journal;
use super::{
    ClockReading, Confirmation, InsertRefusal, JournalStats, LookupError, NewTransaction, Order,
    Page, PageQuery, PayerAction, PaymentPage, Settings, Store, StoreError, Transition,
};
use crate::domain::catalog::InitialState;
use crate::domain::clock::{Clock, NoRoom};
use crate::domain::journal::{CAPACITY, Capture, JournalEntry};
use crate::domain::port::{Decided, PayerRefusal, PaymentPageKey};
use crate::domain::transaction::{ConfirmResult, Fields, Ids, RareFields, Record};
use crate::store::index::Index;
use crate::store::records::{Interner, Records};

#[derive(Debug, Default)]
pub(super) struct Inner {
    pub(super) records: Records,
    /// transactionId → position.
    pub(super) by_id: Index,
    /// referenceNo → position, one entry per merchant holding it.
    by_reference: Index,
    /// Payment page token → position (confirmed redirect transactions).
    pub(super) by_token: Index,
    codes: Interner,
    /// The sandbox this store is was removed: nothing more is written
    /// (set under the write lock, so a change checked under it either
    /// came before the removal or is refused).
    gone: bool,
}

impl Inner {
    pub(super) fn position_of_id(&self, id: Uuid) -> Option<usize> {
        let records = &self.records;
        self.by_id.find(self.by_id.hash(&id), |p| {
            records.get(p).is_some_and(|r| r.id == id)
        })
    }

    /// The position of the record of `reference_no` that `owner` accepts.
    fn position_of_reference(
        &self,
        reference_no: &str,
        mut owner: impl FnMut(Uuid) -> bool,
    ) -> Option<usize> {
        let records = &self.records;
        self.by_reference
            .find(self.by_reference.hash(reference_no), |p| {
                records.get(p).is_some_and(|r| {
                    &*r.fields.reference_no == reference_no && owner(r.fields.merchant_id)
                })
            })
    }

    fn pack(&mut self, f: NewTransaction) -> Fields {
        let boxed = |s: Option<String>| s.map(String::into_boxed_str);
        let rare = RareFields {
            description: boxed(f.description),
            device_id: boxed(f.device_id),
            return_url: boxed(f.return_url),
            extra_properties: boxed(f.extra_properties),
        };
        Fields {
            merchant_id: f.merchant_id,
            reference_no: f.reference_no.into_boxed_str(),
            amount_minor: f.amount_minor,
            currency_code: self.codes.intern(f.currency_code),
            currency_exponent: f.currency_exponent,
            product_code: self.codes.intern(f.product_code),
            quantity: f.quantity,
            country_code: f.country_code.map(|c| self.codes.intern(c)),
            store_id: self.codes.intern(f.store_id),
            payer_id: boxed(f.payer_id),
            rare: (rare != RareFields::default()).then(|| std::sync::Arc::new(rare)),
        }
    }

    /// Check and insert; `times` gives `(id, created_at, expires_at)` and
    /// is called only once the reference is known to be free.
    fn insert(
        &mut self,
        fields: NewTransaction,
        initial: InitialState,
        times: impl FnOnce() -> (Uuid, DateTime<Utc>, DateTime<Utc>),
    ) -> Result<Record, InsertRefusal> {
        let merchant = fields.merchant_id;
        if let Some(existing) = self.position_of_reference(&fields.reference_no, |m| m == merchant)
        {
            let id = self.records.get(existing).map(|r| r.id);
            return Err(id.map_or(InsertRefusal::Full, InsertRefusal::Duplicate));
        }
        let position = u32::try_from(self.records.len)
            .ok()
            .filter(|p| *p < u32::MAX)
            .ok_or(InsertRefusal::Full)?;
        let (id, created_at, expires_at) = times();
        let record = Record {
            id,
            fields: self.pack(fields),
            initial,
            created_at,
            expires_at,
            confirmation: None,
        };
        let by_reference = self.by_reference.hash(&*record.fields.reference_no);
        self.by_reference.insert(by_reference, position);
        let by_id = self.by_id.hash(&id);
        self.by_id.insert(by_id, position);
        self.records.push(record.clone());
        Ok(record)
    }
}

/// Transactions, clock and journal of one process.
#[derive(Debug, Default)]
pub struct MemoryStore {
    /// A std `RwLock`, not a Tokio one: critical sections are short, never
    /// await, and a single lock makes check-and-insert and
    /// check-and-transition atomic (the exactly-once guarantees above).
    /// Poisoning is ignored: no critical section can leave the maps half
    /// updated (each writes after all checks, with infallible inserts).
    pub(super) inner: RwLock<Inner>,
    pub(super) clock: Clock,
    /// The ids of this store's clock (one per clock: `Ids`).
    ids: Ids,
    journal: Journal,
    settings: Mutex<Option<Settings>>,
}

impl MemoryStore {
    /// An empty store whose journal names this process `replica`.
    pub fn new(replica: &str) -> Self {
        Self {
            journal: Journal::new(replica),
            ..Self::default()
        }
    }

    /// Its journal: where a request's entry is admitted.
    pub(crate) fn journal(&self) -> &Journal {
        &self.journal
    }

    pub(super) fn read(&self) -> RwLockReadGuard<'_, Inner> {
        self.inner.read().unwrap_or_else(PoisonError::into_inner)
    }

    pub(super) fn write(&self) -> RwLockWriteGuard<'_, Inner> {
        self.inner.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// The sandbox this store is was removed: a change that has not taken
    /// the lock yet is refused ([`StoreError::sandbox_gone`]), as the
    /// other stores refuse it.
    pub(crate) fn forget(&self) {
        self.write().gone = true;
    }

    /// A transaction with times the caller chose, for preloading a store
    /// and benchmarks; requests go through [`Store::create`], which stamps
    /// them in order.
    ///
    /// # Errors
    ///
    /// [`InsertRefusal`]: the reference is taken, or the store is full.
    pub fn initiate(
        &self,
        fields: NewTransaction,
        initial: InitialState,
        now: DateTime<Utc>,
        expires_at: DateTime<Utc>,
    ) -> Result<Record, InsertRefusal> {
        self.write()
            .insert(fields, initial, || (self.ids.at(now), now, expires_at))
    }

    /// The clock (virtual time), which this store keeps in the process.
    pub fn virtual_clock(&self) -> &Clock {
        &self.clock
    }

    /// How many transactions there are, without a future.
    pub fn len(&self) -> usize {
        self.read().records.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes the three indexes hold (for BENCHMARKS.md's memory breakdown).
    pub fn index_bytes(&self) -> usize {
        let inner = self.read();
        inner.by_id.allocation_size()
            + inner.by_reference.allocation_size()
            + inner.by_token.allocation_size()
    }

    fn reading(&self) -> ClockReading {
        ClockReading {
            now: self.clock.now(),
            offset_nanos: self.clock.offset_nanos(),
        }
    }

    /// Confirms `id` if it is unconfirmed and, with `now`, unexpired then;
    /// without (a seeded record's recorded confirmation), whenever.
    fn confirm_now(
        &self,
        id: Uuid,
        now: Option<DateTime<Utc>>,
        confirmation: Confirmation,
    ) -> Transition {
        let mut inner = self.write();
        if inner.gone {
            return Transition::Missing;
        }
        let Some(position) = inner.position_of_id(id) else {
            return Transition::Missing;
        };
        let Some(record) = inner.records.get_mut(position) else {
            return Transition::Missing;
        };
        // The expiry at the clock's now under the lock, no earlier than the
        // caller's: a confirm that read the clock before another one was
        // refused as expired cannot succeed after it.
        let expired = now.is_some_and(|now| now.max(self.clock.now()) >= record.expires_at);
        if record.confirmation.is_some() || expired {
            return Transition::Unmoved(record.clone());
        }
        let token = match &confirmation.result {
            ConfirmResult::AwaitingPayer(page) => Some(page.token.clone()),
            _ => None,
        };
        record.confirmation = Some(Box::new(confirmation));
        let moved = record.clone();
        if let Some(token) = token {
            let hash = inner.by_token.hash(&*token);
            // `position` came from the index, so it fits in u32.
            inner
                .by_token
                .insert(hash, u32::try_from(position).unwrap_or(u32::MAX));
        }
        Transition::Moved(moved)
    }

    fn page_now<T>(
        &self,
        query: &PageQuery,
        mut keep: impl FnMut(&Record) -> bool,
        mut f: impl FnMut(&Record) -> T,
    ) -> Option<Page<T>> {
        let inner = self.read();
        let mut items = Vec::with_capacity(query.limit.min(1024));
        let mut more = false;
        let mut take = |record: &Record| {
            if !query.matches(record) || !keep(record) {
                return true;
            }
            if items.len() == query.limit {
                more = true;
                return false;
            }
            items.push(f(record));
            true
        };
        // A page starts at `from` through the id index and maps only what
        // it returns, so it costs the same at 1M transactions as at 1k (a
        // filter that matches little scans on).
        match query.order {
            Order::OldestFirst => {
                let start = match query.from {
                    None => 0,
                    Some(id) => inner.position_of_id(id)? + 1,
                };
                for record in inner.records.from(start) {
                    if !take(record) {
                        break;
                    }
                }
            }
            Order::NewestFirst => {
                let end = match query.from {
                    None => inner.records.len,
                    Some(id) => inner.position_of_id(id)?,
                };
                for record in inner.records.before(end) {
                    if !take(record) {
                        break;
                    }
                }
            }
        }
        Some(Page { items, more })
    }

    fn lookup_reference<T>(
        &self,
        reference_no: &str,
        scope: Option<Uuid>,
        f: impl FnOnce(&Record) -> T,
    ) -> Result<T, LookupError> {
        let inner = self.read();
        let position = match scope {
            Some(m) => inner.position_of_reference(reference_no, |owner| owner == m),
            None => {
                let first = inner.position_of_reference(reference_no, |_| true);
                let owner = first
                    .and_then(|p| inner.records.get(p))
                    .map(|r| r.fields.merchant_id);
                if let Some(owner) = owner
                    && inner
                        .position_of_reference(reference_no, |other| other != owner)
                        .is_some()
                {
                    return Err(LookupError::Ambiguous);
                }
                first
            }
        };
        position
            .and_then(|p| inner.records.get(p))
            .map(f)
            .ok_or(LookupError::NotFound)
    }

    fn settings_lock(&self) -> std::sync::MutexGuard<'_, Option<Settings>> {
        self.settings.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Forgets transactions, the journal's entries (`erase`: and its
    /// numbering) and the clock offset, as one step: under the write lock
    /// every change takes, so no request's store work lands between them
    /// (none finds the transactions gone and the clock not yet back, or
    /// creates one whose entry the journal then forgets), and the journal
    /// forgets (its fence) at that same point, as the SQLite writer's one
    /// reset job does.
    fn clear(&self, erase: bool) {
        let mut inner = self.write();
        let forgotten = std::mem::take(&mut *inner);
        self.clock.reset();
        if erase {
            self.journal.erase();
        } else {
            self.journal.clear();
        }
        drop(inner);
        // A million records are freed outside the lock.
        drop(forgotten);
    }
}

impl Store for MemoryStore {
    async fn now(&self) -> Result<DateTime<Utc>, StoreError> {
        Ok(self.clock.now())
    }

    async fn clock(&self) -> Result<ClockReading, StoreError> {
        Ok(self.reading())
    }

    async fn advance_clock(
        &self,
        by: Duration,
    ) -> Result<Result<ClockReading, NoRoom>, StoreError> {
        Ok(self.clock.try_advance(by).map(|offset_nanos| ClockReading {
            now: Clock::at_offset(offset_nanos),
            offset_nanos,
        }))
    }

    async fn create(
        &self,
        new: NewTransaction,
        initial: InitialState,
        expiry: Duration,
    ) -> Result<Result<Record, InsertRefusal>, StoreError> {
        // The time is read and the id made under the write lock, so
        // positions, ids and `createdAt` follow one order.
        let mut inner = self.write();
        if inner.gone {
            return Err(StoreError::sandbox_gone());
        }
        Ok(inner.insert(new, initial, || {
            let now = self.clock.now();
            (
                self.ids.at(now),
                now,
                crate::domain::clock::add(now, expiry),
            )
        }))
    }

    async fn confirm(
        &self,
        id: Uuid,
        now: DateTime<Utc>,
        confirmation: Confirmation,
    ) -> Result<Transition, StoreError> {
        match self.confirm_now(id, Some(now), confirmation) {
            // Refused under the lock because its sandbox was removed.
            Transition::Missing if self.read().gone => Err(StoreError::sandbox_gone()),
            moved => Ok(moved),
        }
    }

    async fn seed(&self, record: Record) -> Result<Result<(), InsertRefusal>, StoreError> {
        let mut inner = self.write();
        if inner.position_of_id(record.id).is_some() {
            return Ok(Err(InsertRefusal::Duplicate(record.id)));
        }
        let Record {
            id,
            fields,
            initial,
            created_at,
            expires_at,
            confirmation,
        } = record;
        let rare = fields.rare.as_deref().cloned().unwrap_or_default();
        let new = NewTransaction {
            merchant_id: fields.merchant_id,
            reference_no: fields.reference_no.into(),
            description: rare.description.map(String::from),
            amount_minor: fields.amount_minor,
            currency_code: fields.currency_code.to_string(),
            currency_exponent: fields.currency_exponent,
            product_code: fields.product_code.to_string(),
            quantity: fields.quantity,
            country_code: fields.country_code.as_deref().map(str::to_owned),
            store_id: fields.store_id.to_string(),
            device_id: rare.device_id.map(String::from),
            payer_id: fields.payer_id.map(String::from),
            return_url: rare.return_url.map(String::from),
            extra_properties: rare.extra_properties.map(String::from),
        };
        let stored = inner.insert(new, initial, || (id, created_at, expires_at));
        let Ok(stored) = stored else {
            return Ok(stored.map(|_| ()));
        };
        if let Some(confirmation) = confirmation {
            drop(inner);
            let _ = self.confirm_now(stored.id, None, *confirmation);
        }
        Ok(Ok(()))
    }

    async fn decide(
        &self,
        key: PaymentPageKey<'_>,
        scope: Option<Uuid>,
        action: PayerAction,
        now: DateTime<Utc>,
    ) -> Result<Result<Decided, PayerRefusal>, StoreError> {
        Ok(self.decide_now(key, scope, action, now))
    }

    async fn with_id<T: Send>(
        &self,
        id: Uuid,
        scope: Option<Uuid>,
        f: impl FnOnce(&Record) -> T + Send,
    ) -> Result<Option<T>, StoreError> {
        let inner = self.read();
        if inner.gone {
            // Its sandbox was removed: as on the stores whose rows went
            // with it.
            return Err(StoreError::sandbox_gone());
        }
        let found = inner
            .position_of_id(id)
            .and_then(|p| inner.records.get(p))
            .filter(|r| scope.is_none_or(|m| m == r.fields.merchant_id));
        Ok(found.map(f))
    }

    async fn with_reference<T: Send>(
        &self,
        reference_no: &str,
        scope: Option<Uuid>,
        f: impl FnOnce(&Record) -> T + Send,
    ) -> Result<Result<T, LookupError>, StoreError> {
        self.still_here().await?;
        Ok(self.lookup_reference(reference_no, scope, f))
    }

    async fn with_payment_page<T: Send>(
        &self,
        key: PaymentPageKey<'_>,
        f: impl FnOnce(&Record, &PaymentPage) -> T + Send,
    ) -> Result<Option<T>, StoreError> {
        self.still_here().await?;
        Ok(self.payment_page_now(key, f))
    }

    async fn page<T: Send>(
        &self,
        query: &PageQuery,
        keep: impl FnMut(&Record) -> bool + Send,
        f: impl FnMut(&Record) -> T + Send,
    ) -> Result<Option<Page<T>>, StoreError> {
        Ok(self.page_now(query, keep, f))
    }

    async fn count(&self) -> Result<usize, StoreError> {
        Ok(self.len())
    }

    async fn count_of_merchant(&self, merchant: Uuid) -> Result<usize, StoreError> {
        let inner = self.read();
        let mine = inner.records.from(0);
        Ok(mine.filter(|r| r.fields.merchant_id == merchant).count())
    }

    async fn still_here(&self) -> Result<(), StoreError> {
        if self.read().gone {
            return Err(StoreError::sandbox_gone());
        }
        Ok(())
    }

    fn now_hint(&self) -> DateTime<Utc> {
        self.clock.now()
    }

    fn record_request(&self, capture: Capture) {
        self.journal.record(capture);
    }

    async fn requests_since(
        &self,
        after: u64,
        limit: usize,
    ) -> Result<Vec<JournalEntry>, StoreError> {
        Ok(self.journal.since(after, limit.min(CAPACITY)))
    }

    async fn requests_after(
        &self,
        after: u64,
        limit: usize,
    ) -> Result<Vec<JournalEntry>, StoreError> {
        Ok(self.journal.after(after, limit.min(CAPACITY)))
    }

    async fn request(&self, seq: u64) -> Result<Option<JournalEntry>, StoreError> {
        Ok(self.journal.get(seq))
    }

    async fn journal_stats(&self) -> Result<JournalStats, StoreError> {
        Ok(self.journal.stats())
    }

    async fn reset(&self) -> Result<(), StoreError> {
        self.clear(false);
        Ok(())
    }

    async fn settings(&self) -> Result<Option<Settings>, StoreError> {
        Ok(self.settings_lock().clone())
    }

    async fn save_settings(&self, settings: &Settings) -> Result<(), StoreError> {
        self.settings_lock().get_or_insert_with(|| settings.clone());
        Ok(())
    }

    async fn erase(&self) -> Result<(), StoreError> {
        self.clear(true);
        *self.settings_lock() = None;
        Ok(())
    }

    async fn check(&self) -> Result<(), StoreError> {
        Ok(())
    }
}
