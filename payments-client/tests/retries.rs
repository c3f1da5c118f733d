//! CONTRACT section 12: what is retried, how often, and with which request
//! id. Waiting times are checked under paused time in `paused.rs`.

mod common;

use std::time::Duration;

use common::*;
use payments_client::error::TransportKind;
use payments_client::{Client, ErrorCode, Outcome, RetryPolicy};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

#[tokio::test]
async fn a_500_then_200_succeeds_on_the_second_attempt() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(json(500, err_envelope("INTERNAL_ERROR", "boom")))
        .up_to_n_times(1)
        .expect(1)
        .named("first attempt fails")
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .respond_with(json(200, ok_envelope(&status_data())))
        .expect(1)
        .named("retry succeeds")
        .mount(&server)
        .await;
    let reply = client(&server).status(TX_ID).await.unwrap();
    assert_eq!(reply.attempts(), 2);
    let ids = request_ids(&server).await;
    assert_eq!(ids.len(), 2);
    assert_eq!(ids[0], ids[1], "one request id for every attempt");
    assert_eq!(ids[0], reply.request_id());
}

#[tokio::test]
async fn three_503s_give_up_after_two_retries_with_the_last_error() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(json(503, err_envelope("INTERNAL_ERROR", "unavailable")))
        .expect(3)
        .mount(&server)
        .await;
    let err = client(&server).status(TX_ID).await.unwrap_err();
    assert_eq!(err.http_status(), Some(503));
    assert_eq!(err.error_code(), Some(&ErrorCode::InternalError));
    let ids = request_ids(&server).await;
    assert!(ids.iter().all(|id| Some(id.as_str()) == err.request_id()));
}

#[tokio::test]
async fn a_400_is_never_retried() {
    let err = status_error_with(
        Mock::given(method("GET"))
            .respond_with(json(400, err_envelope("INVALID_TRANSACTION_ID", "empty")))
            .expect(1),
    )
    .await;
    assert!(!err.is_retryable());
}

#[tokio::test]
async fn retry_policy_none_makes_one_attempt() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(json(500, err_envelope("INTERNAL_ERROR", "boom")))
        .expect(1)
        .mount(&server)
        .await;
    let client = Client::builder(server.uri())
        .retry_policy(RetryPolicy::none())
        .build()
        .unwrap();
    client.status(TX_ID).await.unwrap_err();
}

#[tokio::test]
async fn more_retries_make_more_attempts() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(json(502, err_envelope("INTERNAL_ERROR", "bad gateway")))
        .expect(6)
        .mount(&server)
        .await;
    let client = Client::builder(server.uri())
        .retry_policy(fast_retries().max_retries(5))
        .build()
        .unwrap();
    client.status(TX_ID).await.unwrap_err();
}

#[tokio::test]
async fn a_429_with_retry_after_zero_retries_at_once() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(
            json(429, err_envelope("RATE_LIMITED", "slow down")).insert_header("Retry-After", "0"),
        )
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .respond_with(json(200, ok_envelope(&status_data())))
        .mount(&server)
        .await;
    let reply = client(&server).status(TX_ID).await.unwrap();
    assert_eq!(reply.attempts(), 2);
}

#[tokio::test]
async fn a_long_retry_after_is_capped() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(
            json(429, err_envelope("RATE_LIMITED", "slow down"))
                .insert_header("Retry-After", "3600"),
        )
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .respond_with(json(200, ok_envelope(&status_data())))
        .mount(&server)
        .await;
    let client = Client::builder(server.uri())
        .retry_policy(fast_retries().max_retry_after(Duration::from_millis(10)))
        .build()
        .unwrap();
    let started = std::time::Instant::now();
    client.status(TX_ID).await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn the_retry_after_of_a_429_is_reported() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(
            json(429, err_envelope("RATE_LIMITED", "slow down")).insert_header("Retry-After", "7"),
        )
        .mount(&server)
        .await;
    let client = Client::builder(server.uri())
        .retry_policy(RetryPolicy::none())
        .build()
        .unwrap();
    let err = client.status(TX_ID).await.unwrap_err();
    assert_eq!(err.retry_after(), Some(Duration::from_secs(7)));
    assert_eq!(err.outcome(), Outcome::NotCarriedOut);
}

#[tokio::test]
async fn a_timeout_is_retried() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(json(200, ok_envelope(&status_data())).set_delay(Duration::from_secs(3)))
        .up_to_n_times(1)
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .respond_with(json(200, ok_envelope(&status_data())))
        .expect(1)
        .mount(&server)
        .await;
    let client = Client::builder(server.uri())
        .retry_policy(fast_retries())
        .timeout(Duration::from_millis(200))
        .build()
        .unwrap();
    let reply = client.status(TX_ID).await.unwrap();
    assert_eq!(reply.attempts(), 2);
}

#[tokio::test]
async fn timeouts_on_every_attempt_end_in_a_timeout_error() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200).set_delay(Duration::from_secs(3)))
        .mount(&server)
        .await;
    let client = Client::builder(server.uri())
        .retry_policy(fast_retries().max_retries(1))
        .timeout(Duration::from_millis(100))
        .build()
        .unwrap();
    let err = client.status(TX_ID).await.unwrap_err();
    assert_eq!(
        transport_kind(&err),
        Some(TransportKind::Timeout),
        "{err:?}"
    );
    assert_eq!(err.outcome(), Outcome::Unknown);
}

#[tokio::test]
async fn the_deadline_bounds_the_whole_call() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200).set_delay(Duration::from_secs(3)))
        .mount(&server)
        .await;
    let client = Client::builder(server.uri())
        .retry_policy(fast_retries().max_retries(10))
        .timeout(Duration::from_secs(10))
        .deadline(Duration::from_millis(300))
        .build()
        .unwrap();
    let started = std::time::Instant::now();
    let err = client.status(TX_ID).await.unwrap_err();
    assert_eq!(
        transport_kind(&err),
        Some(TransportKind::Timeout),
        "{err:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "took {:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_dropped_connection_then_success_recovers() {
    let (url, connections) = flaky_server(1, ok_envelope(&status_data())).await;
    let reply = client_for(&url).status(TX_ID).await.unwrap();
    assert_eq!(reply.attempts(), 2);
    assert_eq!(connections.load(std::sync::atomic::Ordering::SeqCst), 2);
}

#[tokio::test]
async fn initiate_and_confirm_are_retried_too() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(json(503, err_envelope("INTERNAL_ERROR", "unavailable")))
        .expect(3)
        .mount(&server)
        .await;
    let c = client(&server);
    let req = payments_client::ConfirmRequest::builder(TX_ID, "INV-1")
        .build()
        .unwrap();
    assert_eq!(c.confirm(req).await.unwrap_err().http_status(), Some(503));
}
