//! Reading a transaction back after an ambiguous or unreadable answer:
//! what the read-back proves and what it does not (review findings I2, I3,
//! I5; CONTRACT section 12).

mod common;

use std::time::Duration;

use common::*;
use payments_client::{
    Client, ConfirmRequest, Currency, Error, InitiateRequest, MinorAmount, Outcome, Reconciled,
    TransactionStatus,
};
use wiremock::matchers::{method, path, query_param};
use wiremock::{Mock, MockBuilder, MockServer, ResponseTemplate};

fn initiate_request() -> InitiateRequest {
    InitiateRequest::builder(
        merchant(),
        "INV-1",
        MinorAmount::new(15000).unwrap(),
        "TOPUP",
        "S1",
    )
    .currency(Currency::MYR)
    .payer_id("60123456789")
    .build()
    .unwrap()
}

fn confirm_request() -> ConfirmRequest {
    ConfirmRequest::builder(TX_ID, "INV-1").build().unwrap()
}

/// A mock of the POSTs to `/api/payments/<endpoint>`.
fn post_to(endpoint: &str) -> MockBuilder {
    Mock::given(method("POST")).and(path(format!("/api/payments/{endpoint}")))
}

async fn post_answers(
    server: &MockServer,
    endpoint: &str,
    first: ResponseTemplate,
    then: ResponseTemplate,
) {
    post_to(endpoint)
        .respond_with(first)
        .up_to_n_times(1)
        .expect(1)
        .named("first attempt")
        .mount(server)
        .await;
    post_to(endpoint)
        .respond_with(then)
        .named("later attempts")
        .mount(server)
        .await;
}

async fn status_by_id_answers(server: &MockServer, answer: ResponseTemplate) {
    Mock::given(method("GET"))
        .and(path(format!("/api/payments/{TX_ID}/status")))
        .respond_with(answer)
        .expect(1)
        .named("read-back by id")
        .mount(server)
        .await;
}

async fn status_by_reference_answers(server: &MockServer, answer: ResponseTemplate) {
    Mock::given(method("GET"))
        .and(path("/api/payments/reference/INV-1/status"))
        .and(query_param("merchantId", MERCHANT))
        .respond_with(answer)
        .expect(1)
        .named("read-back by reference")
        .mount(server)
        .await;
}

fn already_confirmed() -> ResponseTemplate {
    json(
        400,
        err_envelope("TRANSACTION_ALREADY_CONFIRMED", "already confirmed"),
    )
}

fn duplicate() -> ResponseTemplate {
    json(
        400,
        err_envelope("DUPLICATE_REFERENCE_NO", "referenceNo INV-1 is used"),
    )
}

fn internal_error() -> ResponseTemplate {
    json(
        500,
        err_envelope("INTERNAL_ERROR", "committed, then failed"),
    )
}

fn reconciliation_outcome(err: &Error) -> Outcome {
    assert!(matches!(err, Error::Reconciliation { .. }), "{err:?}");
    err.outcome()
}

/// The stored transaction a read-back finds: `state`, `amount`, `TOPUP`.
fn stored(state: &str, amount: &str) -> ResponseTemplate {
    status_answer(state, amount, "TOPUP")
}

/// The one POST to `endpoint`, answered with `answer`.
async fn post_answers_once(server: &MockServer, endpoint: &str, answer: ResponseTemplate) {
    post_to(endpoint)
        .respond_with(answer)
        .expect(1)
        .mount(server)
        .await;
}

/// A 429 on the first POST to `endpoint`, `then` on the later ones; no
/// read-back may be made.
async fn rate_limited_then(server: &MockServer, endpoint: &str, then: ResponseTemplate) {
    post_answers(
        server,
        endpoint,
        json(429, err_envelope("RATE_LIMITED", "slow down")).insert_header("retry-after", "0"),
        then,
    )
    .await;
    Mock::given(method("GET"))
        .respond_with(json(200, ok_envelope(&status_data())))
        .expect(0)
        .named("no read-back")
        .mount(server)
        .await;
}

async fn initiate_err(server: &MockServer) -> Error {
    client(server)
        .initiate(initiate_request())
        .await
        .unwrap_err()
}

async fn confirm_err(server: &MockServer) -> Error {
    client(server).confirm(confirm_request()).await.unwrap_err()
}

