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

use std::fmt;

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

/// The most bytes of one value from outside (an errorCode, a status, an
/// id, a field's name or value) a finding's message quotes: the rest is
/// cut, with `…`.
pub const QUOTED: usize = 256;

/// The most bytes of a finding's message: what a rule says (its own text
/// and a few quoted values) fits; a message longer is cut, with `…`, so
/// no finding keeps what its upstream or application sent whole.
pub const MESSAGE: usize = 2048;

/// A value from outside as a finding's message quotes it: its text cut at
/// [`QUOTED`] bytes (at a character boundary) with `…`, never written
/// whole first.
pub(crate) fn quoted<T: fmt::Display>(value: T) -> Quoted<T> {
    Quoted(value)
}

/// See [`quoted`].
pub(crate) struct Quoted<T>(T);

impl<T: fmt::Display> fmt::Display for Quoted<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = Cut {
            out: f,
            left: QUOTED,
            cut: false,
            failed: false,
        };
        // An error here is the cut stopping the value (or `f` failing,
        // said below).
        let _ = fmt::write(&mut out, format_args!("{}", self.0));
        let (cut, failed) = (out.cut, out.failed);
        if failed {
            return Err(fmt::Error);
        }
        if cut { f.write_str("…") } else { Ok(()) }
    }
}

/// Writes through to `out` until `left` bytes are written.
struct Cut<'a, 'b> {
    out: &'a mut fmt::Formatter<'b>,
    left: usize,
    cut: bool,
    failed: bool,
}

impl fmt::Write for Cut<'_, '_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        if self.cut {
            return Err(fmt::Error);
        }
        let mut end = s.len().min(self.left);
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        self.left -= end;
        if self.out.write_str(&s[..end]).is_err() {
            self.failed = true;
            return Err(fmt::Error);
        }
        if end < s.len() {
            self.cut = true;
            return Err(fmt::Error);
        }
        Ok(())
    }
}

/// `message` at most [`MESSAGE`] bytes (cut at a character boundary, with
/// `…`), in a buffer no larger than it.
fn bounded(mut message: String) -> String {
    if message.len() <= MESSAGE {
        message.shrink_to_fit();
        return message;
    }
    let mut end = MESSAGE;
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    let mut cut = String::with_capacity(end + '…'.len_utf8());
    cut.push_str(&message[..end]);
    cut.push('…');
    cut
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
/// endpoints have none. Each message quotes a value from outside at most
/// [`QUOTED`] bytes long and is at most [`MESSAGE`] bytes.
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
                    message: bounded(message),
                })
        })
        .collect()
}

/// Remembers what a judged exchange showed, for the rules that span
/// requests. A value longer than the memory keeps is let go of at once
/// (never cut, never kept for the next exchange).
pub fn remember(parsed: &Parsed<'_>, memory: &mut Memory) {
    across::remember(parsed, memory);
    memory.settle();
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

    /// A value from outside is quoted at most [`QUOTED`] bytes (at a
    /// character boundary, then `…`), a message at most [`MESSAGE`]: a
    /// 256 KiB errorCode was quoted whole (and kept for JUnit and SARIF).
    #[test]
    fn a_huge_value_from_outside_is_quoted_cut() {
        use serde_json::json;

        use test_support::exchange;
        let code = format!("é{}", "C".repeat(256 * 1024));
        let answer =
            json!({ "isSuccess": false, "errorCode": code, "message": "no", "data": null });
        let e = exchange(
            "POST",
            "/api/payments/initiate",
            test_support::initiate_body("REF-1", 100),
            400,
            answer,
        );
        let findings = judge(&Parsed::of(&e), &Memory::default());
        let found = findings
            .iter()
            .find(|f| f.rule == "code.undocumented")
            .expect("code.undocumented");
        let fixed = "errorCode  is not in the document's section 7".len();
        assert!(
            found.message.starts_with("errorCode éCCC"),
            "{}",
            found.message
        );
        assert!(
            found
                .message
                .ends_with("C… is not in the document's section 7")
        );
        assert!(found.message.len() <= fixed + QUOTED + '…'.len_utf8());
        assert!(found.message.capacity() <= fixed + QUOTED + '…'.len_utf8());
        // Cut at a character boundary; short values whole.
        let odd = format!("a{}", "é".repeat(200));
        let shown = quoted(&odd).to_string();
        assert!(shown.len() <= QUOTED + '…'.len_utf8() && shown.ends_with('…'));
        assert_eq!(quoted("PENDING").to_string(), "PENDING");
        assert_eq!(
            quoted(format_args!("{:?}", "a\"b")).to_string(),
            r#""a\"b""#
        );
        let long = "word ".repeat(1000);
        let bounded = bounded(long);
        assert!(bounded.len() <= MESSAGE + '…'.len_utf8() && bounded.ends_with('…'));
    }
}
