//! The envelope (interface section 2.1), the HTTP status each answer may
//! have (sections 4 and 7), and the codes and statuses the document does
//! not list.

use payments_interface::{ErrorCode, Whose};

use super::{Hits, Level, Rule, quoted};
use crate::exchange::{Endpoint, Parsed};
use crate::json::{Json, Shape};
use crate::memory::Memory;

/// Whether `code` is one of the document's section 7.
fn is_documented(code: &str) -> bool {
    ErrorCode::parse(code).is_some_and(|c| c.whose() == Whose::Document)
}

/// The HTTP statuses the document lists for an endpoint (section 4).
fn documented_statuses(endpoint: &Endpoint) -> &'static [u16] {
    endpoint
        .operation()
        .map_or(&[], payments_interface::Endpoint::documented_http)
}

pub(super) const SHAPE: Rule = Rule {
    id: "envelope.shape",
    level: Level::Violation,
    text: "The body is not the envelope of section 2.1: not JSON (bytes that are not UTF-8 are not, RFC 8259 section 8.1; nor is a string with a `\\u` escape of a lone surrogate such as `\"\\ud800\"`, nor an object that repeats a member name, which the client refuses), not an object, or a field missing or of the wrong type (`isSuccess` a boolean; `errorCode` and `message` a string or null; `data` an object or null). `message` may be left out of a success (the document calls it optional there). An answer HTTP gives no body (204, 304) is left to `http.undocumented`.",
    check: envelope_shape,
};

/// `envelope.shape`: the body is the document's envelope.
fn envelope_shape(p: &Parsed<'_>, _: &Memory) -> Hits {
    // HTTP gives these no body: not the envelope's to judge (the status
    // itself is `http.undocumented`'s).
    let bodiless = matches!(p.status(), 204 | 304)
        && p.exchange
            .response
            .body
            .as_deref()
            .is_none_or(str::is_empty);
    if bodiless {
        return Vec::new();
    }
    let Some(envelope) = p.envelope() else {
        let body = p.exchange.response.body.as_deref();
        let repeated = || body.and_then(crate::json::json_but_repeated_name);
        let what = if p.response_is_json {
            "the body is JSON but not an object".to_owned()
        } else if p.exchange.response.body_not_utf8 {
            // RFC 8259 section 8.1: JSON between systems is UTF-8. Its
            // lossy text may read as JSON; the bytes the client gets do not.
            "the body is not UTF-8, so not JSON (RFC 8259 section 8.1)".to_owned()
        } else if body.is_some_and(crate::json::json_but_lone_surrogate) {
            "a string of the body escapes a lone surrogate (no Unicode text), so it is not JSON a client reads".to_owned()
        } else if let Some(name) = repeated() {
            // RFC 7493 (I-JSON) section 2.3; serde_json refuses a struct's
            // field given twice, and the client's answer with it.
            format!(
                "an object of the body names {} twice (I-JSON, RFC 7493, forbids it), so it is not JSON a client reads",
                quoted(format_args!("{name:?}"))
            )
        } else if p
            .exchange
            .response
            .body
            .as_deref()
            .is_none_or(str::is_empty)
        {
            "the body is empty".to_owned()
        } else {
            "the body is not JSON".to_owned()
        };
        return vec![(
            Level::Violation,
            format!("{what} (HTTP {}), not the envelope", p.status()),
        )];
    };
    let mut problems: Hits = Vec::new();
    let mut problem = |m: String| problems.push((Level::Violation, m));
    match envelope.is_success.map(Json::shape) {
        None => problem("isSuccess is missing".to_owned()),
        Some(Shape::Bool) => {}
        Some(_) => problem("isSuccess is not a boolean".to_owned()),
    }
    for (name, value) in [
        ("errorCode", envelope.error_code),
        ("message", envelope.message),
    ] {
        match value.map(Json::shape) {
            // Sections 4.1 and 4.2: "optional `message`" on a success.
            None if name == "message" && envelope.success() == Some(true) => {}
            None => problem(format!("{name} is missing")),
            Some(Shape::String | Shape::Null) => {}
            Some(_) => problem(format!("{name} is neither a string nor null")),
        }
    }
    match envelope.data {
        None => problem("data is missing".to_owned()),
        Some(Shape::Object | Shape::Null) => {}
        Some(_) => problem("data is neither an object nor null".to_owned()),
    }
    problems
}

