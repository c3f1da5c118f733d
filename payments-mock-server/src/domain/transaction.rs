//! A transaction as the store keeps it: the validated request, its packed
//! stored form, the one confirmation, and the state derived from them at
//! any instant.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::domain::catalog::InitialState;

/// The transactionIds of one virtual clock (the root's, or one
/// sandbox's): each store, and each sandbox's view of a store, has its own.
///
/// An id is a UUID v7 whose timestamp is the transaction's creation time
/// (virtual), so ids sort like creation times in every store and across
/// replicas (CONTRACT section 1); ids of the same millisecond still sort
/// in the order they were made (a counter, uuid's `ContextV7`), and the
/// rest is random. The counter never lets an id go back in time, so one
/// counter shared by clocks that differ would carry one sandbox's advanced
/// clock into the ids, and the creation times, of every other: hence one
/// per clock. A clock that goes back (a reset sets it to real time again)
/// starts the counter afresh, for the same reason.
pub struct Ids(std::sync::Mutex<(uuid::ContextV7, u64)>);

impl Default for Ids {
    fn default() -> Self {
        Self(std::sync::Mutex::new((uuid::ContextV7::new(), 0)))
    }
}

impl std::fmt::Debug for Ids {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Ids")
    }
}

impl Ids {
    /// A fresh transactionId for a transaction created at `now`.
    pub fn at(&self, now: DateTime<Utc>) -> Uuid {
        let millis = u64::try_from(now.timestamp_millis()).unwrap_or(0);
        let mut guard = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (context, last) = &mut *guard;
        if millis < *last {
            *context = uuid::ContextV7::new();
        }
        *last = millis;
        let timestamp = uuid::Timestamp::from_unix(
            &*context,
            millis / 1000,
            u32::try_from(millis % 1000).unwrap_or(0) * 1_000_000,
        );
        Uuid::new_v7(timestamp)
    }
}

/// The UUID `text` spells in exactly the form the mock issues ids in:
/// lower-case hyphenated, 36 characters. Every other spelling `Uuid` would
/// accept (upper case, braces, `urn:uuid:`, no hyphens) names no
/// transaction, so each transaction answers to exactly one id (CONTRACT
/// sections 1 and 3: the id is an opaque string).
pub fn issued_id(text: &str) -> Option<Uuid> {
    if text.len() != uuid::fmt::Hyphenated::LENGTH {
        return None;
    }
    // At 36 characters the only spelling `Uuid` takes is the hyphenated
    // one, so the issued form is that in lower case: no upper-case digit
    // (cheaper than writing the id out again and comparing). Of hex digits
    // and hyphens only `A`–`F` lack the 0x20 bit: one AND over the bytes,
    // which the compiler does in a few vector steps.
    let id = Uuid::try_parse(text).ok()?;
    (text.bytes().fold(0x20, |all, b| all & b) & 0x20 != 0).then_some(id)
}

/// A transaction's state as the API shows it: the interface's statuses.
pub use payments_interface::Status;

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
    /// `CONFIRMED` until the payer decides on the page or the window ends
    /// (redirect-based products, CONTRACT section 13).
    AwaitingPayer(PaymentPage),
}

/// What the payer does on the payment page (CONTRACT section 13).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PayerAction {
    /// **Pay**: `SUCCESSFUL`.
    Pay,
    /// **Decline**, the bank refuses: `FAILED`, `declined by bank`.
    Decline,
    /// **Cancel**, the payer gives up: `FAILED`, `cancelled by payer`.
    Cancel,
}

impl PayerAction {
    /// Every action, in the order the page shows them.
    pub const ALL: [Self; 3] = [Self::Pay, Self::Decline, Self::Cancel];

    /// The form value: `pay`, `decline` or `cancel`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pay => "pay",
            Self::Decline => "decline",
            Self::Cancel => "cancel",
        }
    }

    /// The action a form or JSON value names, exactly as written.
    pub fn parse(value: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|a| a.as_str() == value)
    }

    /// The `errorMessage` of the `FAILED` it leads to, if it fails.
    pub fn error_message(self) -> Option<&'static str> {
        match self {
            Self::Pay => None,
            Self::Decline => Some(DECLINED_BY_BANK),
            Self::Cancel => Some(CANCELLED_BY_PAYER),
        }
    }
}

