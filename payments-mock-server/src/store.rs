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

use std::collections::HashMap;
use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

use chrono::{DateTime, Utc};
use rand::Rng;
use uuid::Uuid;

use crate::catalog::{Catalog, InitialState, Outcome};
use crate::clock::Clock;

/// A transaction's state as the API shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Waits on the payer.
    Pending,
    /// Ready to confirm.
    Initiated,
    /// Confirmed, settlement pending.
    Confirmed,
    /// Done.
    Successful,
    /// Declined or wrong code.
    Failed,
    /// Not confirmed in time.
    Expired,
}

impl Status {
    /// The wire string.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "PENDING",
            Self::Initiated => "INITIATED",
            Self::Confirmed => "CONFIRMED",
            Self::Successful => "SUCCESSFUL",
            Self::Failed => "FAILED",
            Self::Expired => "EXPIRED",
        }
    }
}

/// The validated fields of an initiate request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewTransaction {
    /// Owner.
    pub merchant_id: Uuid,
    /// Unique within the merchant.
    pub reference_no: String,
    /// Free text.
    pub description: Option<String>,
    /// Minor units, 1..=2^53-1.
    pub amount_minor: u64,
    /// ISO 4217 code.
    pub currency_code: String,
    /// Its minor-unit exponent.
    pub currency_exponent: u16,
    /// Catalogue product.
    pub product_code: String,
    /// Units, when given.
    pub quantity: Option<u32>,
    /// ISO 3166-1 alpha-2.
    pub country_code: Option<String>,
    /// Originating store.
    pub store_id: String,
    /// Terminal.
    pub device_id: Option<String>,
    /// Payer account.
    pub payer_id: Option<String>,
    /// Redirect target.
    pub return_url: Option<String>,
    /// Compact JSON object text.
    pub extra_properties: Option<String>,
}

/// What confirm recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfirmResult {
    /// `SUCCESSFUL` from the confirm on.
    Successful,
    /// `CONFIRMED` until `settles_at`, `SUCCESSFUL` from then on.
    Settling {
        /// Settlement instant.
        settles_at: DateTime<Utc>,
    },
    /// `FAILED`.
    Failed {
        /// The `errorMessage`.
        error_message: String,
    },
}

/// The one recorded confirmation of a transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confirmation {
    /// When the confirm was processed.
    pub confirmed_at: DateTime<Utc>,
    /// Outcome.
    pub result: ConfirmResult,
    /// Provider id, on success.
    pub provider_reference: Option<String>,
    /// Provider data (gift card PINs) as JSON text.
    pub extra_properties: Option<String>,
}

/// A stored transaction: immutable facts plus at most one confirmation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// The transactionId (UUID v7).
    pub id: Uuid,
    /// Request fields.
    pub fields: NewTransaction,
    /// Initial state from the product.
    pub initial: InitialState,
    /// Creation time.
    pub created_at: DateTime<Utc>,
    /// From this instant on an unconfirmed transaction is `EXPIRED`.
    pub expires_at: DateTime<Utc>,
    /// Set once, by the one successful confirm.
    pub confirmation: Option<Confirmation>,
}

/// A record as seen at one instant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct View {
    /// Current state.
    pub status: Status,
    /// Latest state change, if any.
    pub last_modified_at: Option<DateTime<Utc>>,
    /// Status detail.
    pub message: Option<String>,
}

impl Record {
    /// The state at `now`, derived, never stored: expiry and settlement
    /// follow the clock without a writer.
    pub fn view(&self, now: DateTime<Utc>) -> View {
        match &self.confirmation {
            None if now >= self.expires_at => View {
                status: Status::Expired,
                last_modified_at: Some(self.expires_at),
                message: Some("transaction expired".to_owned()),
            },
            None => View {
                status: match self.initial {
                    InitialState::Pending => Status::Pending,
                    InitialState::Initiated => Status::Initiated,
                },
                last_modified_at: None,
                message: None,
            },
            Some(c) => match &c.result {
                ConfirmResult::Successful => View {
                    status: Status::Successful,
                    last_modified_at: Some(c.confirmed_at),
                    message: None,
                },
                ConfirmResult::Settling { settles_at } if now >= *settles_at => View {
                    status: Status::Successful,
                    last_modified_at: Some(*settles_at),
                    message: None,
                },
                ConfirmResult::Settling { .. } => View {
                    status: Status::Confirmed,
                    last_modified_at: Some(c.confirmed_at),
                    message: Some("awaiting settlement".to_owned()),
                },
                ConfirmResult::Failed { error_message } => View {
                    status: Status::Failed,
                    last_modified_at: Some(c.confirmed_at),
                    message: Some(error_message.clone()),
                },
            },
        }
    }
}

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
}

