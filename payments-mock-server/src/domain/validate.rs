//! Request body validation (CONTRACT sections 1 and 2): every failed rule,
//! in the order of the fields in the document's request tables, each
//! starting with the field's JSON name, joined by `; `.

use iso_currency::Currency;
use serde_json::{Map, Value};

use crate::domain::catalog::{Catalog, is_product_code};
pub use crate::domain::fields::parse_object;
use crate::domain::fields::{Field, Fields, Name};
use crate::domain::invalid::Invalid;
use crate::domain::transaction::NewTransaction;

use crate::domain::rules;
pub use crate::domain::rules::{MAX_AMOUNT, MAX_EXTRA_BYTES};

/// Collects failed rules.
#[derive(Debug, Default)]
struct Problems(Vec<String>);

impl Problems {
    fn push(&mut self, problem: String) {
        self.0.push(problem);
    }

    fn into_result<T>(self, value: impl FnOnce() -> T) -> Result<T, Invalid> {
        if self.0.is_empty() {
            Ok(value())
        } else {
            Err(Invalid::rules(self.0.join("; ")))
        }
    }
}

/// A string field: `None` when absent, or when not a string (recorded).
fn string<'a>(
    body: &'a impl Fields,
    name: Name,
    required: bool,
    problems: &mut Problems,
) -> Option<&'a str> {
    match body.field(name) {
        None => {
            if required {
                problems.push(format!("{} is required", name.as_str()));
            }
            None
        }
        Some(Field::Str(s)) => Some(s),
        Some(Field::Number(_) | Field::Value(_)) => {
            // CONTRACT 2: "Type errors read ... `merchantId must be a UUID`".
            let kind = match name {
                Name::MerchantId => "a UUID",
                _ => "a string",
            };
            problems.push(format!("{} must be {kind}", name.as_str()));
            None
        }
    }
}

/// Checks a length in characters (Unicode code points: `é` written as
/// `e` and a combining accent is two, CONTRACT section 1); records and
/// returns whether it fits. The message says the unit and the count, after
/// the rule: `referenceNo must be between 1 and 64 characters (Unicode
/// code points), this one has 66` (a comma: `; ` separates rules).
fn length(value: &str, name: &str, min: usize, max: usize, problems: &mut Problems) -> bool {
    let n = value.chars().count();
    let ok = (min..=max).contains(&n);
    if !ok {
        problems.push(format!(
            "{name} must be between {min} and {max} characters (Unicode code points), \
             this one has {n}"
        ));
    }
    ok
}

/// The integer a JSON number holds, judged by its literal text (with
/// `arbitrary_precision`, `1.0` and `1e2` keep their text and are not
/// integers). Too large for i128 saturates, keeping the sign.
fn integer(text: &str) -> Option<i128> {
    if text.bytes().any(|b| matches!(b, b'.' | b'e' | b'E')) {
        return None;
    }
    // The usual amount or quantity fits an `i64`, whose parse is a third
    // of an `i128`'s.
    if let Ok(n) = text.parse::<i64>() {
        return Some(i128::from(n));
    }
    Some(text.parse::<i128>().unwrap_or(if text.starts_with('-') {
        i128::MIN
    } else {
        i128::MAX
    }))
}

/// An integer field: `None` when absent or mistyped (recorded).
fn int_field(body: &impl Fields, name: Name, problems: &mut Problems) -> Option<i128> {
    match body.field(name)? {
        Field::Number(n) => {
            let v = integer(n);
            if v.is_none() {
                problems.push(format!("{} must be an integer", name.as_str()));
            }
            v
        }
        _ => {
            problems.push(format!("{} must be an integer", name.as_str()));
            None
        }
    }
}

/// `extraProperties`: a JSON object, or a string holding one; stored as the
/// compact JSON text.
fn extra_properties(body: &impl Fields, problems: &mut Problems) -> Option<String> {
    const NAME: &str = "extraProperties";
    let text = match body.field(Name::ExtraProperties)? {
        Field::Value(object @ Value::Object(_)) => Some(object.to_string()),
        Field::Str(s) => crate::domain::extra::object_text(s),
        Field::Number(_) | Field::Value(_) => None,
    };
    let Some(text) = text else {
        problems.push(format!(
            "{NAME} must be a JSON object or a string holding one"
        ));
        return None;
    };
    if text.len() > MAX_EXTRA_BYTES {
        problems.push(format!("{NAME} must be at most 16 KiB"));
        return None;
    }
    Some(text)
}

