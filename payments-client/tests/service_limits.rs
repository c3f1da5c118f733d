//! The mock's limits (CONTRACT section 1: product codes of `A-Z 0-9 _ -`,
//! a description of at most 255 characters, a storeId of at most 64, ...)
//! are the mock's, not the interface document's: the builders accept what
//! breaks them and the client sends it as it is, for the service to
//! decide. Against the mock, its own VALIDATION_ERROR comes through.

mod common;

use common::*;
use payments_client::{ConfirmRequest, Error, ErrorCode, InitiateRequest, MinorAmount, Outcome};
use serde_json::{Value, json};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, Request};

fn amount(n: u64) -> MinorAmount {
    MinorAmount::new(n).unwrap()
}

/// A request breaking every mock limit the client used to apply itself.
fn over_the_mocks_limits() -> InitiateRequest {
    InitiateRequest::builder(
        merchant(),
        format!(" {} ", "r".repeat(70)),
        amount(1050),
        "Topup",
        "s".repeat(100),
    )
    .description("d".repeat(300))
    .quantity(5000)
    .device_id("v".repeat(65))
    .payer_id("p".repeat(129))
    .return_url(format!("myshop://return/{}", "x".repeat(2100)))
    .extra_property("blob", "b".repeat(17 * 1024))
    .build()
    .expect("the mock's limits are not the client's")
}

#[test]
fn the_builder_accepts_what_only_the_mock_refuses() {
    for product in ["Topup", "topup", "GIFT.CARD", "top up", &"P".repeat(33)] {
        let req = InitiateRequest::builder(merchant(), "R1", amount(1), product, "S1")
            .build()
            .unwrap_or_else(|e| panic!("{product:?}: {e}"));
        assert_eq!(req.product_code(), product);
    }
    let req = over_the_mocks_limits();
    assert_eq!(req.description().map(|d| d.chars().count()), Some(300));
    assert_eq!(req.store_id().chars().count(), 100);
    for quantity in [0, 1001] {
        InitiateRequest::builder(merchant(), "R1", amount(1), "TOPUP", "S1")
            .quantity(quantity)
            .build()
            .unwrap();
    }
    ConfirmRequest::builder(TX_ID, "R1")
        .confirmation_code("c".repeat(40))
        .build()
        .expect("a confirmation code's length is the service's to judge");
}

/// Answers an initiate with the echo of what it was sent, as a service
/// that takes these values would.
fn echo_initiate(request: &Request) -> wiremock::ResponseTemplate {
    let sent: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
    let data = json!({
        "transactionId": TX_ID,
        "referenceNo": sent["referenceNo"],
        "status": "INITIATED",
        "amount": sent["amount"],
        "currencyCode": "MYR",
        "productCode": sent["productCode"],
        "createdAt": "2026-11-22T08:15:30.123Z",
        "extraProperties": null,
    });
    json(200, ok_envelope(&data.to_string()))
}

#[tokio::test]
async fn values_over_the_mocks_limits_are_sent_as_they_are() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(echo_initiate)
        .mount(&server)
        .await;
    let req = over_the_mocks_limits();
    let expected = serde_json::to_value(&req).unwrap();
    let reply = client(&server).initiate(req).await.unwrap();
    assert_eq!(reply.data().product_code, "Topup");
    let received = server.received_requests().await.unwrap();
    assert_eq!(received.len(), 1);
    let body: Value = serde_json::from_slice(&received[0].body).unwrap();
    assert_eq!(body, expected);
    assert_eq!(body["productCode"], "Topup");
    assert_eq!(body["description"].as_str().map(str::len), Some(300));
    assert_eq!(body["storeId"].as_str().map(str::len), Some(100));
}

#[tokio::test]
async fn the_mock_refuses_them_with_its_own_validation_error() {
    let server = payments_mock_server::MockServer::start().await;
    let client = payments_client::Client::builder(server.base_url())
        .build()
        .unwrap();
    let err = client.initiate(over_the_mocks_limits()).await.unwrap_err();
    let Error::Api(api) = &err else {
        panic!("expected the service's refusal, got {err:?}");
    };
    assert_eq!(api.code, ErrorCode::ValidationError);
    assert_eq!(api.status, 400);
    for field in ["referenceNo", "description", "productCode", "storeId"] {
        assert!(api.message.contains(field), "{field}: {}", api.message);
    }
    assert_eq!(err.outcome(), Outcome::NotCarriedOut);
    assert!(server.transactions().await.is_empty());
}
