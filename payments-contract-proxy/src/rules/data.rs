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
            match payments_interface::timestamp::parse_iso8601(&text) {
                Ok(_) => None,
                Err(why) => Some(format!(
                    "{name} {} is not an ISO 8601 timestamp ({why})",
                    quoted(format_args!("{text:?}"))
                )),
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

    /// The interface's table of timestamps, judged in a status answer's
    /// `createdAt`: flagged exactly where it is not ISO 8601, and nothing
    /// flagged the client cannot read (the client's tests run the table
    /// too).
    #[test]
    fn created_at_is_judged_as_the_interface_table_says() {
        for example in payments_interface::timestamp::EXAMPLES {
            let mut data = status_data("t1", "R", "SUCCESSFUL", "10.50");
            data["createdAt"] = json!(example.text);
            let hits = found(
                "data.fields",
                &[exchange("GET", STATUS, json!(null), 200, ok(data))],
            );
            assert_eq!(
                hits.is_empty(),
                example.iso8601,
                "{:?}: {hits:?}",
                example.text
            );
            assert!(
                hits.is_empty() <= example.utc.is_some(),
                "{:?}",
                example.text
            );
        }
    }

    #[test]
    fn why_a_timestamp_is_not_one_is_said() {
        for (text, why) in [
            ("2026-11-22T08:15:30+24:00", "the offset is beyond ±23:59"),
            (
                "9999-12-31T23:59:59-01:00",
                "its year in UTC is outside 0000–9999",
            ),
            ("2026-02-30T08:15:30Z", "no such date"),
            ("2026-11-22 08:15:30Z", "not an ISO 8601 date and time"),
        ] {
            let mut data = status_data("t1", "R", "SUCCESSFUL", "10.50");
            data["createdAt"] = json!(text);
            let hits = found(
                "data.fields",
                &[exchange("GET", STATUS, json!(null), 200, ok(data))],
            );
            assert_eq!(hits.len(), 1, "{text}: {hits:?}");
            assert!(
                hits[0].message.contains("is not an ISO 8601 timestamp"),
                "{hits:?}"
            );
            assert!(hits[0].message.contains(why), "{text}: {hits:?}");
        }
    }

    /// The cases of the reader this rule had before the interface's: each
    /// keeps its verdict.
    #[test]
    fn timestamps_are_iso_8601() {
        use payments_interface::timestamp::is_iso8601;
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
            assert!(is_iso8601(good), "{good}");
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
            assert!(!is_iso8601(bad), "{bad}");
        }
    }
}
