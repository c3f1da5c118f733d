//! What the JUnit and SARIF files need of each exchange (CONTRACT section
//! 20), kept compactly: its number, endpoint, duration and verdict in 24
//! bytes, and only for an exchange with findings (or outside the four
//! endpoints) a box with them. A long run stays small: a million clean
//! exchanges are 24 MB, and no exchange is kept whole.

use std::num::NonZeroU32;

use crate::exchange::{Endpoint, Exchange};
use crate::rules::{Finding, Verdict};

/// A day in milliseconds: no exchange through the proxy takes longer.
const DAY_MS: f64 = 86_400_000.0;
/// The most of an unmatched request's method and path kept for its name.
const OTHER_NAME: usize = 160;

/// The exchanges JUnit and SARIF are written from, in the order they were
/// judged (for `check`, the recording's).
///
/// ```
/// use payments_contract_proxy::check_recording;
///
/// let recording = r#"{"seq":1,"time":"2026-11-25T10:00:00Z","request":{"method":"GET","path":"/api/payments/x/status"},"response":{"status":502,"body":"<html>"},"durationMs":1.5}"#;
/// let outcome = check_recording(recording.as_bytes()).expect("a recording");
/// let mut junit = Vec::new();
/// outcome.trail.write_junit(&mut junit, false).expect("written");
/// let junit = String::from_utf8(junit).expect("UTF-8");
/// assert!(junit.contains(r#"<failure type="envelope.shape""#));
/// ```
#[derive(Debug, Clone, Default)]
pub struct Trail {
    cases: Vec<Case>,
    /// The positions of the exchanges the stop cut off (few: only those
    /// still open when its grace period ended).
    cut_off: Vec<usize>,
}

/// One exchange, compactly.
#[derive(Debug, Clone)]
struct Case {
    seq: u64,
    /// Findings, a recording's line, an unmatched request's name: only
    /// when there is one.
    extra: Option<Box<Extra>>,
    /// Milliseconds (f32: a microsecond's precision up to hours).
    duration_ms: f32,
    /// The interface's operation; `None` outside the four.
    operation: Option<payments_interface::Endpoint>,
    /// Not judged (the proxy's own answer, an oversized or compressed
    /// body).
    unchecked: bool,
}

#[derive(Debug, Clone, Default)]
struct Extra {
    /// The recording's line (`check`).
    line: Option<NonZeroU32>,
    /// `METHOD path` of a request outside the four endpoints.
    other: Option<Box<str>>,
    findings: Box<[Finding]>,
}

/// One exchange of a trail, as the writers read it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CaseView<'a> {
    pub(crate) seq: u64,
    pub(crate) operation: Option<payments_interface::Endpoint>,
    pub(crate) duration_ms: f64,
    pub(crate) unchecked: bool,
    pub(crate) line: Option<u32>,
    other: Option<&'a str>,
    pub(crate) findings: &'a [Finding],
}

impl<'a> CaseView<'a> {
    /// `METHOD /path/template` (the request as sent, outside the four
    /// endpoints).
    pub(crate) fn request(&self) -> &'a str {
        match (self.operation, self.other) {
            (Some(operation), _) => request_of(operation),
            (None, Some(other)) => other,
            (None, None) => "other",
        }
    }

    /// The endpoint's name (`other` outside the four).
    pub(crate) fn endpoint(&self) -> &'static str {
        self.operation
            .map_or("other", payments_interface::Endpoint::name)
    }
}

/// `METHOD /path/template` of an operation.
pub(crate) fn request_of(operation: payments_interface::Endpoint) -> &'static str {
    use payments_interface::Endpoint as E;
    match operation {
        E::Initiate => "POST /api/payments/initiate",
        E::Confirm => "POST /api/payments/confirm",
        E::StatusById => "GET /api/payments/{transactionId}/status",
        E::StatusByReference => "GET /api/payments/reference/{referenceNo}/status",
    }
}

impl Trail {
    /// How many exchanges it holds.
    pub fn len(&self) -> usize {
        self.cases.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.cases.is_empty()
    }

    /// Adds a judged exchange (`line`: its line in a recording).
    pub(crate) fn push(
        &mut self,
        exchange: &Exchange,
        endpoint: &Endpoint,
        verdict: Verdict,
        findings: &[Finding],
        line: Option<usize>,
    ) {
        let operation = endpoint.operation();
        let other = operation.is_none().then(|| {
            let mut name = format!("{} {}", exchange.request.method, exchange.request.path);
            if name.len() > OTHER_NAME {
                let mut end = OTHER_NAME;
                while !name.is_char_boundary(end) {
                    end -= 1;
                }
                name.truncate(end);
                name.push('…');
            }
            name.into_boxed_str()
        });
        let line = line
            .and_then(|n| u32::try_from(n).ok())
            .and_then(NonZeroU32::new)
            .filter(|_| !findings.is_empty());
        let extra = (other.is_some() || !findings.is_empty()).then(|| {
            Box::new(Extra {
                line,
                other,
                findings: findings.into(),
            })
        });
        // Milliseconds as f32: exact enough for a report, half the room. A
        // recording's line may say anything: what no exchange can take
        // (negative, not a number, past a day) is kept as 0, never as a
        // JUnit `time="inf"` its readers refuse.
        #[allow(clippy::cast_possible_truncation)]
        let duration_ms = if (0.0..=DAY_MS).contains(&exchange.duration_ms) {
            exchange.duration_ms as f32
        } else {
            0.0
        };
        self.cases.push(Case {
            seq: exchange.seq,
            extra,
            duration_ms,
            operation,
            unchecked: verdict == Verdict::Unchecked,
        });
    }