/// `INTERNAL_ERROR` on HTTP 200 is the service's "unexpected server error;
/// the caller may retry" (CONTRACT section 11: the envelope is the truth):
/// retried, and the retry's "already done" read back, exactly as after a
/// 500. It was a plain rejection: no retry, no read-back, while the
/// service had carried the call out.
#[tokio::test]
async fn an_internal_error_on_http_200_is_retried_and_reconciled_like_a_500() {
    let internal_on_200 = || {
        json(
            200,
            err_envelope("INTERNAL_ERROR", "committed, then failed"),
        )
    };
    let server = MockServer::start().await;
    post_answers(&server, "initiate", internal_on_200(), duplicate()).await;
    status_by_reference_answers(&server, stored("INITIATED", "150.00")).await;
    let reply = client(&server).initiate(initiate_request()).await.unwrap();
    assert_eq!(reply.reconciled(), Some(Reconciled::RetryFoundItDone));
    assert_eq!(reply.attempts(), 2);
    assert_eq!(reply.data().transaction_id, TX_ID);

    let server = MockServer::start().await;
    post_answers(&server, "confirm", internal_on_200(), already_confirmed()).await;
    status_by_id_answers(&server, stored("SUCCESSFUL", "150.00")).await;
    let reply = client(&server).confirm(confirm_request()).await.unwrap();
    assert_eq!(reply.reconciled(), Some(Reconciled::RetryFoundItDone));
    assert_eq!(reply.attempts(), 2);
    assert_eq!(reply.data().status, TransactionStatus::Successful);
}

// I2: only a compared initiate mismatch proves "not carried out".

#[tokio::test]
async fn already_confirmed_but_still_pending_is_an_unknown_outcome() {
    for state in ["PENDING", "INITIATED", "EXPIRED"] {
        let server = MockServer::start().await;
        post_answers(&server, "confirm", internal_error(), already_confirmed()).await;
        status_by_id_answers(&server, stored(state, "150.00")).await;
        let err = confirm_err(&server).await;
        assert_eq!(
            reconciliation_outcome(&err),
            Outcome::Unknown,
            "{state}: {err}"
        );
        let Error::Reconciliation { found, .. } = &err else {
            unreachable!()
        };
        assert_eq!(found.as_ref().map(|f| f.status.as_str()), Some(state));
    }
}

#[tokio::test]
async fn already_confirmed_with_another_reference_is_an_unknown_outcome() {
    let server = MockServer::start().await;
    post_answers(&server, "confirm", internal_error(), already_confirmed()).await;
    let data = status_data_with("SUCCESSFUL", "150.00", "TOPUP").replace("INV-1", "INV-2");
    status_by_id_answers(&server, json(200, ok_envelope(&data))).await;
    let err = confirm_err(&server).await;
    assert_eq!(reconciliation_outcome(&err), Outcome::Unknown);
}

#[tokio::test]
async fn a_stored_amount_that_cannot_be_compared_is_an_unknown_outcome() {
    let server = MockServer::start().await;
    post_answers(&server, "initiate", internal_error(), duplicate()).await;
    // Three decimals cannot be MYR minor units: not comparable, not a mismatch.
    status_by_reference_answers(&server, stored("INITIATED", "150.001")).await;
    let err = initiate_err(&server).await;
    assert_eq!(reconciliation_outcome(&err), Outcome::Unknown, "{err}");
    assert!(err.to_string().contains("cannot be compared"), "{err}");
}

#[tokio::test]
async fn a_compared_amount_mismatch_after_a_duplicate_is_not_carried_out() {
    let server = MockServer::start().await;
    post_answers(&server, "initiate", internal_error(), duplicate()).await;
    status_by_reference_answers(&server, stored("INITIATED", "99.99")).await;
    let err = initiate_err(&server).await;
    assert_eq!(reconciliation_outcome(&err), Outcome::NotCarriedOut);
}

#[test]
fn a_currency_without_a_minor_unit_is_rejected_before_sending() {
    let gold = Currency::from_code("XAU").unwrap();
    assert_eq!(gold.exponent(), None);
    let err = InitiateRequest::builder(
        merchant(),
        "INV-1",
        MinorAmount::new(1).unwrap(),
        "TOPUP",
        "S1",
    )
    .currency(gold)
    .build()
    .unwrap_err();
    let Error::InvalidInput(problems) = &err else {
        panic!("{err:?}")
    };
    assert!(problems.has("currencyCode"), "{err}");
    assert!(err.to_string().contains("XAU has no minor unit"), "{err}");
    assert_eq!(err.outcome(), Outcome::NotCarriedOut);
}

// I3: the read-back has a deadline of its own.

#[tokio::test]
async fn the_read_back_is_not_cut_short_by_the_spent_call_deadline() {
    let server = MockServer::start().await;
    post_answers(
        &server,
        "initiate",
        internal_error().set_delay(Duration::from_millis(700)),
        duplicate(),
    )
    .await;
    status_by_reference_answers(
        &server,
        stored("INITIATED", "150.00").set_delay(Duration::from_millis(500)),
    )
    .await;
    let client = Client::builder(server.uri())
        .retry_policy(fast_retries())
        .deadline(Duration::from_millis(1000))
        .build()
        .unwrap();
    // The attempts spend ~700 ms of the 1 s deadline; the 500 ms read-back
    // would not fit what is left, but fits a fresh deadline.
    let reply = client.initiate(initiate_request()).await.unwrap();
    assert!(reply.is_reconciled());
    assert_eq!(reply.attempts(), 2);
    let ids = request_ids(&server).await;
    assert_eq!(ids.len(), 3);
    assert!(
        ids.iter().all(|id| id == reply.request_id()),
        "same request id: {ids:?}"
    );
}

