//! A transaction and a journal entry as rows: the column form the SQLite
//! and PostgreSQL stores share (their migrations create the same columns,
//! each in its own types), and the conversions both ways.
//!
//! Times are milliseconds since the epoch in a 64-bit integer (what the API
//! shows, exactly, in both databases); ids are 16-byte UUIDs; amounts are
//! integers in minor units.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::StoreError;
use crate::domain::catalog::InitialState;
use crate::domain::journal::JournalEntry;
use crate::domain::transaction::{
    ConfirmResult, Confirmation, Fields, NewTransaction, PayerAction, PayerDecision, PaymentPage,
    RareFields, Record,
};

/// `$before`, then the columns of a transaction row in the order [`Row`]
/// reads them, then `$after`: a statement's text made once, at compile
/// time, where `format!` made it again on every call.
macro_rules! concat_columns {
    ($before:literal, $after:literal) => {
        concat!(
            $before,
            "id, merchant_id, reference_no, description, amount_minor, \
             currency_code, currency_exponent, product_code, quantity, country_code, store_id, \
             device_id, payer_id, return_url, extra_properties, initial, created_at, expires_at, \
             confirmed_at, result, settles_at, error_message, provider_reference, confirm_extra, \
             page_token, page_deadline, decision, decided_at, later_submits",
            $after
        )
    };
}
#[cfg(feature = "sqlite")]
pub(super) use concat_columns;

/// The columns of a transaction row, in the order [`Row`] reads them.
pub(super) const COLUMNS: &str = concat_columns!("", "");

/// The columns of a journal row (`caller`: the merchant of the key that
/// sent it, NULL in rows written before the column).
pub(super) const JOURNAL_COLUMNS: &str = "seq, at, method, path, query, headers, body, status, \
     error_code, request_id, fault, replica, caller";

/// A transaction as its row holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Row {
    pub id: Uuid,
    pub merchant_id: Uuid,
    pub reference_no: String,
    pub description: Option<String>,
    pub amount_minor: i64,
    pub currency_code: String,
    pub currency_exponent: i32,
    pub product_code: String,
    pub quantity: Option<i64>,
    pub country_code: Option<String>,
    pub store_id: String,
    pub device_id: Option<String>,
    pub payer_id: Option<String>,
    pub return_url: Option<String>,
    pub extra_properties: Option<String>,
    pub initial: String,
    pub created_at: i64,
    pub expires_at: i64,
    pub confirm: Option<ConfirmColumns>,
    pub decision: Option<String>,
    pub decided_at: Option<i64>,
    pub later_submits: i64,
}

/// What a confirm writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ConfirmColumns {
    pub confirmed_at: i64,
    pub result: &'static str,
    pub settles_at: Option<i64>,
    pub error_message: Option<String>,
    pub provider_reference: Option<String>,
    pub confirm_extra: Option<String>,
    pub page_token: Option<String>,
    pub page_deadline: Option<i64>,
}

pub(super) fn millis(t: DateTime<Utc>) -> i64 {
    t.timestamp_millis()
}

fn time(ms: i64, column: &str) -> Result<DateTime<Utc>, StoreError> {
    DateTime::from_timestamp_millis(ms).ok_or_else(|| corrupt(column))
}

fn corrupt(column: &str) -> StoreError {
    StoreError::unreadable(format!(
        "a stored transaction has an unreadable {column} (the database was changed outside the mock?)"
    ))
}

fn result_name(result: &ConfirmResult) -> &'static str {
    match result {
        ConfirmResult::Successful => "SUCCESSFUL",
        ConfirmResult::Settling { .. } => "SETTLING",
        ConfirmResult::Failed { .. } => "FAILED",
        ConfirmResult::AwaitingPayer(_) => "AWAITING_PAYER",
    }
}

impl ConfirmColumns {
    pub(super) fn of(c: &Confirmation) -> Self {
        let (settles_at, error_message, page_token, page_deadline) = match &c.result {
            ConfirmResult::Successful => (None, None, None, None),
            ConfirmResult::Settling { settles_at } => (Some(millis(*settles_at)), None, None, None),
            ConfirmResult::Failed { error_message } => {
                (None, Some(error_message.clone()), None, None)
            }
            ConfirmResult::AwaitingPayer(page) => (
                None,
                None,
                Some(page.token.to_string()),
                Some(millis(page.deadline)),
            ),
        };
        Self {
            confirmed_at: millis(c.confirmed_at),
            result: result_name(&c.result),
            settles_at,
            error_message,
            provider_reference: c.provider_reference.clone(),
            confirm_extra: c.extra_properties.clone(),
            page_token,
            page_deadline,
        }
    }

