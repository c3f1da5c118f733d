//! Every product of the default catalogue, initiate to final state.

use std::time::Duration;

use payments_client::{
    ConfirmRequest, Decimal, ErrorCode, Outcome, TransactionStatus, WaitOptions,
};
use payments_mock_server::MockServer;

use crate::support::*;

#[tokio::test]
async fn topup_is_initiated_then_successful_on_confirm() {
    let server = MockServer::start().await;
    let client = client(&server);

    let initiated = client.initiate(topup("TOP-1")).await.unwrap();
    let tx = initiated.data();
    assert_eq!(tx.status, TransactionStatus::Initiated);
    assert_eq!(tx.amount.get(), 15000);
    assert_eq!(
        (initiated.attempts(), initiated.is_reconciled()),
        (1, false)
    );

    let confirm = ConfirmRequest::builder(&tx.transaction_id, "TOP-1")
        .build()
        .unwrap();
    let confirmed = client.confirm(confirm).await.unwrap();
    let c = confirmed.data();
    assert_eq!(c.status, TransactionStatus::Successful);
    assert_eq!(c.amount.to_string(), "150.00");
    assert!(c.provider_reference.is_some());
    assert!(c.confirmed_at.is_some());

    let status = client.status(&tx.transaction_id).await.unwrap();
    assert_eq!(status.data().status, TransactionStatus::Successful);
    assert_eq!(status.data().provider_reference, c.provider_reference);
    assert_eq!(status.data().last_modified_at, c.confirmed_at);
}

#[tokio::test]
async fn billpay_is_confirmed_then_successful_after_the_settle_delay() {
    let server = MockServer::start().await;
    let client = client(&server);
    let req = request("BILL-1", 15000, "BILLPAY")
        .payer_id("ACC-1")
        .build()
        .unwrap();
    let tx = client.initiate(req).await.unwrap().into_data();

    let confirm = ConfirmRequest::builder(&tx.transaction_id, "BILL-1")
        .build()
        .unwrap();
    let confirmed = client.confirm(confirm).await.unwrap().into_data();
    assert_eq!(confirmed.status, TransactionStatus::Confirmed);
    let confirmed_at = confirmed.confirmed_at.expect("confirm time");

    let before = client.status(&tx.transaction_id).await.unwrap().into_data();
    assert_eq!(before.status, TransactionStatus::Confirmed);

    server.advance_clock(Duration::from_secs(2)).await;
    let after = client.status(&tx.transaction_id).await.unwrap().into_data();
    assert_eq!(after.status, TransactionStatus::Successful);
    assert_eq!(
        after.last_modified_at,
        Some(confirmed_at + chrono::Duration::seconds(2)),
        "lastModifiedAt is the settle time"
    );
}

#[tokio::test]
async fn wait_for_final_sees_billpay_settle_while_the_clock_moves() {
    let server = MockServer::start().await;
    let client = client(&server);
    let req = request("BILL-2", 15000, "BILLPAY")
        .payer_id("ACC-1")
        .build()
        .unwrap();
    let tx = client.initiate(req).await.unwrap().into_data();
    let confirm = ConfirmRequest::builder(&tx.transaction_id, "BILL-2")
        .build()
        .unwrap();
    client.confirm(confirm).await.unwrap();

    let polls = async || {
        server
            .requests()
            .await
            .iter()
            .filter(|r| r.method == "GET" && r.path.ends_with("/status"))
            .count()
    };
    let options = WaitOptions::default()
        .timeout(Duration::from_secs(10))
        .poll_interval(Duration::from_millis(20));
    let (waited, ()) = tokio::join!(client.wait_for_final(&tx.transaction_id, options), async {
        // Move the clock once the first poll has seen CONFIRMED.
        while polls().await == 0 {
            tokio::task::yield_now().await;
        }
        server.advance_clock(Duration::from_secs(2)).await;
    });
    let reply = waited.unwrap();
    assert_eq!(reply.data().status, TransactionStatus::Successful);
    assert!(
        polls().await >= 2,
        "the first poll saw CONFIRMED, a later one SUCCESSFUL"
    );
}

