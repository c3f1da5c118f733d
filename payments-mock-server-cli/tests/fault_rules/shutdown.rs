//! Hanging faults (`hang`, a trickled `slow-body`) never hold the
//! server's shutdown, at the root or in a sandbox; a trickled body is
//! finished then, not cut.

use std::time::Duration;

use payments_mock_server::{Endpoint, Fault, FaultRule, MockServer};

use super::{initiate_request, raw};
use crate::common::initiate_body;

#[tokio::test]
async fn hang_holds_the_request_without_a_change_and_never_the_shutdown() {
    let server = MockServer::start().await;
    server
        .add_fault_rule(FaultRule::new(Fault::Hang))
        .expect("valid");
    let addr = server.addr();
    let hanging = tokio::spawn(async move {
        raw(addr, &initiate_request("HANG-1"), Duration::from_secs(60)).await
    });
    // The request is journaled (no status) and changed nothing.
    server.answered_reach(1).await;
    assert!(server.transactions().await.is_empty());
    assert_eq!(server.requests().await[0].status, None);
    // The shutdown ends the hang: the connection closes without a byte.
    tokio::time::timeout(Duration::from_secs(30), server.shutdown())
        .await
        .expect("the shutdown is not held by the hanging request");
    let (bytes, closed) = hanging.await.expect("joined");
    assert!(
        closed && bytes.is_empty(),
        "{:?}",
        String::from_utf8_lossy(&bytes)
    );
}

/// A sandbox's hanging faults (`hang`, a trickled `slow-body`) end at the
/// server's shutdown too: each sandbox had its own signal, never given,
/// and a SIGTERM waited up to the ten minutes of the hold. A hang ends
/// unanswered; a trickled body is finished at once.
#[tokio::test]
async fn a_sandboxs_hang_and_slow_body_never_hold_the_shutdown() {
    let server = MockServer::start().await;
    let sandbox = server.sandbox();
    sandbox
        .add_fault_rule(FaultRule::new(Fault::Hang).on(Endpoint::Initiate))
        .expect("valid");
    sandbox
        .add_fault_rule(FaultRule::new(Fault::SlowBody(1)).on(Endpoint::StatusById))
        .expect("valid");
    let client = reqwest::Client::new();
    let hanging = tokio::spawn(
        client
            .post(format!("{}/api/payments/initiate", sandbox.base_url()))
            .json(&initiate_body("HANG-S", "TOPUP"))
            .send(),
    );
    let slow = client
        .get(format!(
            "{}/api/payments/01930000-0000-7000-8000-000000000000/status",
            sandbox.base_url()
        ))
        .send()
        .await
        .expect("the head comes at once");
    let trickle = tokio::spawn(slow.bytes());
    sandbox.answered_reach(2).await;
    tokio::time::timeout(Duration::from_secs(30), server.shutdown())
        .await
        .expect("the shutdown is not held by the sandbox's faults");
    assert!(hanging.await.expect("joined").is_err(), "never answered");
    // The trickled answer is finished: the rest of its body at once.
    let body = trickle.await.expect("joined").expect("the whole body");
    let envelope: serde_json::Value = serde_json::from_slice(&body).expect("whole JSON");
    assert_eq!(envelope["errorCode"], "TRANSACTION_NOT_FOUND", "{envelope}");
}

/// `--latency` (here a minute, its most) and `delay=` end at the shutdown
/// as a hang does: the request is answered then, and the shutdown is not
/// held for the rest of the minute.
#[tokio::test]
async fn latency_and_delay_never_hold_the_shutdown() {
    let minute = Duration::from_secs(60);
    let server = MockServer::builder()
        .latency(minute..=minute)
        .start()
        .await
        .expect("starts");
    // A rule that notes the request (its `met`) before the latency.
    server
        .add_fault_rule(FaultRule::new(Fault::Delay(minute)))
        .expect("valid");
    let addr = server.addr();
    let delayed = tokio::spawn(async move {
        raw(addr, &initiate_request("LATE-1"), Duration::from_secs(60)).await
    });
    tokio::time::timeout(Duration::from_secs(30), async {
        while server.fault_rules()[0].met == 0 {
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("the request arrives");
    tokio::time::timeout(Duration::from_secs(30), server.shutdown())
        .await
        .expect("the shutdown is not held by the latency");
    let (bytes, closed) = delayed.await.expect("joined");
    assert!(closed, "closed after its answer");
    let answer = String::from_utf8_lossy(&bytes);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}
