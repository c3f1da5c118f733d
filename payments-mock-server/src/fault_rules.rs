//! Scripted faults (CONTRACT section 19): rules that fault the requests
//! they match, installed over HTTP (`POST /_mock/faults`) or in-process
//! ([`crate::Controls::add_fault_rule`]), so a test in any language can
//! make the service commit and then hang, answer a gateway's page, or
//! answer about another order, without sending `X-Mock-Fault` through the
//! application it tests.
//!
//! A request meets the first live rule that matches it, in creation
//! order; `X-Mock-Fault` (and a fault queued by the library) wins over
//! rules. A rule skips its first `after` matching requests, then faults
//! the next ones, each with its probability, until it has fired `times`
//! times (0: until removed); a rule that has fired `times` times is spent
//! and matches nothing more. The probability's draw is a pure function
//! of the fault seed, the rule's creation number and how many requests
//! the rule met, so `--fault-seed` repeats a run.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use payments_interface::Endpoint;
use serde::Serialize;
use serde_json::{Map, Value};
use uuid::Uuid;

use crate::faults::{Fault, KeyHasher};

/// Most rules installed at once (per server).
pub const MAX_RULES: usize = 1000;

/// Longest `referenceNo` a rule can name (the interface's limit).
const MAX_REFERENCE: usize = 64;

/// Largest `after` and `times`.
pub(crate) const MAX_COUNT: u64 = u32::MAX as u64;

/// A rule's `fault`, exactly what [`Fault::from_rule_token`] takes (the
/// OpenAPI document publishes it).
#[cfg_attr(not(feature = "openapi"), allow(dead_code))] // the OpenAPI document
pub(crate) const FAULT_RULE_TOKEN: &str = "^(internal-error|commit-then-error|reset|commit-then-reset|rate-limit|answer-other|hang|commit-then-hang|truncate|gateway=50[234]|delay=(0|[1-9][0-9]{0,3}|[1-5][0-9]{4}|60000)|slow-body=[1-9][0-9]{0,8})$";

/// A rule's `match.referenceNo`: 1 to 64 characters, no control character.
#[cfg_attr(not(feature = "openapi"), allow(dead_code))] // the OpenAPI document
pub(crate) const RULE_REFERENCE: &str = "^[^\\u0000-\\u001f\\u007f-\\u009f]{1,64}$";

/// A rule's ids: a hyphenated UUID, either case.
#[cfg_attr(not(feature = "openapi"), allow(dead_code))] // the OpenAPI document
pub(crate) const UUID_PATTERN: &str =
    "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$";

/// What the requests a rule faults must be: each given part must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RuleMatch {
    /// The endpoint; `None` for any.
    pub endpoint: Option<Endpoint>,
    /// The transaction's merchant.
    pub merchant_id: Option<Uuid>,
    /// The transaction's `referenceNo`.
    pub reference_no: Option<String>,
    /// The transaction's id (a confirm's or a status read's; an initiate
    /// has none yet).
    pub transaction_id: Option<Uuid>,
}

/// A fault rule, built in-process with [`FaultRule::new`] and its
/// builder methods, or parsed from `POST /_mock/faults`.
///
/// ```
/// use payments_mock_server::{Endpoint, Fault, FaultRule};
///
/// // The second confirm of ORDER-1 commits, then never answers.
/// let rule = FaultRule::new(Fault::CommitThenHang)
///     .on(Endpoint::Confirm)
///     .reference("ORDER-1")
///     .after(1);
/// # drop(rule);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct FaultRule {
    pub(crate) matching: RuleMatch,
    pub(crate) after: u64,
    pub(crate) times: u64,
    pub(crate) probability: f64,
    pub(crate) fault: Fault,
}

impl FaultRule {
    /// A rule that faults the next request of any endpoint once with
    /// `fault`.
    pub fn new(fault: Fault) -> Self {
        Self {
            matching: RuleMatch::default(),
            after: 0,
            times: 1,
            probability: 1.0,
            fault,
        }
    }

    /// Only requests to `endpoint`.
    #[must_use]
    pub fn on(mut self, endpoint: Endpoint) -> Self {
        self.matching.endpoint = Some(endpoint);
        self
    }

    /// Only requests about this merchant's transactions.
    #[must_use]
    pub fn merchant(mut self, merchant_id: Uuid) -> Self {
        self.matching.merchant_id = Some(merchant_id);
        self
    }

    /// Only requests about this `referenceNo`.
    #[must_use]
    pub fn reference(mut self, reference_no: impl Into<String>) -> Self {
        self.matching.reference_no = Some(reference_no.into());
        self
    }

    /// Only requests about this transaction.
    #[must_use]
    pub fn transaction(mut self, transaction_id: Uuid) -> Self {
        self.matching.transaction_id = Some(transaction_id);
        self
    }

