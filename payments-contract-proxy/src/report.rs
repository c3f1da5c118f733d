//! What the proxy reports (CONTRACT section 16): one JSON line per exchange
//! (`--report`), the running summary (`GET /_proxy/report`, the stderr
//! table at SIGINT/SIGTERM, `check`'s output), and the exit code.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::exchange::{Endpoint, Exchange};
use super::rules::{Finding, Level, RULES, Verdict};

/// One line of `--report`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReportLine<'a> {
    /// The exchange's number.
    pub seq: u64,
    /// When the request arrived.
    pub time: DateTime<Utc>,
    /// Request method.
    pub method: &'a str,
    /// Request path, as sent.
    pub path: &'a str,
    /// The answer's status.
    pub status: u16,
    /// Request to answer, milliseconds.
    pub duration_ms: f64,
    /// `X-Request-Id` of the request or, failing that, of the answer.
    pub request_id: Option<&'a str>,
    /// The caller's W3C trace id (its `traceparent`), when it sent one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace_id: Option<&'a str>,
    /// The id of the caller's span that sent the request, likewise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub span_id: Option<&'a str>,
    /// The verdict.
    pub verdict: Verdict,
    /// Every finding.
    pub findings: &'a [Finding],
}

impl<'a> ReportLine<'a> {
    /// The line of a judged exchange.
    pub fn of(exchange: &'a Exchange, verdict: Verdict, findings: &'a [Finding]) -> Self {
        Self {
            seq: exchange.seq,
            time: exchange.time,
            method: &exchange.request.method,
            path: &exchange.request.path,
            status: exchange.response.status,
            duration_ms: (exchange.duration_ms * 1000.0).round() / 1000.0,
            request_id: exchange
                .request
                .header("x-request-id")
                .or_else(|| exchange.response.header("x-request-id")),
            trace_id: exchange.trace_id.as_deref(),
            span_id: exchange.span_id.as_deref(),
            verdict,
            findings,
        }
    }
}

/// The first exchange that tripped a rule.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FirstSeen {
    /// Its number.
    pub seq: u64,
    /// `METHOD path`.
    pub request: String,
    /// Its status.
    pub status: u16,
    /// The finding's message.
    pub message: String,
}

/// How often a rule was tripped, at which level.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RuleCount {
    /// Findings per level (`initiate.duplicate` has two).
    pub levels: BTreeMap<&'static str, u64>,
    /// The first exchange that tripped it.
    pub first: FirstSeen,
}

/// The running summary.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Summary {
    /// Exchanges seen.
    pub exchanges: u64,
    /// Exchanges per endpoint (`initiate`, `confirm`, `statusById`,
    /// `statusByReference`, `other`).
    pub endpoints: BTreeMap<&'static str, u64>,
    /// Exchanges per verdict.
    pub verdicts: BTreeMap<&'static str, u64>,
    /// Findings per level.
    pub levels: BTreeMap<&'static str, u64>,
    /// Per rule id: counts and the first exchange.
    pub rules: BTreeMap<&'static str, RuleCount>,
}

impl Summary {
    /// Counts one judged exchange.
    pub fn add(
        &mut self,
        exchange: &Exchange,
        endpoint: &Endpoint,
        verdict: Verdict,
        findings: &[Finding],
    ) {
        self.exchanges += 1;
        *self.endpoints.entry(endpoint.name()).or_default() += 1;
        *self.verdicts.entry(verdict.as_str()).or_default() += 1;
        for finding in findings {
            *self.levels.entry(finding.level.as_str()).or_default() += 1;
            let count = self.rules.entry(finding.rule).or_insert_with(|| RuleCount {
                levels: BTreeMap::new(),
                first: FirstSeen {
                    seq: exchange.seq,
                    request: format!("{} {}", exchange.request.method, exchange.request.path),
                    status: exchange.response.status,
                    message: finding.message.clone(),
                },
            });
            *count.levels.entry(finding.level.as_str()).or_default() += 1;
        }
    }

    /// How many findings of `level`.
    pub fn count(&self, level: Level) -> u64 {
        self.levels.get(level.as_str()).copied().unwrap_or(0)
    }

    /// The exit code: 1 when a violation was found (with `strict`, also an
    /// undocumented finding), else 0.
    pub fn exit_code(&self, strict: bool) -> u8 {
        let failed =
            self.count(Level::Violation) > 0 || (strict && self.count(Level::Undocumented) > 0);
        u8::from(failed)
    }

