//! Scrapes of `GET /metrics` read back (CONTRACT section 18): the text
//! format parsed line by line, histograms checked for consistency, and
//! `promtool check metrics` run on it (under `CI=true` a missing promtool
//! is a failure; elsewhere the check says loudly that it was skipped).

use std::collections::BTreeMap;
use std::io::Write as _;
use std::process::{Command, Stdio};

/// Every sample of a scrape: `name{labels}` → value. Panics on a line that
/// is neither a comment nor `series value`.
pub fn parse(text: &str) -> BTreeMap<String, f64> {
    let mut samples = BTreeMap::new();
    for line in text.lines() {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (series, value) = line
            .rsplit_once(' ')
            .unwrap_or_else(|| panic!("not a sample: {line:?}"));
        let value: f64 = match value {
            "+Inf" => f64::INFINITY,
            v => v
                .parse()
                .unwrap_or_else(|_| panic!("not a number: {line:?}")),
        };
        assert!(
            samples.insert(series.to_owned(), value).is_none(),
            "a series twice: {series}"
        );
    }
    samples
}

/// The sum of the samples named `name` that carry every label of `labels`.
pub fn value(samples: &BTreeMap<String, f64>, name: &str, labels: &[(&str, &str)]) -> f64 {
    samples
        .iter()
        .filter(|(series, _)| {
            let (n, rest) = series.split_once('{').unwrap_or((series, ""));
            n == name
                && labels
                    .iter()
                    .all(|(k, v)| rest.contains(&format!("{k}=\"{v}\"")))
        })
        .map(|(_, v)| v)
        .sum()
}

/// A series' name and the text between its braces (empty without).
fn split(series: &str) -> (&str, &str) {
    match series.split_once('{') {
        Some((name, labels)) => (name, labels.trim_end_matches('}')),
        None => (series, ""),
    }
}

/// `labels` (the text between the braces) without its `le` pair.
fn without_le(labels: &str) -> (String, Option<String>) {
    let mut le = None;
    let rest: Vec<&str> = labels
        .split(',')
        .filter(|pair| match pair.strip_prefix("le=") {
            Some(v) => {
                le = Some(v.trim_matches('"').to_owned());
                false
            }
            None => !pair.is_empty(),
        })
        .collect();
    (rest.join(","), le)
}

/// Each histogram's buckets rise, and its `+Inf` bucket is its `_count`.
pub fn assert_histograms_consistent(samples: &BTreeMap<String, f64>) {
    // (name, labels without le) -> bucket bound -> count
    let mut buckets: BTreeMap<(String, String), BTreeMap<String, f64>> = BTreeMap::new();
    for (series, n) in samples {
        let (name, labels) = split(series);
        let Some(name) = name.strip_suffix("_bucket") else {
            continue;
        };
        let (labels, le) = without_le(labels);
        let le = le.unwrap_or_else(|| panic!("a bucket without le: {series}"));
        buckets
            .entry((name.to_owned(), labels))
            .or_default()
            .insert(le, *n);
    }
    let mut checked = 0;
    for (series, count) in samples {
        let (name, labels) = split(series);
        let Some(name) = name.strip_suffix("_count") else {
            continue;
        };
        let labels = labels.to_owned();
        let found = buckets
            .get(&(name.to_owned(), labels))
            .unwrap_or_else(|| panic!("no buckets for {series}"));
        let inf = found
            .get("+Inf")
            .unwrap_or_else(|| panic!("no +Inf bucket for {series}"));
        assert_eq!(inf, count, "{series}: +Inf bucket {inf}, count {count}");
        let mut last = 0.0;
        for le in payments_serve_buckets() {
            let n = *found
                .get(&le)
                .unwrap_or_else(|| panic!("no le={le} bucket for {series}"));
            assert!(n >= last, "{series}: buckets fall at le={le}");
            last = n;
        }
        assert!(*inf >= last, "{series}");
        checked += 1;
    }
    assert!(checked > 0, "no histogram in the scrape");
}

fn payments_serve_buckets() -> Vec<String> {
    [
        "0.0001", "0.00025", "0.0005", "0.001", "0.0025", "0.005", "0.01", "0.025", "0.1", "0.5",
        "2.5", "10.0",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect()
}

/// `promtool check metrics` accepts `text` (`what` names it in messages).
pub fn promtool_check(text: &str, what: &str) {
    let spawned = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match spawned {
        Ok(child) => child,
        Err(e) if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") => {
            panic!("CI=true but promtool cannot run ({e}): .ci/run installs the prometheus package")
        }
        Err(e) => {
            eprintln!(
                "\n*** SKIPPED promtool check metrics of {what}: promtool cannot run ({e}); \
                 apt-get install prometheus to run it ***\n"
            );
            return;
        }
    };
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(text.as_bytes())
        .expect("written");
    let output = child.wait_with_output().expect("promtool ends");
    assert!(
        output.status.success(),
        "promtool check metrics refused {what} ({:?}):\n{}{}\n--- the scrape:\n{text}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
}
