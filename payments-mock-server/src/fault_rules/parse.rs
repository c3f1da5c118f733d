//! Rules as `POST /_mock/faults` takes them, and the limits every rule
//! is held to, however it was made ([`parse_rule`] and
//! [`crate::Controls::add_fault_rule`] both end in [`FaultRule::check`]):
//! what `GET /_mock/faults` lists of a rule, `POST` takes back.

use serde_json::{Map, Value};
use uuid::Uuid;

use super::{FaultRule, MAX_COUNT, MAX_REFERENCE, RuleError, endpoint_name};
use crate::faults::Fault;
use payments_interface::Endpoint;

/// What is wrong with an `after` or `times` out of its range.
const COUNT_PROBLEM: &str = "must be a whole number from 0 to 4294967295";

impl FaultRule {
    /// Holds the rule to its limits, the same for a rule parsed from JSON
    /// and one built in-process: a probability from 0 to 1 (`-0.0` is
    /// made 0, so it lists as `0.0`), `after` and `times` at most
    /// [`MAX_COUNT`], a reference of 1 to 64 characters and no control
    /// character, and the fault's own limits ([`Fault::check`]).
    pub(crate) fn check(&mut self) -> Result<(), RuleError> {
        if !(0.0..=1.0).contains(&self.probability) {
            return Err(RuleError::new(
                "probability",
                "must be a number from 0 to 1",
            ));
        }
        if self.probability == 0.0 {
            // -0.0 too: listed as it was given, it would read `-0.0`.
            self.probability = 0.0;
        }
        if self.after > MAX_COUNT {
            return Err(RuleError::new("after", COUNT_PROBLEM));
        }
        if self.times > MAX_COUNT {
            return Err(RuleError::new("times", COUNT_PROBLEM));
        }
        if let Some(r) = &self.matching.reference_no {
            check_reference(r)?;
        }
        self.fault
            .check()
            .map_err(|problem| RuleError::new("fault", problem))
    }
}

pub(super) fn check_reference(r: &str) -> Result<(), RuleError> {
    if r.is_empty() || r.chars().count() > MAX_REFERENCE || r.chars().any(char::is_control) {
        return Err(RuleError::new(
            "match.referenceNo",
            "must be 1 to 64 characters, none of them a control character",
        ));
    }
    Ok(())
}

fn endpoint_of(name: &str) -> Option<Option<Endpoint>> {
    Endpoint::ALL
        .into_iter()
        .find(|e| endpoint_name(*e) == name)
        .map(Some)
        .or_else(|| (name == "any").then_some(None))
}

/// A count field as JSON gives it: a whole number (JSON Schema's
/// `integer`: `2.0` is 2), read from the number's text, exactly:
/// `0.99999999999999999` is no whole number, though it is 1 as an `f64`.
/// Its range is left to [`FaultRule::check`].
fn count(body: &Map<String, Value>, field: &'static str, default: u64) -> Result<u64, RuleError> {
    match body.get(field) {
        None => Ok(default),
        Some(Value::Number(n)) => Exact::of(n)
            .and_then(|exact| exact.whole())
            .ok_or_else(|| RuleError::new(field, COUNT_PROBLEM)),
        Some(_) => Err(RuleError::new(field, COUNT_PROBLEM)),
    }
}

/// `probability` as JSON gives it: from 0 to 1, compared exactly from the
/// number's text (`1.00000000000000001` is more than 1, though it is 1 as
/// an `f64`), then kept as the nearest `f64`.
fn probability(body: &Map<String, Value>) -> Result<f64, RuleError> {
    let problem = || RuleError::new("probability", "must be a number from 0 to 1");
    match body.get("probability") {
        None => Ok(1.0),
        Some(Value::Number(n)) => Exact::of(n)
            .filter(Exact::within_one)
            .and_then(|_| n.as_f64())
            .ok_or_else(problem),
        Some(_) => Err(problem()),
    }
}

/// A JSON number read exactly from its text (which serde_json's
/// `arbitrary_precision` keeps): `digits` × 10^`exponent`, the digits
/// without a leading or a trailing zero (none for zero).
struct Exact {
    negative: bool,
    digits: String,
    exponent: i64,
}