pub(super) const CONSISTENCY: Rule = Rule {
    id: "envelope.consistency",
    level: Level::Violation,
    text: "`isSuccess` true with an `errorCode` or with `data` null; `isSuccess` false with `data` not null, or without `errorCode` or `message`.",
    check: envelope_consistency,
};

/// `envelope.consistency`: success and failure envelopes as section 2.1
/// and section 7 describe them.
fn envelope_consistency(p: &Parsed<'_>, _: &Memory) -> Hits {
    let Some(envelope) = p.envelope() else {
        return Vec::new();
    };
    let is_null = |v: Option<Json<'_>>| v.is_none_or(Json::is_null);
    let data_is_null = envelope.data.is_none_or(|shape| shape == Shape::Null);
    let mut problems = Vec::new();
    match envelope.success() {
        Some(true) => {
            if !is_null(envelope.error_code) {
                problems.push("isSuccess is true but errorCode is set");
            }
            if data_is_null {
                problems.push("isSuccess is true but data is null");
            }
        }
        Some(false) => {
            if !data_is_null {
                problems.push("isSuccess is false but data is not null");
            }
            if is_null(envelope.error_code) {
                problems.push("isSuccess is false without an errorCode");
            }
            if is_null(envelope.message) {
                problems.push("isSuccess is false without a message");
            }
        }
        None => {}
    }
    problems
        .into_iter()
        .map(|m| (Level::Violation, m.to_owned()))
        .collect()
}

pub(super) const HTTP_STATUS: Rule = Rule {
    id: "http.status",
    level: Level::Violation,
    text: "The HTTP status disagrees with the document for that endpoint and `errorCode`: a success not 200; a failure (`isSuccess` false) answered 200; the status endpoints' `TRANSACTION_NOT_FOUND` not 404; confirm's `TRANSACTION_NOT_FOUND` not 400; `VALIDATION_ERROR`, `INVALID_TRANSACTION_ID`, `INVALID_REFERENCE_NO` not 400; `INTERNAL_ERROR` not 500.",
    check: http_status,
};

/// `http.status`: the status the document gives each answer.
fn http_status(p: &Parsed<'_>, _: &Memory) -> Hits {
    let Some(envelope) = p.envelope() else {
        return Vec::new();
    };
    let status = p.status();
    let expected = match (envelope.success(), envelope.code()) {
        (Some(true), _) => Some((200, "a success")),
        (_, Some(code)) => expected_status(&p.endpoint, &code),
        _ => None,
    };
    match expected {
        Some((want, what)) if want != status => vec![(
            Level::Violation,
            format!("{what} answered HTTP {status}; the document says {want}"),
        )],
        // Section 7: failures are 400, 404 or 500, never 200.
        None if envelope.success() == Some(false) && status == 200 => vec![(
            Level::Violation,
            "a failure (isSuccess false) answered HTTP 200; the document answers failures 400, 404 or 500".to_owned(),
        )],
        _ => Vec::new(),
    }
}

