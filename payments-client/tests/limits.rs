//! Durations at their limits: a timeout or deadline of `Duration::MAX`
//! never panics (a clock cannot count that far: it is thirty years), a
//! zero poll interval never polls without pause, and a `Retry-After` of
//! more seconds than a `u64` holds is the longest wait the policy allows,
//! not none.

mod common;

use std::time::{Duration, Instant};

use common::*;
use payments_client::{Client, RetryPolicy, TransactionStatus, WaitOptions};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

async fn answering(status: &str) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(json(
            200,
            ok_envelope(&status_data_with(status, "1.00", "TOPUP")),
        ))
        .mount(&server)
        .await;
    server
}

#[tokio::test]
async fn the_longest_timeouts_and_deadlines_never_panic() {
    let server = answering("SUCCESSFUL").await;
    let client = Client::builder(server.uri())
        .deadline(Duration::MAX)
        .retry_policy(fast_retries().max_retry_after(Duration::MAX))
        .build()
        .expect("a client");
    assert!(client.status(TX_ID).await.is_ok());
    let reply = client
        .wait_for_final(TX_ID, WaitOptions::default().timeout(Duration::MAX))
        .await
        .expect("final");
    assert_eq!(reply.data().status, TransactionStatus::Successful);
}

#[tokio::test]
async fn a_zero_poll_interval_still_pauses_between_polls() {
    let server = answering("CONFIRMED").await;
    let options = WaitOptions::default()
        .timeout(Duration::from_millis(200))
        .poll_interval(Duration::ZERO)
        .max_poll_interval(Duration::ZERO);
    let err = client(&server)
        .wait_for_final(TX_ID, options)
        .await
        .expect_err("never final");
    assert!(
        matches!(err, payments_client::Error::WaitTimeout { .. }),
        "{err:?}"
    );
    // At least 10 ms between polls: at most about 20 in 200 ms, where a
    // loop without pause made hundreds.
    let polls = server.received_requests().await.expect("recorded").len();
    assert!(polls <= 25, "{polls} polls in 200 ms");
}

#[tokio::test]
async fn a_retry_after_too_long_to_count_is_the_policys_longest_wait() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(
            ResponseTemplate::new(503)
                .insert_header("retry-after", "99999999999999999999")
                .set_body_string(err_envelope("SERVICE_UNAVAILABLE", "busy")),
        )
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .respond_with(json(
            200,
            ok_envelope(&status_data_with("SUCCESSFUL", "1.00", "TOPUP")),
        ))
        .mount(&server)
        .await;
    let policy: RetryPolicy = fast_retries().max_retry_after(Duration::from_millis(300));
    let client = Client::builder(server.uri())
        .retry_policy(policy)
        .build()
        .expect("a client");
    let started = Instant::now();
    let reply = client.status(TX_ID).await.expect("the retry succeeds");
    assert_eq!(reply.attempts(), 2);
    // The cap, not the 1-5 ms backoff a missing Retry-After gets.
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "{:?}",
        started.elapsed()
    );
}
