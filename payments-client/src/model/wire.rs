//! Tolerant field decoders for CONTRACT section 11.
//!
//! Amounts are read from the JSON text of the value itself
//! ([`RawValue`]), so they are parsed from text and never through `f64`,
//! whether or not an application turns on `serde_json`'s
//! `arbitrary_precision` (this crate does not: Cargo would turn it on for
//! the whole application).

use chrono::{DateTime, NaiveDate, Utc};
use payments_interface::timestamp;
use rust_decimal::Decimal;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::model::money_error::MoneyError;

/// Parses decimal text exactly, keeping its scale (`150.00` stays 2 dp).
///
/// Only a number as JSON writes one is read: an optional `-`, digits, an
/// optional `.` and digits, an optional exponent (`e` or `E`, an optional
/// sign, digits): plain (`-1.25`) and scientific (`1.5e2`) notation, as
/// the client reads a JSON number, and the same text in a numeric string.
/// Leading zeros (`007.50`) are allowed, as in a ledger's cell. Anything
/// else is refused, never guessed at: `1_050` (Rust's digit separator),
/// `+5`, ` 5`, `5.`, `.5`, `1,050.00`. An exponent only moves the point:
/// `1.05000000000000000000000000001e1` is refused as its plain form
/// `10.5000000000000000000000000001` is (more digits than a decimal holds),
/// never rounded to `10.50`.
///
/// # Errors
///
/// [`MoneyError::Invalid`] for anything that is not an exact decimal.
///
/// # Examples
///
/// ```
/// use payments_client::money::parse_decimal;
/// assert_eq!(parse_decimal("150.00")?.to_string(), "150.00");
/// assert_eq!(parse_decimal("1.5e2")?.to_string(), "150");
/// assert!(parse_decimal("2_0.00").is_err());
/// assert!(parse_decimal("+20.00").is_err());
/// # Ok::<(), payments_client::money::MoneyError>(())
/// ```
pub fn parse_decimal(text: &str) -> Result<Decimal, MoneyError> {
    let invalid = || MoneyError::Invalid(text.to_owned());
    if !is_number_text(text) {
        return Err(invalid());
    }
    let plain;
    let exact = match text.split_once(['e', 'E']) {
        Some((mantissa, exponent)) => {
            plain = without_exponent(mantissa, exponent).ok_or_else(invalid)?;
            plain.as_str()
        }
        None => text,
    };
    // `from_str_exact` refuses what it would have to round;
    // `Decimal::from_scientific` rounded `1.05000000000000000000000000001e1`
    // to 10.500000000000000000000000000, equal to 10.50.
    Decimal::from_str_exact(exact).map_err(|_| invalid())
}

/// The plain text of `mantissa` × 10^`exponent` (`1.5`, `2` → `150`;
/// `15`, `-1` → `1.5`), moving the point and nothing else, so that the exact
/// parser refuses what cannot be held exactly. `None` for an exponent past
/// ±1024: no decimal this crate holds needs one, and the text would be that
/// long.
fn without_exponent(mantissa: &str, exponent: &str) -> Option<String> {
    const MAX_EXPONENT: i64 = 1024;
    let exponent: i64 = exponent
        .strip_prefix('+')
        .unwrap_or(exponent)
        .parse()
        .ok()?;
    if !(-MAX_EXPONENT..=MAX_EXPONENT).contains(&exponent) {
        return None;
    }
    let (sign, unsigned) = match mantissa.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", mantissa),
    };
    let (whole, fraction) = unsigned.split_once('.').unwrap_or((unsigned, ""));
    let digits = format!("{whole}{fraction}");
    // Where the point goes, counted in digits from the left.
    let point = i64::try_from(whole.len()).ok()? + exponent;
    let len = i64::try_from(digits.len()).ok()?;
    let mut out = String::with_capacity(digits.len() + 3);
    out.push_str(sign);
    if point <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', usize::try_from(-point).ok()?));
        out.push_str(&digits);
    } else if point >= len {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', usize::try_from(point - len).ok()?));
    } else {
        let (left, right) = digits.split_at(usize::try_from(point).ok()?);
        out.push_str(left);
        out.push('.');
        out.push_str(right);
    }
    Some(out)
}

/// `-? DIGITS (. DIGITS)? ([eE] [+-]? DIGITS)?`: JSON's number, with
/// leading zeros allowed. `rust_decimal`'s parsers also take `_`
/// separators and a leading `+`, which no JSON number has: `"2_0.00"` was
/// read as 20.00.
fn is_number_text(text: &str) -> bool {
    fn digits(s: &str) -> Option<&str> {
        let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
        (end > 0).then(|| &s[end..])
    }
    let rest = text.strip_prefix('-').unwrap_or(text);
    let Some(mut rest) = digits(rest) else {
        return false;
    };
    if let Some(fraction) = rest.strip_prefix('.') {
        let Some(after) = digits(fraction) else {
            return false;
        };
        rest = after;
    }
    if let Some(exponent) = rest.strip_prefix(['e', 'E']) {
        let exponent = exponent.strip_prefix(['+', '-']).unwrap_or(exponent);
        let Some(after) = digits(exponent) else {
            return false;
        };
        rest = after;
    }
    rest.is_empty()
}

