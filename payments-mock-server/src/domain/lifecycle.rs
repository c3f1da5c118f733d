//! The state machine above the store (CONTRACT sections 4, 6 and 13): what
//! initiate, confirm and the payer may do, and in which order confirm's
//! refusals are checked. The store only keeps and promises that each verb
//! is atomic ([`Store`]); every rule is here, once, for all three stores.

use std::time::Duration;

use chrono::{DateTime, Utc};
use rand::RngExt as _;
use uuid::Uuid;

use crate::domain::catalog::{Catalog, InitialState, Outcome, Product};
use crate::domain::port::{
    Decided, InsertRefusal, PayerRefusal, PaymentPageKey, Store, StoreError, Transition,
};
use crate::domain::redirect::PublicUrl;
use crate::domain::transaction::{
    ConfirmResult, Confirmation, NewTransaction, PayerAction, PaymentPage, Record, Status,
    issued_id,
};

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

/// A confirm request after body validation.
#[derive(Debug, Clone)]
pub struct ConfirmAttempt<'a> {
    /// The transactionId text (unknown if not a UUID as issued).
    pub transaction_id: &'a str,
    /// Must equal the stored reference.
    pub reference_no: &'a str,
    /// OTP.
    pub confirmation_code: Option<&'a str>,
    /// The merchant a bound key limits the caller to.
    pub scope: Option<Uuid>,
    /// The public base URL payment pages are announced under (redirect
    /// products, CONTRACT section 13).
    pub public_url: &'a PublicUrl,
}

/// Why an initiate was refused after its body passed validation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InitiateRefusal {
    /// The caller's key is bound to `bound`, and the body names `named`.
    OtherMerchant {
        /// The merchant the key is bound to.
        bound: Uuid,
        /// The merchant the body names.
        named: Uuid,
    },
    /// The merchant already used the reference, for this transaction.
    Duplicate(Uuid),
    /// The store holds as many transactions as it can.
    Full,
}

/// An initiate request after body validation.
#[derive(Debug)]
pub struct InitiateAttempt<'a> {
    /// The validated fields.
    pub fields: NewTransaction,
    /// The merchant a bound key limits the caller to.
    pub scope: Option<Uuid>,
    /// The products (the initial state is the product's).
    pub catalog: &'a Catalog,
    /// How long the new transaction stays confirmable.
    pub expiry: Duration,
}

/// Creates a transaction (CONTRACT sections 4, 6 and 9): the caller's key
/// may only act for its own merchant; the transaction starts in its
/// product's initial state; the merchant may not have used the reference
/// already (the store decides that atomically).
///
/// # Errors
///
/// [`StoreError`] from the store; the inner [`InitiateRefusal`] names the
/// rule that failed, the transaction's initial state with the record.
pub async fn initiate(
    store: &impl Store,
    attempt: InitiateAttempt<'_>,
) -> Result<Result<(Record, InitialState), InitiateRefusal>, StoreError> {
    let InitiateAttempt {
        fields,
        scope,
        catalog,
        expiry,
    } = attempt;
    if let Some(bound) = scope.filter(|bound| *bound != fields.merchant_id) {
        return Ok(Err(InitiateRefusal::OtherMerchant {
            bound,
            named: fields.merchant_id,
        }));
    }
    // Validation took the product code from the catalogue: it is there.
    let initial = catalog
        .product(&fields.product_code)
        .map_or(InitialState::Initiated, |product| product.initial);
    Ok(match store.create(fields, initial, expiry).await? {
        Ok(record) => Ok((record, initial)),
        Err(InsertRefusal::Duplicate(existing)) => Err(InitiateRefusal::Duplicate(existing)),
        Err(InsertRefusal::Full) => Err(InitiateRefusal::Full),
    })
}

