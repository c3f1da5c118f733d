//! The classes, and how a row the service answered is judged.
//!
//! One class per row, the first that applies, in this order: `invalid`,
//! `duplicate` (both known before asking, see `ledger`), `missing`,
//! `unverified` (the service's answer for the row could not be used),
//! `currency`, `amount`, `pending`, `status`, `match`. A difference in
//! money outranks a state that may still change: an amount that differs
//! while the payment is pending is `amount`.
//!
//! The status answer carries no currency. What the CLI knows of it is the
//! number of decimal places the service writes the amount with, which is
//! the currency's exponent (CONTRACT section 1; the interface document's
//! `150.00`): a row in JPY answered `1500.00` is `currency`. Currencies with
//! the same exponent (MYR, USD, EUR) cannot be told apart this way.

use payments_client::{Currency, Decimal, PaymentStatus, money};

use super::ledger::Valid;

/// A row's class; the order is the order of the counts table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Class {
    Match,
    Missing,
    Amount,
    Currency,
    Status,
    Pending,
    Duplicate,
    Invalid,
    Unverified,
}

impl Class {
    /// Every class, in the order of the counts table.
    pub const ALL: [Self; 9] = [
        Self::Match,
        Self::Missing,
        Self::Amount,
        Self::Currency,
        Self::Status,
        Self::Pending,
        Self::Duplicate,
        Self::Invalid,
        Self::Unverified,
    ];

    /// The longest name (the table's class column).
    pub const WIDEST: usize = "unverified".len();

    /// The name scripts and the report use.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Match => "match",
            Self::Missing => "missing",
            Self::Amount => "amount",
            Self::Currency => "currency",
            Self::Status => "status",
            Self::Pending => "pending",
            Self::Duplicate => "duplicate",
            Self::Invalid => "invalid",
            Self::Unverified => "unverified",
        }
    }
}

/// A class and what was found, in a sentence (none for `match`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judgement {
    pub class: Class,
    pub detail: Option<String>,
}

impl Judgement {
    fn new(class: Class, detail: String) -> Self {
        Self {
            class,
            detail: Some(detail),
        }
    }
}

/// The service has no transaction for the row.
pub fn missing(row: &Valid) -> Judgement {
    let detail = match &row.transaction_id {
        Some(id) => format!("the service has no transaction {id}"),
        None => "the service has no transaction with this referenceNo".to_owned(),
    };
    Judgement::new(Class::Missing, detail)
}

/// The most characters of the client's reason an `unverified` detail
/// repeats: room for two whole references and what is said of them, while
/// an answer of a megabyte quoted back by a decode error is not repeated
/// whole.
const MAX_REASON: usize = 500;

/// The service answered the row, but its answer cannot be used (`reason`,
/// the client's: a success whose data does not read, or an answer about
/// another transaction or reference): nothing is known of the row.
pub fn unverified(reason: &str) -> Judgement {
    Judgement::new(
        Class::Unverified,
        format!(
            "the service's answer for this row could not be used: {}; check it by hand",
            // Cut as written, then made printable: an escape is never cut.
            crate::output::printable(&crate::text::clip_chars(reason, MAX_REASON))
        ),
    )
}

/// Judges a row against the service's answer.
pub fn judge(row: &Valid, found: &PaymentStatus) -> Judgement {
    if found.reference_no != row.reference {
        // Asked by transactionId: that id is another order's.
        return Judgement::new(
            Class::Missing,
            format!(
                "transaction {} is referenceNo {} at the service, not this one",
                found.transaction_id,
                crate::output::printable(&found.reference_no)
            ),
        );
    }
    let exponent = row.currency.exponent().unwrap_or_default();
    if found.amount.scale() != exponent {
        // Still `currency`, but a difference in money is never hidden
        // behind it: the values compared exactly, as decimals (`10.5` and
        // `10.50` are one value).
        // (A ledger row's currency always has an exponent: `to_major`
        // cannot fail for it.)
        let differ = match money::to_major(row.amount, &row.currency) {
            Ok(ledger) if ledger != found.amount => format!(
                "; and the amounts differ: ledger {ledger}, service {}",
                found.amount
            ),
            _ => String::new(),
        };
        return Judgement::new(
            Class::Currency,
            format!(
                "the service writes the amount {} with {} decimal places; {} has {exponent}{differ}",
                found.amount,
                found.amount.scale(),
                row.currency.code()
            ),
        );
    }
    let theirs = money::to_minor(found.amount, &row.currency).ok();
    if theirs != Some(row.amount) {
        return Judgement::new(
            Class::Amount,
            format!(
                "ledger {}, service {}",
                shown(row.amount, &row.currency),
                with_code(found.amount, &row.currency)
            ),
        );
    }
    if !found.status.is_final() {
        return Judgement::new(
            Class::Pending,
            format!("the service says {}, not final yet", found.status),
        );
    }
    if let Some(ours) = row.status.as_ref().filter(|ours| **ours != found.status) {
        let why = found
            .message
            .as_deref()
            .map(|message| format!(" ({})", crate::output::printable(message)))
            .unwrap_or_default();
        return Judgement::new(
            Class::Status,
            format!("ledger {ours}, service {}{why}", found.status),
        );
    }
    Judgement {
        class: Class::Match,
        detail: None,
    }
}