    /// The result column as the `&'static str` it is written from.
    pub(super) fn result_of(text: &str) -> Option<&'static str> {
        ["SUCCESSFUL", "SETTLING", "FAILED", "AWAITING_PAYER"]
            .into_iter()
            .find(|r| *r == text)
    }
}

/// The initial state's column text.
pub(super) fn initial_name(initial: InitialState) -> &'static str {
    initial.as_str()
}

/// A new transaction's row: `new` stamped with its id and times.
pub(super) fn new_row(
    id: Uuid,
    new: NewTransaction,
    initial: InitialState,
    created_at: DateTime<Utc>,
    expires_at: DateTime<Utc>,
) -> Row {
    Row {
        id,
        merchant_id: new.merchant_id,
        reference_no: new.reference_no,
        description: new.description,
        // Validated: 1 ≤ amount ≤ 2^53 − 1.
        amount_minor: i64::try_from(new.amount_minor).unwrap_or(i64::MAX),
        currency_code: new.currency_code,
        currency_exponent: i32::from(new.currency_exponent),
        product_code: new.product_code,
        quantity: new.quantity.map(i64::from),
        country_code: new.country_code,
        store_id: new.store_id,
        device_id: new.device_id,
        payer_id: new.payer_id,
        return_url: new.return_url,
        extra_properties: new.extra_properties,
        initial: initial_name(initial).to_owned(),
        created_at: millis(created_at),
        expires_at: millis(expires_at),
        confirm: None,
        decision: None,
        decided_at: None,
        later_submits: 0,
    }
}

impl Row {
    /// The row of a stored record, whole (every field, the confirmation,
    /// the payer's decision): what seeding writes.
    pub(super) fn of(record: &Record) -> Self {
        let f = &record.fields;
        let rare = f.rare.as_deref().cloned().unwrap_or_default();
        let page = record.payment_page();
        Row {
            id: record.id,
            merchant_id: f.merchant_id,
            reference_no: f.reference_no.to_string(),
            description: rare.description.map(String::from),
            amount_minor: i64::try_from(f.amount_minor).unwrap_or(i64::MAX),
            currency_code: f.currency_code.to_string(),
            currency_exponent: i32::from(f.currency_exponent),
            product_code: f.product_code.to_string(),
            quantity: f.quantity.map(i64::from),
            country_code: f.country_code.as_deref().map(str::to_owned),
            store_id: f.store_id.to_string(),
            device_id: rare.device_id.map(String::from),
            payer_id: f.payer_id.as_deref().map(str::to_owned),
            return_url: rare.return_url.map(String::from),
            extra_properties: rare.extra_properties.map(String::from),
            initial: initial_name(record.initial).to_owned(),
            created_at: millis(record.created_at),
            expires_at: millis(record.expires_at),
            confirm: record.confirmation.as_deref().map(ConfirmColumns::of),
            decision: page
                .and_then(|p| p.decision)
                .map(|d| d.action.as_str().to_owned()),
            decided_at: page.and_then(|p| p.decision).map(|d| millis(d.at)),
            later_submits: page.map_or(0, |p| i64::from(p.later_submits)),
        }
    }