fn describe(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A decimal from a JSON number (its literal text) or a numeric string.
pub(crate) fn decimal<'de, D: Deserializer<'de>>(d: D) -> Result<Decimal, D::Error> {
    let raw = Box::<RawValue>::deserialize(d)?;
    let text = raw.get().trim();
    match text.as_bytes().first() {
        Some(b'-' | b'0'..=b'9') => parse_decimal(text).map_err(D::Error::custom),
        Some(b'"') => {
            let s: String = serde_json::from_str(text).map_err(D::Error::custom)?;
            parse_decimal(&s).map_err(D::Error::custom)
        }
        _ => {
            let other: Value = serde_json::from_str(text).map_err(D::Error::custom)?;
            Err(D::Error::custom(format!(
                "expected a decimal number or numeric string, found {}",
                describe(&other)
            )))
        }
    }
}

/// Reads a timestamp as the interface's one reader does
/// (`payments_interface::timestamp::parse`, which the contract proxy
/// judges with too): ISO 8601 date and time (extended or basic format;
/// calendar, ordinal or week date; reduced to minutes or hours; a fraction
/// after `.` or `,` of any length, kept to the nanosecond, truncated), `Z`
/// or an offset `±hh`, `±hh:mm` or `±hhmm` up to ±23:59 (converted to UTC),
/// or no offset at all (taken as UTC); `24:00:00` as the next day's
/// midnight, `:60` as a leap second; also a space or `t` for `T`, `z` for
/// `Z` and white space around. An instant whose year in UTC is outside
/// 0000–9999 is refused.
///
/// # Examples
///
/// ```
/// use payments_client::wire::parse_timestamp;
/// let utc = parse_timestamp("2026-11-22T08:15:30.123Z");
/// assert_eq!(parse_timestamp("2026-11-22T16:15:30.123+08:00"), utc);
/// assert_eq!(parse_timestamp("20261122T031530,123-05"), utc);
/// assert!(parse_timestamp("yesterday").is_none());
/// assert!(parse_timestamp("9999-12-31T23:59:59-01:00").is_none());
/// ```
pub fn parse_timestamp(text: &str) -> Option<DateTime<Utc>> {
    read_timestamp(text).ok()
}

/// [`parse_timestamp`], with why a text is refused.
fn read_timestamp(text: &str) -> Result<DateTime<Utc>, timestamp::Error> {
    let t = timestamp::parse(text)?;
    // chrono's leap second: the second 59 with a fraction past 1 s.
    let leap = if t.is_leap_second() { 1_000_000_000 } else { 0 };
    NaiveDate::from_ymd_opt(i32::from(t.year()), t.month().into(), t.day().into())
        .and_then(|date| {
            date.and_hms_nano_opt(
                t.hour().into(),
                t.minute().into(),
                u32::from(t.second().min(59)),
                t.nanosecond() + leap,
            )
        })
        .map(|utc| utc.and_utc())
        .ok_or(timestamp::Error::Date)
}

fn timestamp_value<E: serde::de::Error>(v: Value) -> Result<Option<DateTime<Utc>>, E> {
    match v {
        Value::Null => Ok(None),
        Value::String(s) => read_timestamp(&s)
            .map(Some)
            .map_err(|why| E::custom(format!("invalid timestamp {s:?} ({why})"))),
        other => Err(E::custom(format!(
            "expected a timestamp string, found {}",
            describe(&other)
        ))),
    }
}

/// A required timestamp.
pub(crate) fn timestamp<'de, D: Deserializer<'de>>(d: D) -> Result<DateTime<Utc>, D::Error> {
    timestamp_value(Value::deserialize(d)?)?.ok_or_else(|| D::Error::custom("timestamp is null"))
}

/// An optional timestamp (`null` or absent is `None`).
pub(crate) fn opt_timestamp<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<DateTime<Utc>>, D::Error> {
    timestamp_value(Value::deserialize(d)?)
}

/// `extraProperties`: a JSON string is kept as is, `null` is `None`, and any
/// other JSON value (an object, as a request sample shows) is stored as its
/// JSON text as sent, without the white space between its tokens (its keys
/// in their order, its numbers as written: `1.50` stays `1.50`).
pub(crate) fn extra_properties<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<String>, D::Error> {
    let raw = Box::<RawValue>::deserialize(d)?;
    let text = raw.get().trim();
    match text.as_bytes().first() {
        Some(b'n') => Ok(None),
        Some(b'"') => serde_json::from_str(text)
            .map(Some)
            .map_err(D::Error::custom),
        _ => Ok(Some(compact(text))),
    }
}

/// JSON text (valid: a [`RawValue`]'s) without the white space between its
/// tokens; strings kept exactly.
fn compact(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in json.chars() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if !matches!(c, ' ' | '\t' | '\n' | '\r') {
            out.push(c);
        }
    }
    out
}

/// A currency code; absent or `null` means `MYR`, the document's default.
pub(crate) fn currency_or_default<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<crate::model::currency::Currency, D::Error> {
    Ok(Option::<String>::deserialize(d)?
        .map(|code| crate::model::currency::Currency::from_wire(&code))
        .unwrap_or_default())
}

/// Writes a decimal as a JSON number with its exact text (`150.00`), not as
/// a string and never through `f64`.
pub(crate) fn decimal_as_number<S: serde::Serializer>(
    d: &Decimal,
    s: S,
) -> Result<S::Ok, S::Error> {
    use serde::Serialize as _;
    use serde::ser::Error as _;
    // The number's own text, as it reads: `150.00` keeps its scale and
    // `90071992547409.91` its digits (a `Number` would be an `f64` without
    // `arbitrary_precision`).
    let n = RawValue::from_string(d.to_string()).map_err(S::Error::custom)?;
    n.serialize(s)
}
