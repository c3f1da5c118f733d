//! API keys (CONTRACT section 9): open by default, then keyed, then bound.

use payments_client::{Client, ConfirmRequest, ErrorCode, Outcome, TransactionStatus};
use payments_mock_server::MockServer;

use crate::support::*;

fn keyed(server: &MockServer, key: &str) -> Client {
    client_builder(server)
        .api_key(key.to_owned())
        .build()
        .unwrap()
}

#[tokio::test]
async fn without_keys_the_mock_is_open() {
    let server = MockServer::start().await;
    let tx = client(&server).initiate(topup("OPEN-1")).await.unwrap();
    assert_eq!(tx.data().status, TransactionStatus::Initiated);
    // A key the open server does not know about is harmless.
    let tx = keyed(&server, "sk_any")
        .initiate(topup("OPEN-2"))
        .await
        .unwrap();
    assert_eq!(tx.data().status, TransactionStatus::Initiated);
}

#[tokio::test]
async fn with_a_key_configured_the_key_is_required_and_works() {
    let server = MockServer::builder()
        .api_key("sk_test_e2e", None)
        .start()
        .await
        .unwrap();

    let err = client(&server).initiate(topup("AUTH-1")).await.unwrap_err();
    assert_eq!(err.error_code(), Some(&ErrorCode::Unauthorized));
    assert_eq!(err.http_status(), Some(401));
    assert_eq!(err.outcome(), Outcome::NotCarriedOut);
    assert!(!err.is_retryable());

    let err = keyed(&server, "sk_wrong")
        .status_by_reference("AUTH-1", None)
        .await
        .unwrap_err();
    assert_eq!(err.error_code(), Some(&ErrorCode::Unauthorized));
    assert!(server.transactions().await.is_empty());

    let client = keyed(&server, "sk_test_e2e");
    let tx = client.initiate(topup("AUTH-1")).await.unwrap().into_data();
    let confirm = ConfirmRequest::builder(&tx.transaction_id, "AUTH-1")
        .build()
        .unwrap();
    let confirmed = client.confirm(confirm).await.unwrap();
    assert_eq!(confirmed.data().status, TransactionStatus::Successful);
    let status = client.status_by_reference("AUTH-1", None).await.unwrap();
    assert_eq!(status.data().transaction_id, tx.transaction_id);
}

#[tokio::test]
async fn a_bound_key_only_reaches_its_own_merchant() {
    let server = MockServer::builder()
        .api_key("sk_mine", Some(merchant()))
        .api_key("sk_theirs", Some(other_merchant()))
        .start()
        .await
        .unwrap();
    let mine = keyed(&server, "sk_mine");
    let theirs = keyed(&server, "sk_theirs");

    let forbidden = request_for(other_merchant(), "BOUND-1", 1000, "TOPUP")
        .payer_id("P")
        .build()
        .unwrap();
    let err = mine.initiate(forbidden).await.unwrap_err();
    assert_eq!(err.error_code(), Some(&ErrorCode::Forbidden));
    assert_eq!(err.http_status(), Some(403));
    assert_eq!(err.outcome(), Outcome::NotCarriedOut);
    assert!(server.transactions().await.is_empty());

    let req = request_for(other_merchant(), "BOUND-1", 1000, "TOPUP")
        .payer_id("P")
        .build()
        .unwrap();
    let their_tx = theirs.initiate(req).await.unwrap().into_data();

    let err = mine.status(&their_tx.transaction_id).await.unwrap_err();
    assert_eq!(err.error_code(), Some(&ErrorCode::TransactionNotFound));
    assert_eq!(err.http_status(), Some(404));
    let err = mine.status_by_reference("BOUND-1", None).await.unwrap_err();
    assert_eq!(err.error_code(), Some(&ErrorCode::TransactionNotFound));
    let err = mine
        .status_by_reference("BOUND-1", Some(other_merchant()))
        .await
        .unwrap_err();
    assert_eq!(
        err.error_code(),
        Some(&ErrorCode::Forbidden),
        "a query naming another merchant is refused, as an initiate naming one is"
    );
    assert_eq!(err.http_status(), Some(403));
    let confirm = ConfirmRequest::builder(&their_tx.transaction_id, "BOUND-1")
        .build()
        .unwrap();
    let err = mine.confirm(confirm).await.unwrap_err();
    assert_eq!(err.error_code(), Some(&ErrorCode::TransactionNotFound));
    assert_eq!(err.http_status(), Some(400));
    assert_eq!(
        server.transactions().await[0].status,
        "INITIATED",
        "nothing leaked or changed"
    );

    let own = theirs.status(&their_tx.transaction_id).await.unwrap();
    assert_eq!(own.data().status, TransactionStatus::Initiated);
}