/// Minor units in major units with the code: 1050 MYR is `10.50 MYR`.
pub fn shown(amount: payments_client::MinorAmount, currency: &Currency) -> String {
    money::to_major(amount, currency).map_or_else(
        |_| format!("{amount} minor units of {}", currency.code()),
        |major| with_code(major, currency),
    )
}

fn with_code(amount: Decimal, currency: &Currency) -> String {
    format!("{amount} {}", currency.code())
}

#[cfg(test)]
mod tests {
    use payments_client::{MinorAmount, TransactionStatus};

    use super::*;

    fn valid(amount: u64, currency: Currency, status: Option<TransactionStatus>) -> Valid {
        Valid {
            reference: "R1".to_owned(),
            amount: MinorAmount::new(amount).unwrap(),
            currency,
            status,
            transaction_id: None,
        }
    }

    fn found(amount: &str, status: &str) -> PaymentStatus {
        serde_json::from_str(&format!(
            r#"{{"transactionId":"t-1","referenceNo":"R1","status":"{status}","amount":{amount},
                "productCode":"TOPUP","createdAt":"2026-11-22T08:15:30.123Z","message":"declined by provider"}}"#
        ))
        .unwrap()
    }

    fn class(row: &Valid, found: &PaymentStatus) -> Class {
        judge(row, found).class
    }

    #[test]
    fn each_class_in_its_order() {
        let paid = Some(TransactionStatus::Successful);
        assert_eq!(
            class(
                &valid(1050, Currency::MYR, paid.clone()),
                &found("10.50", "SUCCESSFUL")
            ),
            Class::Match
        );
        assert_eq!(
            class(&valid(1050, Currency::MYR, None), &found("10.50", "FAILED")),
            Class::Match
        );
        assert_eq!(
            class(
                &valid(1050, Currency::JPY, None),
                &found("10.50", "SUCCESSFUL")
            ),
            Class::Currency
        );
        assert_eq!(
            class(
                &valid(1500, Currency::KWD, None),
                &found("1.50", "SUCCESSFUL")
            ),
            Class::Currency
        );
        assert_eq!(
            class(
                &valid(1000, Currency::MYR, paid.clone()),
                &found("10.50", "INITIATED")
            ),
            Class::Amount
        );
        assert_eq!(
            class(
                &valid(1050, Currency::MYR, paid.clone()),
                &found("10.50", "CONFIRMED")
            ),
            Class::Pending
        );
        assert_eq!(
            class(&valid(1050, Currency::MYR, paid), &found("10.50", "FAILED")),
            Class::Status
        );
        let mut other = found("10.50", "SUCCESSFUL");
        other.reference_no = "R2".to_owned();
        assert_eq!(
            class(&valid(1050, Currency::MYR, None), &other),
            Class::Missing
        );
    }

    #[test]
    fn details_say_both_sides() {
        let row = valid(1000, Currency::MYR, Some(TransactionStatus::Successful));
        assert_eq!(
            judge(&row, &found("10.50", "SUCCESSFUL")).detail.as_deref(),
            Some("ledger 10.00 MYR, service 10.50 MYR")
        );
        let row = valid(1050, Currency::MYR, Some(TransactionStatus::Successful));
        assert_eq!(
            judge(&row, &found("10.50", "FAILED")).detail.as_deref(),
            Some("ledger SUCCESSFUL, service FAILED (declined by provider)")
        );
        assert_eq!(
            judge(&valid(1050, Currency::JPY, None), &found("10.50", "FAILED"))
                .detail
                .as_deref(),
            Some(
                "the service writes the amount 10.50 with 2 decimal places; JPY has 0; \
                 and the amounts differ: ledger 1050, service 10.50"
            )
        );
    }

    /// `currency` hid a difference in money: the detail adds it when the
    /// values differ, compared by value (`1500` for 1500 JPY is the same).
    #[test]
    fn a_currency_row_says_when_the_amounts_differ_too() {
        let row = valid(9900, Currency::MYR, None);
        let judged = judge(&row, &found("10.5", "SUCCESSFUL"));
        assert_eq!(judged.class, Class::Currency);
        assert_eq!(
            judged.detail.as_deref(),
            Some(
                "the service writes the amount 10.5 with 1 decimal places; MYR has 2; \
                 and the amounts differ: ledger 99.00, service 10.5"
            )
        );
        let row = valid(1050, Currency::MYR, None);
        assert_eq!(
            judge(&row, &found("10.5", "SUCCESSFUL")).detail.as_deref(),
            Some("the service writes the amount 10.5 with 1 decimal places; MYR has 2")
        );
        let row = valid(1500, Currency::JPY, None);
        assert_eq!(
            judge(&row, &found("1500.00", "SUCCESSFUL"))
                .detail
                .as_deref(),
            Some("the service writes the amount 1500.00 with 2 decimal places; JPY has 0")
        );
    }

    #[test]
    fn exact_amounts_at_the_largest_value() {
        let row = valid(money::MAX_AMOUNT, Currency::MYR, None);
        assert_eq!(
            class(&row, &found("90071992547409.91", "SUCCESSFUL")),
            Class::Match
        );
        assert_eq!(
            class(&row, &found("90071992547409.90", "SUCCESSFUL")),
            Class::Amount
        );
    }
}
