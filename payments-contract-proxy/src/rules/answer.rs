//! An answer about something the request did not ask about: a confirm, or
//! a status read, answered 200 about another transaction (CONTRACT
//! section 13 asks the client to refuse it; a misrouting gateway or a
//! cache answers so).

use super::{Hits, Level, Rule, quoted};
use crate::exchange::{Endpoint, Parsed};
use crate::memory::Memory;

pub(super) const ANSWER_OTHER: Rule = Rule {
    id: "answer.other",
    level: Level::Violation,
    text: "A confirm answered 200 with another `transactionId` or `referenceNo` than it sent; a status by id answered 200 about another `transactionId` than its path names; a status by reference answered 200 about another `referenceNo` than its path names (exactly as sent: letter case and spaces count). The service answered about something it was not asked about.",
    check: answer_other,
};

/// `answer.other`: the answer is about what was asked. A field the
/// request or the answer lacks (or sends as no string) is left to
/// `request.invalid` and `data.fields`.
fn answer_other(p: &Parsed<'_>, _: &Memory) -> Hits {
    let Some(data) = p.success_data() else {
        return Vec::new();
    };
    let asked: Vec<(&str, std::borrow::Cow<'_, str>)> = match &p.endpoint {
        Endpoint::Confirm => ["transactionId", "referenceNo"]
            .into_iter()
            .filter_map(|field| p.request_text(field).map(|sent| (field, sent)))
            .collect(),
        Endpoint::StatusById(id) => vec![("transactionId", id.as_str().into())],
        Endpoint::StatusByReference(reference) => {
            vec![("referenceNo", reference.as_str().into())]
        }
        Endpoint::Initiate | Endpoint::Other => return Vec::new(),
    };
    let asked_in = if p.endpoint == Endpoint::Confirm {
        "sent"
    } else {
        "asked for in the path"
    };
    asked
        .into_iter()
        .filter_map(|(field, sent)| {
            let answered = data.text(field)?;
            (answered != sent).then(|| {
                (
                    Level::Violation,
                    format!(
                        "{} answered about {field} {}, {asked_in} {}",
                        p.endpoint.name(),
                        quoted(format_args!("{answered:?}")),
                        quoted(format_args!("{sent:?}"))
                    ),
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::rules::test_support::{confirm_data, exchange, found, ok, status_data};

    fn status(path: &str, id: &str, reference: &str) -> crate::exchange::Exchange {
        exchange(
            "GET",
            path,
            json!(null),
            200,
            ok(status_data(id, reference, "SUCCESSFUL", "10.50")),
        )
    }

    fn confirm(sent: (&str, &str), answered: (&str, &str)) -> crate::exchange::Exchange {
        exchange(
            "POST",
            "/api/payments/confirm",
            json!({ "transactionId": sent.0, "referenceNo": sent.1 }),
            200,
            ok(confirm_data(answered.0, answered.1, "SUCCESSFUL", "10.50")),
        )
    }

    #[test]
    fn an_answer_about_what_was_asked_is_no_finding() {
        for fine in [
            status("/api/payments/t1/status", "t1", "R-1"),
            status("/api/payments/reference/R%201/status", "t1", "R 1"),
            confirm(("t1", "R-1"), ("t1", "R-1")),
            // A failure is about nothing: no data to compare.
            exchange(
                "GET",
                "/api/payments/t1/status",
                json!(null),
                404,
                crate::rules::test_support::failure("TRANSACTION_NOT_FOUND"),
            ),
            // A confirm without a referenceNo: request.invalid's, and the
            // transactionId still agrees.
            exchange(
                "POST",
                "/api/payments/confirm",
                json!({ "transactionId": "t1" }),
                200,
                ok(confirm_data("t1", "R-1", "SUCCESSFUL", "10.50")),
            ),
        ] {
            assert!(
                found("answer.other", std::slice::from_ref(&fine)).is_empty(),
                "{fine:?}"
            );
        }
    }

    #[test]
    fn an_answer_about_another_transaction_or_reference_is_a_violation() {
        let other = found(
            "answer.other",
            &[status("/api/payments/t1/status", "t2", "R-2")],
        );
        assert_eq!(other.len(), 1, "{other:?}");
        assert_eq!(other[0].level, crate::rules::Level::Violation);
        assert!(
            other[0].message.contains("\"t2\"") && other[0].message.contains("\"t1\""),
            "{other:?}"
        );
        // Exactly as sent: letter case and spaces count.
        for (path, answered) in [
            ("/api/payments/reference/r-1/status", "R-1"),
            ("/api/payments/reference/R-1%20/status", "R-1"),
        ] {
            let found = found("answer.other", &[status(path, "t1", answered)]);
            assert_eq!(found.len(), 1, "{path}: {found:?}");
        }
        let both = found("answer.other", &[confirm(("t1", "R-1"), ("t9", "R-9"))]);
        assert_eq!(both.len(), 2, "transactionId and referenceNo: {both:?}");
        let one = found("answer.other", &[confirm(("t1", "R-1"), ("t1", "r-1"))]);
        assert_eq!(one.len(), 1, "{one:?}");
        assert!(one[0].message.contains("referenceNo"), "{one:?}");
    }
}