    /// Lets the first `n` matching requests through.
    #[must_use]
    pub fn after(mut self, n: u64) -> Self {
        self.after = n;
        self
    }

    /// Faults `n` requests (0: every one until the rule is removed).
    #[must_use]
    pub fn times(mut self, n: u64) -> Self {
        self.times = n;
        self
    }

    /// Faults each request it may with probability `p` (0 to 1; checked
    /// when the rule is added).
    #[must_use]
    pub fn probability(mut self, p: f64) -> Self {
        self.probability = p;
        self
    }

    /// The rule as JSON: what `POST /_mock/faults` takes.
    fn to_json(&self) -> Value {
        let mut matching = Map::new();
        matching.insert(
            "endpoint".into(),
            Value::from(self.matching.endpoint.map_or("any", endpoint_name)),
        );
        if let Some(m) = self.matching.merchant_id {
            matching.insert("merchantId".into(), Value::from(m.hyphenated().to_string()));
        }
        if let Some(r) = &self.matching.reference_no {
            matching.insert("referenceNo".into(), Value::from(r.clone()));
        }
        if let Some(t) = self.matching.transaction_id {
            matching.insert(
                "transactionId".into(),
                Value::from(t.hyphenated().to_string()),
            );
        }
        serde_json::json!({
            "match": matching,
            "after": self.after,
            "times": self.times,
            "probability": self.probability,
            "fault": self.fault.token(),
        })
    }
}

/// The name of an endpoint in a rule's `match`.
pub(crate) fn endpoint_name(endpoint: Endpoint) -> &'static str {
    match endpoint {
        Endpoint::Initiate => "initiate",
        Endpoint::Confirm => "confirm",
        Endpoint::StatusById => "status",
        Endpoint::StatusByReference => "status-by-reference",
    }
}

/// The endpoint names a rule takes, `any` last.
#[cfg_attr(not(feature = "openapi"), allow(dead_code))] // the OpenAPI document
pub(crate) const ENDPOINT_NAMES: [&str; 5] = [
    "initiate",
    "confirm",
    "status",
    "status-by-reference",
    "any",
];

/// A rule that cannot be: the field and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleError {
    /// The field, as `match.referenceNo`.
    pub field: &'static str,
    /// What is wrong.
    pub problem: String,
}

impl RuleError {
    fn new(field: &'static str, problem: impl Into<String>) -> Self {
        Self {
            field,
            problem: problem.into(),
        }
    }
}

impl std::fmt::Display for RuleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.problem)
    }
}

impl std::error::Error for RuleError {}

/// What a request is about, as far as rules look: from the request
/// itself, and for requests that name a transaction by id, from the
/// stored transaction (the guard looks it up only when a rule needs it).
#[derive(Debug, Default)]
pub(crate) struct Facts {
    pub(crate) endpoint: Option<Endpoint>,
    pub(crate) merchant_id: Option<Uuid>,
    pub(crate) reference_no: Option<String>,
    pub(crate) transaction_id: Option<Uuid>,
    /// Whether merchant and reference are known (from the request, or
    /// looked up): without them, a rule that names either needs the look-up.
    pub(crate) complete: bool,
}

/// How a rule stands against a request.
enum Verdict {
    No,
    Yes,
    /// It could match once the stored transaction is known.
    NeedsLookup,
}

impl RuleMatch {
    fn against(&self, facts: &Facts) -> Verdict {
        if self.endpoint.is_some() && self.endpoint != facts.endpoint {
            return Verdict::No;
        }
        if self.transaction_id.is_some() && self.transaction_id != facts.transaction_id {
            return Verdict::No;
        }
        let merchant = self.merchant_id.is_none() || self.merchant_id == facts.merchant_id;
        let reference = self.reference_no.is_none() || self.reference_no == facts.reference_no;
        if merchant && reference {
            return Verdict::Yes;
        }
        if facts.complete {
            Verdict::No
        } else {
            Verdict::NeedsLookup
        }
    }
}

/// A rule as the server keeps it.
#[derive(Debug)]
struct Installed {
    id: Uuid,
    /// Its creation number: the draw's key.
    number: u64,
    rule: FaultRule,
    /// Requests it met (matched while live), let through or not.
    met: u64,
    /// Requests it faulted.
    fired: u64,
}

impl Installed {
    fn live(&self) -> bool {
        self.rule.times == 0 || self.fired < self.rule.times
    }

    fn view(&self) -> RuleView {
        RuleView {
            id: self.id.hyphenated().to_string(),
            rule: self.rule.to_json(),
            met: self.met,
            fired: self.fired,
            remaining: (self.rule.times != 0).then(|| self.rule.times - self.fired),
        }
    }
}

