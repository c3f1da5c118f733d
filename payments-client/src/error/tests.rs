//! What an error's message says of its outcome: the classes that leave it
//! open by themselves end with [`OUTCOME_UNKNOWN`], the others read as
//! before, and an ambiguous retry says it once.

use std::time::Duration;

use super::outcome::OUTCOME_UNKNOWN;
use super::{ApiError, Error, Outcome, TransportKind};
use crate::model::status::ErrorCode;

fn api(status: u16, code: ErrorCode, message: &str) -> Error {
    Error::Api(Box::new(ApiError {
        status,
        code,
        message: message.to_owned(),
        request_id: "req-1".to_owned(),
        raw_envelope: String::new(),
        retry_after: None,
    }))
}

fn transport(kind: TransportKind) -> Error {
    Error::Transport {
        kind,
        request_id: "req-1".to_owned(),
        source: None,
    }
}

fn unexpected(status: u16) -> Error {
    Error::UnexpectedResponse {
        status,
        body_prefix: "<html>".to_owned(),
        content_type: Some("text/html".to_owned()),
        request_id: "req-1".to_owned(),
        reason: "not the response envelope: expected value at line 1 column 1".to_owned(),
        retry_after: Some(Duration::from_secs(1)),
    }
}

fn after(attempts: u32, last: Error) -> Error {
    Error::AfterAmbiguousAttempt {
        attempts,
        request_id: "req-1".to_owned(),
        last: Box::new(last),
    }
}

fn unknown(text: &str) -> String {
    format!("{text}{OUTCOME_UNKNOWN}")
}

#[test]
fn the_suffix_reads_as_the_brief_says() {
    assert_eq!(
        OUTCOME_UNKNOWN,
        " (outcome unknown: it may have been carried out; look it up before trying again)"
    );
}

#[test]
fn an_api_error_that_leaves_the_outcome_open_says_so() {
    let cases = [
        (
            api(500, ErrorCode::InternalError, "internal server error."),
            "service answered 500 INTERNAL_ERROR: internal server error",
        ),
        (
            api(200, ErrorCode::InternalError, ""),
            "service answered 200 INTERNAL_ERROR",
        ),
        (
            api(503, ErrorCode::StoreUnavailable, "store down"),
            "service answered 503 STORE_UNAVAILABLE: store down",
        ),
        (
            api(408, ErrorCode::Other("REQUEST_TIMEOUT".into()), "gave up"),
            "service answered 408 REQUEST_TIMEOUT: gave up",
        ),
        (
            api(499, ErrorCode::Other("CLIENT_CLOSED_REQUEST".into()), ""),
            "service answered 499 CLIENT_CLOSED_REQUEST",
        ),
    ];
    for (error, said) in cases {
        assert_eq!(error.outcome(), Outcome::Unknown, "{error:?}");
        assert_eq!(error.to_string(), unknown(said));
    }
    // The ApiError's own message is the service's, unchanged.
    let Error::Api(inner) = api(500, ErrorCode::InternalError, "boom") else {
        unreachable!()
    };
    assert_eq!(
        inner.to_string(),
        "service answered 500 INTERNAL_ERROR: boom"
    );
}

#[test]
fn an_api_error_that_was_not_carried_out_reads_as_before() {
    for (error, said) in [
        (
            api(400, ErrorCode::ValidationError, "amount is required"),
            "service answered 400 VALIDATION_ERROR: amount is required",
        ),
        (
            api(429, ErrorCode::RateLimited, "slow down"),
            "service answered 429 RATE_LIMITED: slow down",
        ),
        (
            api(409, ErrorCode::DuplicateReferenceNo, ""),
            "service answered 409 DUPLICATE_REFERENCE_NO",
        ),
    ] {
        assert_eq!(error.outcome(), Outcome::NotCarriedOut);
        assert_eq!(error.to_string(), said);
    }
}

