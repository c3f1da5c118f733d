//! The answer guard: every answer checked against its question.
//!
//! A service, a caching gateway or a misrouted response can answer one
//! merchant's initiate with another's transaction; an application that
//! believes it confirms or ships against the wrong order. So each decoded
//! answer is compared with what was asked, after decoding has already
//! accepted every spelling the contract tolerates (`150.0` for `150.00`,
//! numeric strings, offsets, `currencyCode` absent meaning `MYR`), so only
//! values that differ in meaning disagree:
//!
//! - initiate: `referenceNo`, `amount`, `productCode`, `currencyCode` as
//!   sent, a non-empty `transactionId`;
//! - confirm: `transactionId` and `referenceNo` as sent, and the amount this
//!   client initiated, when it did;
//! - status: the id or reference in the path;
//! - any: a `transactionId` is only ever answered for one reference (and
//!   merchant, where the call names one).
//!
//! The memory behind the last two rules holds the most recently seen
//! transactions ([`DEFAULT_ANSWER_MEMORY`] by default, least recently seen
//! first out; `memory.rs`). Only answers that pass are remembered, so a
//! lie never becomes the reference for the next check.
//!
//! Disagreements become `Error::AnswerMismatch` (`error/mismatch.rs`);
//! settling an initiate's mismatch by reading the reference back is
//! `reconcile::settle_initiate`; every status read is checked by
//! `Transport::read_status`. CONTRACT section 17; docs/contract.md
//! "The client checks every answer against its question".

mod memory;

use std::sync::{Mutex, PoisonError};

use uuid::Uuid;

use crate::calls::confirm::ConfirmRequest;
use crate::calls::initiate::InitiateRequest;
use crate::calls::status::Lookup;
use crate::error::{AnswerMismatch, Asked, Disagreement};
use crate::model::currency::Currency;
use crate::model::envelope::Reply;
use crate::model::ids::TransactionId;
use crate::model::transaction::{Confirmation, Initiated, PaymentStatus};
use crate::money::{MinorAmount, to_major};

use memory::Lru;

/// How many transactions the guard remembers unless the builder says
/// otherwise: at most a few hundred bytes each, so about 2 MB when full.
pub(crate) const DEFAULT_ANSWER_MEMORY: usize = 10_000;

/// What the guard knows of one transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    /// The merchant, when a call that named one was answered with it.
    merchant_id: Option<Uuid>,
    reference_no: String,
    /// Amount and currency, when this client initiated it.
    initiated: Option<(MinorAmount, Currency)>,
}

/// The checks and their memory; one per client, shared by its clones.
#[derive(Debug)]
pub(crate) struct AnswerGuard {
    // A std mutex: it is held for a few map operations and never across an
    // await.
    memory: Mutex<Lru<TransactionId, Seen>>,
}

type Checked = Result<(), Box<AnswerMismatch>>;

