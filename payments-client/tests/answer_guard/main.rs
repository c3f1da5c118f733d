//! The answer guard: every answer checked against what was asked, against
//! wiremock stubs that lie one field at a time (and several at once).
//! A correct service never trips it: the e2e suite runs against the real
//! mock with the guard on.

#[path = "../common/mod.rs"]
mod common;

// Initiate: each echoed field, the empty id, and settling by read-back.
mod initiate;
// Confirm: its id, its reference, and the amount this client initiated.
mod confirm;
// Status by id and by reference, and the helpers built on them.
mod status;
// One transactionId for two references, and the memory's bound.
mod reuse;
// What the contract tolerates never trips it; and the opt-out.
mod tolerated;

use common::*;
use payments_client::error::{AnswerMismatch, Disagreement};
use payments_client::{Currency, Error, InitiateRequest, MinorAmount, Outcome};
use wiremock::matchers::{method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// The request every initiate test sends unless it says otherwise: the
/// one `initiate_data()` echoes (INV-1, 150.00 MYR, TOPUP).
fn initiate_request() -> InitiateRequest {
    initiate_request_with("INV-1", 15000, None)
}

fn initiate_request_with(
    reference: &str,
    minor: u64,
    currency: Option<Currency>,
) -> InitiateRequest {
    let mut builder = InitiateRequest::builder(
        merchant(),
        reference,
        MinorAmount::new(minor).expect("positive"),
        "TOPUP",
        "S1",
    )
    .payer_id("60123456789");
    if let Some(currency) = currency {
        builder = builder.currency(currency);
    }
    builder.build().expect("a valid request")
}

/// Answers initiate with `data` exactly once (a mismatch is never retried).
async fn answer_initiate(server: &MockServer, data: &str) {
    Mock::given(method("POST"))
        .and(path("/api/payments/initiate"))
        .respond_with(json(200, ok_envelope(data)))
        .expect(1)
        .named("initiate")
        .mount(server)
        .await;
}

/// Answers the read-back of `reference` (scoped to the merchant).
async fn answer_read_back(server: &MockServer, reference: &str, response: ResponseTemplate) {
    Mock::given(method("GET"))
        .and(path(format!("/api/payments/reference/{reference}/status")))
        .and(query_param("merchantId", MERCHANT))
        .respond_with(response)
        .named("read-back")
        .mount(server)
        .await;
}

fn not_found() -> ResponseTemplate {
    json(
        404,
        err_envelope(
            "TRANSACTION_NOT_FOUND",
            "no transaction with that referenceNo",
        ),
    )
}

/// The mismatch inside `err`, or a panic saying what came instead.
fn mismatch(err: &Error) -> &AnswerMismatch {
    match err {
        Error::AnswerMismatch(m) => m,
        other => panic!("expected an answer mismatch, got {other:?}"),
    }
}

fn field(name: &'static str, sent: &str, answered: &str) -> Disagreement {
    Disagreement::Field {
        field: name,
        sent: sent.to_owned(),
        answered: answered.to_owned(),
    }
}

/// What every mismatch promises: unknown outcome, not retryable, the
/// request id and the envelope of the answer.
async fn assert_is_an_unknown_outcome_of(err: &Error, server: &MockServer, body: &str) {
    assert_eq!(err.outcome(), Outcome::Unknown);
    assert!(!err.is_retryable());
    assert_eq!(err.http_status(), Some(200));
    assert_eq!(err.raw_envelope(), Some(body));
    let sent = request_ids(server).await;
    assert_eq!(err.request_id(), sent.first().map(String::as_str));
}