// I5: a 2xx that cannot be read was carried out; read it back.

#[tokio::test]
async fn an_unreadable_initiate_success_is_read_back_by_reference() {
    let bodies = [
        ok_envelope(r#"{"transactionId":"x"}"#),
        ok_envelope("null"),
        "<html>ok</html>".to_owned(),
    ];
    for body in bodies {
        let server = MockServer::start().await;
        post_answers_once(&server, "initiate", json(200, body.clone())).await;
        status_by_reference_answers(&server, stored("INITIATED", "150.00")).await;
        let reply = client(&server).initiate(initiate_request()).await.unwrap();
        // Said as it happened: one attempt, its answer unreadable; no retry.
        assert_eq!(
            reply.reconciled(),
            Some(Reconciled::AnswerUnreadable),
            "{body}"
        );
        assert_eq!(reply.attempts(), 1);
        assert_eq!(reply.data().transaction_id, TX_ID);
        assert_eq!(reply.data().amount.get(), 15000);
    }
}

#[tokio::test]
async fn an_unreadable_initiate_success_whose_read_back_fails_is_unknown() {
    let server = MockServer::start().await;
    post_answers_once(&server, "initiate", json(200, ok_envelope("null"))).await;
    status_by_reference_answers(
        &server,
        json(404, err_envelope("TRANSACTION_NOT_FOUND", "no")),
    )
    .await;
    let err = initiate_err(&server).await;
    assert_eq!(reconciliation_outcome(&err), Outcome::Unknown);
    // One attempt: no "retried call"; the read-back's failure is the source.
    let text = err.to_string();
    assert!(text.contains("could not be read"), "{text}");
    assert!(!text.contains("retr"), "{text}");
    let read_back = std::error::Error::source(&err).expect("the read-back's error");
    assert!(
        read_back.to_string().contains("TRANSACTION_NOT_FOUND"),
        "{read_back}"
    );
}

#[tokio::test]
async fn an_unreadable_initiate_success_whose_read_back_differs_is_unknown() {
    let server = MockServer::start().await;
    post_answers_once(&server, "initiate", json(201, "<html>created</html>")).await;
    status_by_reference_answers(&server, stored("INITIATED", "99.99")).await;
    let err = initiate_err(&server).await;
    assert_eq!(reconciliation_outcome(&err), Outcome::Unknown);
}

#[tokio::test]
async fn an_unreadable_confirm_success_is_read_back_by_id() {
    let server = MockServer::start().await;
    post_answers_once(
        &server,
        "confirm",
        json(200, ok_envelope(r#"{"status":42}"#)),
    )
    .await;
    status_by_id_answers(&server, stored("SUCCESSFUL", "150.00")).await;
    let reply = client(&server).confirm(confirm_request()).await.unwrap();
    assert_eq!(reply.reconciled(), Some(Reconciled::AnswerUnreadable));
    assert_eq!(reply.data().status, TransactionStatus::Successful);
}

#[tokio::test]
async fn an_unreadable_confirm_success_still_pending_on_read_back_is_unknown() {
    let server = MockServer::start().await;
    post_answers_once(&server, "confirm", json(200, ok_envelope("null"))).await;
    status_by_id_answers(&server, stored("PENDING", "150.00")).await;
    let err = confirm_err(&server).await;
    assert_eq!(reconciliation_outcome(&err), Outcome::Unknown);
}

#[tokio::test]
async fn an_unreadable_status_read_is_not_read_back() {
    let err = status_error_with(
        Mock::given(method("GET"))
            .respond_with(json(200, ok_envelope("null")))
            .expect(1),
    )
    .await;
    assert!(matches!(err, Error::MissingData { .. }), "{err:?}");
}

// notes/bugs.md §3: a repeat after only certain rejections is someone
// else's transaction, not this call's.

#[tokio::test]
async fn a_duplicate_after_only_a_429_is_a_plain_error_without_read_back() {
    let server = MockServer::start().await;
    rate_limited_then(&server, "initiate", duplicate()).await;
    let err = initiate_err(&server).await;
    assert_eq!(
        err.error_code(),
        Some(&payments_client::ErrorCode::DuplicateReferenceNo)
    );
    assert!(matches!(err, Error::Api(_)), "{err:?}");
    assert_eq!(err.outcome(), Outcome::NotCarriedOut);
}

#[tokio::test]
async fn already_confirmed_after_only_a_429_is_a_plain_error_without_read_back() {
    let server = MockServer::start().await;
    rate_limited_then(&server, "confirm", already_confirmed()).await;
    let err = confirm_err(&server).await;
    assert_eq!(
        err.error_code(),
        Some(&payments_client::ErrorCode::TransactionAlreadyConfirmed)
    );
    assert_eq!(err.outcome(), Outcome::NotCarriedOut);
}
