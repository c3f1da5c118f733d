//! Every product's flow end to end (CONTRACT sections 6 and 7), expiry by
//! advancing the virtual clock, duplicates and the merchant scope.

use std::time::Duration;

use serde_json::{Value, json};

use crate::common::{
    MERCHANT, OTHER_MERCHANT, advance, confirm, count, get, initiate, initiate_body, initiated,
    records, redact, service, status,
};

#[tokio::test]
async fn topup_initiates_then_confirms_successful() {
    let (_, router) = service();
    let reply = initiate(&router, &initiate_body("TOP-1", "TOPUP")).await;
    assert_eq!(reply.status, 200);
    insta::assert_snapshot!(
        "topup_initiate",
        crate::common::pretty(&redact(&reply.body))
    );
    let id = reply.data()["transactionId"]
        .as_str()
        .expect("id")
        .to_owned();

    let reply = confirm(&router, &id, "TOP-1", None).await;
    assert_eq!(reply.status, 200);
    assert!(reply.data()["providerReference"].is_string());
    insta::assert_snapshot!("topup_confirm", crate::common::pretty(&redact(&reply.body)));

    let reply = status(&router, &id).await;
    assert_eq!(reply.data()["status"], "SUCCESSFUL");
    assert_eq!(
        reply.data()["lastModifiedAt"],
        reply.data()["lastModifiedAt"]
    );
    insta::assert_snapshot!("topup_status", crate::common::pretty(&redact(&reply.body)));
}

#[tokio::test]
async fn billpay_is_confirmed_then_successful_after_the_settle_delay() {
    let (state, router) = service();
    let id = initiated(&router, "BILL-1", "BILLPAY").await;
    let reply = confirm(&router, &id, "BILL-1", None).await;
    assert_eq!(reply.data()["status"], "CONFIRMED");
    let confirmed_at = reply.data()["confirmedAt"].clone();

    let before = status(&router, &id).await;
    assert_eq!(before.data()["status"], "CONFIRMED");
    assert_eq!(before.data()["lastModifiedAt"], confirmed_at);

    advance(&state, Duration::from_millis(2000)).await;
    let after = status(&router, &id).await;
    assert_eq!(after.data()["status"], "SUCCESSFUL");
    assert_ne!(after.data()["lastModifiedAt"], confirmed_at);
    // Settling does not make it confirmable again.
    assert_eq!(
        confirm(&router, &id, "BILL-1", None).await.code(),
        "TRANSACTION_ALREADY_CONFIRMED"
    );
}

#[tokio::test]
async fn giftcard_hands_out_one_pin_per_unit() {
    let (_, router) = service();
    let mut body = initiate_body("GIFT-1", "GIFTCARD");
    body["quantity"] = json!(3);
    let reply = initiate(&router, &body).await;
    let id = reply.data()["transactionId"]
        .as_str()
        .expect("id")
        .to_owned();
    let reply = confirm(&router, &id, "GIFT-1", None).await;
    assert_eq!(reply.data()["status"], "SUCCESSFUL");
    let extra: Value = serde_json::from_str(
        reply.data()["extraProperties"]
            .as_str()
            .expect("a JSON string"),
    )
    .expect("JSON");
    let pins = extra["pins"].as_array().expect("pins");
    assert_eq!(pins.len(), 3);
    assert!(
        pins.iter()
            .all(|p| p.as_str().is_some_and(|p| p.len() == 16))
    );
    assert_eq!(
        status(&router, &id).await.data()["extraProperties"],
        reply.data()["extraProperties"]
    );
}

#[tokio::test]
async fn giftcard_quantity_defaults_to_one_pin() {
    let (_, router) = service();
    let id = initiated(&router, "GIFT-2", "GIFTCARD").await;
    let reply = confirm(&router, &id, "GIFT-2", None).await;
    let extra: Value =
        serde_json::from_str(reply.data()["extraProperties"].as_str().expect("string"))
            .expect("JSON");
    assert_eq!(extra["pins"].as_array().map(Vec::len), Some(1));
}

#[tokio::test]
async fn ewallet_with_the_right_otp_succeeds() {
    let (_, router) = service();
    let reply = initiate(&router, &initiate_body("EW-1", "EWALLET")).await;
    assert_eq!(reply.data()["status"], "PENDING");
    let id = reply.data()["transactionId"]
        .as_str()
        .expect("id")
        .to_owned();
    let reply = confirm(&router, &id, "EW-1", Some("123456")).await;
    assert_eq!(reply.data()["status"], "SUCCESSFUL");
}

#[tokio::test]
async fn ewallet_with_a_wrong_otp_fails() {
    let (_, router) = service();
    let id = initiated(&router, "EW-2", "EWALLET").await;
    let reply = confirm(&router, &id, "EW-2", Some("000000")).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.data()["status"], "FAILED");
    assert_eq!(reply.data()["errorMessage"], "invalid confirmation code");
    assert!(reply.data()["providerReference"].is_null());
    let reply = status(&router, &id).await;
    assert_eq!(reply.data()["message"], "invalid confirmation code");
}

