//! Fixtures shared by the end-to-end topics.

use std::time::Duration;

use payments_client::model::InitiateRequestBuilder;
use payments_client::{Client, Currency, InitiateRequest, MinorAmount, RetryPolicy, Uuid};
use payments_mock_server::MockServer;

pub const MERCHANT: &str = "4f9a1a8e-2c36-4d7e-9b1a-0c2a8f3d5e61";
pub const OTHER_MERCHANT: &str = "b7e2c0d4-91a3-4f55-8e0b-2d6c7a1f9e30";

pub fn merchant() -> Uuid {
    Uuid::parse_str(MERCHANT).expect("literal uuid")
}

pub fn other_merchant() -> Uuid {
    Uuid::parse_str(OTHER_MERCHANT).expect("literal uuid")
}

/// Retries with tiny backoff so fault tests stay fast.
pub fn fast_retries() -> RetryPolicy {
    RetryPolicy::default()
        .base_delay(Duration::from_millis(1))
        .max_delay(Duration::from_millis(5))
}

/// A client of `server` with fast retries and a 5 s attempt timeout.
pub fn client(server: &MockServer) -> Client {
    client_builder(server).build().expect("valid test client")
}

pub fn client_builder(server: &MockServer) -> payments_client::ClientBuilder {
    Client::builder(server.base_url())
        .retry_policy(fast_retries())
        .timeout(Duration::from_secs(5))
}

/// An initiate request for `merchant`, ready for optional fields.
pub fn request_for(
    merchant: Uuid,
    reference: &str,
    minor: u64,
    product: &str,
) -> InitiateRequestBuilder {
    InitiateRequest::builder(
        merchant,
        reference,
        MinorAmount::new(minor).expect("positive amount"),
        product,
        "STORE-1",
    )
}

/// An initiate request for [`merchant`] in MYR.
pub fn request(reference: &str, minor: u64, product: &str) -> InitiateRequestBuilder {
    request_for(merchant(), reference, minor, product).currency(Currency::MYR)
}

/// A TOPUP of 150.00 MYR.
pub fn topup(reference: &str) -> InitiateRequest {
    request(reference, 15000, "TOPUP")
        .payer_id("60123456789")
        .build()
        .expect("valid request")
}