/// `errorMessage` after **Decline**.
pub const DECLINED_BY_BANK: &str = "declined by bank";
/// `errorMessage` after **Cancel**.
pub const CANCELLED_BY_PAYER: &str = "cancelled by payer";
/// `errorMessage` once the payer window has passed without a decision.
pub const PAYER_TIMED_OUT: &str = "payer did not complete the payment";
/// Status `message` while the payer has not decided.
pub const AWAITING_PAYER: &str = "awaiting the payer";

/// The payer's decision, made once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PayerDecision {
    /// What the payer did.
    pub action: PayerAction,
    /// Virtual time of the first submit.
    pub at: DateTime<Utc>,
}

/// The payment page of a confirmed redirect-based transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaymentPage {
    /// The page's token: random, URL-safe, opens only this transaction's page.
    pub token: Box<str>,
    /// End of the payer window: undecided from here on, the payment failed.
    pub deadline: DateTime<Utc>,
    /// Set once, by the first submit inside the window.
    pub decision: Option<PayerDecision>,
    /// Submits that came after the decision or the window and changed
    /// nothing (a double click, the back button and a resubmit): the
    /// console shows them, and a test can tell a second submit arrived.
    pub later_submits: u32,
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

/// The stored form of an initiate's fields: what [`NewTransaction`] holds,
/// packed. Codes that repeat across transactions (currency, product, store,
/// country) are shared (`Arc<str>`, one copy per distinct value); unique
/// text is a `Box<str>`; fields few requests send sit behind one shared
/// allocation (an `Arc`: a copy of a record, as a create returns, shares
/// them instead of copying four strings). This
/// is what keeps a transaction at ~300 bytes (BENCHMARKS.md, item 2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fields {
    /// Owner.
    pub merchant_id: Uuid,
    /// Unique within the merchant.
    pub reference_no: Box<str>,
    /// Minor units, 1..=2^53-1.
    pub amount_minor: u64,
    /// ISO 4217 code.
    pub currency_code: Arc<str>,
    /// Its minor-unit exponent.
    pub currency_exponent: u16,
    /// Catalogue product.
    pub product_code: Arc<str>,
    /// Units, when given.
    pub quantity: Option<u32>,
    /// ISO 3166-1 alpha-2.
    pub country_code: Option<Arc<str>>,
    /// Originating store.
    pub store_id: Arc<str>,
    /// Payer account.
    pub payer_id: Option<Box<str>>,
    /// Description, device, return URL and extra properties, when any.
    pub rare: Option<Arc<RareFields>>,
}

/// The initiate fields most requests leave out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RareFields {
    /// Free text.
    pub description: Option<Box<str>>,
    /// Terminal.
    pub device_id: Option<Box<str>>,
    /// Redirect target.
    pub return_url: Option<Box<str>>,
    /// Compact JSON object text.
    pub extra_properties: Option<Box<str>>,
}

/// A stored transaction: immutable facts plus at most one confirmation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// The transactionId (UUID v7).
    pub id: Uuid,
    /// Request fields.
    pub fields: Fields,
    /// Initial state from the product.
    pub initial: InitialState,
    /// Creation time.
    pub created_at: DateTime<Utc>,
    /// From this instant on an unconfirmed transaction is `EXPIRED`.
    pub expires_at: DateTime<Utc>,
    /// Set once, by the one successful confirm (boxed: most records in a
    /// load test are never confirmed, and `None` costs 8 bytes).
    pub confirmation: Option<Box<Confirmation>>,
}

/// A record as seen at one instant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct View<'a> {
    /// Current state.
    pub status: Status,
    /// Latest state change, if any.
    pub last_modified_at: Option<DateTime<Utc>>,
    /// Status detail.
    pub message: Option<&'a str>,
}

impl Record {
    /// The status its last recorded change made (the initiate, the
    /// confirm, the payer's decision), before the clock has its say:
    /// [`Record::view`] shows a later one once the expiry, the settlement
    /// or the payer window has passed, and only then differs from this.
    pub fn recorded_status(&self) -> Status {
        match self.confirmation.as_deref().map(|c| &c.result) {
            None => match self.initial {
                InitialState::Pending => Status::Pending,
                InitialState::Initiated => Status::Initiated,
            },
            Some(ConfirmResult::Successful) => Status::Successful,
            Some(ConfirmResult::Failed { .. }) => Status::Failed,
            Some(ConfirmResult::Settling { .. }) => Status::Confirmed,
            Some(ConfirmResult::AwaitingPayer(page)) => match page.decision.map(|d| d.action) {
                None => Status::Confirmed,
                Some(PayerAction::Pay) => Status::Successful,
                Some(PayerAction::Decline | PayerAction::Cancel) => Status::Failed,
            },
        }
    }