#[test]
fn a_transport_failure_after_sending_says_the_outcome_is_unknown() {
    for (kind, said) in [
        (TransportKind::Timeout, "the request timed out"),
        (
            TransportKind::Connection,
            "the connection failed before a complete response",
        ),
        (
            TransportKind::InvalidHttp,
            "the service's answer was not valid HTTP",
        ),
    ] {
        let error = transport(kind);
        assert_eq!(error.outcome(), Outcome::Unknown);
        assert_eq!(error.to_string(), unknown(said));
    }
    for (kind, said) in [
        (TransportKind::Connect, "could not connect to the service"),
        (
            TransportKind::Tls,
            "the TLS handshake with the service failed",
        ),
    ] {
        let error = transport(kind);
        assert_eq!(error.outcome(), Outcome::NotCarriedOut);
        assert_eq!(error.to_string(), said);
    }
}

#[test]
fn an_answer_that_is_not_the_envelope_says_so_unless_a_plain_4xx() {
    let reason = "not the response envelope: expected value at line 1 column 1";
    for status in [500, 502, 504, 200, 302, 408, 499] {
        let error = unexpected(status);
        assert_eq!(error.outcome(), Outcome::Unknown, "{status}");
        assert_eq!(
            error.to_string(),
            unknown(&format!("unexpected response (HTTP {status}): {reason}"))
        );
    }
    for status in [400, 404, 429] {
        let error = unexpected(status);
        assert_eq!(error.outcome(), Outcome::NotCarriedOut, "{status}");
        assert_eq!(
            error.to_string(),
            format!("unexpected response (HTTP {status}): {reason}")
        );
    }
}

#[test]
fn an_ambiguous_retry_says_the_outcome_once() {
    // Its last attempt alone was not carried out: the earlier one is told.
    let error = after(3, api(429, ErrorCode::RateLimited, "slow down"));
    assert_eq!(
        error.to_string(),
        "service answered 429 RATE_LIMITED: slow down (after 3 attempts; an earlier attempt \
         may have been carried out)"
    );
    let error = after(2, transport(TransportKind::Connect));
    assert_eq!(
        error.to_string(),
        "could not connect to the service (after 2 attempts; an earlier attempt may have been \
         carried out)"
    );
    // Its last attempt already says the outcome is unknown: not again.
    let error = after(2, transport(TransportKind::Timeout));
    assert_eq!(
        error.to_string(),
        format!("the request timed out{OUTCOME_UNKNOWN} (after 2 attempts)")
    );
    let error = after(4, api(500, ErrorCode::InternalError, ""));
    assert_eq!(
        error.to_string(),
        format!("service answered 500 INTERNAL_ERROR{OUTCOME_UNKNOWN} (after 4 attempts)")
    );
}

#[test]
fn errors_whose_outcome_is_certain_read_as_before() {
    let config = Error::config("bad");
    assert_eq!(config.to_string(), "invalid client configuration: bad");
    assert!(!config.says_outcome_unknown());
}

#[test]
fn an_error_told_inside_another_can_leave_the_outcome_out() {
    let error = transport(TransportKind::Timeout);
    assert_eq!(error.to_string_without_outcome(), "the request timed out");
    let error = transport(TransportKind::Connect);
    assert_eq!(
        error.to_string_without_outcome(),
        "could not connect to the service"
    );
}

#[test]
fn a_failed_read_back_is_not_said_to_have_been_carried_out() {
    use super::{AnswerMismatch, Asked, Disagreement, ReadBack};
    let mismatch = Error::AnswerMismatch(Box::new(AnswerMismatch {
        asked: Asked::Initiate {
            reference_no: "ORDER-77".to_owned(),
        },
        disagreements: vec![Disagreement::EmptyTransactionId],
        http_status: 200,
        request_id: "req-1".to_owned(),
        raw_envelope: String::new(),
        read_back: Some(ReadBack::Failed(Box::new(transport(
            TransportKind::Timeout,
        )))),
    }));
    let text = mismatch.to_string();
    assert!(
        text.ends_with("; reading ORDER-77 back failed: the request timed out"),
        "{text}"
    );
}