/// The status the document gives a failure with `code` on the endpoint,
/// and how a finding names the case: the interface's table
/// (`TRANSACTION_NOT_FOUND` is 400 on confirm and 404 on the reads); a
/// code beyond section 7 has none.
fn expected_status(endpoint: &Endpoint, code: &str) -> Option<(u16, &'static str)> {
    let code = ErrorCode::parse(code).filter(|c| c.whose() == Whose::Document)?;
    let operation = endpoint.operation();
    let status = match operation {
        Some(operation) => operation.status_of(code)?,
        None if code == ErrorCode::TransactionNotFound => return None,
        None => code.http_status(),
    };
    let what = match operation {
        Some(op) if code == ErrorCode::TransactionNotFound && op.is_status() => {
            "TRANSACTION_NOT_FOUND on a status read"
        }
        Some(_) if code == ErrorCode::TransactionNotFound => "TRANSACTION_NOT_FOUND on confirm",
        _ => code.as_str(),
    };
    Some((status, what))
}

pub(super) const CODE_UNDOCUMENTED: Rule = Rule {
    id: "code.undocumented",
    level: Level::Undocumented,
    text: "An `errorCode` that the document's section 7 does not list, or does not list for that endpoint (initiate: `VALIDATION_ERROR`, `INTERNAL_ERROR`; confirm: those and `TRANSACTION_NOT_FOUND`; status by id: `INVALID_TRANSACTION_ID`, `TRANSACTION_NOT_FOUND`, `INTERNAL_ERROR`; status by reference: `INVALID_REFERENCE_NO`, `TRANSACTION_NOT_FOUND`, `INTERNAL_ERROR`).",
    check: code_undocumented,
};

/// Whether sections 4 and 7 give `code` to the endpoint (the
/// interface's table; any document code where the path is none of its
/// operations).
fn documented_for(endpoint: &Endpoint, code: &str) -> bool {
    match (endpoint.operation(), ErrorCode::parse(code)) {
        (Some(operation), Some(code)) => operation.documented_codes().contains(&code),
        (None, _) => is_documented(code),
        (Some(_), None) => false,
    }
}

/// `code.undocumented`: an error code beyond section 7, or one section 7
/// gives another endpoint.
fn code_undocumented(p: &Parsed<'_>, _: &Memory) -> Hits {
    match p.envelope().and_then(|e| e.code()).as_deref() {
        Some(code) if !is_documented(code) => vec![(
            Level::Undocumented,
            format!(
                "errorCode {} is not in the document's section 7",
                quoted(&code)
            ),
        )],
        Some(code) if !documented_for(&p.endpoint, code) => vec![(
            Level::Undocumented,
            format!(
                "errorCode {} is in the document's section 7, but not for {}",
                quoted(&code),
                p.endpoint.name()
            ),
        )],
        _ => Vec::new(),
    }
}

pub(super) const HTTP_UNDOCUMENTED: Rule = Rule {
    id: "http.undocumented",
    level: Level::Undocumented,
    text: "An HTTP status the document does not list for that endpoint (401, 403, 409, 429, …).",
    check: http_undocumented,
};

