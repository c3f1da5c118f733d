//! referenceNo: unique per merchant, scoped by merchant, any Unicode.

use payments_client::{Error, ErrorCode, Outcome, TransactionStatus};
use payments_mock_server::MockServer;

use crate::support::*;

#[tokio::test]
async fn a_duplicate_reference_on_a_first_attempt_is_a_plain_api_error() {
    let server = MockServer::start().await;
    let client = client(&server);
    let first = client.initiate(topup("DUP-1")).await.unwrap().into_data();

    let err = client.initiate(topup("DUP-1")).await.unwrap_err();
    let api = err.as_api().expect("an API error, not a reconciliation");
    assert_eq!(api.code, ErrorCode::DuplicateReferenceNo);
    assert_eq!(api.status, 400);
    assert!(
        api.message.contains(first.transaction_id.as_str()),
        "the message names the existing id: {}",
        api.message
    );
    assert_eq!(err.outcome(), Outcome::NotCarriedOut);
    assert_eq!(server.transactions().await.len(), 1);
}

#[tokio::test]
async fn the_same_reference_under_two_merchants_needs_the_merchant_to_be_read() {
    let server = MockServer::start().await;
    let client = client(&server);
    let mine = client
        .initiate(topup("SHARED-1"))
        .await
        .unwrap()
        .into_data();
    let req = request_for(other_merchant(), "SHARED-1", 777, "TOPUP")
        .payer_id("P-2")
        .build()
        .unwrap();
    let theirs = client.initiate(req).await.unwrap().into_data();
    assert_ne!(mine.transaction_id, theirs.transaction_id);

    let err = client
        .status_by_reference("SHARED-1", None)
        .await
        .unwrap_err();
    assert_eq!(err.error_code(), Some(&ErrorCode::AmbiguousReferenceNo));
    assert_eq!(err.http_status(), Some(400));

    let a = client
        .status_by_reference("SHARED-1", Some(merchant()))
        .await
        .unwrap();
    assert_eq!(a.data().transaction_id, mine.transaction_id);
    let b = client
        .status_by_reference("SHARED-1", Some(other_merchant()))
        .await
        .unwrap();
    assert_eq!(b.data().transaction_id, theirs.transaction_id);
    assert_eq!(b.data().amount.to_string(), "7.77");
}

#[tokio::test]
async fn references_with_reserved_and_unicode_characters_round_trip() {
    let server = MockServer::start().await;
    let client = client(&server);
    for reference in [
        "INV/2026/0001",
        "what?x=1&y=2",
        "hash#tag",
        "100%",
        "inner space",
        "Grüße-ü",
        "a/b?c#d%e f ü",
        "%2F",
    ] {
        let tx = client.initiate(topup(reference)).await.unwrap().into_data();
        assert_eq!(tx.reference_no, reference);
        let found = client.status_by_reference(reference, None).await.unwrap();
        assert_eq!(
            found.data().transaction_id,
            tx.transaction_id,
            "{reference}"
        );
        assert_eq!(found.data().reference_no, reference);
        let scoped = client
            .status_by_reference(reference, Some(merchant()))
            .await
            .unwrap();
        assert_eq!(scoped.data().status, TransactionStatus::Initiated);
    }
    let stored: Vec<String> = server
        .transactions()
        .await
        .into_iter()
        .map(|t| t.reference_no)
        .collect();
    assert_eq!(stored.len(), 8);
    assert!(stored.contains(&"%2F".to_owned()) && stored.contains(&"a/b?c#d%e f ü".to_owned()));
}

#[tokio::test]
async fn an_unknown_reference_or_id_is_not_found() {
    let server = MockServer::start().await;
    let client = client(&server);
    let err = client.status_by_reference("NOPE", None).await.unwrap_err();
    assert_eq!(err.error_code(), Some(&ErrorCode::TransactionNotFound));
    assert_eq!(err.http_status(), Some(404));
    let err = client
        .status("0192f7c4-2d1e-7a10-9c55-5d3a8f7b1e01")
        .await
        .unwrap_err();
    assert_eq!(err.error_code(), Some(&ErrorCode::TransactionNotFound));
    assert_eq!(err.http_status(), Some(404));
}

/// `.` and `..` cannot travel as a path segment (URL parsing removes dot
/// segments, `%2E` included), so they could never be read by reference. The
/// client refuses them before sending anything, on every call that would
/// put them in a path or create such a transaction.
#[tokio::test]
async fn dot_segment_references_are_refused_before_sending() {
    let server = MockServer::start().await;
    let client = client(&server);
    for reference in [".", ".."] {
        let err = client
            .status_by_reference(reference, None)
            .await
            .unwrap_err();
        assert!(
            matches!(err, Error::InvalidInput(_)),
            "{reference:?}: {err:?}"
        );
        let err = client.status(reference).await.unwrap_err();
        assert!(
            matches!(err, Error::InvalidInput(_)),
            "{reference:?}: {err:?}"
        );
    }
    assert!(server.requests().await.is_empty(), "nothing may be sent");
    assert!(server.transactions().await.is_empty());
}
