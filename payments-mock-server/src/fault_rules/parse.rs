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
/// `integer`: `2.0` is 2), its range left to [`FaultRule::check`].
fn count(body: &Map<String, Value>, field: &'static str, default: u64) -> Result<u64, RuleError> {
    match body.get(field) {
        None => Ok(default),
        Some(Value::Number(n)) => n
            .as_u64()
            .or_else(|| {
                n.as_f64()
                    .filter(|f| f.fract() == 0.0 && (0.0..=MAX_COUNT as f64).contains(f))
                    .map(|f| f as u64)
            })
            .ok_or_else(|| RuleError::new(field, COUNT_PROBLEM)),
        Some(_) => Err(RuleError::new(field, COUNT_PROBLEM)),
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
    rule.probability = match body.get("probability") {
        None => 1.0,
        Some(Value::Number(n)) => n.as_f64().unwrap_or(f64::NAN),
        Some(_) => f64::NAN,
    };
    rule.check()?;
    Ok(rule)
}
