//! The `data` of each endpoint's success (interface sections 2.3, 2.5,
//! 2.6): every field there and of its type, nothing unlisted, the
//! initiate's echo of the request, and the statuses the document shows.

use std::borrow::Cow;

use super::{Hits, Level, Rule, quoted};
use crate::exchange::{Endpoint, Parsed};
use crate::json::{Json, Object, Shape};
use crate::memory::Memory;

mod instant;

/// What a `data` field holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    /// A string, null, or left out (the client reads a missing optional
    /// field as null; the document does not say which it sends).
    OptionalText,
    Integer,
    /// A JSON number (major units).
    Decimal,
    /// An ISO 8601 timestamp.
    Time,
    OptionalTime,
}

/// How this rule reads a field of the interface's tables.
fn kind_of(field: &payments_interface::Field) -> Kind {
    use payments_interface::Kind as Wire;
    match (field.kind, field.required) {
        (Wire::Integer, _) => Kind::Integer,
        (Wire::Decimal, _) => Kind::Decimal,
        (Wire::Timestamp, true) => Kind::Time,
        (Wire::Timestamp, false) => Kind::OptionalTime,
        (_, true) => Kind::Text,
        (_, false) => Kind::OptionalText,
    }
}

/// Whether the document shows `status` (section 3).
fn is_documented_status(status: &str) -> bool {
    payments_interface::Status::parse(status).is_some_and(payments_interface::Status::is_documented)
}

/// The endpoint's `data` fields (sections 2.3, 2.5, 2.6): the interface's
/// table.
fn fields_of(endpoint: &Endpoint) -> &'static [payments_interface::Field] {
    endpoint
        .operation()
        .map_or(&[], payments_interface::Endpoint::data_fields)
}

/// ISO 8601 date and time, extended format (`2026-11-22T08:15:30.5+08:00`):
/// a calendar, ordinal or week date, `T`, hours with optional minutes and
/// seconds (a fraction with `.` or `,` on the last), an optional `Z` or
/// offset (`±hh`, `±hh:mm`, and the `±hhmm` services often send).
static EXTENDED: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(
        r"^(?:(?P<y>[0-9]{4})-(?:(?P<m>[0-9]{2})-(?P<d>[0-9]{2})|(?P<o>[0-9]{3})|W(?P<w>[0-9]{2})-(?P<wd>[0-9]))T(?P<h>[0-9]{2})(?::(?P<mi>[0-9]{2})(?::(?P<s>[0-9]{2}))?)?(?:[.,](?P<f>[0-9]+))?(?P<z>Z|[+-][0-9]{2}(?::?[0-9]{2})?)?)$",
    )
    .expect("a valid pattern")
});

/// The same in basic format (`20261122T081530Z`, offsets `±hh` or `±hhmm`).
static BASIC: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(
        r"^(?:(?P<y>[0-9]{4})(?:(?P<m>[0-9]{2})(?P<d>[0-9]{2})|(?P<o>[0-9]{3})|W(?P<w>[0-9]{2})(?P<wd>[0-9]))T(?P<h>[0-9]{2})(?:(?P<mi>[0-9]{2})(?:(?P<s>[0-9]{2}))?)?(?:[.,](?P<f>[0-9]+))?(?P<z>Z|[+-][0-9]{2}(?:[0-9]{2})?)?)$",
    )
    .expect("a valid pattern")
});

/// Whether `text` is an ISO 8601 date and time (a timestamp: a date alone
/// is not one): extended or basic format, with or without an offset, the
/// date and the time in range. Not RFC 3339's space for `T`, which ISO
/// 8601 does not allow.
pub(crate) fn is_iso8601(text: &str) -> bool {
    // The usual shape first, without the patterns: RFC 3339 with an
    // upper-case `T` and `Z` is a profile of ISO 8601 (chrono also takes a
    // space or lower case, which ISO 8601 does not: those go on below).
    // chrono also takes U+2212 for the offset's minus: ASCII only here.
    let b = text.as_bytes();
    if b.len() >= 20
        && text.is_ascii()
        && b[10] == b'T'
        && !b.ends_with(b"z")
        && chrono::DateTime::parse_from_rfc3339(text).is_ok()
    {
        return true;
    }
    by_pattern(text)
}

