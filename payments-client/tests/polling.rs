//! Helpers on top of the status call: wait_for_final, status_many and
//! status_stream.

mod common;

use std::time::Duration;

use common::*;
use futures::StreamExt;
use payments_client::{Error, ErrorCode, PaymentStatus, Reply, TransactionStatus, WaitOptions};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn quick() -> WaitOptions {
    WaitOptions::default()
        .timeout(Duration::from_secs(5))
        .poll_interval(Duration::from_millis(5))
        .max_poll_interval(Duration::from_millis(20))
}

async fn wait_for_final(
    server: &MockServer,
    options: WaitOptions,
) -> Result<Reply<PaymentStatus>, Error> {
    client(server).wait_for_final(TX_ID, options).await
}

fn not_found() -> ResponseTemplate {
    json(
        404,
        err_envelope("TRANSACTION_NOT_FOUND", "no such transaction"),
    )
}

#[tokio::test]
async fn wait_for_final_polls_until_a_final_state() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(status_answer("CONFIRMED", "1.00", "BILLPAY"))
        .up_to_n_times(2)
        .expect(2)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .respond_with(status_answer("SUCCESSFUL", "1.00", "BILLPAY"))
        .expect(1)
        .mount(&server)
        .await;
    let reply = wait_for_final(&server, quick()).await.unwrap();
    assert_eq!(reply.data().status, TransactionStatus::Successful);
}

#[tokio::test]
async fn wait_for_final_stops_at_expired_and_failed() {
    for status in ["EXPIRED", "FAILED"] {
        let server = MockServer::start().await;
        Mock::given(method("GET"))
            .respond_with(status_answer(status, "1.00", "TOPUP"))
            .expect(1)
            .mount(&server)
            .await;
        let reply = wait_for_final(&server, quick()).await.unwrap();
        assert!(reply.data().status.is_final());
    }
}

#[tokio::test]
async fn wait_for_final_times_out_with_the_last_status() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(status_answer("PENDING", "1.00", "EWALLET"))
        .mount(&server)
        .await;
    let opts = quick().timeout(Duration::from_millis(60));
    let err = wait_for_final(&server, opts).await.unwrap_err();
    let Error::WaitTimeout {
        last: Some(last),
        waited,
    } = &err
    else {
        panic!("expected WaitTimeout with a status, got {err:?}")
    };
    assert_eq!(last.data().status, TransactionStatus::Pending);
    assert!(*waited >= Duration::from_millis(60));
    assert!(err.request_id().is_some());
}

#[tokio::test]
async fn wait_for_final_survives_a_retryable_failure() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(json(503, err_envelope("INTERNAL_ERROR", "busy")))
        .up_to_n_times(3)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .respond_with(status_answer("SUCCESSFUL", "1.00", "TOPUP"))
        .mount(&server)
        .await;
    let reply = wait_for_final(&server, quick()).await.unwrap();
    assert_eq!(reply.data().status, TransactionStatus::Successful);
}

#[tokio::test]
async fn wait_for_final_returns_a_final_error_at_once() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(not_found())
        .expect(1)
        .mount(&server)
        .await;
    let err = wait_for_final(&server, quick()).await.unwrap_err();
    assert_eq!(err.error_code(), Some(&ErrorCode::TransactionNotFound));
}

async fn three_ids_server() -> MockServer {
    let server = MockServer::start().await;
    for id in ["a", "c"] {
        let data = status_data().replace(TX_ID, id);
        Mock::given(method("GET"))
            .and(path(format!("/api/payments/{id}/status")))
            .respond_with(
                json(200, ok_envelope(&data)).set_delay(Duration::from_millis(if id == "a" {
                    50
                } else {
                    0
                })),
            )
            .mount(&server)
            .await;
    }
    Mock::given(method("GET"))
        .and(path("/api/payments/b/status"))
        .respond_with(not_found())
        .mount(&server)
        .await;
    server
}

#[tokio::test]
async fn status_many_keeps_input_order_and_isolates_failures() {
    let server = three_ids_server().await;
    let results = client(&server).status_many(["a", "b", "c"], 3).await;
    assert_eq!(results.len(), 3);
    assert_eq!(results[0].as_ref().unwrap().data().transaction_id, "a");
    assert_eq!(
        results[1].as_ref().unwrap_err().error_code(),
        Some(&ErrorCode::TransactionNotFound)
    );
    assert_eq!(results[2].as_ref().unwrap().data().transaction_id, "c");
}

#[tokio::test]
async fn status_many_with_zero_concurrency_still_works() {
    let server = three_ids_server().await;
    let results = client(&server).status_many(vec!["c".to_owned()], 0).await;
    assert!(results[0].is_ok());
}

#[tokio::test]
async fn status_stream_yields_every_index_as_reads_complete() {
    let server = three_ids_server().await;
    let stream = client(&server).status_stream(["a", "b", "c"], 3);
    let mut seen: Vec<(usize, bool)> = stream.map(|(i, r)| (i, r.is_ok())).collect().await;
    // "a" is delayed, so it does not come first.
    assert_ne!(seen[0].0, 0);
    seen.sort();
    assert_eq!(seen, [(0, true), (1, false), (2, true)]);
}

#[tokio::test]
async fn status_stream_is_static_and_send() {
    let server = three_ids_server().await;
    let stream = client(&server).status_stream(vec!["c".to_owned()], 1);
    let handle = tokio::spawn(async move { stream.collect::<Vec<_>>().await });
    assert_eq!(handle.await.unwrap().len(), 1);
}
