//! What the application sent: a request the document rules out is the
//! caller's finding (`client`), and a service that accepts it anyway
//! breaks the document (`initiate.accepted-invalid`).

use super::{Hits, Level, Rule};
use crate::exchange::{Endpoint, Parsed};
use crate::json::{Json, Object, json_but_lone_surrogate};
use crate::memory::Memory;

/// The fields the document's request table marks required (2.2, 2.4).
fn required(table: &'static [payments_interface::Field]) -> impl Iterator<Item = &'static str> {
    payments_interface::fields::required(table)
}

/// Why the document rules out an initiate body: a required field missing
/// (absent or null), `amount` not an integer greater than 0. Field names
/// only, never values.
fn initiate_ruled_out(body: &Object<'_>) -> Vec<String> {
    let mut problems: Vec<String> = required(payments_interface::fields::INITIATE_REQUEST)
        .filter(|f| body.get(f).is_none_or(Json::is_null))
        .map(|f| format!("{f} is missing"))
        .collect();
    if let Some(amount) = body.get("amount").filter(|a| !a.is_null()) {
        // Any size: the document sets no upper bound.
        let positive = amount.is_positive_integer();
        if !positive {
            problems.push("amount is not an integer greater than 0".to_owned());
        }
    }
    problems
}

pub(super) const ACCEPTED_INVALID: Rule = Rule {
    id: "initiate.accepted-invalid",
    level: Level::Violation,
    text: "An initiate the document rules out (a required field missing, `amount` not an integer greater than 0) is answered 200.",
    check: accepted_invalid,
};

/// `initiate.accepted-invalid`: a request the document rules out is not
/// accepted.
fn accepted_invalid(p: &Parsed<'_>, _: &Memory) -> Hits {
    if p.endpoint != Endpoint::Initiate || p.status() != 200 {
        return Vec::new();
    }
    let problems = match &p.request {
        Some(body) => initiate_ruled_out(body),
        None => vec!["the body is not a JSON object".to_owned()],
    };
    problems
        .into_iter()
        .map(|m| {
            (
                Level::Violation,
                format!("initiate answered 200 although {m}"),
            )
        })
        .collect()
}

pub(super) const INVALID: Rule = Rule {
    id: "request.invalid",
    level: Level::Client,
    text: "The application's request breaks the document: a required field missing, `amount` not an integer greater than 0, `merchantId` not a UUID, a body that is not JSON (bytes that are not UTF-8 are not, RFC 8259 section 8.1; nor is a string with a `\\u` escape of a lone surrogate), an empty `transactionId` or `referenceNo` in a status path.",
    check: request_invalid,
};

/// `request.invalid`: the application's own mistakes.
fn request_invalid(p: &Parsed<'_>, _: &Memory) -> Hits {
    let problems = match (&p.endpoint, &p.request) {
        (Endpoint::Initiate | Endpoint::Confirm, None) if p.exchange.request.body_not_utf8 => {
            vec!["the request body is not UTF-8, so not JSON (RFC 8259 section 8.1)".to_owned()]
        }
        (Endpoint::Initiate | Endpoint::Confirm, None)
            if p.exchange
                .request
                .body
                .as_deref()
                .is_some_and(json_but_lone_surrogate) =>
        {
            vec![
                "a string of the request body escapes a lone surrogate, so it is not JSON"
                    .to_owned(),
            ]
        }
        (Endpoint::Initiate | Endpoint::Confirm, None) => {
            vec!["the request body is not a JSON object".to_owned()]
        }
        (Endpoint::Initiate, Some(body)) => {
            let mut problems = initiate_ruled_out(body);
            let merchant = body.get("merchantId");
            // The interface's rule, the mock's: a hyphenated UUID only
            // (`Uuid::parse_str` also took 32 bare hex digits).
            if let Some(m) = merchant.and_then(Json::as_str)
                && payments_interface::rules::uuid(&m).is_none()
            {
                problems.push("merchantId is not a UUID".to_owned());
            } else if merchant.is_some_and(|m| !m.is_string() && !m.is_null()) {
                problems.push("merchantId is not a UUID".to_owned());
            }
            problems
        }
        (Endpoint::Confirm, Some(body)) => required(payments_interface::fields::CONFIRM_REQUEST)
            .filter(|f| body.get(f).is_none_or(Json::is_null))
            .map(|f| format!("{f} is missing"))
            .collect(),
        // Sections 4.3 and 4.4: the path parameter is required.
        (Endpoint::StatusById(id), _) if id.trim().is_empty() => {
            vec!["the transactionId in the path is empty".to_owned()]
        }
        (Endpoint::StatusByReference(reference), _) if reference.trim().is_empty() => {
            vec!["the referenceNo in the path is empty".to_owned()]
        }
        _ => Vec::new(),
    };
    problems
        .into_iter()
        .map(|m| (Level::Client, format!("{}: {m}", p.endpoint.name())))
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::rules::test_support::{exchange, failure, found, initiate_body, initiate_data, ok};

    const INITIATE: &str = "/api/payments/initiate";

    #[test]
    fn a_request_body_that_is_not_utf8_is_not_json() {
        // A valid initiate but for the byte FF in its referenceNo.
        let mut e = exchange(
            "POST",
            INITIATE,
            json!(null),
            200,
            ok(initiate_data("t", "R\u{fffd}", 1050)),
        );
        let text = initiate_body("R@", 1050).to_string();
        let (head, tail) = text.split_once('@').expect("the marker");
        e.request
            .keep_body(&[head.as_bytes(), b"\xff", tail.as_bytes()].concat());
        let invalid = found("request.invalid", std::slice::from_ref(&e));
        assert_eq!(invalid.len(), 1, "{invalid:?}");
        assert!(invalid[0].message.contains("not UTF-8"), "{invalid:?}");
        assert_eq!(invalid[0].level, crate::rules::Level::Client);
        let accepted = found("initiate.accepted-invalid", std::slice::from_ref(&e));
        assert_eq!(accepted.len(), 1, "answered 200: {accepted:?}");
        // Control: the same text sent as UTF-8 is a valid initiate.
        e.request.body_not_utf8 = false;
        assert!(found("request.invalid", std::slice::from_ref(&e)).is_empty());
        assert!(found("initiate.accepted-invalid", &[e]).is_empty());
    }

    #[test]
    fn a_request_body_with_a_lone_surrogate_escape_is_not_json() {
        let confirm = r#"{"transactionId":"t","referenceNo":"R\udc00"}"#;
        let e = exchange(
            "POST",
            "/api/payments/confirm",
            json!(confirm),
            400,
            failure("VALIDATION_ERROR"),
        );
        let invalid = found("request.invalid", &[e]);
        assert_eq!(invalid.len(), 1, "{invalid:?}");
        assert!(invalid[0].message.contains("lone surrogate"), "{invalid:?}");
        // Control: the pair's escape is a valid confirm.
        let confirm = confirm.replace(r"\udc00", r"\ud83d\ude00");
        let e = exchange(
            "POST",
            "/api/payments/confirm",
            json!(confirm),
            400,
            failure("VALIDATION_ERROR"),
        );
        assert!(found("request.invalid", &[e]).is_empty());
    }

    #[test]
    fn accepted_invalid() {
        let zero = json!({"merchantId": "6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60", "referenceNo": "R", "amount": 0, "productCode": "P"});
        let hits = found(
            "initiate.accepted-invalid",
            &[exchange(
                "POST",
                INITIATE,
                zero.clone(),
                200,
                ok(initiate_data("t", "R", 0)),
            )],
        );
        assert_eq!(hits.len(), 2, "storeId missing, amount 0: {hits:?}");
        assert!(
            found(
                "initiate.accepted-invalid",
                &[exchange(
                    "POST",
                    INITIATE,
                    zero,
                    400,
                    failure("VALIDATION_ERROR")
                )]
            )
            .is_empty()
        );
        assert!(
            found(
                "initiate.accepted-invalid",
                &[exchange(
                    "POST",
                    INITIATE,
                    initiate_body("R", 5),
                    200,
                    ok(initiate_data("t", "R", 5))
                )]
            )
            .is_empty()
        );
    }

    /// An amount of any size is an integer (the document sets no upper
    /// bound): 2^64 answered 200 is no violation and no client finding,
    /// where it was "not an integer" (and a 502 under `--enforce`); a
    /// fraction, an exponent, zero and a negative one still are.
    #[test]
    fn an_integer_amount_of_any_size_is_one() {
        let with_amount = |amount: &str| -> serde_json::Value {
            let mut body = initiate_body("R", 1);
            body["amount"] = serde_json::from_str(amount).expect("a number");
            body
        };
        for amount in ["18446744073709551616", "99999999999999999999999999999999"] {
            let exchange = || {
                let mut data = initiate_data("t", "R", 1);
                data["amount"] = serde_json::from_str(amount).expect("a number");
                exchange("POST", INITIATE, with_amount(amount), 200, ok(data))
            };
            assert!(
                found("initiate.accepted-invalid", &[exchange()]).is_empty(),
                "{amount}"
            );
            assert!(found("data.fields", &[exchange()]).is_empty(), "{amount}");
            assert!(
                found("request.invalid", &[exchange()]).is_empty(),
                "{amount}"
            );
        }
        for amount in ["1.5", "1e2", "0", "-18446744073709551616", "-0"] {
            let hits = found(
                "initiate.accepted-invalid",
                &[exchange(
                    "POST",
                    INITIATE,
                    with_amount(amount),
                    200,
                    ok(initiate_data("t", "R", 1)),
                )],
            );
            assert_eq!(hits.len(), 1, "{amount}: {hits:?}");
        }
    }

    /// Issue 41: the proxy took a `merchantId` of 32 bare hex digits,
    /// which the interface's rule and the mock refuse.
    #[test]
    fn a_merchant_id_is_a_uuid_as_the_interface_says() {
        let ruled = |merchant: &str| {
            found(
                "request.invalid",
                &[exchange(
                    "POST",
                    INITIATE,
                    json!({"merchantId": merchant, "referenceNo": "R", "amount": 1, "productCode": "P", "storeId": "S"}),
                    400,
                    failure("VALIDATION_ERROR"),
                )],
            )
            .iter()
            .any(|f| f.message.ends_with("merchantId is not a UUID"))
        };
        assert!(ruled("6f1c0d3e1b7a4c1e9a551c2b3d4e5f60"));
        assert!(ruled("{6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60}"));
        assert!(!ruled("6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60"));
        assert!(!ruled("6F1C0D3E-1B7A-4C1E-9A55-1C2B3D4E5F60"));
    }

    #[test]
    fn request_invalid() {
        let hits = found(
            "request.invalid",
            &[exchange(
                "POST",
                INITIATE,
                json!({"merchantId": "nope", "amount": 1.5}),
                400,
                failure("VALIDATION_ERROR"),
            )],
        );
        let messages: Vec<&str> = hits.iter().map(|f| f.message.as_str()).collect();
        assert_eq!(messages.len(), 5, "{messages:?}");
        assert!(
            messages.iter().all(|m| !m.contains("nope")),
            "never the values"
        );
        assert_eq!(
            found(
                "request.invalid",
                &[exchange(
                    "POST",
                    INITIATE,
                    json!("{not json"),
                    400,
                    failure("VALIDATION_ERROR")
                )]
            )
            .len(),
            1
        );
        assert_eq!(
            found(
                "request.invalid",
                &[exchange(
                    "POST",
                    "/api/payments/confirm",
                    json!({"referenceNo": null}),
                    400,
                    failure("VALIDATION_ERROR")
                )]
            )
            .len(),
            2
        );
        assert!(
            found(
                "request.invalid",
                &[exchange(
                    "POST",
                    INITIATE,
                    initiate_body("R", 5),
                    200,
                    ok(initiate_data("t", "R", 5))
                )]
            )
            .is_empty()
        );
        assert!(
            found(
                "request.invalid",
                &[exchange(
                    "GET",
                    "/api/payments/x/status",
                    json!(null),
                    404,
                    failure("TRANSACTION_NOT_FOUND")
                )]
            )
            .is_empty()
        );
        for empty in [
            "/api/payments//status",
            "/api/payments/%20/status",
            "/api/payments/reference//status",
        ] {
            assert_eq!(
                found(
                    "request.invalid",
                    &[exchange(
                        "GET",
                        empty,
                        json!(null),
                        400,
                        failure("INVALID_TRANSACTION_ID")
                    )]
                )
                .len(),
                1,
                "{empty}"
            );
        }
    }
}