/// [`is_iso8601`] by the patterns alone.
fn by_pattern(text: &str) -> bool {
    let Some(c) = EXTENDED.captures(text).or_else(|| BASIC.captures(text)) else {
        return false;
    };
    let number = |name: &str| c.name(name).and_then(|m| m.as_str().parse::<u32>().ok());
    let date = date_of(&c);
    let hour = number("h").unwrap_or(99);
    let minute = number("mi").unwrap_or(0);
    let second = number("s").unwrap_or(0);
    // 24:00 is the end of a day; 60 is a leap second.
    let time =
        (hour < 24 && minute < 60 && second <= 60) || (hour == 24 && minute == 0 && second == 0);
    date.is_some() && time
}

/// The date of a timestamp the patterns matched (calendar, ordinal or
/// week date), when it is one.
fn date_of(c: &regex::Captures<'_>) -> Option<chrono::NaiveDate> {
    let number = |name: &str| c.name(name).and_then(|m| m.as_str().parse::<u32>().ok());
    let year = number("y").and_then(|y| i32::try_from(y).ok())?;
    match (
        number("m"),
        number("d"),
        number("o"),
        number("w"),
        number("wd"),
    ) {
        (Some(m), Some(d), ..) => chrono::NaiveDate::from_ymd_opt(year, m, d),
        (_, _, Some(o), ..) => chrono::NaiveDate::from_yo_opt(year, o),
        (_, _, _, Some(w), Some(wd)) => {
            chrono::Weekday::try_from(u8::try_from(wd).unwrap_or(0).wrapping_sub(1))
                .ok()
                .filter(|_| wd >= 1)
                .and_then(|day| chrono::NaiveDate::from_isoywd_opt(year, w, day))
        }
        _ => None,
    }
}

fn problem(name: &str, kind: Kind, value: Option<Json<'_>>) -> Option<String> {
    let shape = value.map(Json::shape);
    match (kind, shape) {
        (Kind::OptionalText | Kind::OptionalTime, None | Some(Shape::Null)) => None,
        (_, None) => Some(format!("{name} is missing")),
        (Kind::Text | Kind::OptionalText, Some(Shape::String)) => None,
        (Kind::Text, _) => Some(format!("{name} is not a string")),
        (Kind::OptionalText, _) => Some(format!("{name} is neither a string nor null")),
        (Kind::Integer, Some(Shape::Number)) if value.is_some_and(Json::is_integer) => None,
        (Kind::Integer, _) => Some(format!("{name} is not an integer")),
        (Kind::Decimal, Some(Shape::Number)) => None,
        (Kind::Decimal, _) => Some(format!("{name} is not a number (a decimal in major units)")),
        (Kind::Time | Kind::OptionalTime, Some(Shape::String)) => {
            let text = value.and_then(Json::as_str).unwrap_or_default();
            if is_iso8601(&text) {
                None
            } else {
                Some(format!(
                    "{name} {} is not an ISO 8601 timestamp",
                    quoted(format_args!("{text:?}"))
                ))
            }
        }
        (Kind::Time | Kind::OptionalTime, _) => Some(format!("{name} is not a timestamp string")),
    }
}

pub(super) const FIELDS: Rule = Rule {
    id: "data.fields",
    level: Level::Violation,
    text: "A field of the endpoint's `data` (sections 2.3, 2.5, 2.6) missing or of the wrong type, or a timestamp not ISO 8601 (a date and a time, extended or basic format, `T` between them, an optional `Z` or offset). `currencyCode` in a status `data` is not a violation but `data.extra`.",
    check: data_fields,
};

/// `data.fields`: the success `data` has the document's fields and types.
fn data_fields(p: &Parsed<'_>, _: &Memory) -> Hits {
    let Some(data) = p.success_data() else {
        return Vec::new();
    };
    fields_of(&p.endpoint)
        .iter()
        .filter_map(|field| problem(field.name, kind_of(field), data.get(field.name)))
        .map(|m| (Level::Violation, format!("{}: {m}", p.endpoint.name())))
        .collect()
}

pub(super) const EXTRA: Rule = Rule {
    id: "data.extra",
    level: Level::Undocumented,
    text: "A `data` field the document does not show for that endpoint.",
    check: data_extra,
};

/// `data.extra`: fields beyond the document's table.
fn data_extra(p: &Parsed<'_>, _: &Memory) -> Hits {
    let Some(data) = p.success_data() else {
        return Vec::new();
    };
    let known = fields_of(&p.endpoint);
    let is_known = |key: &str| known.iter().any(|field| field.name == key);
    // Most answers show only the document's fields: nothing to sort.
    if data.fields().iter().all(|(key, _)| is_known(key)) {
        return Vec::new();
    }
    data.keys()
        .into_iter()
        .filter(|k| !known.iter().any(|field| field.name == *k))
        .map(|k| {
            (
                Level::Undocumented,
                format!(
                    "{} data has {}, which the document does not show",
                    p.endpoint.name(),
                    quoted(k)
                ),
            )
        })
        .collect()
}