/// One rule as `GET /_mock/faults` and the console show it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RuleView {
    /// Its id (`DELETE /_mock/faults/{id}`).
    pub id: String,
    /// The rule as `POST` takes it (defaults filled in).
    #[serde(flatten)]
    pub rule: Value,
    /// Requests it met (while live), let through or not.
    pub met: u64,
    /// Requests it faulted.
    pub fired: u64,
    /// Faults left before it is spent; `null` for a rule without an end.
    pub remaining: Option<u64>,
}

/// A request's fault from a rule: the fault and the rule's id.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Hit {
    pub(crate) fault: Fault,
    pub(crate) rule: Uuid,
}

/// The rules of one server.
#[derive(Debug, Default)]
pub(crate) struct RuleBook {
    rules: Mutex<Rules>,
    /// How many rules are installed: the guard's look without the lock.
    len: AtomicUsize,
    /// The transactions it looked up (`known.rs`).
    known: Mutex<HashMap<Uuid, (Uuid, String)>>,
}

impl RuleBook {
    fn lock(&self) -> std::sync::MutexGuard<'_, Rules> {
        self.rules.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether any rule is installed (the hot path's only cost without).
    pub(crate) fn any(&self) -> bool {
        self.len.load(Ordering::Relaxed) > 0
    }

    /// Installs `rule` last.
    pub(crate) fn add(&self, mut rule: FaultRule) -> Result<RuleView, RuleError> {
        rule.check()?;
        let mut guard = self.lock();
        let Rules {
            installed: rules,
            made,
            ..
        } = &mut *guard;
        if rules.len() >= MAX_RULES {
            return Err(RuleError::new(
                "body",
                format!("at most {MAX_RULES} rules at once; delete some first"),
            ));
        }
        *made += 1;
        let installed = Installed {
            id: Uuid::new_v4(),
            number: *made,
            rule,
            met: 0,
            fired: 0,
        };
        let view = installed.view();
        rules.push(installed);
        self.len.store(rules.len(), Ordering::Relaxed);
        guard.index();
        Ok(view)
    }

    /// Every rule, in creation order.
    pub(crate) fn list(&self) -> Vec<RuleView> {
        self.lock().installed.iter().map(Installed::view).collect()
    }

    /// Removes one rule; whether it was there.
    pub(crate) fn remove(&self, id: Uuid) -> bool {
        let mut guard = self.lock();
        let before = guard.installed.len();
        guard.installed.retain(|r| r.id != id);
        guard.index();
        self.len.store(guard.installed.len(), Ordering::Relaxed);
        guard.installed.len() != before
    }

    /// Removes every rule; how many there were. The creation numbers go
    /// on (a new rule draws afresh).
    pub(crate) fn clear(&self) -> usize {
        let mut guard = self.lock();
        let n = guard.installed.len();
        guard.installed.clear();
        guard.index();
        self.len.store(0, Ordering::Relaxed);
        self.known_lock().clear();
        n
    }

    /// The fault, if any, of the first live rule that `facts` match.
    /// `Err(())` when a rule needs the stored transaction's merchant and
    /// reference to decide: look it up, fill `facts`, ask again (nothing
    /// was counted).
    pub(crate) fn meet(&self, facts: &Facts, seed: u64) -> Result<Option<Hit>, ()> {
        let mut guard = self.lock();
        let Some(i) = guard.first(facts)? else {
            return Ok(None);
        };
        let installed = &mut guard.installed[i];
        let n = installed.met;
        installed.met += 1;
        if n < installed.rule.after {
            return Ok(None);
        }
        let p = installed.rule.probability;
        let hit = p >= 1.0
            || (p > 0.0 && {
                let draw = KeyHasher::new()
                    .part(b"fault rule")
                    .part(&seed.to_le_bytes())
                    .part(&installed.number.to_le_bytes())
                    .part(&n.to_le_bytes())
                    .finish();
                crate::faults::unit(draw) < p
            });
        if !hit {
            return Ok(None);
        }
        installed.fired += 1;
        Ok(Some(Hit {
            fault: installed.rule.fault.clone(),
            rule: installed.id,
        }))
    }

    /// Takes back a [`RuleBook::meet`] that gave rule `id`'s fault to a
    /// request it could change nothing of (an `answer-other` with no other
    /// transaction to show): as if the request had not matched, the rule
    /// neither met nor fired it, and a spent rule is live again. Under the
    /// lock, so concurrent meetings keep exact counts; a rule removed
    /// since is left alone.
    pub(crate) fn unmeet(&self, id: Uuid) {
        let mut guard = self.lock();
        if let Some(installed) = guard.installed.iter_mut().find(|r| r.id == id) {
            installed.met = installed.met.saturating_sub(1);
            installed.fired = installed.fired.saturating_sub(1);
        }
    }
}

mod known;
mod parse;
mod rules;
#[cfg(test)]
mod tests;

pub use parse::parse_rule;
use rules::Rules;
