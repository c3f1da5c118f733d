//! The interface's timestamp reader (`payments_interface::timestamp`, what
//! the client decodes `createdAt` with, through
//! [`payments_client::wire::parse_timestamp`]) against the kept ISO 8601
//! crate, `iso8601` (nom), taken to the same result: a `DateTime<Utc>`,
//! its year checked to be 0000–9999. chrono's RFC 3339 reader, which reads
//! only the first form, is the floor.
//!
//! The inputs: the form the mock writes and most services send
//! (`2026-11-22T08:15:30.123Z`), one with an offset, and one in basic
//! format. Figures in BENCHMARKS.md.
//!
//! Run: `cargo bench -p payments-client --bench timestamp`.

use chrono::{DateTime, Datelike, Utc};
use divan::black_box;

const FORMS: [&str; 3] = [
    "2026-11-22T08:15:30.123Z",
    "2026-11-22T08:15:30.123+08:00",
    "20261122T081530Z",
];

fn main() {
    // Both read every form as the same instant, or the comparison means
    // nothing.
    for form in FORMS {
        assert_eq!(
            payments_client::wire::parse_timestamp(form),
            by_iso8601_crate(form),
            "{form}"
        );
    }
    divan::main();
}

/// The `iso8601` crate's reading, to what the client needs.
fn by_iso8601_crate(text: &str) -> Option<DateTime<Utc>> {
    let parsed = iso8601::datetime(text).ok()?;
    let utc = parsed.into_fixed_offset()?.with_timezone(&Utc);
    (0..=9999).contains(&utc.year()).then_some(utc)
}

#[divan::bench(args = FORMS)]
fn interface_reader(text: &str) -> Option<DateTime<Utc>> {
    payments_client::wire::parse_timestamp(black_box(text))
}

#[divan::bench(args = FORMS)]
fn iso8601_crate(text: &str) -> Option<DateTime<Utc>> {
    by_iso8601_crate(black_box(text))
}

#[divan::bench(args = FORMS)]
fn chrono_rfc3339(text: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(black_box(text))
        .ok()
        .map(|t| t.with_timezone(&Utc))
}