impl Exact {
    /// The number's text read, as RFC 8259 writes a number.
    fn of(n: &serde_json::Number) -> Option<Self> {
        let text = n.to_string();
        let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        let (negative, rest) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text.as_str()),
        };
        let (mantissa, power) = match rest.split_once(['e', 'E']) {
            Some((mantissa, power)) => (mantissa, Some(power)),
            None => (rest, None),
        };
        let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        if whole.is_empty() || !all_digits(whole) || !all_digits(fraction) {
            return None;
        }
        // Saturated far beyond any digits a body holds: only its sign and
        // size matter then.
        let mut exponent = match power {
            None => 0,
            Some(power) => {
                let (minus, digits) = match power.strip_prefix(['-', '+']) {
                    Some(digits) => (power.starts_with('-'), digits),
                    None => (false, power),
                };
                if digits.is_empty() || !all_digits(digits) {
                    return None;
                }
                let size = digits.bytes().fold(0i64, |n, b| {
                    n.saturating_mul(10)
                        .saturating_add(i64::from(b - b'0'))
                        .min(1 << 40)
                });
                if minus { -size } else { size }
            }
        };
        let joined = format!("{whole}{fraction}");
        let significant = joined.trim_start_matches('0');
        let digits = significant.trim_end_matches('0');
        let length = |s: &str| i64::try_from(s.len()).unwrap_or(i64::MAX);
        exponent = exponent
            .saturating_sub(length(fraction))
            .saturating_add(length(significant) - length(digits));
        Some(Self {
            negative,
            digits: digits.to_owned(),
            exponent,
        })
    }

    /// The number as a `u64` when it is a whole one (`-0` is 0).
    fn whole(&self) -> Option<u64> {
        if self.digits.is_empty() {
            return Some(0);
        }
        if self.negative {
            return None;
        }
        let zeros = u32::try_from(self.exponent).ok()?;
        self.digits
            .parse::<u64>()
            .ok()?
            .checked_mul(10u64.checked_pow(zeros)?)
    }

    /// Whether the number is from 0 to 1 (`-0` is 0).
    fn within_one(&self) -> bool {
        if self.digits.is_empty() {
            return true;
        }
        // 10^(magnitude - 1) <= the number < 10^magnitude.
        let magnitude = i64::try_from(self.digits.len())
            .unwrap_or(i64::MAX)
            .saturating_add(self.exponent);
        !self.negative && (magnitude <= 0 || self.digits == "1" && self.exponent == 0)
    }
}

pub(super) fn uuid_field(
    matching: &Map<String, Value>,
    name: &str,
    field: &'static str,
) -> Result<Option<Uuid>, RuleError> {
    match matching.get(name) {
        None => Ok(None),
        Some(Value::String(s)) if s.len() == 36 => Uuid::parse_str(s)
            .map(Some)
            .map_err(|_| RuleError::new(field, "must be a UUID (8-4-4-4-12 hex digits)")),
        Some(_) => Err(RuleError::new(
            field,
            "must be a UUID (8-4-4-4-12 hex digits)",
        )),
    }
}

/// Parses the body of `POST /_mock/faults` (an object, already read):
/// strict, every field checked and named when wrong.
///
/// # Errors
///
/// The first field that is wrong, or unknown.
pub fn parse_rule(body: &Map<String, Value>) -> Result<FaultRule, RuleError> {
    for key in body.keys() {
        if !["match", "after", "times", "probability", "fault"].contains(&key.as_str()) {
            return Err(RuleError::new(
                "body",
                format!(
                    "unknown field {:?}; a rule has match, after, times, probability and fault",
                    key.chars().take(64).collect::<String>()
                ),
            ));
        }
    }
    let fault = match body.get("fault") {
        Some(Value::String(token)) => {
            Fault::from_rule_token(token).map_err(|e| RuleError::new("fault", e))?
        }
        Some(_) => return Err(RuleError::new("fault", "must be a string")),
        None => return Err(RuleError::new("fault", "is required")),
    };
    let mut rule = FaultRule::new(fault);
    match body.get("match") {
        None => {}
        Some(Value::Object(m)) => {
            for key in m.keys() {
                if !["endpoint", "merchantId", "referenceNo", "transactionId"]
                    .contains(&key.as_str())
                {
                    return Err(RuleError::new(
                        "match",
                        format!(
                            "unknown field {:?}; match has endpoint, merchantId, referenceNo \
                             and transactionId",
                            key.chars().take(64).collect::<String>()
                        ),
                    ));
                }
            }
            rule.matching.endpoint = match m.get("endpoint") {
                None => None,
                Some(Value::String(name)) => endpoint_of(name).ok_or_else(|| {
                    RuleError::new(
                        "match.endpoint",
                        "must be initiate, confirm, status, status-by-reference or any",
                    )
                })?,
                Some(_) => {
                    return Err(RuleError::new(
                        "match.endpoint",
                        "must be initiate, confirm, status, status-by-reference or any",
                    ));
                }
            };
            rule.matching.merchant_id = uuid_field(m, "merchantId", "match.merchantId")?;
            rule.matching.transaction_id = uuid_field(m, "transactionId", "match.transactionId")?;
            rule.matching.reference_no = match m.get("referenceNo") {
                None => None,
                Some(Value::String(r)) => Some(r.clone()),
                Some(_) => return Err(RuleError::new("match.referenceNo", "must be a string")),
            };
        }
        Some(_) => return Err(RuleError::new("match", "must be an object")),
    }
    rule.after = count(body, "after", 0)?;
    rule.times = count(body, "times", 1)?;
    rule.probability = probability(body)?;
    rule.check()?;
    Ok(rule)
}
