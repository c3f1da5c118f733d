//! The classes, and how a row the service answered is judged.
//!
//! One class per row, the first that applies, in this order: `invalid`,
//! `duplicate` (both known before asking, see `ledger`), `missing`,
//! `unverified` (the service's answer for the row could not be used),
//! `currency`, `amount`, `pending`, `status`, `match`. A difference in
//! money outranks a state that may still change: an amount that differs
//! while the payment is pending is `amount`.
//!
//! The status answer carries no currency, and its amount is a decimal
//! number: `150.5` and `150.50` are one value, and a service may write
//! either. Fewer decimal places than the row's currency has say nothing
//! (`150.5` for a MYR row is 150.50 MYR, compared by value); only more
//! significant ones than it allows (`10.505` for MYR, `10.5` for JPY,
//! trailing zeros dropped) say the amount cannot be in that currency:
//! `currency`. Currencies whose amounts fit each other (MYR, USD, EUR; JPY
//! for a whole MYR amount) cannot be told apart.

use payments_client::{Currency, PaymentStatus, money};

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
        None if scientific(&row.reference) => {
            "the service has no transaction with this referenceNo, which looks like a number \
             in scientific notation: a spreadsheet probably turned the reference into a number; \
             format that column as text and export the ledger again"
                .to_owned()
        }
        None => "the service has no transaction with this referenceNo".to_owned(),
    };
    Judgement::new(Class::Missing, detail)
}

/// The forms of `reference` in the other Unicode normalization (NFC, NFD)
/// that differ from it, named: a ledger and a service may write the same
/// reference (`résumé`) with different code points, which look alike.
pub fn other_forms(reference: &str) -> Vec<(&'static str, String)> {
    use unicode_normalization::UnicodeNormalization as _;
    let mut forms: Vec<(&'static str, String)> = Vec::new();
    for (name, form) in [
        ("NFC", reference.nfc().collect::<String>()),
        ("NFD", reference.nfd().collect::<String>()),
    ] {
        if form != reference && forms.iter().all(|(_, seen)| *seen != form) {
            forms.push((name, form));
        }
    }
    forms
}

/// [`missing`], with what was found under another normalization form of
/// the reference (`form`, the transaction's id): still `missing`, the
/// bytes differ and nothing is matched silently, but the detail says it.
pub fn missing_beside(row: &Valid, form: &str, id: &str) -> Judgement {
    let mut judgement = missing(row);
    if let Some(detail) = judgement.detail.as_mut() {
        detail.push_str(&format!(
            "; a transaction with the same reference in another Unicode normalization form \
             ({form}) exists: {}; the ledger and the service write it differently",
            crate::output::printable(id)
        ));
    }
    judgement
}

/// Whether `reference` looks like a number a spreadsheet wrote in
/// scientific notation (`1.23456789012346E+017`, `1E+17`): digits, an
/// optional `.` and digits, `E` or `e`, an optional sign, digits.
fn scientific(reference: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let Some((mantissa, exponent)) = reference.split_once(['E', 'e']) else {
        return false;
    };
    let exponent = exponent.strip_prefix(['+', '-']).unwrap_or(exponent);
    let mantissa_ok = match mantissa.split_once('.') {
        Some((whole, fraction)) => digits(whole) && digits(fraction),
        None => digits(mantissa),
    };
    mantissa_ok && digits(exponent)
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
    if !crate::commands::fits(&found.amount, &row.currency) {
        // More significant decimal places than the row's currency has: not
        // an amount in it. The ledger's (in its currency) can never be the
        // same value, and both are shown.
        return Judgement::new(
            Class::Currency,
            format!(
                "the service's amount {} cannot be in {}; ledger {}",
                found.amount,
                crate::commands::places_of(&row.currency),
                shown(row.amount, &row.currency)
            ),
        );
    }
    // Compared by value (`150.5` is 150.50 MYR).
    let theirs = money::to_minor(found.amount, &row.currency).ok();
    if theirs != Some(row.amount) {
        // The service's amount as it wrote it, without a code: its answer
        // carries none, and the row's is only what the ledger says.
        return Judgement::new(
            Class::Amount,
            format!(
                "ledger {}, service {}",
                shown(row.amount, &row.currency),
                found.amount
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
        |major| format!("{major} {}", currency.code()),
    )
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
        // Fewer decimal places than KWD's 3 are no evidence: 1.50 is 1.500.
        assert_eq!(
            class(
                &valid(1500, Currency::KWD, None),
                &found("1.50", "SUCCESSFUL")
            ),
            Class::Match
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
            Some("ledger 10.00 MYR, service 10.50")
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
                "the service's amount 10.50 cannot be in JPY (no decimal places); ledger 1050 JPY"
            )
        );
    }

    /// A service may write an amount with fewer decimal places than its
    /// currency has (`150.5`, `150`: a number is a number): compared by
    /// value, never `currency`. Only more significant decimal places than
    /// the row's currency allows are (`10.505` for MYR, `10.5` for JPY;
    /// `1500.00` is 1500 JPY). The service's amount is shown as written,
    /// without a code (its answer carries none).
    #[test]
    fn only_more_decimal_places_than_the_currency_has_are_currency() {
        let judged = |minor, currency, amount| {
            let judged = judge(&valid(minor, currency, None), &found(amount, "SUCCESSFUL"));
            (judged.class, judged.detail.unwrap_or_default())
        };
        for (minor, currency, amount) in [
            (15050, Currency::MYR, "150.5"),
            (15000, Currency::MYR, "150"),
            (1500, Currency::JPY, "1500.00"),
            (1500, Currency::KWD, "1.5"),
        ] {
            assert_eq!(
                judged(minor, currency.clone(), amount),
                (Class::Match, String::new()),
                "{amount} {currency:?}"
            );
        }
        assert_eq!(
            judged(9900, Currency::MYR, "10.5"),
            (Class::Amount, "ledger 99.00 MYR, service 10.5".to_owned())
        );
        assert_eq!(
            judged(1050, Currency::MYR, "10.505"),
            (
                Class::Currency,
                "the service's amount 10.505 cannot be in MYR (2 decimal places); ledger 10.50 MYR"
                    .to_owned()
            )
        );
        assert_eq!(judged(1050, Currency::MYR, "10.5050").0, Class::Currency);
        assert_eq!(judged(11, Currency::JPY, "10.5").0, Class::Currency);
    }

    /// A reference a spreadsheet wrote as a number in scientific notation
    /// is `missing` with a hint; any other is only `missing`.
    #[test]
    fn a_missing_reference_in_scientific_notation_says_a_spreadsheet_did_it() {
        let row = |reference: &str| Valid {
            reference: reference.to_owned(),
            ..valid(100, Currency::MYR, None)
        };
        for reference in ["1.23456789012346E+017", "1.2E+17", "1E17", "4.5e-3"] {
            let detail = missing(&row(reference)).detail.unwrap_or_default();
            assert!(
                detail.contains("a spreadsheet probably turned the reference into a number"),
                "{reference}: {detail}"
            );
        }
        for reference in ["INV-1E+17", "1.2E", "E+17", "1.E5", "12345"] {
            assert_eq!(
                missing(&row(reference)).detail.as_deref(),
                Some("the service has no transaction with this referenceNo"),
                "{reference}"
            );
        }
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