#[derive(Debug, Default)]
struct Inner {
    /// Oldest first; index = position of creation.
    records: Vec<Record>,
    by_id: HashMap<Uuid, usize>,
    /// Reference → (merchant, index) for every merchant holding it; usually
    /// one entry, so a linear scan per merchant is cheap.
    by_reference: HashMap<String, Vec<(Uuid, usize)>>,
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
    /// reference; then returns the existing transaction's id. One write lock
    /// covers the check and the insert.
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
    ) -> Result<Record, Uuid> {
        self.insert(fields, initial, || {
            let now = clock.now();
            (now, crate::clock::add(now, expiry))
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
    ) -> Result<Record, Uuid> {
        self.insert(fields, initial, || (now, expires_at))
    }

    /// Check and insert under one write lock; `times` gives
    /// `(created_at, expires_at)` and is called under it.
    fn insert(
        &self,
        fields: NewTransaction,
        initial: InitialState,
        times: impl FnOnce() -> (DateTime<Utc>, DateTime<Utc>),
    ) -> Result<Record, Uuid> {
        let mut inner = self.write();
        let existing = inner
            .by_reference
            .get(&fields.reference_no)
            .and_then(|holders| holders.iter().find(|(m, _)| *m == fields.merchant_id));
        if let Some(&(_, index)) = existing {
            return Err(inner.records[index].id);
        }
        // v7 ids sort by creation (CONTRACT section 1); generated under the
        // write lock, their order is also the insertion order.
        let id = Uuid::now_v7();
        let (created_at, expires_at) = times();
        let record = Record {
            id,
            initial,
            created_at,
            expires_at,
            confirmation: None,
            fields,
        };
        let index = inner.records.len();
        inner
            .by_reference
            .entry(record.fields.reference_no.clone())
            .or_default()
            .push((record.fields.merchant_id, index));
        inner.by_id.insert(id, index);
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
        let index = *inner.by_id.get(&id).ok_or(ConfirmRefusal::NotFound)?;
        let record = &mut inner.records[index];
        if attempt
            .scope
            .is_some_and(|m| m != record.fields.merchant_id)
        {
            return Err(ConfirmRefusal::NotFound);
        }
        if record.fields.reference_no != attempt.reference_no {
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
                    record.fields.product_code.clone(),
                ));
            }
            (Some(expected), Some(given)) => expected == given,
            (None, _) => true,
        };
        let outcome = product.map_or(Outcome::Success, |p| p.outcome.clone());
        let result = match outcome {
            _ if !code_ok => ConfirmResult::Failed {
                error_message: "invalid confirmation code".to_owned(),
            },
            Outcome::Success => ConfirmResult::Successful,
            Outcome::Async { settle_after } => ConfirmResult::Settling {
                settles_at: crate::clock::add(now, settle_after),
            },
            Outcome::Decline { message } => ConfirmResult::Failed {
                error_message: message,
            },
        };
        let succeeded = !matches!(result, ConfirmResult::Failed { .. });
        let pins = product.is_some_and(|p| p.pins) && succeeded;
        let extra_properties = pins.then(|| {
            let units = record.fields.quantity.unwrap_or(1);
            let pins: Vec<String> = (0..units).map(|_| new_pin()).collect();
            serde_json::json!({ "pins": pins }).to_string()
        });
        record.confirmation = Some(Confirmation {
            confirmed_at: now,
            result,
            provider_reference: succeeded.then(new_provider_reference),
            extra_properties,
        });
        Ok(record.clone())
    }

    /// The transaction with this id, if it is in scope.
    /// Only the id's canonical spelling, as issued, names it
    /// (`issued_id`).
    pub fn get(&self, id: &str, scope: Option<Uuid>) -> Option<Record> {
        let id = issued_id(id)?;
        let inner = self.read();
        let record = inner.records.get(*inner.by_id.get(&id)?)?;
        scope
            .is_none_or(|m| m == record.fields.merchant_id)
            .then(|| record.clone())
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
            Some(id) => inner.by_id.get(&id)? + 1,
        };
        let mut items = Vec::with_capacity(limit.min(1024));
        let mut more = false;
        for record in &inner.records[start.min(inner.records.len())..] {
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

    /// The transaction with this reference: within the merchant `scope`, or
    /// the only merchant holding it.
    pub fn by_reference(
        &self,
        reference_no: &str,
        scope: Option<Uuid>,
    ) -> Result<Record, LookupError> {
        let inner = self.read();
        let holders = inner
            .by_reference
            .get(reference_no)
            .ok_or(LookupError::NotFound)?;
        let index = match (scope, holders.as_slice()) {
            (Some(m), _) => holders
                .iter()
                .find(|(owner, _)| *owner == m)
                .map(|&(_, i)| i)
                .ok_or(LookupError::NotFound)?,
            (None, [(_, i)]) => *i,
            (None, []) => return Err(LookupError::NotFound),
            (None, _) => return Err(LookupError::Ambiguous),
        };
        inner
            .records
            .get(index)
            .cloned()
            .ok_or(LookupError::NotFound)
    }

    /// Every transaction, oldest first.
    pub fn all(&self) -> Vec<Record> {
        self.read().records.clone()
    }

    /// How many transactions there are.
    pub fn len(&self) -> usize {
        self.read().records.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
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
#[path = "store_tests.rs"]
mod tests;
