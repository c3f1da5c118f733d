//! What both servers' `GET /metrics` share (CONTRACT section 18): a
//! duration histogram of plain atomics, and the exposition of a
//! `prometheus-client` registry in the format the scraper asks for.
//!
//! The servers count in atomics they prepared at start (no label look-up
//! on a request's path) and encode them only when scraped, through a
//! `prometheus_client::collector::Collector` of their own.
//!
//! `prometheus-client` writes OpenMetrics text, where a counter's family is
//! named without `_total` and its samples with it. The Prometheus text
//! format (`text/plain; version=0.0.4`, what `promtool check metrics`
//! reads) names a counter's family as its samples, and has no `# EOF`:
//! [`render`] serves OpenMetrics to a scraper that asks for it in `Accept`
//! (Prometheus does), else the text format.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

pub use prometheus_client;
use prometheus_client::encoding::{MetricEncoder, NoLabelSet};
use prometheus_client::registry::Registry;

/// The content type of the Prometheus text format.
pub const TEXT_CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The content type of OpenMetrics text.
pub const OPENMETRICS_CONTENT_TYPE: &str =
    "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The upper bounds of [`Histogram`]'s buckets, in seconds.
pub const BUCKETS: [f64; 12] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 0.5, 2.5, 10.0,
];

/// [`BUCKETS`] in whole microseconds.
const BUCKET_MICROS: [u64; 12] = [
    100, 250, 500, 1_000, 2_500, 5_000, 10_000, 25_000, 100_000, 500_000, 2_500_000, 10_000_000,
];

/// A duration histogram in atomics: one count per bucket (not cumulative:
/// one increment per observation) and the sum in microseconds. Its
/// `_count` is the sum of the counts read for its buckets, so a scrape
/// during observations is still consistent (`+Inf` = `_count`).
#[derive(Debug, Default)]
pub struct Histogram {
    counts: [AtomicU64; 13],
    sum_micros: AtomicU64,
}

impl Histogram {
    /// An empty one.
    pub const fn new() -> Self {
        Self {
            counts: [const { AtomicU64::new(0) }; 13],
            sum_micros: AtomicU64::new(0),
        }
    }

    /// Counts one duration.
    #[inline]
    pub fn observe(&self, elapsed: Duration) {
        let micros = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
        let slot = BUCKET_MICROS.partition_point(|&bound| bound < micros);
        self.counts[slot].fetch_add(1, Ordering::Relaxed);
        self.sum_micros.fetch_add(micros, Ordering::Relaxed);
    }

    /// How many durations were counted.
    pub fn count(&self) -> u64 {
        self.counts.iter().map(|c| c.load(Ordering::Relaxed)).sum()
    }

    /// Writes it as one histogram of `encoder`'s family.
    ///
    /// # Errors
    ///
    /// As the writer's.
    pub fn encode(&self, encoder: &mut MetricEncoder<'_>) -> Result<(), std::fmt::Error> {
        // The encoder makes the counts cumulative itself.
        let mut buckets = [(0.0, 0); 13];
        let mut count = 0;
        for (i, bucket) in buckets.iter_mut().enumerate() {
            let n = self.counts[i].load(Ordering::Relaxed);
            count += n;
            *bucket = (BUCKETS.get(i).copied().unwrap_or(f64::INFINITY), n);
        }
        // Exact below 2^53 microseconds (285 years).
        #[allow(clippy::cast_precision_loss)]
        let sum = self.sum_micros.load(Ordering::Relaxed) as f64 / 1e6;
        encoder.encode_histogram::<NoLabelSet>(sum, count, &buckets, None)
    }
}

/// Whether an `Accept` header asks for OpenMetrics.
pub fn wants_openmetrics(accept: Option<&[u8]>) -> bool {
    const OPENMETRICS: &[u8] = b"application/openmetrics-text";
    accept.is_some_and(|a| a.windows(OPENMETRICS.len()).any(|w| w == OPENMETRICS))
}