pub(super) const ECHO: Rule = Rule {
    id: "data.echo",
    level: Level::Violation,
    text: "Initiate's `data` does not echo the request's `referenceNo`, `amount`, `productCode`, or `currencyCode` (`MYR` when the request left it out).",
    check: data_echo,
};

/// `data.echo`: the initiate answer repeats what was asked.
fn data_echo(p: &Parsed<'_>, _: &Memory) -> Hits {
    if p.endpoint != Endpoint::Initiate {
        return Vec::new();
    }
    let (Some(data), Some(request)) = (p.success_data(), p.request.as_ref()) else {
        return Vec::new();
    };
    let mut hits = Vec::new();
    for name in ["referenceNo", "amount", "productCode"] {
        if let (Some(asked), Some(answered)) = (request.get(name), data.get(name))
            && !same(asked, answered)
        {
            hits.push((
                Level::Violation,
                format!(
                    "initiate asked {name} {}, data answers {}",
                    quoted(asked),
                    quoted(answered)
                ),
            ));
        }
    }
    let asked = match request.get("currencyCode") {
        Some(v) if !v.is_null() => v,
        _ => Json::new("\"MYR\""),
    };
    if let Some(answered) = data.get("currencyCode")
        && !same(asked, answered)
    {
        hits.push((
            Level::Violation,
            format!(
                "initiate asked currencyCode {}, data answers {}",
                quoted(asked),
                quoted(answered)
            ),
        ));
    }
    hits
}

// Equal JSON values, numbers by their exact value (`150` and `150.0`).
pub(super) use crate::json::same;
pub(super) use instant::same_instant;

pub(super) const STATUS_UNDOCUMENTED: Rule = Rule {
    id: "status.undocumented",
    level: Level::Undocumented,
    text: "A `status` value other than the five the document shows (`PENDING`, `INITIATED`, `CONFIRMED`, `SUCCESSFUL`, `FAILED`).",
    check: status_undocumented,
};

/// `status.undocumented`: a state beyond section 3's five.
fn status_undocumented(p: &Parsed<'_>, _: &Memory) -> Hits {
    match status_of(p.success_data()).as_deref() {
        Some(status) if !is_documented_status(status) => vec![(
            Level::Undocumented,
            format!(
                "status {} is not one of the five the document shows",
                quoted(&status)
            ),
        )],
        _ => Vec::new(),
    }
}