    /// The summary as a table for a terminal: exchanges, verdicts, then one
    /// row per rule that fired, in the registry's order.
    pub fn table(&self) -> String {
        let mut out = String::new();
        let per = |m: &BTreeMap<&str, u64>| {
            m.iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        if self.endpoints.is_empty() {
            // Nothing passed through: no empty parentheses.
            let _ = writeln!(out, "contract check: {} exchanges", self.exchanges);
        } else {
            let _ = writeln!(
                out,
                "contract check: {} exchanges ({})",
                self.exchanges,
                per(&self.endpoints)
            );
        }
        let _ = writeln!(
            out,
            "verdicts: {}",
            if self.verdicts.is_empty() {
                "none".to_owned()
            } else {
                per(&self.verdicts)
            }
        );
        if self.rules.is_empty() {
            let _ = writeln!(out, "no finding");
            return out;
        }
        let _ = writeln!(out, "{:<27} {:<13} {:>6}  first", "rule", "level", "count");
        for rule in &RULES {
            let Some(count) = self.rules.get(rule.id) else {
                continue;
            };
            for (level, n) in &count.levels {
                let _ = writeln!(
                    out,
                    "{:<27} {:<13} {:>6}  #{} {} → {}: {}",
                    rule.id,
                    level,
                    n,
                    count.first.seq,
                    crate::coverage::cell(&count.first.request),
                    count.first.status,
                    crate::coverage::cell(&count.first.message)
                );
            }
        }
        let _ = writeln!(
            out,
            "violations {}, undocumented {}, client {}",
            self.count(Level::Violation),
            self.count(Level::Undocumented),
            self.count(Level::Client)
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::exchange::Parsed;
    use crate::memory::Memory;
    use crate::rules::judge;
    use crate::rules::test_support::{exchange, failure};

    #[test]
    fn the_summary_counts_and_sets_the_exit_code() {
        let mut summary = Summary::default();
        assert_eq!(summary.exit_code(true), 0);
        let table = summary.table();
        assert!(
            table.starts_with("contract check: 0 exchanges\n"),
            "nothing passed through, no empty parentheses: {table}"
        );
        let undocumented = exchange(
            "GET",
            "/api/payments/x/status",
            json!(null),
            429,
            failure("RATE_LIMITED"),
        );
        let parsed = Parsed::of(&undocumented);
        let findings = judge(&parsed, &Memory::default());
        summary.add(
            &undocumented,
            &parsed.endpoint,
            Verdict::of(&findings),
            &findings,
        );
        assert_eq!(summary.exit_code(false), 0);
        assert_eq!(summary.exit_code(true), 1);
        let broken = exchange(
            "GET",
            "/api/payments/x/status",
            json!(null),
            502,
            json!("<html>"),
        );
        let parsed = Parsed::of(&broken);
        let findings = judge(&parsed, &Memory::default());
        summary.add(&broken, &parsed.endpoint, Verdict::of(&findings), &findings);
        assert_eq!(summary.exit_code(false), 1);
        let table = summary.table();
        assert!(table.contains("envelope.shape"), "{table}");
        assert!(table.contains("code.undocumented"), "{table}");
        assert!(table.contains("2 exchanges (statusById 2)"), "{table}");
    }

    /// The table goes to a terminal or a CI log: an upstream's control
    /// characters (an ESC, a line break) reach it as visible symbols.
    #[test]
    fn the_table_shows_the_upstreams_control_characters_as_symbols() {
        let mut summary = Summary::default();
        let hostile = exchange(
            "GET",
            "/api/payments/x/status",
            json!(null),
            409,
            failure("X\u{1}]]>\u{1b}[31m\nforged line"),
        );
        let parsed = Parsed::of(&hostile);
        let findings = judge(&parsed, &Memory::default());
        assert!(!findings.is_empty());
        summary.add(
            &hostile,
            &parsed.endpoint,
            Verdict::of(&findings),
            &findings,
        );
        let table = summary.table();
        assert!(
            !table.chars().any(|c| c.is_control() && c != '\n'),
            "{table:?}"
        );
        assert!(table.contains('\u{241b}'), "ESC as its picture: {table}");
        assert!(
            !table.lines().any(|l| l.starts_with("forged line")),
            "{table}"
        );
    }
}