    /// The record this row holds.
    pub(super) fn into_record(self) -> Result<Record, StoreError> {
        let initial = match self.initial.as_str() {
            "PENDING" => InitialState::Pending,
            "INITIATED" => InitialState::Initiated,
            _ => return Err(corrupt("initial state")),
        };
        let boxed = |s: Option<String>| s.map(String::into_boxed_str);
        let rare = RareFields {
            description: boxed(self.description),
            device_id: boxed(self.device_id),
            return_url: boxed(self.return_url),
            extra_properties: boxed(self.extra_properties),
        };
        let fields = Fields {
            merchant_id: self.merchant_id,
            reference_no: self.reference_no.into_boxed_str(),
            amount_minor: u64::try_from(self.amount_minor).map_err(|_| corrupt("amount"))?,
            currency_code: Arc::from(self.currency_code),
            currency_exponent: u16::try_from(self.currency_exponent)
                .map_err(|_| corrupt("currency exponent"))?,
            product_code: Arc::from(self.product_code),
            quantity: self
                .quantity
                .map(u32::try_from)
                .transpose()
                .map_err(|_| corrupt("quantity"))?,
            country_code: self.country_code.map(Arc::from),
            store_id: Arc::from(self.store_id),
            payer_id: boxed(self.payer_id),
            rare: (rare != RareFields::default()).then(|| Arc::new(rare)),
        };
        let confirmation = match self.confirm {
            None => None,
            Some(c) => {
                let result = match c.result {
                    "SUCCESSFUL" => ConfirmResult::Successful,
                    "SETTLING" => ConfirmResult::Settling {
                        settles_at: time(
                            c.settles_at.ok_or_else(|| corrupt("settles_at"))?,
                            "settles_at",
                        )?,
                    },
                    "FAILED" => ConfirmResult::Failed {
                        error_message: c.error_message.unwrap_or_default(),
                    },
                    "AWAITING_PAYER" => {
                        let decision = match (self.decision.as_deref(), self.decided_at) {
                            (None, _) => None,
                            (Some(action), Some(at)) => Some(PayerDecision {
                                action: PayerAction::parse(action)
                                    .ok_or_else(|| corrupt("decision"))?,
                                at: time(at, "decided_at")?,
                            }),
                            (Some(_), None) => return Err(corrupt("decided_at")),
                        };
                        ConfirmResult::AwaitingPayer(PaymentPage {
                            token: c
                                .page_token
                                .ok_or_else(|| corrupt("page_token"))?
                                .into_boxed_str(),
                            deadline: time(
                                c.page_deadline.ok_or_else(|| corrupt("page_deadline"))?,
                                "page_deadline",
                            )?,
                            decision,
                            later_submits: u32::try_from(self.later_submits).unwrap_or(u32::MAX),
                        })
                    }
                    _ => return Err(corrupt("result")),
                };
                Some(Box::new(Confirmation {
                    confirmed_at: time(c.confirmed_at, "confirmed_at")?,
                    result,
                    provider_reference: c.provider_reference,
                    extra_properties: c.confirm_extra,
                }))
            }
        };
        Ok(Record {
            id: self.id,
            fields,
            initial,
            created_at: time(self.created_at, "created_at")?,
            expires_at: time(self.expires_at, "expires_at")?,
            confirmation,
        })
    }
}

/// A journal entry's headers as the stores keep them: a JSON array of
/// `[name, value]` pairs.
pub(super) fn headers_text(headers: &[(String, String)]) -> String {
    serde_json::to_string(headers).unwrap_or_else(|_| "[]".to_owned())
}

/// The headers back from [`headers_text`].
pub(super) fn headers_of(text: &str) -> Vec<(String, String)> {
    serde_json::from_str(text).unwrap_or_default()
}

/// A journal row's columns, read in [`JOURNAL_COLUMNS`] order.
#[derive(Debug)]
pub(super) struct JournalRow {
    pub seq: i64,
    pub at: i64,
    pub method: String,
    pub path: String,
    pub query: Option<String>,
    pub headers: String,
    pub body: String,
    pub status: Option<i32>,
    pub error_code: Option<String>,
    pub request_id: String,
    pub fault: Option<String>,
    pub replica: String,
    pub caller: Option<Uuid>,
}

impl JournalRow {
    pub(super) fn of(entry: &JournalEntry) -> Self {
        Self {
            seq: i64::try_from(entry.seq).unwrap_or(i64::MAX),
            at: millis(entry.at),
            method: entry.method.clone(),
            path: entry.path.clone(),
            query: entry.query.clone(),
            headers: headers_text(&entry.headers),
            body: entry.body.clone(),
            status: entry.status.map(i32::from),
            error_code: entry.error_code.clone(),
            request_id: entry.request_id.clone(),
            fault: entry.fault.as_deref().map(|tokens| {
                crate::domain::journal::join_fault(tokens, entry.fault_rule.as_deref())
            }),
            replica: entry.replica.clone(),
            caller: entry.caller,
        }
    }