#[tokio::test]
async fn declined_product_fails_with_provider_message() {
    let (_, router) = service();
    let id = initiated(&router, "DEC-1", "DECLINED").await;
    let reply = confirm(&router, &id, "DEC-1", None).await;
    assert_eq!(reply.data()["status"], "FAILED");
    assert_eq!(reply.data()["errorMessage"], "declined by provider");
    insta::assert_snapshot!(
        "declined_confirm",
        crate::common::pretty(&redact(&reply.body))
    );
}

#[tokio::test]
async fn unconfirmed_transaction_expires_when_the_clock_passes_expiry() {
    let (state, router) = service();
    let reply = initiate(&router, &initiate_body("EXP-1", "TOPUP")).await;
    let id = reply.data()["transactionId"]
        .as_str()
        .expect("id")
        .to_owned();
    let created: chrono::DateTime<chrono::Utc> = reply.data()["createdAt"]
        .as_str()
        .and_then(|t| t.parse().ok())
        .expect("time");

    advance(&state, Duration::from_secs(15 * 60 - 1)).await;
    assert_eq!(status(&router, &id).await.data()["status"], "INITIATED");

    advance(&state, Duration::from_secs(1)).await;
    let reply = status(&router, &id).await;
    assert_eq!(reply.data()["status"], "EXPIRED");
    assert_eq!(reply.data()["message"], "transaction expired");
    let expected =
        payments_mock_server::domain::clock::format_time(created + chrono::TimeDelta::minutes(15));
    assert_eq!(reply.data()["lastModifiedAt"], expected.as_str());
    insta::assert_snapshot!(
        "expired_status",
        crate::common::pretty(&redact(&reply.body))
    );
}

#[tokio::test]
async fn status_reads_never_change_the_store() {
    let (state, router) = service();
    let id = initiated(&router, "RO-1", "TOPUP").await;
    let before = records(&state).await;
    advance(&state, Duration::from_secs(3600)).await;
    assert_eq!(status(&router, &id).await.data()["status"], "EXPIRED");
    assert_eq!(records(&state).await, before);
}

#[tokio::test]
async fn duplicate_reference_changes_nothing_and_another_merchant_may_reuse_it() {
    let (state, router) = service();
    let id = initiated(&router, "DUP", "TOPUP").await;
    let mut body = initiate_body("DUP", "BILLPAY");
    body["amount"] = json!(1);
    assert_eq!(
        initiate(&router, &body).await.code(),
        "DUPLICATE_REFERENCE_NO"
    );
    let reply = status(&router, &id).await;
    assert_eq!(reply.data()["productCode"], "TOPUP");

    body["merchantId"] = json!(OTHER_MERCHANT);
    assert_eq!(initiate(&router, &body).await.status, 200);
    assert_eq!(count(&state).await, 2);
}

#[tokio::test]
async fn reference_lookup_percent_decodes_the_segment() {
    let (_, router) = service();
    let id = initiated(&router, "INV/2026/0001 x", "TOPUP").await;
    let reply = get(
        &router,
        "/api/payments/reference/INV%2F2026%2F0001%20x/status",
    )
    .await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.data()["transactionId"], id.as_str());
}

#[tokio::test]
async fn reference_held_by_two_merchants_is_found_with_a_scope() {
    let (_, router) = service();
    let mine = initiated(&router, "BOTH", "TOPUP").await;
    let mut other = initiate_body("BOTH", "TOPUP");
    other["merchantId"] = json!(OTHER_MERCHANT);
    let theirs = initiate(&router, &other).await.data()["transactionId"].clone();
    let reply = get(
        &router,
        &format!("/api/payments/reference/BOTH/status?merchantId={MERCHANT}"),
    )
    .await;
    assert_eq!(reply.data()["transactionId"], mine.as_str());
    let reply = get(
        &router,
        &format!("/api/payments/reference/BOTH/status?merchantId={OTHER_MERCHANT}"),
    )
    .await;
    assert_eq!(reply.data()["transactionId"], theirs);
    assert_eq!(
        get(&router, "/api/payments/reference/BOTH/status")
            .await
            .code(),
        "AMBIGUOUS_REFERENCE_NO"
    );
}

#[tokio::test]
async fn a_custom_expiry_applies() {
    let mut config = payments_mock_server::Config::default();
    config.expiry = Duration::from_secs(30);
    let (state, router) = crate::common::service_with(config);
    let id = initiated(&router, "SHORT", "TOPUP").await;
    advance(&state, Duration::from_secs(30)).await;
    assert_eq!(status(&router, &id).await.data()["status"], "EXPIRED");
}

#[tokio::test]
async fn request_ids_are_echoed_when_acceptable_and_replaced_otherwise() {
    let (_, router) = service();
    let req = axum::http::Request::get("/_mock/health")
        .header("x-request-id", "abc-123")
        .body(axum::body::Body::empty())
        .expect("request");
    let reply = crate::common::send(&router, req).await;
    assert_eq!(reply.headers["x-request-id"], "abc-123");
    let req = axum::http::Request::get("/_mock/health")
        .header("x-request-id", "has space")
        .body(axum::body::Body::empty())
        .expect("request");
    let reply = crate::common::send(&router, req).await;
    assert_ne!(reply.headers["x-request-id"], "has space");
}
