//! A timestamp as the instant it names, for `status.agree`: two spellings
//! of one instant (`…00Z`, `…00.000Z`, `…00+00:00`, another offset, the
//! basic format) are one `createdAt`, not two reads that disagree.

use super::same;
use crate::json::Json;

/// The instant an ISO 8601 timestamp names, as the interface's reader
/// (which the client decodes with) takes it: to the nanosecond (digits
/// past it are dropped, as the client drops them).
#[derive(Debug, PartialEq, Eq)]
struct Instant {
    /// Without an offset: a local time, the same instant only as another
    /// local time (the client takes it as UTC).
    local: bool,
    /// Whole seconds since 1970-01-01T00:00:00Z (a local time's as if it
    /// were UTC; 24:00 the next day's 00:00).
    seconds: i64,
    /// A leap second (`:60`), which is not the next minute's first.
    leap: bool,
    nanosecond: u32,
}

/// The instant `text` names, when it is an ISO 8601 timestamp as
/// `data.fields` reads them (`payments_interface::timestamp::parse_iso8601`).
fn instant(text: &str) -> Option<Instant> {
    let t = payments_interface::timestamp::parse_iso8601(text).ok()?;
    Some(Instant {
        local: t.offset_minutes().is_none(),
        seconds: t.unix_seconds(),
        leap: t.is_leap_second(),
        nanosecond: t.nanosecond(),
    })
}

/// Whether two values of a timestamp field name one instant: equal as
/// JSON ([`same`]), or both ISO 8601 timestamps (as `data.fields` reads
/// them) of the same instant, two without an offset of the same local
/// time. Anything else is compared as it is spelled.
pub(in crate::rules) fn same_instant(a: Json<'_>, b: Json<'_>) -> bool {
    if same(a, b) {
        return true;
    }
    match (a.as_str(), b.as_str()) {
        (Some(a), Some(b)) => instant(&a).is_some_and(|i| instant(&b) == Some(i)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether two timestamps (as text) name one instant.
    fn one(a: &str, b: &str) -> bool {
        let quoted = |t: &str| serde_json::to_string(t).expect("a JSON string");
        let (a, b) = (quoted(a), quoted(b));
        let same = same_instant(Json::new(&a), Json::new(&b));
        assert_eq!(same, same_instant(Json::new(&b), Json::new(&a)), "{a} {b}");
        same
    }

    #[test]
    fn two_spellings_of_one_instant_are_one() {
        let z = "2026-11-29T23:00:00Z";
        for other in [
            "2026-11-29T23:00:00.000Z",
            "2026-11-29T23:00:00+00:00",
            "2026-11-29T23:00:00.000-00:00",
            "2026-11-30T10:00:00.000+11:00",
            "2026-11-29T18:00:00-05",
            "2026-11-29T18:00:00-0500",
            "2026-11-30T13:30:00+14:30",
            "2026-11-29T23:00Z",
            "2026-11-29T23Z",
            "2026-11-29T23:00:00,000Z",
            "20261129T230000Z",
            "20261130T100000.0+1100",
            "2026-333T23:00:00Z",
            "2026-W48-7T23:00:00Z",
            "2026-11-29T24:00:00+01:00",
        ] {
            assert!(one(z, other), "{z} {other}");
        }
        assert!(one(
            "2026-11-29T23:00:00.5Z",
            "2026-11-30T00:00:00,500000+01:00"
        ));
        assert!(one("2026-11-29T24:00:00Z", "2026-11-30T00:00:00Z"));
        assert!(one("2016-12-31T23:59:60Z", "2017-01-01T07:59:60+08:00"));
        assert!(one("2026-11-29T23:00:00", "2026-11-29T23:00:00.000"));
        // A fraction of an hour or a minute; past the nanosecond, what the
        // client reads (it drops those digits).
        assert!(one("2026-11-29T23.5Z", "2026-11-29T23:30:00Z"));
        assert!(one("2026-11-29T23:00.25Z", "2026-11-29T23:00:15Z"));
        assert!(one(
            "2026-11-29T23:00:00.1234567890123Z",
            "2026-11-29T23:00:00.1234567890124Z"
        ));
    }

    #[test]
    fn two_instants_or_what_is_no_timestamp_differ() {
        for (a, b) in [
            ("2026-11-29T23:00:00.000Z", "2026-11-29T23:00:00.001Z"),
            (
                "2026-11-29T23:00:00.123456789Z",
                "2026-11-29T23:00:00.123456788Z",
            ),
            ("2026-11-29T23:00:00Z", "2026-11-29T23:00:00+01:00"),
            // A leap second is not the next minute's first.
            ("2016-12-31T23:59:60Z", "2017-01-01T00:00:00Z"),
            // A local time is no instant but another local time.
            ("2026-11-29T23:00:00", "2026-11-29T23:00:00Z"),
            // Not timestamps (out of range, a date alone, an expanded
            // year, an offset of a day): compared as text.
            ("2026-02-30T00:00:00Z", "2026-03-02T00:00:00Z"),
            ("2026-11-29", "2026-11-29T00:00:00Z"),
            ("+10000-01-01T00:00:00Z", "+10000-01-01T00:00:00.0Z"),
            ("2026-11-29T23:00:00+24:00", "2026-11-28T23:00:00Z"),
        ] {
            assert!(!one(a, b), "{a} {b}");
        }
        // Spelled alike, anything is the same.
        for text in ["2026-02-30T00:00:00Z", "20261129T230000Z", "yesterday"] {
            assert!(one(text, text), "{text}");
        }
        assert!(!same_instant(
            Json::new("1795000000"),
            Json::new(r#""2026-11-19T09:46:40Z""#)
        ));
        assert!(same_instant(Json::new("null"), Json::new("null")));
    }

    proptest::proptest! {
        /// Where chrono reads both (RFC 3339, up to nanoseconds, no leap
        /// second), one instant to chrono is one here, and two are two.
        #[test]
        fn instants_agree_with_chrono(
            a in "20[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]{1,9})?(Z|[+-]0[0-9]:[0-5][0-9])",
            shift in -50_000i64..50_000,
            nanos in 0u32..3,
            offset in -14i32 * 3600..14 * 3600,
        ) {
            let parsed = chrono::DateTime::parse_from_rfc3339(&a).expect("RFC 3339");
            let zone = chrono::FixedOffset::east_opt(offset / 60 * 60).expect("an offset");
            let moved = (parsed + chrono::Duration::seconds(shift) + chrono::Duration::nanoseconds(i64::from(nanos)))
                .with_timezone(&zone);
            let b = moved.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, false);
            let chrono_same = chrono::DateTime::parse_from_rfc3339(&b).expect("RFC 3339") == parsed;
            proptest::prop_assert_eq!(one(&a, &b), chrono_same, "{} {}", a, b);
            let c = parsed.with_timezone(&zone).to_rfc3339_opts(chrono::SecondsFormat::Nanos, true);
            proptest::prop_assert!(one(&a, &c), "{} {}", a, c);
        }
    }
}