    pub(super) fn into_entry(self) -> JournalEntry {
        let (fault, fault_rule) = crate::domain::journal::split_fault(self.fault.as_deref());
        let (fault, fault_rule) = (fault.map(str::to_owned), fault_rule.map(str::to_owned));
        JournalEntry {
            seq: u64::try_from(self.seq).unwrap_or(0),
            method: self.method,
            path: self.path,
            query: self.query,
            headers: headers_of(&self.headers),
            body: self.body,
            // Not among the shared columns: PostgreSQL keeps bodies whole;
            // SQLite reads its own `body_length` column (sqlite/rows.rs).
            body_length: None,
            status: self.status.and_then(|s| u16::try_from(s).ok()),
            error_code: self.error_code,
            request_id: self.request_id,
            fault,
            fault_rule,
            at: DateTime::from_timestamp_millis(self.at).unwrap_or_default(),
            replica: self.replica,
            caller: self.caller,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn sample(result: Option<ConfirmResult>) -> Record {
        let at = DateTime::from_timestamp_millis(1_795_000_000_123).expect("a time");
        let new = NewTransaction {
            merchant_id: Uuid::from_u128(7),
            reference_no: "INV/1 ✓".to_owned(),
            description: Some("d".to_owned()),
            amount_minor: 9_007_199_254_740_991,
            currency_code: "KWD".to_owned(),
            currency_exponent: 3,
            product_code: "ONLINEBANKING".to_owned(),
            quantity: Some(3),
            country_code: Some("MY".to_owned()),
            store_id: "S".to_owned(),
            device_id: None,
            payer_id: Some("p".to_owned()),
            return_url: Some("https://shop.example/back".to_owned()),
            extra_properties: Some("{}".to_owned()),
        };
        let row = new_row(
            Uuid::from_u128(1),
            new,
            InitialState::Pending,
            at,
            at + Duration::from_secs(900),
        );
        let mut record = row.into_record().expect("reads");
        record.confirmation = result.map(|result| {
            Box::new(Confirmation {
                confirmed_at: at + Duration::from_secs(1),
                result,
                provider_reference: Some("PRV-1".to_owned()),
                extra_properties: Some("{\"pins\":[]}".to_owned()),
            })
        });
        record
    }

    /// The row of a stored record, whole (every field, the confirmation,
    /// the payer's decision).
    fn round_trip(record: &Record) -> Record {
        Row::of(record).into_record().expect("reads back")
    }

    #[test]
    fn every_confirmation_reads_back_as_written() {
        let at = DateTime::from_timestamp_millis(1_795_000_000_999).expect("a time");
        for result in [
            None,
            Some(ConfirmResult::Successful),
            Some(ConfirmResult::Settling { settles_at: at }),
            Some(ConfirmResult::Failed {
                error_message: "declined by provider".to_owned(),
            }),
            Some(ConfirmResult::AwaitingPayer(PaymentPage {
                token: "A".repeat(32).into_boxed_str(),
                deadline: at,
                decision: Some(PayerDecision {
                    action: PayerAction::Cancel,
                    at,
                }),
                later_submits: 2,
            })),
            Some(ConfirmResult::AwaitingPayer(PaymentPage {
                token: "B".repeat(32).into_boxed_str(),
                deadline: at,
                decision: None,
                later_submits: 0,
            })),
        ] {
            let record = sample(result);
            assert_eq!(round_trip(&record), record);
        }
    }

    #[test]
    fn journal_rows_read_back() {
        let entry = JournalEntry {
            seq: 42,
            method: "POST".to_owned(),
            path: "/api/payments/initiate".to_owned(),
            query: Some("a=%20".to_owned()),
            headers: vec![("authorization".to_owned(), "[redacted]".to_owned())],
            body: "{\"a\":1}".to_owned(),
            body_length: None,
            status: Some(400),
            error_code: Some("VALIDATION_ERROR".to_owned()),
            request_id: "rid".to_owned(),
            fault: Some("delay=5".to_owned()),
            fault_rule: Some("6f1c0f0e-8d4b-4c47-9a4e-2f4f7f9d8a10".to_owned()),
            at: DateTime::from_timestamp_millis(1_795_000_000_123).expect("a time"),
            replica: "a:1".to_owned(),
            caller: Some(Uuid::from_u128(7)),
        };
        assert_eq!(JournalRow::of(&entry).into_entry(), entry);
    }
}
