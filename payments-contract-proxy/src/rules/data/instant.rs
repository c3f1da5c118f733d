//! A timestamp as the instant it names, for `status.agree`: two spellings
//! of one instant (`…00Z`, `…00.000Z`, `…00+00:00`, another offset, the
//! basic format) are one `createdAt`, not two reads that disagree.

use super::{BASIC, EXTENDED, date_of, same};
use crate::json::Json;

/// The instant an ISO 8601 timestamp names, exactly (no fraction is
/// rounded to nanoseconds).
#[derive(Debug, PartialEq, Eq)]
struct Instant<'a> {
    /// Without an offset: a local time, the same instant only as another
    /// local time.
    local: bool,
    /// Whole seconds since 1970-01-01T00:00:00Z (a local time's as if it
    /// were UTC; 24:00 the next day's 00:00).
    seconds: i64,
    /// A leap second (`:60`), which is not the next minute's first.
    leap: bool,
    /// The digits of the second's fraction, without trailing zeros.
    fraction: &'a str,
}

/// The instant `text` names, when it is an ISO 8601 timestamp as
/// `data.fields` reads them (`super::is_iso8601`) and its fraction is
/// one of the second: a fraction of an hour or a minute (`T23.5Z`) gives
/// none, and is compared as text.
fn instant(text: &str) -> Option<Instant<'_>> {
    let c = EXTENDED.captures(text).or_else(|| BASIC.captures(text))?;
    let date = date_of(&c)?;
    let number = |name: &str| c.name(name).and_then(|m| m.as_str().parse::<i64>().ok());
    let (hour, minute, second) = (number("h")?, number("mi"), number("s"));
    let fraction = c.name("f").map_or("", |m| m.as_str().trim_end_matches('0'));
    if !fraction.is_empty() && second.is_none() {
        return None;
    }
    let (minute, second) = (minute.unwrap_or(0), second.unwrap_or(0));
    let end_of_day = hour == 24 && minute == 0 && second == 0 && fraction.is_empty();
    if !(end_of_day || (hour < 24 && minute < 60 && second <= 60)) {
        return None;
    }
    let offset = match c.name("z").map(|m| m.as_str()) {
        None => None,
        Some("Z") => Some(0),
        Some(z) => {
            let digits = z[1..].replace(':', "");
            let hours: i64 = digits.get(..2)?.parse().ok()?;
            let minutes: i64 = match digits.get(2..) {
                Some("") | None => 0,
                Some(m) => m.parse().ok()?,
            };
            if hours > 23 || minutes > 59 {
                return None;
            }
            let sign = if z.starts_with('-') { -1 } else { 1 };
            Some(sign * (hours * 3600 + minutes * 60))
        }
    };
    let midnight = date.and_hms_opt(0, 0, 0)?.and_utc().timestamp();
    Some(Instant {
        local: offset.is_none(),
        seconds: midnight + hour * 3600 + minute * 60 + second - offset.unwrap_or(0),
        leap: second == 60,
        fraction,
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
    }

    #[test]
    fn two_instants_or_what_is_no_timestamp_differ() {
        for (a, b) in [
            ("2026-11-29T23:00:00.000Z", "2026-11-29T23:00:00.001Z"),
            // Beyond the nanosecond: still two instants.
            (
                "2026-11-29T23:00:00.1234567890123Z",
                "2026-11-29T23:00:00.1234567890124Z",
            ),
            ("2026-11-29T23:00:00Z", "2026-11-29T23:00:00+01:00"),
            // A leap second is not the next minute's first.
            ("2016-12-31T23:59:60Z", "2017-01-01T00:00:00Z"),
            // A local time is no instant but another local time.
            ("2026-11-29T23:00:00", "2026-11-29T23:00:00Z"),
            // Not timestamps (out of range, a date alone, an expanded
            // year, a fraction of an hour): compared as text.
            ("2026-02-30T00:00:00Z", "2026-03-02T00:00:00Z"),
            ("2026-11-29", "2026-11-29T00:00:00Z"),
            ("+10000-01-01T00:00:00Z", "+10000-01-01T00:00:00.0Z"),
            ("2026-11-29T23.5Z", "2026-11-29T23:30:00Z"),
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