    /// The state at `now`, derived, never stored: expiry and settlement
    /// follow the clock without a writer.
    pub fn view(&self, now: DateTime<Utc>) -> View<'_> {
        match self.confirmation.as_deref() {
            None if now >= self.expires_at => View {
                status: Status::Expired,
                last_modified_at: Some(self.expires_at),
                message: Some("transaction expired"),
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
                    message: Some("awaiting settlement"),
                },
                ConfirmResult::Failed { error_message } => View {
                    status: Status::Failed,
                    last_modified_at: Some(c.confirmed_at),
                    message: Some(error_message),
                },
                ConfirmResult::AwaitingPayer(page) => page.view(c.confirmed_at, now),
            },
        }
    }
}

impl PaymentPage {
    /// The state at `now`: the decision if there is one, else `FAILED`
    /// from the deadline on, else `CONFIRMED` since the confirm.
    fn view(&self, confirmed_at: DateTime<Utc>, now: DateTime<Utc>) -> View<'static> {
        match self.decision {
            Some(d) => View {
                status: match d.action {
                    PayerAction::Pay => Status::Successful,
                    PayerAction::Decline | PayerAction::Cancel => Status::Failed,
                },
                last_modified_at: Some(d.at),
                message: d.action.error_message(),
            },
            None if now >= self.deadline => View {
                status: Status::Failed,
                last_modified_at: Some(self.deadline),
                message: Some(PAYER_TIMED_OUT),
            },
            None => View {
                status: Status::Confirmed,
                last_modified_at: Some(confirmed_at),
                message: Some(AWAITING_PAYER),
            },
        }
    }

    /// Whether the payer may still decide at `now`.
    pub fn is_open(&self, now: DateTime<Utc>) -> bool {
        self.decision.is_none() && now < self.deadline
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn millis_of(id: Uuid) -> u64 {
        let (secs, nanos) = id.get_timestamp().expect("a v7 id").to_unix();
        secs * 1000 + u64::from(nanos / 1_000_000)
    }

    #[test]
    fn each_clock_has_its_own_ids_and_one_that_goes_back_starts_afresh() {
        let now: DateTime<Utc> = "2026-11-29T10:00:00.000Z".parse().expect("a time");
        let tomorrow = now + chrono::Duration::days(1);
        let (root, sandbox) = (Ids::default(), Ids::default());
        // A sandbox a day ahead does not carry the root's ids with it.
        let ahead = sandbox.at(tomorrow);
        let here = root.at(now);
        assert_eq!(
            millis_of(ahead),
            u64::try_from(tomorrow.timestamp_millis()).expect("after 1970")
        );
        assert_eq!(
            millis_of(here),
            u64::try_from(now.timestamp_millis()).expect("after 1970")
        );
        // One clock set back (a reset) gives ids of its new time.
        let after_reset = sandbox.at(now);
        assert_eq!(millis_of(after_reset), millis_of(here));
        // Within one millisecond of one clock, ids sort as they were made.
        let made: Vec<Uuid> = (0..500).map(|_| root.at(now)).collect();
        let mut sorted = made.clone();
        sorted.sort();
        assert_eq!(made, sorted);
        assert!(made.iter().all(|id| millis_of(*id) == millis_of(here)));
    }

    proptest::proptest! {
        /// Only the exact lower-case hyphenated spelling is an issued id,
        /// whatever the case of each digit and whatever other spelling.
        #[test]
        fn only_the_issued_spelling_is_an_issued_id(
            bits in proptest::prelude::any::<u128>(),
            upper in proptest::prelude::any::<u64>(),
            form in 0usize..5,
        ) {
            let id = Uuid::from_u128(bits);
            let canonical = id.hyphenated().to_string();
            let text = match form {
                0 => canonical.clone(),
                1 => canonical
                    .chars()
                    .enumerate()
                    .map(|(i, c)| if upper >> (i % 64) & 1 == 1 { c.to_ascii_uppercase() } else { c })
                    .collect(),
                2 => id.simple().to_string(),
                3 => id.braced().to_string(),
                _ => id.urn().to_string(),
            };
            proptest::prop_assert_eq!(issued_id(&text), (text == canonical).then_some(id));
        }
    }
}