fn check_reference(reference: &str, name: &str, problems: &mut Problems) {
    // Every rule it fails is listed (CONTRACT section 2): a reference too
    // long is checked for the others too; only an empty one has nothing
    // more to fail.
    if !length(reference, name, 1, rules::REFERENCE_MAX, problems) && reference.is_empty() {
        return;
    }
    // Printable ASCII, as nearly every reference is, holds no control
    // character and no whitespace but the space: two byte checks instead
    // of walking its characters twice.
    let printable = reference.bytes().all(|b| (b' '..=b'~').contains(&b));
    let untrimmed = if printable {
        reference.starts_with(' ') || reference.ends_with(' ')
    } else {
        reference.trim() != reference
    };
    if untrimmed {
        problems.push(format!(
            "{name} must not have leading or trailing whitespace"
        ));
    }
    if !printable && reference.chars().any(char::is_control) {
        problems.push(format!("{name} must not contain control characters"));
    }
    // URL parsing removes the dot segments `.` and `..` (and their
    // percent-encoded forms): no client could ever read such a reference
    // back with `GET /api/payments/reference/{referenceNo}/status`.
    if matches!(reference, "." | "..") {
        problems.push(format!("{name} must not be . or .."));
    }
}

/// Validates an initiate body against CONTRACT section 1 and the catalogue.
///
/// # Errors
///
/// `VALIDATION_ERROR` listing every failed rule.
pub fn initiate(body: &Map<String, Value>, catalog: &Catalog) -> Result<NewTransaction, Invalid> {
    initiate_fields(body, catalog)
}

/// [`initiate`] of any [`Fields`] (the handler's borrowing body).
pub(crate) fn initiate_fields(
    body: &impl Fields,
    catalog: &Catalog,
) -> Result<NewTransaction, Invalid> {
    let mut p = Problems::default();

    let merchant_id = string(body, Name::MerchantId, true, &mut p).and_then(|s| {
        // The hyphenated form only (rules::UUID): what the document says.
        let id = rules::uuid(s);
        if id.is_none() {
            p.push("merchantId must be a UUID".to_owned());
        }
        id
    });

    let reference_no = string(body, Name::ReferenceNo, true, &mut p);
    if let Some(r) = reference_no {
        check_reference(r, "referenceNo", &mut p);
    }

    let description = string(body, Name::Description, false, &mut p);
    if let Some(n) = description
        .map(|d| d.chars().count())
        .filter(|n| *n > rules::DESCRIPTION_MAX)
    {
        p.push(format!(
            "description must be at most {} characters (Unicode code points), this one has {n}",
            rules::DESCRIPTION_MAX
        ));
    }

    let amount = match int_field(body, Name::Amount, &mut p) {
        None if body.field(Name::Amount).is_none() => {
            p.push("amount is required".to_owned());
            None
        }
        None => None,
        Some(a) if a < 1 => {
            p.push("amount must be greater than 0".to_owned());
            None
        }
        Some(a) if a > i128::from(MAX_AMOUNT) => {
            p.push(format!("amount must be at most {MAX_AMOUNT}"));
            None
        }
        Some(a) => u64::try_from(a).ok(),
    };

    let currency = match string(body, Name::CurrencyCode, false, &mut p) {
        None => Some(Currency::MYR),
        Some(code) => {
            let c = rules::active_currency(code);
            if c.is_none() {
                p.push(if rules::has_no_minor_unit(code) {
                    // An ISO 4217 code (three letters): safe to quote.
                    format!("currencyCode {code} has no minor unit and cannot be paid in")
                } else {
                    "currencyCode must be an active ISO 4217 alphabetic code in upper case"
                        .to_owned()
                });
            }
            c
        }
    };

    let product_code = string(body, Name::ProductCode, true, &mut p);
    let product = product_code.and_then(|code| {
        if !is_product_code(code) {
            p.push("productCode must be 1-32 of A-Z 0-9 _ -".to_owned());
            return None;
        }
        let product = catalog.product(code);
        if product.is_none() {
            p.push(format!("productCode {code} is not offered"));
        }
        product
    });

    let quantity = match int_field(body, Name::Quantity, &mut p) {
        Some(q) if !(1..=i128::from(rules::QUANTITY_MAX)).contains(&q) => {
            p.push(format!(
                "quantity must be between 1 and {}",
                rules::QUANTITY_MAX
            ));
            None
        }
        Some(q) => {
            let q = u32::try_from(q).ok();
            let limit = product.and_then(|p| p.max_quantity.map(|max| (max, &p.code)));
            if let (Some(q), Some((max, code))) = (q, limit)
                && q > max
            {
                p.push(format!("quantity must be at most {max} for product {code}"));
            }
            q
        }
        None => None,
    };

    let country_code = string(body, Name::CountryCode, false, &mut p);
    if country_code.is_some_and(|c| !rules::is_country_code(c)) {
        p.push("countryCode must be an assigned ISO 3166-1 alpha-2 code in upper case".to_owned());
    }

    let store_id = string(body, Name::StoreId, true, &mut p);
    if let Some(s) = store_id {
        length(s, "storeId", 1, rules::STORE_ID_MAX, &mut p);
    }
    let device_id = string(body, Name::DeviceId, false, &mut p);
    if let Some(d) = device_id {
        length(d, "deviceId", 1, rules::STORE_ID_MAX, &mut p);
    }

    let payer_id = string(body, Name::PayerId, false, &mut p);
    match (payer_id, product) {
        (Some(id), _) => {
            length(id, "payerId", 1, rules::PAYER_ID_MAX, &mut p);
        }
        (None, Some(product)) if product.payer_id_required => {
            if body.field(Name::PayerId).is_none() {
                p.push(format!("payerId is required for product {}", product.code));
            }
        }
        (None, _) => {}
    }

    let return_url = string(body, Name::ReturnUrl, false, &mut p);
    if let Some(u) = return_url {
        // The document's pattern (rules::RETURN_URL), and a URL the return
        // address can be built from.
        let ok = rules::is_return_url(u) && crate::domain::redirect::is_returnable(u);
        if !ok {
            p.push(format!(
                "returnUrl must be an absolute http or https URL of at most {} characters",
                payments_interface::rules::RETURN_URL_MAX
            ));
        }
    }

    if let Some(product) = product.filter(|p| p.requires_return_url())
        && body.field(Name::ReturnUrl).is_none()
    {
        // The payer is sent back there (CONTRACT section 13).
        p.push(format!(
            "returnUrl is required for product {}",
            product.code
        ));
    }

    let extra = extra_properties(body, &mut p);

    p.into_result(|| NewTransaction {
        // Every `unwrap_or_default` below is unreachable: an empty problem
        // list means every required field was present and valid.
        merchant_id: merchant_id.unwrap_or_default(),
        reference_no: reference_no.unwrap_or_default().to_owned(),
        description: description.map(str::to_owned),
        amount_minor: amount.unwrap_or_default(),
        currency_code: currency.map(|c| c.code().to_owned()).unwrap_or_default(),
        currency_exponent: currency.and_then(|c| c.exponent()).unwrap_or(2),
        product_code: product_code.unwrap_or_default().to_owned(),
        quantity,
        country_code: country_code.map(str::to_owned),
        store_id: store_id.unwrap_or_default().to_owned(),
        device_id: device_id.map(str::to_owned),
        payer_id: payer_id.map(str::to_owned),
        return_url: return_url.map(str::to_owned),
        extra_properties: extra,
    })
}