impl AnswerGuard {
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            memory: Mutex::new(Lru::new(capacity)),
        }
    }

    /// An initiate's answer against its request.
    pub(crate) fn initiate(&self, req: &InitiateRequest, reply: &Reply<Initiated>) -> Checked {
        let d = reply.data();
        let currency = req.effective_currency();
        let mut found = Vec::new();
        if d.reference_no != req.reference_no() {
            found.push(field("referenceNo", req.reference_no(), &d.reference_no));
        }
        if d.amount != req.amount() {
            found.push(field(
                "amount",
                major_text(req.amount(), &currency, &currency),
                major_text(d.amount, &d.currency_code, &currency),
            ));
        }
        if d.product_code != req.product_code() {
            found.push(field("productCode", req.product_code(), &d.product_code));
        }
        if d.currency_code != currency {
            found.push(field(
                "currencyCode",
                currency.code(),
                d.currency_code.code(),
            ));
        }
        if d.transaction_id.as_str().trim().is_empty() {
            found.push(Disagreement::EmptyTransactionId);
        }
        let seen = Seen {
            merchant_id: Some(req.merchant_id()),
            reference_no: d.reference_no.clone(),
            initiated: Some((req.amount(), currency)),
        };
        let asked = Asked::Initiate {
            reference_no: req.reference_no().to_owned(),
        };
        self.conclude(asked, reply, found, &d.transaction_id, seen, |_, _| {})
    }

    /// A confirm's answer against its request, and its amount against the
    /// initiate this client made, if it made it.
    pub(crate) fn confirm(&self, req: &ConfirmRequest, reply: &Reply<Confirmation>) -> Checked {
        let d = reply.data();
        let mut found = Vec::new();
        if d.transaction_id != *req.transaction_id() {
            found.push(field(
                "transactionId",
                req.transaction_id().as_str(),
                d.transaction_id.as_str(),
            ));
        }
        if d.reference_no != req.reference_no() {
            found.push(field("referenceNo", req.reference_no(), &d.reference_no));
        }
        let seen = Seen {
            merchant_id: None,
            reference_no: d.reference_no.clone(),
            initiated: None,
        };
        let asked = Asked::Confirm {
            transaction_id: req.transaction_id().clone(),
        };
        let answered = d.amount;
        self.conclude(
            asked,
            reply,
            found,
            &d.transaction_id,
            seen,
            |memory, found| {
                let initiated = memory
                    .get_mut(req.transaction_id())
                    .and_then(|s| s.initiated.clone());
                // Exact: both are decimals, compared by value, so the
                // service's scale (`150.0`, `150.00`) does not matter.
                if let Some((amount, currency)) = initiated
                    && let Ok(initiated) = to_major(amount, &currency)
                    && initiated != answered
                {
                    found.push(Disagreement::InitiatedAmount {
                        initiated,
                        answered,
                    });
                }
            },
        )
    }

    /// A status read's answer against the id or reference in its path.
    pub(crate) fn status(&self, lookup: Lookup<'_>, reply: &Reply<PaymentStatus>) -> Checked {
        let d = reply.data();
        let mut found = Vec::new();
        let (asked, merchant_id) = match lookup {
            Lookup::Id(id) => {
                if d.transaction_id != id {
                    found.push(field("transactionId", id, d.transaction_id.as_str()));
                }
                let asked = Asked::Status {
                    transaction_id: TransactionId::new(id),
                };
                (asked, None)
            }
            Lookup::Reference {
                reference_no,
                merchant_id,
            } => {
                if d.reference_no != reference_no {
                    found.push(field("referenceNo", reference_no, &d.reference_no));
                }
                let asked = Asked::StatusByReference {
                    reference_no: reference_no.to_owned(),
                };
                (asked, merchant_id)
            }
        };
        let seen = Seen {
            merchant_id,
            reference_no: d.reference_no.clone(),
            initiated: None,
        };
        self.conclude(asked, reply, found, &d.transaction_id, seen, |_, _| {})
    }

    /// Under one lock: the call's own memory-based check, the id-reuse
    /// rule, and, when nothing disagrees, remembering the answer. One lock
    /// for all three, so two answers racing with one id for two references
    /// cannot both pass.
    fn conclude<T>(
        &self,
        asked: Asked,
        reply: &Reply<T>,
        mut found: Vec<Disagreement>,
        id: &TransactionId,
        seen: Seen,
        also: impl FnOnce(&mut Lru<TransactionId, Seen>, &mut Vec<Disagreement>),
    ) -> Checked {
        let mut memory = self.memory.lock().unwrap_or_else(PoisonError::into_inner);
        also(&mut memory, &mut found);
        let remembered = !id.as_str().trim().is_empty();
        if remembered && let Some(earlier) = memory.get_mut(id) {
            let merchants_differ = matches!(
                (earlier.merchant_id, seen.merchant_id),
                (Some(a), Some(b)) if a != b
            );
            if earlier.reference_no != seen.reference_no || merchants_differ {
                found.push(Disagreement::TransactionIdReused {
                    transaction_id: id.clone(),
                    earlier_reference_no: earlier.reference_no.clone(),
                    earlier_merchant_id: earlier.merchant_id,
                    reference_no: seen.reference_no.clone(),
                    merchant_id: seen.merchant_id,
                });
            }
        }
        if !found.is_empty() {
            return Err(Box::new(AnswerMismatch {
                asked,
                disagreements: found,
                http_status: reply.http_status(),
                request_id: reply.request_id().to_owned(),
                raw_envelope: reply.raw_envelope().to_owned(),
                read_back: None,
            }));
        }
        if remembered {
            match memory.get_mut(id) {
                Some(earlier) => {
                    earlier.merchant_id = earlier.merchant_id.or(seen.merchant_id);
                    if seen.initiated.is_some() {
                        earlier.initiated = seen.initiated;
                    }
                }
                None => memory.insert(id.clone(), seen),
            }
        }
        Ok(())
    }
}

fn field(name: &'static str, sent: impl Into<String>, answered: impl Into<String>) -> Disagreement {
    Disagreement::Field {
        field: name,
        sent: sent.into(),
        answered: answered.into(),
    }
}

/// `minor` in major units of `currency` (or of `fallback`, for a code
/// without a known exponent), as text; the bare integer if neither helps.
fn major_text(minor: MinorAmount, currency: &Currency, fallback: &Currency) -> String {
    to_major(minor, currency)
        .or_else(|_| to_major(minor, fallback))
        .map_or_else(|_| minor.to_string(), |d| d.to_string())
}
