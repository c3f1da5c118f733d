//! The transaction store: state and transitions (CONTRACT sections 4 and 6).
//!
//! Exactly-once holds by construction, not by retry loops:
//!
//! * initiate checks `(merchantId, referenceNo)` and inserts under one write
//!   lock, so two initiates of the same pair cannot both see "absent";
//! * confirm checks confirmability and records the outcome under one write
//!   lock, so two confirms cannot both see "not yet confirmed";
//! * reads take the read lock and never write: expiry and settlement are
//!   derived from the stored facts and the clock at read time
//!   ([`Record::view`]), so no background task and no read mutates anything.

use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

use chrono::{DateTime, Utc};
use rand::RngExt as _;
use uuid::Uuid;

use crate::domain::catalog::{Catalog, InitialState, Outcome, Product};
use crate::domain::clock::Clock;
pub use crate::domain::transaction::{
    ConfirmResult, Confirmation, Fields, NewTransaction, PayerAction, PaymentPage, RareFields,
    Record, Status,
};
use crate::store::index::Index;
use crate::store::records::{Interner, Records};
pub use payer::{Decided, PayerRefusal, PaymentPageKey};

pub(crate) mod index;
pub mod journal;
mod payer;
pub(crate) mod records;

/// Why a confirm was refused, in the order CONTRACT section 6 checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfirmRefusal {
    /// Unknown id, or another merchant's under a bound key.
    NotFound,
    /// `referenceNo` is not the transaction's.
    ReferenceMismatch,
    /// Expired.
    Expired,
    /// Already has a confirmation.
    AlreadyConfirmed,
    /// The product needs a code and none came.
    CodeRequired(String),
}

/// Why a reference look-up found nothing single.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LookupError {
    /// No such reference in scope.
    NotFound,
    /// Several merchants hold it and no scope was given.
    Ambiguous,
}

/// A confirm request after body validation.
#[derive(Debug, Clone)]
pub struct ConfirmAttempt<'a> {
    /// The transactionId text (unknown if not a UUID).
    pub transaction_id: &'a str,
    /// Must equal the stored reference.
    pub reference_no: &'a str,
    /// OTP.
    pub confirmation_code: Option<&'a str>,
    /// The merchant a bound key limits the caller to.
    pub scope: Option<Uuid>,
    /// The public base URL payment pages are announced under (redirect
    /// products, CONTRACT section 13).
    pub public_url: &'a url::Url,
}

#[derive(Debug, Default)]
struct Inner {
    records: Records,
    /// transactionId → position.
    by_id: Index,
    /// referenceNo → position, one entry per merchant holding it.
    by_reference: Index,
    /// Payment page token → position (confirmed redirect transactions).
    by_token: Index,
    codes: Interner,
}

impl Inner {
    fn position_of_id(&self, id: Uuid) -> Option<usize> {
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
            rare: (rare != RareFields::default()).then(|| Box::new(rare)),
        }
    }
}

/// Why an initiate stored nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InsertRefusal {
    /// The merchant already used the reference for this transaction.
    Duplicate(Uuid),
    /// The store holds as many transactions as it can index (2^32 − 1;
    /// memory runs out long before).
    Full,
}

/// All transactions of one server.
#[derive(Debug, Default)]
pub struct Store {
    /// A std `RwLock`, not a Tokio one: critical sections are short, never
    /// await, and a single lock makes check-and-insert and
    /// check-and-transition atomic (the exactly-once guarantees above).
    /// Poisoning is ignored: no critical section can leave the maps half
    /// updated (each writes after all checks, with infallible inserts).
    inner: RwLock<Inner>,
}