/// Confirms a transaction at the store's now: the checks of CONTRACT
/// section 6 in order (rules 2–6), then the product's outcome, recorded
/// only if the transaction is still confirmable then, so of many
/// concurrent confirms (on any replica) exactly one succeeds.
///
/// # Errors
///
/// [`StoreError`] from the store; the inner [`ConfirmRefusal`] names the
/// first rule that failed.
pub async fn confirm(
    store: &impl Store,
    attempt: &ConfirmAttempt<'_>,
    catalog: &Catalog,
) -> Result<Result<(Record, DateTime<Utc>), ConfirmRefusal>, StoreError> {
    let Some(id) = issued_id(attempt.transaction_id) else {
        return Ok(Err(ConfirmRefusal::NotFound));
    };
    let now = store.now().await?;
    let Some(record) = store.with_id(id, attempt.scope, Record::clone).await? else {
        store.still_here().await?;
        return Ok(Err(ConfirmRefusal::NotFound));
    };
    if *record.fields.reference_no != *attempt.reference_no {
        return Ok(Err(ConfirmRefusal::ReferenceMismatch));
    }
    // Expired as read is not yet an answer: a confirm that read the clock
    // a moment earlier may be committing now, and would succeed while this
    // one said "expired". The store settles it where confirms are ordered
    // (its check of the expiry is at its own now, never earlier), and the
    // record it answers with shows that confirm if it came first.
    let expired = match unconfirmable(&record, now) {
        Some(ConfirmRefusal::Expired) => true,
        Some(refusal) => return Ok(Err(refusal)),
        None => false,
    };
    let product = catalog.product(&record.fields.product_code);
    let expected_code = product.and_then(|p| p.confirmation_code.as_deref());
    let code_ok = match (expected_code, attempt.confirmation_code) {
        _ if expired => false,
        (Some(_), None) => {
            return Ok(Err(ConfirmRefusal::CodeRequired(
                record.fields.product_code.to_string(),
            )));
        }
        (Some(expected), Some(given)) => expected == given,
        (None, _) => true,
    };
    let confirmation = outcome(&record, product, code_ok, now, attempt.public_url);
    Ok(match store.confirm(id, now, confirmation).await? {
        // Never when `expired`: the store refuses at `now` or later.
        Transition::Moved(record) => Ok((record, now)),
        // Another confirm won, or the expiry passed, between the read and
        // the store's check: the refusal the record shows at a now no
        // earlier than the store's.
        Transition::Unmoved(record) => {
            let later = store.now().await?.max(now);
            Err(unconfirmable(&record, later).unwrap_or(ConfirmRefusal::AlreadyConfirmed))
        }
        Transition::Missing => {
            store.still_here().await?;
            Err(ConfirmRefusal::NotFound)
        }
    })
}

/// Rules 4 and 5: expired, or already confirmed, at `now`.
fn unconfirmable(record: &Record, now: DateTime<Utc>) -> Option<ConfirmRefusal> {
    match record.view(now).status {
        Status::Expired => Some(ConfirmRefusal::Expired),
        Status::Confirmed | Status::Successful | Status::Failed => {
            Some(ConfirmRefusal::AlreadyConfirmed)
        }
        Status::Pending | Status::Initiated => None,
    }
}

/// What the product does with a confirm at `now` (CONTRACT sections 6, 7
/// and 13): the confirmation to record.
fn outcome(
    record: &Record,
    product: Option<&Product>,
    code_ok: bool,
    now: DateTime<Utc>,
    public_url: &PublicUrl,
) -> Confirmation {
    let kind = product.map_or(Outcome::Success, |p| p.outcome.clone());
    let payer_timeout = product.and_then(Product::payer_timeout);
    let result = match (kind, payer_timeout) {
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
    let extra_properties = match &result {
        ConfirmResult::AwaitingPayer(page) => Some(
            serde_json::json!({
                "paymentUrl": crate::domain::redirect::payment_url(public_url, &page.token)
            })
            .to_string(),
        ),
        _ => pins.then(|| {
            let units = record.fields.quantity.unwrap_or(1);
            let pins: Vec<String> = (0..units).map(|_| new_pin()).collect();
            serde_json::json!({ "pins": pins }).to_string()
        }),
    };
    Confirmation {
        confirmed_at: now,
        result,
        provider_reference: succeeded.then(new_provider_reference),
        extra_properties,
    }
}

/// The payer's submit at the store's now (CONTRACT section 13): the first
/// one inside the payer window decides, any other changes nothing.
///
/// # Errors
///
/// [`StoreError`] from the store; the inner [`PayerRefusal`] when there is
/// no page to decide.
pub async fn decide(
    store: &impl Store,
    key: PaymentPageKey<'_>,
    scope: Option<Uuid>,
    action: PayerAction,
) -> Result<Result<(Decided, DateTime<Utc>), PayerRefusal>, StoreError> {
    let now = store.now().await?;
    decide_at(store, key, scope, action, now).await
}

/// [`decide`] for a submit that read the clock at `now`. The store judges
/// the window at its own now, never earlier; the now returned (to show the
/// status at) is no earlier than the store's either.
///
/// # Errors
///
/// As [`decide`].
pub async fn decide_at(
    store: &impl Store,
    key: PaymentPageKey<'_>,
    scope: Option<Uuid>,
    action: PayerAction,
    now: DateTime<Utc>,
) -> Result<Result<(Decided, DateTime<Utc>), PayerRefusal>, StoreError> {
    let decided = store.decide(key, scope, action, now).await?;
    match decided {
        Ok(decided) => {
            // The store judged the window at its own now, never earlier
            // than this one: the status to show is the one at a now no
            // earlier than its (a submit that missed the deadline by a
            // moment shows FAILED, not the CONFIRMED of before it).
            let later = store.now().await?.max(now);
            Ok(Ok((decided, later)))
        }
        Err(PayerRefusal::NotFound) => {
            store.still_here().await?;
            Ok(Err(PayerRefusal::NotFound))
        }
        Err(refusal) => Ok(Err(refusal)),
    }
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
