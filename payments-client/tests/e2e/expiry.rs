//! Unconfirmed transactions expire on the virtual clock.

use std::time::Duration;

use payments_client::{ConfirmRequest, ErrorCode, Outcome, TransactionStatus};
use payments_mock_server::MockServer;

use crate::support::*;

#[tokio::test]
async fn a_transaction_expires_after_fifteen_minutes_and_cannot_be_confirmed() {
    let server = MockServer::start().await;
    let client = client(&server);
    let tx = client.initiate(topup("EXP-1")).await.unwrap().into_data();

    server.advance_clock(Duration::from_secs(15 * 60 - 1)).await;
    let fresh = client.status(&tx.transaction_id).await.unwrap().into_data();
    assert_eq!(fresh.status, TransactionStatus::Initiated);

    server.advance_clock(Duration::from_secs(2)).await;
    let expired = client.status(&tx.transaction_id).await.unwrap().into_data();
    assert_eq!(expired.status, TransactionStatus::Expired);
    assert_eq!(expired.message.as_deref(), Some("transaction expired"));
    assert_eq!(
        expired.last_modified_at,
        Some(tx.created_at + chrono::Duration::minutes(15)),
        "lastModifiedAt is the expiry instant"
    );

    let confirm = ConfirmRequest::builder(&tx.transaction_id, "EXP-1")
        .build()
        .unwrap();
    let err = client.confirm(confirm).await.unwrap_err();
    assert_eq!(err.error_code(), Some(&ErrorCode::TransactionExpired));
    assert_eq!(err.http_status(), Some(400));
    assert_eq!(err.outcome(), Outcome::NotCarriedOut);
    assert_eq!(server.transactions().await[0].status, "EXPIRED");
}

#[tokio::test]
async fn a_confirmed_transaction_never_expires() {
    let server = MockServer::start().await;
    let client = client(&server);
    let tx = client.initiate(topup("EXP-2")).await.unwrap().into_data();
    let confirm = ConfirmRequest::builder(&tx.transaction_id, "EXP-2")
        .build()
        .unwrap();
    client.confirm(confirm).await.unwrap();

    server.advance_clock(Duration::from_secs(3600)).await;
    let status = client.status(&tx.transaction_id).await.unwrap().into_data();
    assert_eq!(status.status, TransactionStatus::Successful);
}

#[tokio::test]
async fn wait_for_final_ends_with_expired_when_the_clock_passes_expiry() {
    let server = MockServer::start().await;
    let client = client(&server);
    let tx = client.initiate(topup("EXP-3")).await.unwrap().into_data();
    server.advance_clock(Duration::from_secs(15 * 60)).await;
    let options = payments_client::WaitOptions::default().timeout(Duration::from_secs(5));
    let reply = client
        .wait_for_final(&tx.transaction_id, options)
        .await
        .unwrap();
    assert_eq!(reply.data().status, TransactionStatus::Expired);
}

#[tokio::test]
async fn wait_for_final_gives_up_with_the_last_status_it_read() {
    let server = MockServer::start().await;
    let client = client(&server);
    let req = request("EXP-4", 2500, "EWALLET").build().unwrap();
    let tx = client.initiate(req).await.unwrap().into_data();
    let options = payments_client::WaitOptions::default()
        .timeout(Duration::from_millis(60))
        .poll_interval(Duration::from_millis(20));
    let err = client
        .wait_for_final(&tx.transaction_id, options)
        .await
        .unwrap_err();
    let payments_client::Error::WaitTimeout {
        last: Some(last), ..
    } = err
    else {
        panic!("expected a wait timeout with a status, got {err:?}");
    };
    assert_eq!(last.data().status, TransactionStatus::Pending);
}
