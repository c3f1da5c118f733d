//! The proxy's counts for `GET /metrics` (CONTRACT section 18): exchanges
//! by endpoint and verdict, findings by rule id and level, the upstream's
//! answer time and its failures. Atomics prepared at start, indexed by the
//! endpoint, verdict and rule; labels are written only when scraped.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use payments_serve::metrics::Histogram;
use payments_serve::metrics::prometheus_client::collector::Collector;
use payments_serve::metrics::prometheus_client::encoding::{DescriptorEncoder, NoLabelSet};
use payments_serve::metrics::prometheus_client::metrics::MetricType;
use payments_serve::metrics::prometheus_client::registry::Registry;

use crate::exchange::Endpoint;
use crate::rules::{Finding, RULES, Verdict};

const ENDPOINTS: [&str; 5] = [
    "initiate",
    "confirm",
    "statusById",
    "statusByReference",
    "other",
];

const VERDICTS: [&str; 4] = ["pass", "undocumented", "violation", "unchecked"];

/// Why the upstream gave no answer.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Failure {
    /// No connection could be made.
    Connect,
    /// The request could not be sent or answered otherwise.
    Unreachable,
    /// No answer (or no more of it) within the upstream timeout.
    Timeout,
    /// The answer broke off.
    BrokeOff,
    /// The TLS handshake with the upstream failed (an unknown CA, a
    /// client certificate it refused or asked for).
    Tls,
}

const FAILURES: [&str; 5] = ["connect", "unreachable", "timeout", "broke_off", "tls"];

impl Failure {
    /// Its name, as the metric's label and a call span's `error.type`
    /// write it.
    pub(crate) fn as_str(self) -> &'static str {
        FAILURES[self as usize]
    }
}

/// The proxy's counts, and the registry that writes them.
#[derive(Debug)]
pub(crate) struct Metrics {
    counts: Arc<Counts>,
    registry: Registry,
}

#[derive(Debug)]
struct Counts {
    exchanges: [[AtomicU64; VERDICTS.len()]; ENDPOINTS.len()],
    findings: [AtomicU64; RULES.len()],
    upstream: Histogram,
    failures: [AtomicU64; FAILURES.len()],
}

fn endpoint_index(endpoint: &Endpoint) -> usize {
    match endpoint {
        Endpoint::Initiate => 0,
        Endpoint::Confirm => 1,
        Endpoint::StatusById(_) => 2,
        Endpoint::StatusByReference(_) => 3,
        Endpoint::Other => 4,
    }
}

fn verdict_index(verdict: Verdict) -> usize {
    match verdict {
        Verdict::Pass => 0,
        Verdict::Undocumented => 1,
        Verdict::Violation => 2,
        Verdict::Unchecked => 3,
    }
}

impl Metrics {
    pub(crate) fn new() -> Self {
        let counts = Arc::new(Counts {
            exchanges: Default::default(),
            findings: [const { AtomicU64::new(0) }; RULES.len()],
            upstream: Histogram::new(),
            failures: Default::default(),
        });
        let mut registry = Registry::default();
        registry.register_collector(Box::new(Arc::clone(&counts)));
        Self { counts, registry }
    }

    /// Counts one judged exchange and its findings.
    pub(crate) fn exchange(&self, endpoint: &Endpoint, verdict: Verdict, findings: &[Finding]) {
        self.counts.exchanges[endpoint_index(endpoint)][verdict_index(verdict)]
            .fetch_add(1, Ordering::Relaxed);
        for finding in findings {
            if let Some(i) = RULES.iter().position(|r| r.id == finding.rule) {
                self.counts.findings[i].fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Counts the upstream's answer head, `elapsed` after the request went.
    pub(crate) fn upstream_answered(&self, elapsed: Duration) {
        self.counts.upstream.observe(elapsed);
    }

    /// Counts an upstream that gave no (whole) answer.
    pub(crate) fn upstream_failed(&self, failure: Failure) {
        self.counts.failures[failure as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// The scrape: body and content type, as `accept` asks.
    pub(crate) fn render(&self, accept: Option<&[u8]>) -> (String, &'static str) {
        payments_serve::metrics::render(&self.registry, accept)
    }
}

impl Collector for Counts {
    fn encode(&self, mut encoder: DescriptorEncoder<'_>) -> Result<(), std::fmt::Error> {
        let mut family = encoder.encode_descriptor(
            "payments_proxy_exchanges",
            "Exchanges passed through, by endpoint and verdict.",
            None,
            MetricType::Counter,
        )?;
        for (e, verdicts) in self.exchanges.iter().enumerate() {
            for (v, count) in verdicts.iter().enumerate() {
                let n = count.load(Ordering::Relaxed);
                if n > 0 {
                    family
                        .encode_family(&[("endpoint", ENDPOINTS[e]), ("verdict", VERDICTS[v])])?
                        .encode_counter::<NoLabelSet, _, u64>(&n, None)?;
                }
            }
        }
        let mut family = encoder.encode_descriptor(
            "payments_proxy_findings",
            "Findings, by rule id and level.",
            None,
            MetricType::Counter,
        )?;
        for (rule, count) in RULES.iter().zip(&self.findings) {
            let n = count.load(Ordering::Relaxed);
            family
                .encode_family(&[("rule", rule.id), ("level", rule.level.as_str())])?
                .encode_counter::<NoLabelSet, _, u64>(&n, None)?;
        }
        let mut family = encoder.encode_descriptor(
            "payments_proxy_upstream_duration_seconds",
            "Time from forwarding a request to the upstream's answer head.",
            None,
            MetricType::Histogram,
        )?;
        self.upstream.encode(&mut family)?;
        let mut family = encoder.encode_descriptor(
            "payments_proxy_upstream_failures",
            "Requests the upstream gave no whole answer to, by reason.",
            None,
            MetricType::Counter,
        )?;
        for (reason, count) in FAILURES.iter().zip(&self.failures) {
            let n = count.load(Ordering::Relaxed);
            family
                .encode_family(&[("reason", *reason)])?
                .encode_counter::<NoLabelSet, _, u64>(&n, None)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Level;

    #[test]
    fn exchanges_and_findings_are_counted_under_their_labels() {
        let metrics = Metrics::new();
        let finding = Finding {
            rule: RULES[0].id,
            level: Level::Violation,
            message: String::new(),
        };
        metrics.exchange(&Endpoint::Initiate, Verdict::Violation, &[finding]);
        metrics.exchange(&Endpoint::Other, Verdict::Unchecked, &[]);
        metrics.upstream_answered(Duration::from_millis(2));
        metrics.upstream_failed(Failure::Timeout);
        let (text, _) = metrics.render(None);
        for line in [
            "payments_proxy_exchanges_total{endpoint=\"initiate\",verdict=\"violation\"} 1"
                .to_owned(),
            "payments_proxy_exchanges_total{endpoint=\"other\",verdict=\"unchecked\"} 1".to_owned(),
            format!(
                "payments_proxy_findings_total{{rule=\"{}\",level=\"{}\"}} 1",
                RULES[0].id,
                RULES[0].level.as_str()
            ),
            "payments_proxy_upstream_duration_seconds_count 1".to_owned(),
            "payments_proxy_upstream_failures_total{reason=\"timeout\"} 1".to_owned(),
            "# TYPE payments_proxy_findings_total counter".to_owned(),
        ] {
            assert!(text.lines().any(|l| l == line), "{line} not in\n{text}");
        }
    }
}
