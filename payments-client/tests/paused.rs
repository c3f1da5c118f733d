//! Waiting without sleeping: Tokio's paused clock jumps over backoff,
//! `Retry-After` and poll intervals, so these tests take no real time.

mod common;

use std::time::Duration;

use common::*;
use payments_client::{Client, RetryPolicy, TransactionStatus, WaitOptions};
use tokio::time::Instant;

fn paused_client(base: &str, retry: RetryPolicy) -> Client {
    // No per-attempt timer: with paused time only the client's own sleeps
    // should move the clock.
    Client::builder(base)
        .retry_policy(retry)
        .no_timeout()
        .build()
        .unwrap()
}

#[tokio::test(start_paused = true)]
async fn a_429_waits_for_its_retry_after() {
    let limited = raw_response(
        429,
        "retry-after: 30\r\n",
        &err_envelope("RATE_LIMITED", "slow down"),
    );
    let ok = raw_response(200, "", &ok_envelope(&status_data()));
    let (url, _) = scripted_server(vec![Some(limited), Some(ok)]).await;
    let started = Instant::now();
    let reply = paused_client(&url, RetryPolicy::default())
        .status(TX_ID)
        .await
        .unwrap();
    assert_eq!(reply.attempts(), 2);
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_secs(30) && waited < Duration::from_secs(31),
        "{waited:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn retry_after_beyond_the_cap_waits_only_the_cap() {
    let limited = raw_response(
        429,
        "retry-after: 3600\r\n",
        &err_envelope("RATE_LIMITED", "slow down"),
    );
    let ok = raw_response(200, "", &ok_envelope(&status_data()));
    let (url, _) = scripted_server(vec![Some(limited), Some(ok)]).await;
    let started = Instant::now();
    let policy = RetryPolicy::default().max_retry_after(Duration::from_secs(20));
    paused_client(&url, policy).status(TX_ID).await.unwrap();
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_secs(20) && waited < Duration::from_secs(21),
        "{waited:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn backoff_stays_under_its_ceilings() {
    let failing = raw_response(503, "", &err_envelope("INTERNAL_ERROR", "busy"));
    let (url, count) = scripted_server(vec![Some(failing)]).await;
    let policy = RetryPolicy::default()
        .max_retries(4)
        .base_delay(Duration::from_secs(1))
        .max_delay(Duration::from_secs(4));
    let started = Instant::now();
    paused_client(&url, policy).status(TX_ID).await.unwrap_err();
    // Ceilings 1 + 2 + 4 + 4 seconds of full jitter.
    assert!(
        started.elapsed() <= Duration::from_secs(11),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(count.load(std::sync::atomic::Ordering::SeqCst), 5);
}

#[tokio::test(start_paused = true)]
async fn wait_for_final_doubles_its_poll_interval() {
    let pending = raw_response(
        200,
        "",
        &ok_envelope(&status_data_with("CONFIRMED", "1.00", "BILLPAY")),
    );
    let done = raw_response(
        200,
        "",
        &ok_envelope(&status_data_with("SUCCESSFUL", "1.00", "BILLPAY")),
    );
    let (url, count) =
        scripted_server(vec![Some(pending.clone()), Some(pending), Some(done)]).await;
    let started = Instant::now();
    let opts = WaitOptions::default()
        .poll_interval(Duration::from_secs(1))
        .timeout(Duration::from_secs(60));
    let reply = paused_client(&url, RetryPolicy::none())
        .wait_for_final(TX_ID, opts)
        .await
        .unwrap();
    assert_eq!(reply.data().status, TransactionStatus::Successful);
    assert_eq!(count.load(std::sync::atomic::Ordering::SeqCst), 3);
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_secs(3) && waited < Duration::from_secs(4),
        "{waited:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn wait_for_final_gives_up_at_its_timeout() {
    let pending = raw_response(
        200,
        "",
        &ok_envelope(&status_data_with("PENDING", "1.00", "EWALLET")),
    );
    let (url, _) = scripted_server(vec![Some(pending)]).await;
    let started = Instant::now();
    let opts = WaitOptions::default().timeout(Duration::from_secs(45));
    let err = paused_client(&url, RetryPolicy::none())
        .wait_for_final(TX_ID, opts)
        .await
        .unwrap_err();
    assert!(
        matches!(err, payments_client::Error::WaitTimeout { .. }),
        "{err:?}"
    );
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_secs(45) && waited < Duration::from_secs(46),
        "{waited:?}"
    );
}