#[tokio::test]
async fn giftcard_confirm_returns_one_pin_per_unit() {
    let server = MockServer::start().await;
    let client = client(&server);
    let req = request("GIFT-1", 5000, "GIFTCARD")
        .quantity(3)
        .build()
        .unwrap();
    let tx = client.initiate(req).await.unwrap().into_data();
    let confirm = ConfirmRequest::builder(&tx.transaction_id, "GIFT-1")
        .build()
        .unwrap();
    let confirmed = client.confirm(confirm).await.unwrap().into_data();
    assert_eq!(confirmed.status, TransactionStatus::Successful);

    let extra: serde_json::Value =
        serde_json::from_str(confirmed.extra_properties.as_deref().expect("pins")).unwrap();
    let pins = extra["pins"].as_array().expect("pins array");
    assert_eq!(pins.len(), 3);
    let distinct: std::collections::HashSet<_> = pins.iter().map(|p| p.to_string()).collect();
    assert_eq!(distinct.len(), 3, "every pin differs: {pins:?}");
}

#[tokio::test]
async fn ewallet_with_the_right_otp_succeeds() {
    let server = MockServer::start().await;
    let client = client(&server);
    let req = request("EW-1", 2500, "EWALLET").build().unwrap();
    let tx = client.initiate(req).await.unwrap().into_data();
    assert_eq!(tx.status, TransactionStatus::Pending);

    let confirm = ConfirmRequest::builder(&tx.transaction_id, "EW-1")
        .confirmation_code("123456")
        .build()
        .unwrap();
    let confirmed = client.confirm(confirm).await.unwrap().into_data();
    assert_eq!(confirmed.status, TransactionStatus::Successful);
    assert_eq!(confirmed.error_message, None);
}

#[tokio::test]
async fn ewallet_with_a_wrong_otp_fails() {
    let server = MockServer::start().await;
    let client = client(&server);
    let req = request("EW-2", 2500, "EWALLET").build().unwrap();
    let tx = client.initiate(req).await.unwrap().into_data();

    let confirm = ConfirmRequest::builder(&tx.transaction_id, "EW-2")
        .confirmation_code("000000")
        .build()
        .unwrap();
    let confirmed = client.confirm(confirm).await.unwrap().into_data();
    assert_eq!(confirmed.status, TransactionStatus::Failed);
    assert!(confirmed.error_message.is_some());
    assert_eq!(confirmed.provider_reference, None);
    let status = client.status(&tx.transaction_id).await.unwrap().into_data();
    assert_eq!(status.status, TransactionStatus::Failed);
}

#[tokio::test]
async fn ewallet_without_an_otp_is_a_validation_error_and_stays_confirmable() {
    let server = MockServer::start().await;
    let client = client(&server);
    let req = request("EW-3", 2500, "EWALLET").build().unwrap();
    let tx = client.initiate(req).await.unwrap().into_data();

    let bare = ConfirmRequest::builder(&tx.transaction_id, "EW-3")
        .build()
        .unwrap();
    let err = client.confirm(bare).await.unwrap_err();
    assert_eq!(err.error_code(), Some(&ErrorCode::ValidationError));
    assert_eq!(err.http_status(), Some(400));
    assert_eq!(err.outcome(), Outcome::NotCarriedOut);
    assert!(
        err.to_string()
            .contains("confirmationCode is required for product EWALLET"),
        "{err}"
    );
    let status = client.status(&tx.transaction_id).await.unwrap().into_data();
    assert_eq!(status.status, TransactionStatus::Pending);

    let with_code = ConfirmRequest::builder(&tx.transaction_id, "EW-3")
        .confirmation_code("123456")
        .build()
        .unwrap();
    let confirmed = client.confirm(with_code).await.unwrap().into_data();
    assert_eq!(confirmed.status, TransactionStatus::Successful);
}

#[tokio::test]
async fn declined_product_ends_failed_with_the_provider_reason() {
    let server = MockServer::start().await;
    let client = client(&server);
    let req = request("DEC-1", 1000, "DECLINED").build().unwrap();
    let tx = client.initiate(req).await.unwrap().into_data();
    let confirm = ConfirmRequest::builder(&tx.transaction_id, "DEC-1")
        .build()
        .unwrap();
    let confirmed = client.confirm(confirm).await.unwrap().into_data();
    assert_eq!(confirmed.status, TransactionStatus::Failed);
    assert_eq!(
        confirmed.error_message.as_deref(),
        Some("declined by provider")
    );
    assert_eq!(confirmed.amount, Decimal::new(1000, 2));

    let again = ConfirmRequest::builder(&tx.transaction_id, "DEC-1")
        .build()
        .unwrap();
    let err = client.confirm(again).await.unwrap_err();
    assert_eq!(
        err.error_code(),
        Some(&ErrorCode::TransactionAlreadyConfirmed)
    );
}
