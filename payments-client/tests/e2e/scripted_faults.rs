//! The client against the mock's scripted faults (CONTRACT section 19)
//! over a real socket: a commit followed by silence (`commit-then-hang`),
//! a body cut in half (`truncate`), a gateway's HTML page and a request
//! that is never answered (`hang`). Whatever it meets, exactly one payment.

use std::time::Duration;

use payments_client::{ConfirmRequest, Outcome, RetryPolicy, TransactionStatus};
use payments_mock_server::{Endpoint, Fault, FaultRule, MockServer};

use crate::support::*;

async fn one_payment(server: &MockServer, reference: &str, status: &str) {
    let all = server.transactions().await;
    assert_eq!(all.len(), 1, "exactly one payment: {all:?}");
    assert_eq!(
        (all[0].reference_no.as_str(), all[0].status.as_str()),
        (reference, status)
    );
}

/// A client that gives up on an attempt after `timeout`.
fn impatient(server: &MockServer, timeout: Duration) -> payments_client::Client {
    client_builder(server)
        .timeout(timeout)
        .build()
        .expect("a client")
}

#[tokio::test]
async fn initiate_committed_then_silent_is_reconciled_once() {
    let server = MockServer::start().await;
    server
        .add_fault_rule(FaultRule::new(Fault::CommitThenHang).on(Endpoint::Initiate))
        .expect("a rule");
    let reply = impatient(&server, Duration::from_millis(300))
        .initiate(topup("S-CTH"))
        .await
        .expect("reconciled");
    assert!(reply.is_reconciled(), "{reply:?}");
    assert_eq!(reply.data().status, TransactionStatus::Initiated);
    one_payment(&server, "S-CTH", "INITIATED").await;
    server.shutdown().await;
}

#[tokio::test]
async fn confirm_committed_then_silent_is_reconciled_once() {
    let server = MockServer::start().await;
    let client = impatient(&server, Duration::from_millis(300));
    let tx = client
        .initiate(topup("S-CTH-C"))
        .await
        .expect("initiated")
        .into_data();
    server
        .add_fault_rule(
            FaultRule::new(Fault::CommitThenHang)
                .on(Endpoint::Confirm)
                .transaction(tx.transaction_id.as_str().parse().expect("a uuid")),
        )
        .expect("a rule");
    let confirm = ConfirmRequest::builder(&tx.transaction_id, "S-CTH-C")
        .build()
        .expect("valid");
    let reply = client.confirm(confirm).await.expect("reconciled");
    assert_eq!(reply.data().status, TransactionStatus::Successful);
    one_payment(&server, "S-CTH-C", "SUCCESSFUL").await;
    server.shutdown().await;
}

#[tokio::test]
async fn a_truncated_initiate_is_reconciled_once() {
    let server = MockServer::start().await;
    server
        .add_fault_rule(FaultRule::new(Fault::Truncate).on(Endpoint::Initiate))
        .expect("a rule");
    let reply = client(&server)
        .initiate(topup("S-TR"))
        .await
        .expect("reconciled");
    assert!(reply.is_reconciled(), "{reply:?}");
    one_payment(&server, "S-TR", "INITIATED").await;
    server.shutdown().await;
}

#[tokio::test]
async fn a_truncated_confirm_is_reconciled_once() {
    let server = MockServer::start().await;
    let client = client(&server);
    let tx = client
        .initiate(topup("S-TR-C"))
        .await
        .expect("initiated")
        .into_data();
    server
        .add_fault_rule(FaultRule::new(Fault::Truncate).on(Endpoint::Confirm))
        .expect("a rule");
    let confirm = ConfirmRequest::builder(&tx.transaction_id, "S-TR-C")
        .build()
        .expect("valid");
    let reply = client.confirm(confirm).await.expect("reconciled");
    assert_eq!(reply.data().status, TransactionStatus::Successful);
    one_payment(&server, "S-TR-C", "SUCCESSFUL").await;
    server.shutdown().await;
}

#[tokio::test]
async fn a_gateway_page_and_a_hang_before_the_change_are_retried_once() {
    let server = MockServer::start().await;
    server
        .add_fault_rule(FaultRule::new(Fault::Gateway(502)).on(Endpoint::Initiate))
        .expect("a rule");
    let reply = client(&server)
        .initiate(topup("S-GW"))
        .await
        .expect("retried");
    assert_eq!(reply.attempts(), 2);
    one_payment(&server, "S-GW", "INITIATED").await;
    server
        .add_fault_rule(FaultRule::new(Fault::Hang).on(Endpoint::Initiate))
        .expect("a rule");
    let reply = impatient(&server, Duration::from_millis(300))
        .initiate(topup("S-HANG"))
        .await
        .expect("retried");
    assert_eq!(reply.data().status, TransactionStatus::Initiated);
    assert_eq!(server.transactions().await.len(), 2, "one payment each");
    server.shutdown().await;
}

/// A shop that logs only `{e}` learns that the payment may have been made:
/// a commit answered 500 says the outcome is unknown, a rejection does not.
#[tokio::test]
async fn a_commit_answered_500_says_in_its_message_that_it_may_have_been_carried_out() {
    const UNKNOWN: &str =
        " (outcome unknown: it may have been carried out; look it up before trying again)";
    let server = MockServer::start().await;
    server
        .add_fault_rule(FaultRule::new(Fault::CommitThenError).on(Endpoint::Initiate))
        .expect("a rule");
    let client = client_builder(&server)
        .retry_policy(RetryPolicy::none())
        .build()
        .expect("a client");
    let err = client.initiate(topup("S-CTE-SAID")).await.unwrap_err();
    one_payment(&server, "S-CTE-SAID", "INITIATED").await;
    assert_eq!(err.outcome(), Outcome::Unknown);
    let said = err.to_string();
    assert!(
        said.starts_with("service answered 500 INTERNAL_ERROR") && said.ends_with(UNKNOWN),
        "{said}"
    );
    assert_eq!(said.matches("outcome unknown").count(), 1, "{said}");

    // The same reference again: refused, nothing carried out, said as before.
    let err = client.initiate(topup("S-CTE-SAID")).await.unwrap_err();
    assert_eq!(err.outcome(), Outcome::NotCarriedOut);
    let said = err.to_string();
    assert!(
        said.starts_with("service answered 400 DUPLICATE_REFERENCE_NO")
            && !said.contains("outcome"),
        "{said}"
    );
    server.shutdown().await;
}
