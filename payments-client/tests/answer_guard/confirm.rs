//! Confirm: the `transactionId` and `referenceNo` sent, and an `amount`
//! equal to the one this client initiated the transaction with.

use payments_client::{Client, ConfirmRequest};
use rust_decimal::Decimal;

use super::*;

fn confirm_request() -> ConfirmRequest {
    ConfirmRequest::builder(TX_ID, "INV-1").build().unwrap()
}

async fn answer_confirm(server: &MockServer, data: &str) {
    Mock::given(method("POST"))
        .and(path("/api/payments/confirm"))
        .respond_with(json(200, ok_envelope(data)))
        .expect(1)
        .named("confirm")
        .mount(server)
        .await;
}

/// A client that initiated INV-1 for 150.00 MYR (TX_ID), ready to confirm.
async fn client_that_initiated(server: &MockServer) -> Client {
    answer_initiate(server, &initiate_data()).await;
    let client = client(server);
    client.initiate(initiate_request()).await.unwrap();
    client
}

#[tokio::test]
async fn a_confirm_answered_for_another_transaction_is_a_mismatch_and_not_retried() {
    let server = MockServer::start().await;
    let data = confirm_data().replace(TX_ID, "0192f7c4-ffff-7fff-bfff-ffffffffffff");
    answer_confirm(&server, &data).await;
    let err = client(&server)
        .confirm(confirm_request())
        .await
        .unwrap_err();
    assert_eq!(
        mismatch(&err).disagreements,
        [field(
            "transactionId",
            TX_ID,
            "0192f7c4-ffff-7fff-bfff-ffffffffffff"
        )]
    );
    assert!(
        mismatch(&err).read_back.is_none(),
        "only initiates are read back"
    );
    assert_is_an_unknown_outcome_of(&err, &server, &ok_envelope(&data)).await;
    assert_eq!(
        err.to_string(),
        format!(
            "confirm of {TX_ID}: the service answered for another request: transactionId sent \
             {TX_ID}, answered 0192f7c4-ffff-7fff-bfff-ffffffffffff"
        )
    );
}

#[tokio::test]
async fn a_confirm_answered_for_another_reference_is_a_mismatch() {
    let server = MockServer::start().await;
    let data = confirm_data().replace(r#""referenceNo":"INV-1""#, r#""referenceNo":"INV-2""#);
    answer_confirm(&server, &data).await;
    let err = client(&server)
        .confirm(confirm_request())
        .await
        .unwrap_err();
    assert_eq!(
        mismatch(&err).disagreements,
        [field("referenceNo", "INV-1", "INV-2")]
    );
    assert_is_an_unknown_outcome_of(&err, &server, &ok_envelope(&data)).await;
}

#[tokio::test]
async fn a_confirm_whose_amount_is_not_the_initiated_one_is_a_mismatch() {
    let server = MockServer::start().await;
    let client = client_that_initiated(&server).await;
    answer_confirm(
        &server,
        &confirm_data().replace(r#""amount":150.00"#, r#""amount":25.00"#),
    )
    .await;
    let err = client.confirm(confirm_request()).await.unwrap_err();
    assert_eq!(
        mismatch(&err).disagreements,
        [Disagreement::InitiatedAmount {
            initiated: Decimal::new(15000, 2),
            answered: Decimal::new(2500, 2),
        }]
    );
    assert!(
        err.to_string()
            .ends_with("amount initiated 150.00, answered 25.00"),
        "{err}"
    );
}

#[tokio::test]
async fn a_confirm_amount_one_minor_unit_off_is_a_mismatch() {
    let server = MockServer::start().await;
    let client = client_that_initiated(&server).await;
    answer_confirm(
        &server,
        &confirm_data().replace(r#""amount":150.00"#, r#""amount":"150.01""#),
    )
    .await;
    let err = client.confirm(confirm_request()).await.unwrap_err();
    assert!(mismatch(&err).has("amount"), "{err}");
}

#[tokio::test]
async fn a_confirm_of_a_transaction_this_client_did_not_initiate_is_not_held_to_an_amount() {
    let server = MockServer::start().await;
    answer_confirm(
        &server,
        &confirm_data().replace(r#""amount":150.00"#, r#""amount":25.00"#),
    )
    .await;
    let reply = client(&server).confirm(confirm_request()).await.unwrap();
    assert_eq!(reply.data().amount, Decimal::new(2500, 2));
}

#[tokio::test]
async fn every_disagreeing_field_of_a_confirm_is_named_in_one_error() {
    let server = MockServer::start().await;
    let client = client_that_initiated(&server).await;
    let data = confirm_data()
        .replace(TX_ID, "another-id")
        .replace(r#""referenceNo":"INV-1""#, r#""referenceNo":"INV-2""#)
        .replace(r#""amount":150.00"#, r#""amount":1.5"#);
    answer_confirm(&server, &data).await;
    let err = client.confirm(confirm_request()).await.unwrap_err();
    assert_eq!(
        mismatch(&err).disagreements,
        [
            field("transactionId", TX_ID, "another-id"),
            field("referenceNo", "INV-1", "INV-2"),
            Disagreement::InitiatedAmount {
                initiated: Decimal::new(15000, 2),
                answered: Decimal::new(15, 1),
            },
        ]
    );
}

#[tokio::test]
async fn a_reconciled_confirm_is_checked_against_the_initiated_amount_too() {
    // The retry meets TRANSACTION_ALREADY_CONFIRMED; the status read back
    // shows another amount than this client initiated.
    let server = MockServer::start().await;
    let client = client_that_initiated(&server).await;
    Mock::given(method("POST"))
        .and(path("/api/payments/confirm"))
        .respond_with(json(500, err_envelope("INTERNAL_ERROR", "committed")))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/api/payments/confirm"))
        .respond_with(json(
            400,
            err_envelope("TRANSACTION_ALREADY_CONFIRMED", "done"),
        ))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("/api/payments/{TX_ID}/status")))
        .respond_with(status_answer("SUCCESSFUL", "15.00", "TOPUP"))
        .mount(&server)
        .await;
    let err = client.confirm(confirm_request()).await.unwrap_err();
    assert_eq!(
        mismatch(&err).disagreements,
        [Disagreement::InitiatedAmount {
            initiated: Decimal::new(15000, 2),
            answered: Decimal::new(1500, 2),
        }]
    );
}