/// `http.undocumented`: a status section 4 does not list for the endpoint.
fn http_undocumented(p: &Parsed<'_>, _: &Memory) -> Hits {
    let status = p.status();
    if documented_statuses(&p.endpoint).contains(&status) {
        Vec::new()
    } else {
        vec![(
            Level::Undocumented,
            format!(
                "HTTP {status} is not among the statuses the document lists for {} ({:?})",
                p.endpoint.name(),
                documented_statuses(&p.endpoint)
            ),
        )]
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::rules::test_support::{exchange, failure, found, ok};

    const STATUS: &str = "/api/payments/abc/status";

    #[test]
    fn envelope_shape() {
        let trips = |body: serde_json::Value| {
            found(
                "envelope.shape",
                &[exchange("GET", STATUS, json!(null), 502, body)],
            )
        };
        assert_eq!(trips(json!("<html>Bad gateway</html>")).len(), 1);
        // A 304 or 204 has no body by HTTP: the status is undocumented,
        // the missing envelope no violation.
        for status in [204, 304] {
            let mut e = exchange("GET", STATUS, json!(null), status, json!(null));
            e.response.body = Some(String::new());
            assert!(
                found("envelope.shape", std::slice::from_ref(&e)).is_empty(),
                "{status}"
            );
            assert_eq!(found("http.undocumented", &[e]).len(), 1, "{status}");
        }
        assert_eq!(trips(json!(null)).len(), 1, "empty");
        assert!(
            trips(json!([1]))
                .first()
                .is_some_and(|f| f.message.contains("not an object"))
        );
        let missing = trips(json!({ "isSuccess": "yes", "data": 5 }));
        assert_eq!(missing.len(), 4, "{missing:?}");
        assert!(trips(failure("INTERNAL_ERROR")).is_empty());
        // "optional `message`" on a success; never on a failure.
        assert!(trips(json!({ "isSuccess": true, "errorCode": null, "data": {} })).is_empty());
        assert_eq!(
            trips(json!({ "isSuccess": false, "errorCode": "INTERNAL_ERROR", "data": null })).len(),
            1
        );
    }

    #[test]
    fn a_body_that_is_not_utf8_is_not_json() {
        // The bytes FF FE inside a string: the lossy text (U+FFFD for
        // each) reads as the envelope; the bytes are not JSON.
        let mut e = exchange("GET", STATUS, json!(null), 500, json!(null));
        e.response
            .keep_body(b"{\"isSuccess\":false,\"errorCode\":\"INTERNAL_ERROR\",\"message\":\"\xff\xfe\",\"data\":null}");
        assert!(e.response.body_not_utf8);
        let hits = found("envelope.shape", std::slice::from_ref(&e));
        assert_eq!(hits.len(), 1, "{hits:?}");
        assert!(hits[0].message.contains("not UTF-8"), "{hits:?}");
        // Control: the same text sent as UTF-8 is the envelope.
        e.response.body_not_utf8 = false;
        assert!(found("envelope.shape", &[e]).is_empty());
    }

    #[test]
    fn a_lone_surrogate_escape_is_not_json() {
        // The reviewers' answer: the client refuses it (serde_json).
        let body = r#"{"isSuccess":true,"errorCode":null,"message":null,"data":{"referenceNo":"R\ud800"}}"#;
        let e = exchange("GET", STATUS, json!(null), 200, json!(body));
        let hits = found("envelope.shape", &[e]);
        assert_eq!(hits.len(), 1, "{hits:?}");
        assert!(hits[0].message.contains("lone surrogate"), "{hits:?}");
        // Control: a pair is text, and an escaped backslash is no escape.
        for text in [r#""R\ud83d\ude00""#, r#""R\\ud800""#] {
            let body = body.replace(r#""R\ud800""#, text);
            let e = exchange("GET", STATUS, json!(null), 200, json!(body));
            assert!(found("envelope.shape", &[e]).is_empty(), "{body}");
        }
    }

    #[test]
    fn an_answer_that_repeats_a_member_name_is_not_json_a_client_reads() {
        // The reviewer's: a failure's members, then a success's.
        let body = r#"{"isSuccess":false,"errorCode":"INTERNAL_ERROR","message":"x","data":null,"isSuccess":true,"errorCode":null,"message":null,"data":{"transactionId":"abc"}}"#;
        let e = exchange("GET", STATUS, json!(null), 200, json!(body));
        let hits = found("envelope.shape", &[e]);
        assert_eq!(hits.len(), 1, "{hits:?}");
        assert!(
            hits[0].message.contains(r#"names "isSuccess" twice"#),
            "{hits:?}"
        );
    }

    #[test]
    fn envelope_consistency() {
        let trips = |body| {
            found(
                "envelope.consistency",
                &[exchange("GET", STATUS, json!(null), 200, body)],
            )
        };
        assert_eq!(
            trips(json!({ "isSuccess": true, "errorCode": "X", "message": null, "data": null }))
                .len(),
            2
        );
        assert_eq!(
            trips(json!({ "isSuccess": false, "errorCode": null, "message": null, "data": {} }))
                .len(),
            3
        );
        assert!(trips(ok(json!({}))).is_empty());
        assert!(trips(failure("TRANSACTION_NOT_FOUND")).is_empty());
    }

    #[test]
    fn http_status() {
        let trips = |method, path, status, body| {
            found(
                "http.status",
                &[exchange(method, path, json!(null), status, body)],
            )
        };
        assert_eq!(
            trips("GET", STATUS, 400, failure("TRANSACTION_NOT_FOUND")).len(),
            1
        );
        assert!(trips("GET", STATUS, 404, failure("TRANSACTION_NOT_FOUND")).is_empty());
        assert_eq!(
            trips(
                "POST",
                "/api/payments/confirm",
                404,
                failure("TRANSACTION_NOT_FOUND")
            )
            .len(),
            1
        );
        assert!(
            trips(
                "POST",
                "/api/payments/confirm",
                400,
                failure("TRANSACTION_NOT_FOUND")
            )
            .is_empty()
        );
        assert_eq!(
            trips(
                "POST",
                "/api/payments/initiate",
                422,
                failure("VALIDATION_ERROR")
            )
            .len(),
            1
        );
        assert_eq!(trips("GET", STATUS, 201, ok(json!({}))).len(), 1);
        assert_eq!(
            trips("GET", STATUS, 503, failure("INTERNAL_ERROR")).len(),
            1
        );
        assert!(
            trips("GET", STATUS, 409, failure("SOMETHING_ELSE")).is_empty(),
            "not this rule's"
        );
        // A failure is never answered 200, whatever its code.
        assert_eq!(
            trips("GET", STATUS, 200, failure("SOMETHING_ELSE")).len(),
            1
        );
        assert_eq!(
            trips("GET", STATUS, 200, failure("TRANSACTION_NOT_FOUND")).len(),
            1,
            "once, not twice"
        );
    }

    #[test]
    fn code_and_http_undocumented() {
        let code = found(
            "code.undocumented",
            &[exchange(
                "POST",
                "/api/payments/initiate",
                json!(null),
                400,
                failure("DUPLICATE_REFERENCE_NO"),
            )],
        );
        assert_eq!(code.len(), 1);
        assert!(code[0].message.contains("DUPLICATE_REFERENCE_NO"));
        // A section 7 code on an endpoint section 7 does not give it.
        let elsewhere = found(
            "code.undocumented",
            &[exchange(
                "POST",
                "/api/payments/initiate",
                json!(null),
                404,
                failure("TRANSACTION_NOT_FOUND"),
            )],
        );
        assert_eq!(elsewhere.len(), 1);
        assert!(elsewhere[0].message.contains("not for"), "{elsewhere:?}");
        assert!(
            found(
                "code.undocumented",
                &[exchange(
                    "POST",
                    "/api/payments/confirm",
                    json!(null),
                    400,
                    failure("TRANSACTION_NOT_FOUND")
                )]
            )
            .is_empty()
        );
        assert!(
            found(
                "code.undocumented",
                &[exchange(
                    "GET",
                    STATUS,
                    json!(null),
                    404,
                    failure("TRANSACTION_NOT_FOUND")
                )]
            )
            .is_empty()
        );
        assert_eq!(
            found(
                "http.undocumented",
                &[exchange(
                    "GET",
                    STATUS,
                    json!(null),
                    429,
                    failure("RATE_LIMITED")
                )]
            )
            .len(),
            1
        );
        assert!(
            found(
                "http.undocumented",
                &[exchange(
                    "GET",
                    STATUS,
                    json!(null),
                    404,
                    failure("TRANSACTION_NOT_FOUND")
                )]
            )
            .is_empty()
        );
        assert_eq!(
            found(
                "http.undocumented",
                &[exchange(
                    "POST",
                    "/api/payments/confirm",
                    json!(null),
                    404,
                    failure("X")
                )]
            )
            .len(),
            1
        );
    }
}
