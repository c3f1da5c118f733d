//! `wait_for_final` keeps to its timeout even when a single poll would not
//! (review finding I4): slow answers, retries and `Retry-After` included.

mod common;

use std::time::{Duration, Instant};

use common::*;
use payments_client::{Client, Error, TransactionStatus, WaitOptions};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer};

fn wait(timeout_ms: u64) -> WaitOptions {
    WaitOptions::default()
        .timeout(Duration::from_millis(timeout_ms))
        .poll_interval(Duration::from_millis(20))
        .max_poll_interval(Duration::from_millis(20))
}

/// The default client: 30 s per attempt, two retries, no deadline.
fn patient_client(server: &MockServer) -> Client {
    Client::builder(server.uri()).build().unwrap()
}

/// Waits for [`TX_ID`] with [`patient_client`] for `timeout_ms`; the error
/// the wait ends with, and how long it took.
async fn timed_out_wait(server: &MockServer, timeout_ms: u64) -> (Error, Duration) {
    let started = Instant::now();
    let err = patient_client(server)
        .wait_for_final(TX_ID, wait(timeout_ms))
        .await
        .unwrap_err();
    (err, started.elapsed())
}

#[tokio::test]
async fn a_poll_that_hangs_ends_at_the_wait_timeout() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(json(200, ok_envelope(&status_data())).set_delay(Duration::from_secs(10)))
        .mount(&server)
        .await;
    let (err, took) = timed_out_wait(&server, 300).await;
    assert!(took < Duration::from_secs(2), "took {took:?}");
    let Error::WaitTimeout { waited, last } = err else {
        panic!("expected WaitTimeout, got {err:?}")
    };
    assert!(waited >= Duration::from_millis(300), "{waited:?}");
    assert!(last.is_none());
}

#[tokio::test]
async fn a_slow_later_poll_keeps_the_last_status_read() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(json(200, ok_envelope(&status_data())))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .respond_with(json(200, ok_envelope(&status_data())).set_delay(Duration::from_secs(10)))
        .mount(&server)
        .await;
    let (err, took) = timed_out_wait(&server, 400).await;
    assert!(took < Duration::from_secs(2), "{took:?}");
    let Error::WaitTimeout { last, .. } = err else {
        panic!("expected WaitTimeout, got {err:?}")
    };
    assert_eq!(
        last.map(|r| r.data().status.clone()),
        Some(TransactionStatus::Initiated)
    );
}

#[tokio::test]
async fn a_long_retry_after_does_not_outlast_the_wait() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(
            json(503, err_envelope("INTERNAL_ERROR", "busy")).insert_header("retry-after", "20"),
        )
        .mount(&server)
        .await;
    let (err, took) = timed_out_wait(&server, 300).await;
    assert!(took < Duration::from_secs(2), "{took:?}");
    assert!(matches!(err, Error::WaitTimeout { .. }), "{err:?}");
}
