//! The answer guard (CONTRACT section 17) against a real server that lies
//! on purpose: the mock's `answer-other` fault carries the request out,
//! then answers with another transaction's data, as a misrouting gateway or
//! a stale cache would.

use payments_client::{ConfirmRequest, Error, Outcome, TransactionStatus};
use payments_mock_server::{Fault, MockServer};

use crate::support::*;

/// A mock holding ORDER-77, initiated and confirmed through `client`.
async fn with_order_77() -> (MockServer, payments_client::Client) {
    let server = MockServer::start().await;
    let client = client(&server);
    let first = client
        .initiate(topup("ORDER-77"))
        .await
        .unwrap()
        .into_data();
    let confirm = ConfirmRequest::builder(&first.transaction_id, "ORDER-77")
        .build()
        .unwrap();
    client.confirm(confirm).await.unwrap();
    (server, client)
}

fn mismatch(error: &Error) -> &payments_client::error::AnswerMismatch {
    match error {
        Error::AnswerMismatch(m) => m,
        other => panic!("expected an answer mismatch, got {other:?}"),
    }
}

#[tokio::test]
async fn an_initiate_answered_for_another_order_is_settled_by_reading_its_own_back() {
    let (server, client) = with_order_77().await;
    server.inject_faults([Fault::AnswerOther]);
    let reply = client.initiate(topup("ORDER-78")).await.unwrap();
    // The answer named ORDER-77; the read-back of ORDER-78 found the
    // transaction the mock really created, and only that is the result.
    assert!(reply.is_reconciled());
    let stored = server
        .transactions()
        .await
        .into_iter()
        .find(|t| t.reference_no == "ORDER-78")
        .expect("the mock created ORDER-78");
    assert_eq!(reply.data().reference_no, "ORDER-78");
    assert_eq!(
        reply.data().transaction_id.as_str(),
        stored.transaction_id.to_string()
    );
    assert_eq!(
        server.transactions().await.len(),
        2,
        "nothing created twice"
    );
}

#[tokio::test]
async fn a_confirm_answered_for_another_transaction_is_a_mismatch_whose_outcome_is_unknown() {
    let (server, client) = with_order_77().await;
    let second = client
        .initiate(topup("ORDER-78"))
        .await
        .unwrap()
        .into_data();
    server.inject_faults([Fault::AnswerOther]);
    let confirm = ConfirmRequest::builder(&second.transaction_id, "ORDER-78")
        .build()
        .unwrap();
    let error = client.confirm(confirm).await.unwrap_err();
    let m = mismatch(&error);
    assert!(m.has("transactionId") && m.has("referenceNo"), "{m}");
    assert!(m.raw_envelope.contains("ORDER-77"), "{}", m.raw_envelope);
    assert_eq!(error.outcome(), Outcome::Unknown);
    // The mock did confirm ORDER-78: the client said "unknown", not "failed".
    let stored = client.status(&second.transaction_id).await.unwrap();
    assert_eq!(stored.data().status, TransactionStatus::Successful);
}

#[tokio::test]
async fn a_status_read_answered_for_another_transaction_is_a_mismatch() {
    let (server, client) = with_order_77().await;
    let second = client
        .initiate(topup("ORDER-78"))
        .await
        .unwrap()
        .into_data();
    server.inject_faults([Fault::AnswerOther]);
    let error = client.status(&second.transaction_id).await.unwrap_err();
    let m = mismatch(&error);
    assert!(m.has("transactionId"), "{m}");
    server.inject_faults([Fault::AnswerOther]);
    let error = client
        .status_by_reference("ORDER-78", Some(merchant()))
        .await
        .unwrap_err();
    assert!(mismatch(&error).has("referenceNo"), "{error}");
}

#[tokio::test]
async fn with_nothing_else_to_show_the_lying_mock_tells_the_truth() {
    let server = MockServer::start().await;
    let client = client(&server);
    server.inject_faults([Fault::AnswerOther]);
    let reply = client.initiate(topup("ORDER-1")).await.unwrap();
    assert!(!reply.is_reconciled());
    assert_eq!(reply.data().reference_no, "ORDER-1");
}