    /// Marks the exchange pushed last as one the stop cut off: the proxy
    /// answered it itself when the stop's grace period ended.
    pub(crate) fn mark_cut_off(&mut self) {
        if let Some(last) = self.cases.len().checked_sub(1) {
            self.cut_off.push(last);
        }
    }

    /// Every exchange, in order.
    pub(crate) fn cases(&self) -> impl Iterator<Item = CaseView<'_>> + '_ {
        self.cases_from(0)
    }

    /// Every exchange from position `start` on, in order: where a reader
    /// of the trail a chunk at a time resumes (nothing past the end).
    pub(crate) fn cases_from(&self, start: usize) -> impl Iterator<Item = CaseView<'_>> + '_ {
        self.cases
            .get(start..)
            .unwrap_or_default()
            .iter()
            .map(Case::view)
    }

    /// A copy of the exchanges `keep` takes from position `start` on,
    /// before `end`: as many as fit in about `bytes` (at least one
    /// looked at), and the position after the last one looked at.
    pub(crate) fn copy_from(
        &self,
        start: usize,
        end: usize,
        bytes: usize,
        keep: impl Fn(&CaseView<'_>) -> bool,
    ) -> (Trail, usize) {
        let end = end.min(self.cases.len());
        let mut copy = Trail::default();
        let mut size = 0;
        let mut at = start;
        while at < end && (at == start || size < bytes) {
            let case = &self.cases[at];
            at += 1;
            if keep(&case.view()) {
                size += case.size();
                copy.cases.push(case.clone());
            }
        }
        (copy, at)
    }
}

impl Case {
    fn view(&self) -> CaseView<'_> {
        let extra = self.extra.as_deref();
        CaseView {
            seq: self.seq,
            operation: self.operation,
            duration_ms: f64::from(self.duration_ms),
            unchecked: self.unchecked,
            line: extra.and_then(|e| e.line).map(NonZeroU32::get),
            other: extra.and_then(|e| e.other.as_deref()),
            findings: extra.map_or(&[], |e| &e.findings),
        }
    }

    /// About the bytes it holds, beside it too.
    fn size(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.extra.as_deref().map_or(0, |extra| {
                std::mem::size_of::<Extra>()
                    + extra.other.as_deref().map_or(0, str::len)
                    + extra
                        .findings
                        .iter()
                        .map(|f| std::mem::size_of::<Finding>() + f.message.len())
                        .sum::<usize>()
            })
    }
}

/// Where the JUnit and SARIF writers read the exchanges from, in order: a
/// [`Trail`], or one shared with the proxy's judging and read a chunk at a
/// time (the live report, which never holds the judge across a send).
pub(crate) trait Cases {
    /// Calls `each` with every exchange `keep` takes, in order; the first
    /// error stops it.
    ///
    /// # Errors
    ///
    /// The first of `each`.
    fn each<E>(
        &self,
        keep: impl Fn(&CaseView<'_>) -> bool,
        each: impl FnMut(&CaseView<'_>) -> Result<(), E>,
    ) -> Result<(), E>;

    /// The exchanges the stop cut off (none while the proxy runs).
    fn cut_off(&self) -> Vec<CaseView<'_>> {
        Vec::new()
    }
}

impl Cases for Trail {
    fn each<E>(
        &self,
        keep: impl Fn(&CaseView<'_>) -> bool,
        mut each: impl FnMut(&CaseView<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        self.cases()
            .filter(|case| keep(case))
            .try_for_each(|case| each(&case))
    }

    fn cut_off(&self) -> Vec<CaseView<'_>> {
        self.cut_off
            .iter()
            .filter_map(|&at| self.cases.get(at))
            .map(Case::view)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::rules::test_support::exchange;

    #[test]
    fn a_clean_exchange_takes_24_bytes_and_findings_are_kept_beside() {
        assert_eq!(std::mem::size_of::<Case>(), 24);
        let mut trail = Trail::default();
        let clean = exchange("GET", "/api/payments/x/status", json!(null), 404, json!({}));
        trail.push(
            &clean,
            &Endpoint::of("GET", "/api/payments/x/status"),
            Verdict::Pass,
            &[],
            Some(3),
        );
        let long = format!("/api/{}", "é".repeat(200));
        let other = exchange("PUT", &long, json!(null), 200, json!({}));
        trail.push(&other, &Endpoint::Other, Verdict::Pass, &[], None);
        let cases: Vec<CaseView<'_>> = trail.cases().collect();
        assert_eq!(cases.len(), 2);
        assert_eq!(
            cases[0].request(),
            "GET /api/payments/{transactionId}/status"
        );
        assert_eq!(cases[0].endpoint(), "statusById");
        assert_eq!(cases[0].line, None, "a line only beside findings");
        assert!(cases[1].request().starts_with("PUT /api/é"));
        assert!(cases[1].request().len() <= OTHER_NAME + '…'.len_utf8());
        assert_eq!(cases[1].endpoint(), "other");
    }
}
