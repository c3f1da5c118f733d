//! The reader's examples: one table that the interface's tests, the
//! client's decoding tests and the contract proxy's rule tests all run, so
//! what the proxy passes the client reads.

/// One text and how the reader takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Example {
    /// The timestamp as a service might send it.
    pub text: &'static str,
    /// Whether [`super::parse_iso8601`] accepts it (the contract proxy
    /// passes it).
    pub iso8601: bool,
    /// What [`super::parse`] reads (a client decodes), as the instant's
    /// RFC 3339 text in UTC ([`super::Timestamp`]'s `Display`); `None`:
    /// refused.
    pub utc: Option<&'static str>,
}

const fn both(text: &'static str, utc: &'static str) -> Example {
    Example {
        text,
        iso8601: true,
        utc: Some(utc),
    }
}

const fn tolerated(text: &'static str, utc: &'static str) -> Example {
    Example {
        text,
        iso8601: false,
        utc: Some(utc),
    }
}

const fn refused(text: &'static str) -> Example {
    Example {
        text,
        iso8601: false,
        utc: None,
    }
}

/// The examples, each with its verdicts.
pub const EXAMPLES: &[Example] = &[
    // What the mock writes, and RFC 3339 with any offset.
    both("2026-11-22T08:15:30.123Z", "2026-11-22T08:15:30.123Z"),
    both("2026-11-22T08:15:30Z", "2026-11-22T08:15:30Z"),
    both(
        "2026-11-22T08:15:30.123456789+08:00",
        "2026-11-22T00:15:30.123456789Z",
    ),
    both("2026-11-22T08:15:30-00:00", "2026-11-22T08:15:30Z"),
    both("2026-11-22T08:15:30+23:59", "2026-11-21T08:16:30Z"),
    both("2026-11-22T08:15:30-23:59", "2026-11-23T08:14:30Z"),
    // No offset: taken as UTC (CONTRACT section 11).
    both("2026-11-22T08:15:30", "2026-11-22T08:15:30Z"),
    both("2026-11-22T08:15:30.5", "2026-11-22T08:15:30.500Z"),
    // Reduced precision, and a fraction of the last component.
    both("2026-11-22T08:15Z", "2026-11-22T08:15:00Z"),
    both("2026-11-22T08Z", "2026-11-22T08:00:00Z"),
    both("2026-11-22T08.5Z", "2026-11-22T08:30:00Z"),
    both("2026-11-22T08:15.5Z", "2026-11-22T08:15:30Z"),
    both("2026-11-22T08:15,25", "2026-11-22T08:15:15Z"),
    // A comma or a point; past the nanosecond, truncated.
    both("2026-11-22T08:15:30,5Z", "2026-11-22T08:15:30.500Z"),
    both(
        "2026-11-22T08:15:30.1234567891999Z",
        "2026-11-22T08:15:30.123456789Z",
    ),
    both(
        "2026-11-22T08:15:30.99999999999999999999999999Z",
        "2026-11-22T08:15:30.999999999Z",
    ),
    // Offsets ±hh and ±hhmm.
    both("2026-11-22T08:15:30+0800", "2026-11-22T00:15:30Z"),
    both("2026-11-22T08:15:30-05", "2026-11-22T13:15:30Z"),
    // Basic format.
    both("20261122T081530Z", "2026-11-22T08:15:30Z"),
    both("20261122T081530.25+0800", "2026-11-22T00:15:30.250Z"),
    both("20261122T0815-05", "2026-11-22T13:15:00Z"),
    both("20261122T08", "2026-11-22T08:00:00Z"),
    // Ordinal and week dates.
    both("2026-326T08:15:30Z", "2026-11-22T08:15:30Z"),
    both("2026326T081530Z", "2026-11-22T08:15:30Z"),
    both("2024-366T00:00Z", "2024-12-31T00:00:00Z"),
    both("2026-W48-7T08:15:30Z", "2026-11-29T08:15:30Z"),
    both("2026W487T081530Z", "2026-11-29T08:15:30Z"),
    both("2026-W01-1T00:00Z", "2025-12-29T00:00:00Z"),
    both("2026-W53-7T00:00Z", "2027-01-03T00:00:00Z"),
    // The end of a day, and leap seconds.
    both("2026-11-22T24:00:00Z", "2026-11-23T00:00:00Z"),
    both("2026-12-31T24:00Z", "2027-01-01T00:00:00Z"),
    both("2026-11-22T24:00:00.000+01:00", "2026-11-22T23:00:00Z"),
    both("2016-12-31T23:59:60Z", "2016-12-31T23:59:60Z"),
    both("2017-01-01T07:59:60.5+08:00", "2016-12-31T23:59:60.500Z"),
    both("2024-02-29T12:00:00Z", "2024-02-29T12:00:00Z"),
    // The ends of the years an interface timestamp can hold.
    both("0000-01-01T00:00:00Z", "0000-01-01T00:00:00Z"),
    both("0000-01-01T00:00:00-01:00", "0000-01-01T01:00:00Z"),
    both(
        "9999-12-31T23:59:59.999999999Z",
        "9999-12-31T23:59:59.999999999Z",
    ),
    both("9999-12-31T23:59:59+01:00", "9999-12-31T22:59:59Z"),
    // Not ISO 8601, but what RFC 3339 allows and services send.
    tolerated("2026-11-22 08:15:30Z", "2026-11-22T08:15:30Z"),
    tolerated("2026-11-22t08:15:30Z", "2026-11-22T08:15:30Z"),
    tolerated("2026-11-22T08:15:30z", "2026-11-22T08:15:30Z"),
    tolerated("2026-11-22T08:15:30.5z", "2026-11-22T08:15:30.500Z"),
    tolerated("2026-11-22 08:15:30.5+08:00", "2026-11-22T00:15:30.500Z"),
    tolerated("2026-11-22 08:15", "2026-11-22T08:15:00Z"),
    tolerated("2026-11-22T08:15:30 ", "2026-11-22T08:15:30Z"),
    tolerated(" 2026-11-22T08:15:30Z\n", "2026-11-22T08:15:30Z"),
    tolerated("2026-11-22T08:15:30\u{2212}08:00", "2026-11-22T16:15:30Z"),
    tolerated(
        "2026-11-22T08:15:30.5\u{2212}08:00",
        "2026-11-22T16:15:30.500Z",
    ),
    // Neither.
    refused(""),
    refused("yesterday"),
    refused("1795000000"),
    refused("2026-11-22"),
    refused("2026-11-22T"),
    refused("22/11/2026 08:15"),
    refused("2026-02-30T08:15:30Z"),
    refused("2026-13-01T08:15:30Z"),
    refused("2026-00-10T08:15:30Z"),
    refused("2025-366T00:00Z"),
    refused("2026-000T00:00Z"),
    refused("2026-W48-8T08:15:30Z"),
    refused("2026-W00-1T08:15:30Z"),
    refused("2025-W53-1T08:15:30Z"),
    refused("2026-11-22T25:00:00Z"),
    refused("2026-11-22T08:61:00Z"),
    refused("2026-11-22T08:15:61Z"),
    refused("2026-11-22T24:00:01Z"),
    refused("2026-11-22T24:00:00.5Z"),
    refused("2026-11-22T24:00:00.000000000000000000001Z"),
    refused("2026-11-22T24:30Z"),
    refused("2026-11-22T8:15:30Z"),
    refused("2026-11-22T08:15:30.Z"),
    refused("2026-11-22T08:15:30.5.5Z"),
    refused("2026-11-22T08:15:30ZZ"),
    refused("2026-11-22T08:15:30+8"),
    refused("2026-11-22T08:15:30+08:0"),
    refused("2026-11-22T08:15:30+08:00:00"),
    // Offsets beyond ±23:59 (RFC 3339's range and chrono's).
    refused("2026-11-22T08:15:30+24:00"),
    refused("2026-11-22T08:15:30-24:00"),
    refused("2026-11-22T08:15:30+2400"),
    refused("2026-11-22T08:15:30+23:60"),
    refused("2026-11-22T08:15:30+99:99"),
    // Extended and basic formats mixed.
    refused("2026-11-22T081530Z"),
    refused("20261122T08:15:30Z"),
    refused("20261122T081530+08:00"),
    refused("2026-1122T08:15:30Z"),
    // Years outside 0000–9999, once in UTC.
    refused("9999-12-31T23:59:59-01:00"),
    refused("9999-12-31T24:00:00Z"),
    refused("0000-01-01T00:00:00+01:00"),
    refused("10000-01-01T00:00:00Z"),
    refused("+10000-01-01T00:00:00Z"),
    refused("-0001-12-31T23:00:00Z"),
    // Digits that are not ASCII.
    refused("\u{0662}\u{0660}\u{0662}\u{0666}-11-22T08:15:30Z"),
    refused("2026-11-22T08:15:30.\u{0665}Z"),
];