impl Store {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn read(&self) -> RwLockReadGuard<'_, Inner> {
        self.inner.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, Inner> {
        self.inner.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// Creates a transaction unless the merchant already used the
    /// reference; then refuses with the existing transaction's id. One
    /// write lock covers the check and the insert.
    ///
    /// The creation time is read from `clock` under that lock, like the v7
    /// id is made there, so `createdAt` follows the order of creation (and
    /// of the ids); the transaction expires `expiry` after it. This is what
    /// the initiate handler does.
    pub fn initiate_now(
        &self,
        fields: NewTransaction,
        initial: InitialState,
        clock: &Clock,
        expiry: Duration,
    ) -> Result<Record, InsertRefusal> {
        self.insert(fields, initial, || {
            let now = clock.now();
            (now, crate::domain::clock::add(now, expiry))
        })
    }

    /// [`Store::initiate_now`] with times the caller chose (preloading a
    /// store, benchmarks). Times read before the call are not ordered like
    /// the creations of concurrent callers: prefer `initiate_now`.
    pub fn initiate(
        &self,
        fields: NewTransaction,
        initial: InitialState,
        now: DateTime<Utc>,
        expires_at: DateTime<Utc>,
    ) -> Result<Record, InsertRefusal> {
        self.insert(fields, initial, || (now, expires_at))
    }

    /// Check and insert under one write lock; `times` gives
    /// `(created_at, expires_at)` and is called under it.
    fn insert(
        &self,
        fields: NewTransaction,
        initial: InitialState,
        times: impl FnOnce() -> (DateTime<Utc>, DateTime<Utc>),
    ) -> Result<Record, InsertRefusal> {
        let mut inner = self.write();
        let merchant = fields.merchant_id;
        if let Some(existing) = inner.position_of_reference(&fields.reference_no, |m| m == merchant)
        {
            let id = inner.records.get(existing).map(|r| r.id);
            return Err(id.map_or(InsertRefusal::Full, InsertRefusal::Duplicate));
        }
        let position = u32::try_from(inner.records.len)
            .ok()
            .filter(|p| *p < u32::MAX)
            .ok_or(InsertRefusal::Full)?;
        // v7 ids sort by creation (CONTRACT section 1); generated under the
        // write lock, their order is also the insertion order.
        let id = Uuid::now_v7();
        let (created_at, expires_at) = times();
        let record = Record {
            id,
            fields: inner.pack(fields),
            initial,
            created_at,
            expires_at,
            confirmation: None,
        };
        let by_reference = inner.by_reference.hash(&*record.fields.reference_no);
        inner.by_reference.insert(by_reference, position);
        let by_id = inner.by_id.hash(&id);
        inner.by_id.insert(by_id, position);
        inner.records.push(record.clone());
        Ok(record)
    }

    /// Confirms a transaction: every check of CONTRACT section 6 (rules 2–6)
    /// and the transition happen under one write lock, so exactly one of
    /// many concurrent confirms succeeds.
    pub fn confirm(
        &self,
        attempt: &ConfirmAttempt<'_>,
        catalog: &Catalog,
        now: DateTime<Utc>,
    ) -> Result<Record, ConfirmRefusal> {
        let id = issued_id(attempt.transaction_id).ok_or(ConfirmRefusal::NotFound)?;
        let mut inner = self.write();
        let position = inner.position_of_id(id).ok_or(ConfirmRefusal::NotFound)?;
        let record = inner
            .records
            .get_mut(position)
            .ok_or(ConfirmRefusal::NotFound)?;
        if attempt
            .scope
            .is_some_and(|m| m != record.fields.merchant_id)
        {
            return Err(ConfirmRefusal::NotFound);
        }
        if *record.fields.reference_no != *attempt.reference_no {
            return Err(ConfirmRefusal::ReferenceMismatch);
        }
        match record.view(now).status {
            Status::Expired => return Err(ConfirmRefusal::Expired),
            Status::Confirmed | Status::Successful | Status::Failed => {
                return Err(ConfirmRefusal::AlreadyConfirmed);
            }
            Status::Pending | Status::Initiated => {}
        }
        let product = catalog.product(&record.fields.product_code);
        let expected_code = product.and_then(|p| p.confirmation_code.as_deref());
        let code_ok = match (expected_code, attempt.confirmation_code) {
            (Some(_), None) => {
                return Err(ConfirmRefusal::CodeRequired(
                    record.fields.product_code.to_string(),
                ));
            }
            (Some(expected), Some(given)) => expected == given,
            (None, _) => true,
        };
        let outcome = product.map_or(Outcome::Success, |p| p.outcome.clone());
        let payer_timeout = product.and_then(Product::payer_timeout);
        let result = match (outcome, payer_timeout) {
            _ if !code_ok => ConfirmResult::Failed {
                error_message: "invalid confirmation code".to_owned(),
            },
            // Redirect-based: the payer decides on the page (section 13).
            (_, Some(window)) => ConfirmResult::AwaitingPayer(PaymentPage {
                token: crate::domain::redirect::new_token(),
                deadline: crate::domain::clock::add(now, window),
                decision: None,
                later_submits: 0,
            }),
            (Outcome::Success, None) => ConfirmResult::Successful,
            (Outcome::Async { settle_after }, None) => ConfirmResult::Settling {
                settles_at: crate::domain::clock::add(now, settle_after),
            },
            (Outcome::Decline { message }, None) => ConfirmResult::Failed {
                error_message: message,
            },
        };
        let succeeded = !matches!(result, ConfirmResult::Failed { .. });
        let pins = product.is_some_and(|p| p.pins) && succeeded;
        let token = match &result {
            ConfirmResult::AwaitingPayer(page) => Some(page.token.clone()),
            _ => None,
        };
        let extra_properties = match &token {
            Some(token) => Some(
                serde_json::json!({
                    "paymentUrl": crate::domain::redirect::payment_url(attempt.public_url, token)
                })
                .to_string(),
            ),
            None => pins.then(|| {
                let units = record.fields.quantity.unwrap_or(1);
                let pins: Vec<String> = (0..units).map(|_| new_pin()).collect();
                serde_json::json!({ "pins": pins }).to_string()
            }),
        };
        record.confirmation = Some(Box::new(Confirmation {
            confirmed_at: now,
            result,
            provider_reference: succeeded.then(new_provider_reference),
            extra_properties,
        }));
        let confirmed = record.clone();
        if let Some(token) = token {
            let hash = inner.by_token.hash(&*token);
            // `position` came from the index, so it fits in u32.
            inner
                .by_token
                .insert(hash, u32::try_from(position).unwrap_or(u32::MAX));
        }
        Ok(confirmed)
    }

    /// `f` of the transaction with this id, if it is in scope, under the
    /// read lock (nothing is copied out but what `f` makes).
    /// Only the id's canonical spelling, as issued, names it
    /// (`issued_id`).
    pub fn with_id<T>(
        &self,
        id: &str,
        scope: Option<Uuid>,
        f: impl FnOnce(&Record) -> T,
    ) -> Option<T> {
        let id = issued_id(id)?;
        let inner = self.read();
        let record = inner.records.get(inner.position_of_id(id)?)?;
        scope
            .is_none_or(|m| m == record.fields.merchant_id)
            .then(|| f(record))
    }

    /// The transaction with this id, if it is in scope: [`Store::with_id`]
    /// copying the record out.
    pub fn get(&self, id: &str, scope: Option<Uuid>) -> Option<Record> {
        self.with_id(id, scope, Record::clone)
    }

    /// One page of `/_mock/transactions`: the records after `after` (an
    /// issued id), oldest first, that pass `keep`, at most `limit`, mapped by
    /// `f` under the read lock; plus whether more matching records follow.
    /// `None` when `after` is not a stored id.
    ///
    /// The page starts at `after` through the id index and maps only what
    /// it returns, so a page costs the same at 1M transactions as at 1k
    /// (it used to clone every record).
    pub fn page<T>(
        &self,
        after: Option<Uuid>,
        limit: usize,
        mut keep: impl FnMut(&Record) -> bool,
        mut f: impl FnMut(&Record) -> T,
    ) -> Option<(Vec<T>, bool)> {
        let inner = self.read();
        let start = match after {
            None => 0,
            Some(id) => inner.position_of_id(id)? + 1,
        };
        let mut items = Vec::with_capacity(limit.min(1024));
        let mut more = false;
        for record in inner.records.from(start) {
            if !keep(record) {
                continue;
            }
            if items.len() == limit {
                more = true;
                break;
            }
            items.push(f(record));
        }
        Some((items, more))
    }

    /// [`Store::page`] newest first, for the console: the records older
    /// than `before` (an issued id; `None` starts at the newest) that pass
    /// `keep`, at most `limit`, mapped by `f` under the read lock; plus
    /// whether more matching records follow. `None` when `before` is not a
    /// stored id. Like `page`, it starts through the id index, so a page
    /// costs the same at any size (a filter that matches little scans on).
    pub fn page_newest<T>(
        &self,
        before: Option<Uuid>,
        limit: usize,
        mut keep: impl FnMut(&Record) -> bool,
        mut f: impl FnMut(&Record) -> T,
    ) -> Option<(Vec<T>, bool)> {
        let inner = self.read();
        let end = match before {
            None => inner.records.len,
            Some(id) => inner.position_of_id(id)?,
        };
        let mut items = Vec::with_capacity(limit.min(1024));
        let mut more = false;
        for record in inner.records.before(end) {
            if !keep(record) {
                continue;
            }
            if items.len() == limit {
                more = true;
                break;
            }
            items.push(f(record));
        }
        Some((items, more))
    }

    /// `f` of the transaction with this reference, under the read lock:
    /// within the merchant `scope`, or of the only merchant holding it.
    pub fn with_reference<T>(
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

    /// The transaction with this reference: [`Store::with_reference`]
    /// copying the record out.
    pub fn by_reference(
        &self,
        reference_no: &str,
        scope: Option<Uuid>,
    ) -> Result<Record, LookupError> {
        self.with_reference(reference_no, scope, Record::clone)
    }

    /// Every transaction, oldest first.
    pub fn all(&self) -> Vec<Record> {
        self.read().records.from(0).cloned().collect()
    }

    /// How many transactions there are.
    pub fn len(&self) -> usize {
        self.read().records.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes the two indexes hold (for BENCHMARKS.md's memory breakdown).
    pub fn index_bytes(&self) -> usize {
        let inner = self.read();
        inner.by_id.allocation_size()
            + inner.by_reference.allocation_size()
            + inner.by_token.allocation_size()
    }

    /// Forgets everything.
    pub fn clear(&self) {
        *self.write() = Inner::default();
    }
}

/// The UUID `text` spells in exactly the form the mock issues ids in:
/// lower-case hyphenated, 36 characters. Every other spelling `Uuid` would
/// accept (upper case, braces, `urn:uuid:`, no hyphens) names no
/// transaction, so each transaction answers to exactly one id (CONTRACT
/// sections 1 and 3: the id is an opaque string).
fn issued_id(text: &str) -> Option<Uuid> {
    if text.len() != uuid::fmt::Hyphenated::LENGTH {
        return None;
    }
    let id = Uuid::try_parse(text).ok()?;
    let mut canonical = [0u8; uuid::fmt::Hyphenated::LENGTH];
    (id.hyphenated().encode_lower(&mut canonical).as_bytes() == text.as_bytes()).then_some(id)
}

fn new_pin() -> String {
    let mut rng = rand::rng();
    (0..16)
        .map(|_| char::from(b'0' + rng.random_range(0..10u8)))
        .collect()
}

/// A provider-style id; 128 random bits make a clash practically impossible.
fn new_provider_reference() -> String {
    format!("PRV-{}", Uuid::new_v4().simple().to_string().to_uppercase())
}

#[cfg(test)]
pub(crate) mod tests;