/// `registry` as the scraper asks (`accept`): the body and its content
/// type.
pub fn render(registry: &Registry, accept: Option<&[u8]>) -> (String, &'static str) {
    let mut openmetrics = String::with_capacity(16 * 1024);
    // Writing to a String does not fail; a collector's error leaves what
    // was written.
    let _ = prometheus_client::encoding::text::encode(&mut openmetrics, registry);
    if wants_openmetrics(accept) {
        (openmetrics, OPENMETRICS_CONTENT_TYPE)
    } else {
        (as_text_format(&openmetrics), TEXT_CONTENT_TYPE)
    }
}

/// OpenMetrics text as the Prometheus text format: a counter's `HELP` and
/// `TYPE` name its samples (`NAME_total`); no `# EOF` and no `# UNIT`.
pub fn as_text_format(openmetrics: &str) -> String {
    let counters: Vec<&str> = openmetrics
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE ")?.strip_suffix(" counter"))
        .collect();
    let mut text = String::with_capacity(openmetrics.len() + 16 * counters.len());
    for line in openmetrics.lines() {
        if line == "# EOF" || line.starts_with("# UNIT ") {
            continue;
        }
        let renamed = ["# HELP ", "# TYPE "].iter().find_map(|tag| {
            let rest = line.strip_prefix(tag)?;
            let (name, after) = rest.split_once(' ')?;
            counters.contains(&name).then_some((tag, name, after))
        });
        match renamed {
            Some((tag, name, after)) => {
                text.push_str(tag);
                text.push_str(name);
                text.push_str("_total ");
                text.push_str(after);
            }
            None => text.push_str(line),
        }
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn observations_fall_in_their_bucket_and_the_count_is_theirs() {
        let h = Histogram::default();
        h.observe(Duration::from_micros(100));
        h.observe(Duration::from_micros(101));
        h.observe(Duration::from_secs(60));
        assert_eq!(h.counts[0].load(Ordering::Relaxed), 1);
        assert_eq!(h.counts[1].load(Ordering::Relaxed), 1);
        assert_eq!(h.counts[12].load(Ordering::Relaxed), 1);
        assert_eq!(h.count(), 3);
        for (seconds, micros) in BUCKETS.iter().zip(BUCKET_MICROS) {
            assert!((seconds * 1e6 - micros as f64).abs() < 0.5);
        }
    }

    #[derive(Debug)]
    struct One(Histogram);

    impl prometheus_client::collector::Collector for One {
        fn encode(
            &self,
            mut encoder: prometheus_client::encoding::DescriptorEncoder<'_>,
        ) -> Result<(), std::fmt::Error> {
            let mut family = encoder.encode_descriptor(
                "t_seconds",
                "T.",
                None,
                prometheus_client::metrics::MetricType::Histogram,
            )?;
            self.0.encode(&mut family)
        }
    }

    #[test]
    fn buckets_are_written_cumulative_and_inf_is_the_count() {
        let h = Histogram::new();
        h.observe(Duration::from_micros(50));
        h.observe(Duration::from_micros(300));
        h.observe(Duration::from_secs(60));
        let mut registry = Registry::default();
        registry.register_collector(Box::new(One(h)));
        let (text, _) = render(&registry, None);
        for line in [
            "t_seconds_count 3",
            "t_seconds_bucket{le=\"0.0001\"} 1",
            "t_seconds_bucket{le=\"0.00025\"} 1",
            "t_seconds_bucket{le=\"0.0005\"} 2",
            "t_seconds_bucket{le=\"10.0\"} 2",
            "t_seconds_bucket{le=\"+Inf\"} 3",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} not in\n{text}");
        }
    }

    #[test]
    fn counters_are_renamed_for_the_text_format() {
        let om = "# HELP a_requests Requests.\n# TYPE a_requests counter\na_requests_total{x=\"1\"} 2\n\
                  # HELP a_up Up.\n# TYPE a_up gauge\na_up 1\n# EOF\n";
        assert_eq!(
            as_text_format(om),
            "# HELP a_requests_total Requests.\n# TYPE a_requests_total counter\na_requests_total{x=\"1\"} 2\n\
             # HELP a_up Up.\n# TYPE a_up gauge\na_up 1\n"
        );
        assert!(wants_openmetrics(Some(
            b"application/openmetrics-text;version=1.0.0,text/plain;q=0.5"
        )));
        assert!(!wants_openmetrics(Some(b"text/plain")));
        assert!(!wants_openmetrics(None));
    }
}