/// The `status` of a `data`.
pub(crate) fn status_of<'a>(data: Option<&Object<'a>>) -> Option<Cow<'a, str>> {
    data?.text("status")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::rules::test_support::{
        confirm_data, exchange, found, initiate_body, initiate_data, ok, status_data,
    };

    const STATUS: &str = "/api/payments/t1/status";

    #[test]
    fn data_fields() {
        let good = status_data("t1", "R", "SUCCESSFUL", "10.50");
        assert!(
            found(
                "data.fields",
                &[exchange("GET", STATUS, json!(null), 200, ok(good.clone()))]
            )
            .is_empty()
        );
        let mut bad = good.clone();
        bad["amount"] = json!("10.50");
        bad["createdAt"] = json!("yesterday");
        bad.as_object_mut().expect("object").remove("productCode");
        let hits = found(
            "data.fields",
            &[exchange("GET", STATUS, json!(null), 200, ok(bad))],
        );
        assert_eq!(hits.len(), 3, "{hits:?}");
        let mut nullable = good;
        nullable.as_object_mut().expect("object").remove("message");
        assert!(
            found(
                "data.fields",
                &[exchange("GET", STATUS, json!(null), 200, ok(nullable))]
            )
            .is_empty()
        );
        let mut minor = initiate_data("t1", "R", 1050);
        minor["amount"] = json!(10.5);
        assert_eq!(
            found(
                "data.fields",
                &[exchange(
                    "POST",
                    "/api/payments/initiate",
                    initiate_body("R", 1050),
                    200,
                    ok(minor)
                )]
            )
            .len(),
            1
        );
        let mut confirmed = confirm_data("t1", "R", "SUCCESSFUL", "10.50");
        confirmed["confirmedAt"] = json!("2026-11-22 08:15");
        assert_eq!(
            found(
                "data.fields",
                &[exchange(
                    "POST",
                    "/api/payments/confirm",
                    json!(null),
                    200,
                    ok(confirmed)
                )]
            )
            .len(),
            1
        );
    }

    #[test]
    fn data_extra() {
        let mut with_currency = status_data("t1", "R", "SUCCESSFUL", "10.50");
        with_currency["currencyCode"] = json!("MYR");
        let hits = found(
            "data.extra",
            &[exchange("GET", STATUS, json!(null), 200, ok(with_currency))],
        );
        assert_eq!(hits.len(), 1);
        assert!(hits[0].message.contains("currencyCode"));
        assert!(found("data.fields", &[]).is_empty());
        assert!(
            found(
                "data.extra",
                &[exchange(
                    "GET",
                    STATUS,
                    json!(null),
                    200,
                    ok(status_data("t1", "R", "FAILED", "1"))
                )]
            )
            .is_empty()
        );
    }

    #[test]
    fn data_echo() {
        let path = "/api/payments/initiate";
        assert!(
            found(
                "data.echo",
                &[exchange(
                    "POST",
                    path,
                    initiate_body("R", 1050),
                    200,
                    ok(initiate_data("t", "R", 1050))
                )]
            )
            .is_empty()
        );
        let mut major = initiate_data("t", "R", 1050);
        major["amount"] = json!(10.5);
        major["referenceNo"] = json!("r");
        assert_eq!(
            found(
                "data.echo",
                &[exchange(
                    "POST",
                    path,
                    initiate_body("R", 1050),
                    200,
                    ok(major)
                )]
            )
            .len(),
            2
        );
        let mut usd = initiate_data("t", "R", 1050);
        usd["currencyCode"] = json!("USD");
        assert_eq!(
            found(
                "data.echo",
                &[exchange(
                    "POST",
                    path,
                    initiate_body("R", 1050),
                    200,
                    ok(usd)
                )]
            )
            .len(),
            1,
            "MYR when the request names none"
        );
    }

    #[test]
    fn status_undocumented() {
        assert_eq!(
            found(
                "status.undocumented",
                &[exchange(
                    "GET",
                    STATUS,
                    json!(null),
                    200,
                    ok(status_data("t1", "R", "EXPIRED", "1"))
                )]
            )
            .len(),
            1
        );
        assert!(
            found(
                "status.undocumented",
                &[exchange(
                    "GET",
                    STATUS,
                    json!(null),
                    200,
                    ok(status_data("t1", "R", "PENDING", "1"))
                )]
            )
            .is_empty()
        );
    }

    proptest::proptest! {
        #[test]
        fn the_quick_path_never_accepts_what_the_patterns_refuse(
            text in "[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}([.,][0-9]{1,12})?([Zz]|[+\u{2212}\u{2012}\u{2013}-][0-9]{2}:?[0-9]{2})?"
        ) {
            proptest::prop_assert_eq!(super::is_iso8601(&text), super::by_pattern(&text), "{}", text);
        }
    }

    #[test]
    fn timestamps_are_iso_8601() {
        for good in [
            "2026-11-22T08:15:30Z",
            "2026-11-22T08:15:30.123456789+08:00",
            "2026-11-22T08:15:30",
            "2026-11-22T08:15Z",
            "2026-11-22T08:15:30,5Z",
            "2026-11-22T08:15:30+0800",
            "2026-11-22T08:15:30-05",
            "20261122T081530Z",
            "20261122T081530.25+0800",
            "2026-326T08:15:30Z",
            "2026-W48-7T08:15:30Z",
            "2026-11-22T24:00:00Z",
            "2016-12-31T23:59:60Z",
        ] {
            assert!(super::is_iso8601(good), "{good}");
        }
        for bad in [
            "2026-11-22",
            "22/11/2026 08:15",
            "",
            "1795000000",
            "2026-11-22 08:15:30Z",
            "2026-02-30T08:15:30Z",
            "2026-13-01T08:15:30Z",
            "2026-11-22T25:00:00Z",
            "2026-11-22T08:61:00Z",
            "2026-11-22T08:15:30+8",
            "2026-11-22T08:15:30ZZ",
            "2026-W48-8T08:15:30Z",
            "2026-11-22T08:15:30 ",
            "2026-11-22t08:15:30Z",
            "2026-11-22T08:15:30z",
            "2026-11-22T08:15:30.5z",
            "2026-11-22T08:15:30\u{2212}08:00",
            "2026-11-22T08:15:30.5\u{2212}08:00",
            "\u{0662}\u{0660}\u{0662}\u{0666}-11-22T08:15:30Z",
        ] {
            assert!(!super::is_iso8601(bad), "{bad}");
        }
    }
}