/// A validated confirm body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfirmBody {
    /// As sent.
    pub transaction_id: String,
    /// As sent.
    pub reference_no: String,
    /// OTP.
    pub confirmation_code: Option<String>,
    /// Compact JSON object text.
    pub extra_properties: Option<String>,
}

/// Validates a confirm body (CONTRACT sections 1 and 6, rule 1).
///
/// # Errors
///
/// `VALIDATION_ERROR` listing every failed rule.
pub fn confirm(body: &Map<String, Value>) -> Result<ConfirmBody, Invalid> {
    confirm_fields(body)
}

/// [`confirm`] of any [`Fields`] (the handler's borrowing body).
pub(crate) fn confirm_fields(body: &impl Fields) -> Result<ConfirmBody, Invalid> {
    let mut p = Problems::default();
    let transaction_id = string(body, Name::TransactionId, true, &mut p);
    if transaction_id.is_some_and(|t| t.trim().is_empty()) {
        p.push("transactionId must not be empty".to_owned());
    }
    let reference_no = string(body, Name::ReferenceNo, true, &mut p);
    if reference_no.is_some_and(str::is_empty) {
        p.push("referenceNo must not be empty".to_owned());
    }
    let code = string(body, Name::ConfirmationCode, false, &mut p);
    if let Some(c) = code {
        length(
            c,
            "confirmationCode",
            1,
            rules::CONFIRMATION_CODE_MAX,
            &mut p,
        );
    }
    let extra = extra_properties(body, &mut p);
    p.into_result(|| ConfirmBody {
        transaction_id: transaction_id.unwrap_or_default().to_owned(),
        reference_no: reference_no.unwrap_or_default().to_owned(),
        confirmation_code: code.map(str::to_owned),
        extra_properties: extra,
    })
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::{Problems, check_reference, integer};

    /// ISO 4217 codes without a minor unit (gold, silver, the SDR, test)
    /// are active ones: the refusal says why, not that they are unknown.
    #[test]
    fn a_currency_without_a_minor_unit_is_refused_as_such() {
        let catalog = crate::domain::catalog::Catalog::default();
        let refusal = |code: &str| {
            let body = serde_json::json!({ "currencyCode": code });
            match super::initiate(body.as_object().expect("an object"), &catalog) {
                Err(super::Invalid::Rules(rules)) => rules,
                other => panic!("{other:?}"),
            }
        };
        for code in ["XAU", "XAG", "XDR", "XSU", "XUA", "XTS"] {
            let rules = refusal(code);
            assert!(
                rules.contains(&format!(
                    "currencyCode {code} has no minor unit and cannot be paid in"
                )),
                "{rules}"
            );
            assert!(!rules.contains("must be an active"), "{rules}");
        }
        for code in ["AAA", "myr", "HRK"] {
            assert!(
                refusal(code).contains(
                    "currencyCode must be an active ISO 4217 alphabetic code in upper case"
                ),
                "{code}"
            );
        }
    }

    /// The checks as written before their quick ways: every character
    /// walked, every integer parsed as an `i128`.
    fn reference_problems_slowly(reference: &str) -> Vec<String> {
        let mut problems = Problems::default();
        if !super::length(
            reference,
            "r",
            1,
            crate::domain::rules::REFERENCE_MAX,
            &mut problems,
        ) && reference.is_empty()
        {
            return problems.0;
        }
        if reference.trim() != reference {
            problems.push("r must not have leading or trailing whitespace".to_owned());
        }
        if reference.chars().any(char::is_control) {
            problems.push("r must not contain control characters".to_owned());
        }
        if matches!(reference, "." | "..") {
            problems.push("r must not be . or ..".to_owned());
        }
        problems.0
    }

    fn integer_slowly(text: &str) -> Option<i128> {
        if text.contains(['.', 'e', 'E']) {
            return None;
        }
        Some(text.parse::<i128>().unwrap_or(if text.starts_with('-') {
            i128::MIN
        } else {
            i128::MAX
        }))
    }

    /// Every rule a reference fails is listed, a too long one's others too
    /// (CONTRACT section 2).
    #[test]
    fn a_reference_too_long_is_judged_by_every_rule() {
        let mut problems = Problems::default();
        check_reference(&format!(" {}", "a".repeat(64)), "r", &mut problems);
        assert_eq!(
            problems.0,
            [
                "r must be between 1 and 64 characters (Unicode code points), this one has 65",
                "r must not have leading or trailing whitespace"
            ]
        );
        let mut problems = Problems::default();
        check_reference(&format!("a\u{1}{}", "b".repeat(64)), "r", &mut problems);
        assert_eq!(
            problems.0,
            [
                "r must be between 1 and 64 characters (Unicode code points), this one has 66",
                "r must not contain control characters"
            ]
        );
        let mut problems = Problems::default();
        check_reference("", "r", &mut problems);
        assert_eq!(
            problems.0,
            ["r must be between 1 and 64 characters (Unicode code points), this one has 0"]
        );
    }

    /// A length says its unit and the count: 33 accented letters, each
    /// an `e` and a combining accent, look like 33 characters and are 66
    /// code points.
    #[test]
    fn a_length_refused_says_code_points_and_how_many() {
        let mut problems = Problems::default();
        check_reference(&"e\u{301}".repeat(33), "referenceNo", &mut problems);
        assert_eq!(
            problems.0,
            [
                "referenceNo must be between 1 and 64 characters (Unicode code points), \
              this one has 66"
            ]
        );
        // Each rule stays one rule: `; ` still separates rules alone.
        assert!(!problems.0[0].contains(';'));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]

        #[test]
        fn references_are_judged_as_character_by_character(
            reference in prop_oneof![
                "[ -~]{0,70}",
                "[ -~\\t\\n\\r\\x0b\\x0c\\x7f\\u{85}\\u{a0}\\u{2028}\\u{3000}é]{0,70}",
                any::<String>(),
            ]
        ) {
            let mut problems = Problems::default();
            check_reference(&reference, "r", &mut problems);
            let quick = problems.0;
            prop_assert_eq!(quick, reference_problems_slowly(&reference));
        }

        #[test]
        fn integers_are_read_as_an_i128_reads_them(
            text in prop_oneof![
                "[-+]?[0-9]{0,45}",
                "-?[0-9]{1,20}(\\.[0-9]{0,3})?([eE][-+]?[0-9]{1,3})?",
                any::<i64>().prop_map(|n| n.to_string()),
                any::<i128>().prop_map(|n| n.to_string()),
                any::<String>(),
            ]
        ) {
            prop_assert_eq!(integer(&text), integer_slowly(&text));
        }
    }
}
