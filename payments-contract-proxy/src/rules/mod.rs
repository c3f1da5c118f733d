//! The contract proxy's rules (CONTRACT section 16): one table from a
//! stable rule id to its level, its text and one small function. The text
//! of each rule is the paragraph `docs/contract-proxy.md` shows for it (a
//! test holds the two together), and each function has tests with an
//! exchange that trips it and one that does not.
//!
//! The rules judge the service by the **interface document**, not by this
//! project's CONTRACT extensions: what the document leaves open is
//! reported as `undocumented`, never as a violation.
//!
//! - `envelope.rs` — the envelope, the HTTP status, undocumented codes and
//!   statuses;
//! - `data.rs` — the fields of each endpoint's `data` and the initiate's
//!   echo;
//! - `across.rs` — the rules that span requests, over the proxy's memory;
//! - `answer.rs` — an answer about another transaction than was asked;
//! - `request.rs` — what the application sent.

mod across;
mod answer;
mod data;
mod envelope;
mod request;

use serde::Serialize;

use super::exchange::{Endpoint, Parsed};
use super::memory::Memory;

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Level {
    /// The service did what the interface document rules out.
    Violation,
    /// The document is silent and the service chose something: worth
    /// knowing, not wrong.
    Undocumented,
    /// The application sent what the document rules out (about the
    /// caller, not the service).
    Client,
}

impl Level {
    /// `violation`, `undocumented` or `client`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Violation => "violation",
            Self::Undocumented => "undocumented",
            Self::Client => "client",
        }
    }
}

/// One thing a rule found in an exchange.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Finding {
    /// The rule's stable id, e.g. `http.status`.
    pub rule: &'static str,
    /// How bad.
    pub level: Level,
    /// What, naming the field or value (never a secret).
    pub message: String,
}

/// An exchange's verdict, also sent as `X-Contract-Verdict`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Verdict {
    /// No finding about the service (a `client` finding alone is a pass:
    /// the service did nothing wrong).
    Pass,
    /// An `undocumented` finding, no violation.
    Undocumented,
    /// At least one violation.
    Violation,
    /// Not judged: a body too large to read whole, or the proxy's own
    /// answer (the upstream could not be reached).
    Unchecked,
}

impl Verdict {
    /// The verdict of these findings.
    pub fn of(findings: &[Finding]) -> Self {
        if findings.iter().any(|f| f.level == Level::Violation) {
            Self::Violation
        } else if findings.iter().any(|f| f.level == Level::Undocumented) {
            Self::Undocumented
        } else {
            Self::Pass
        }
    }

    /// The header value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pass => "pass",
            Self::Undocumented => "undocumented",
            Self::Violation => "violation",
            Self::Unchecked => "unchecked",
        }
    }
}

/// What a rule function reports: messages at the rule's level, or at
/// another where the rule's text says so (`initiate.duplicate`'s
/// idempotent replay is `undocumented`).
pub(crate) type Hits = Vec<(Level, String)>;

/// A rule: its id, level, text and check.
#[derive(Debug)]
#[non_exhaustive]
pub struct Rule {
    /// The stable id.
    pub id: &'static str,
    /// Its level.
    pub level: Level,
    /// What trips it (the text of docs/contract-proxy.md).
    pub text: &'static str,
    check: fn(&Parsed<'_>, &Memory) -> Hits,
}

/// Every rule, in the order the report lists them.
pub static RULES: [Rule; 18] = [
    envelope::SHAPE,
    envelope::CONSISTENCY,
    envelope::HTTP_STATUS,
    data::FIELDS,
    data::ECHO,
    across::AMOUNT_UNITS,
    across::STATUS_AGREE,
    across::STATUS_REGRESSED,
    across::CONFIRM_TWICE,
    across::INITIATE_DUPLICATE,
    across::ID_REUSED,
    answer::ANSWER_OTHER,
    request::ACCEPTED_INVALID,
    envelope::CODE_UNDOCUMENTED,
    data::STATUS_UNDOCUMENTED,
    envelope::HTTP_UNDOCUMENTED,
    data::EXTRA,
    request::INVALID,
];

/// The rule with this id.
pub fn rule(id: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.id == id)
}

/// Every finding of every rule about one exchange, judged against what
/// passed through before it. Exchanges outside the document's four
/// endpoints have none.
pub fn judge(parsed: &Parsed<'_>, memory: &Memory) -> Vec<Finding> {
    if parsed.endpoint == Endpoint::Other {
        return Vec::new();
    }
    RULES
        .iter()
        .flat_map(|rule| {
            (rule.check)(parsed, memory)
                .into_iter()
                .map(|(level, message)| Finding {
                    rule: rule.id,
                    level,
                    message,
                })
        })
        .collect()
}

/// Remembers what a judged exchange showed, for the rules that span
/// requests.
pub fn remember(parsed: &Parsed<'_>, memory: &mut Memory) {
    across::remember(parsed, memory);
}

/// Exchanges and envelopes for tests (this crate's, and the mock's
/// `--seed-from` tests with the feature `test-support`).
#[cfg(any(test, feature = "test-support"))]
#[doc(hidden)]
pub mod test_support;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_ids_are_unique_and_documented() {
        let docs = include_str!("../../../docs/contract-proxy.md");
        let mut ids: Vec<&str> = RULES.iter().map(|r| r.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), RULES.len());
        for rule in &RULES {
            let text = rule.text.split_whitespace().collect::<Vec<_>>().join(" ");
            let shown = docs.split_whitespace().collect::<Vec<_>>().join(" ");
            assert!(
                shown.contains(&format!("`{}`", rule.id)) && shown.contains(&text),
                "docs/contract-proxy.md must show {} with its text: {text}",
                rule.id
            );
        }
    }
}
