//! Surviving the worst failure: the service did the work, then answered 500.
//!
//! A `commit-then-error` fault makes the mock store the change and then
//! answer HTTP 500, so the client cannot know whether its call happened.
//! The client retries (initiate and confirm are safe to retry); the service
//! rejects the repeat (`DUPLICATE_REFERENCE_NO`, `TRANSACTION_ALREADY_CONFIRMED`)
//! and the client reads the transaction back and returns it as the result,
//! marked `is_reconciled()`. The example shows this for initiate and for
//! confirm, prints what went over the wire from the mock's request journal,
//! and checks the mock's store: exactly one transaction, paid once. It exits
//! non-zero if any of that does not hold.
//!
//! Run it from the repository root:
//!
//! ```sh
//! cargo run --example retries_and_reconciliation
//! ```
//!
//! It needs the in-process mock (its fault injection, journal and store), so
//! with `PAYMENTS_BASE_URL` set it only says so and exits. A standalone mock
//! takes the same faults per request in the `X-Mock-Fault` header
//! (`X-Mock-Fault: commit-then-error`).

use std::time::Duration;

use anyhow::ensure;
use payments_client::{
    Client, ConfirmRequest, InitiateRequest, MinorAmount, RetryPolicy, TransactionStatus, Uuid,
};
use payments_mock_server::{Fault, MockServer};

const MERCHANT: Uuid = Uuid::from_u128(0x4f9a1a8e_2c36_4d7e_9b1a_0c2a8f3d5e61);
const REFERENCE: &str = "ORDER-2026-0042";

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    if std::env::var_os("PAYMENTS_BASE_URL").is_some() {
        println!("Skipped: this example injects faults into the in-process mock and reads");
        println!("its store, so it cannot run against PAYMENTS_BASE_URL. Unset it to run it.");
        return Ok(());
    }
    let server = MockServer::start().await;
    // The default policy retries twice; a short backoff keeps the demo quick.
    let client = Client::builder(server.base_url())
        .retry_policy(RetryPolicy::default().base_delay(Duration::from_millis(50)))
        .build()?;
    println!("Retries and reconciliation against {}\n", server.base_url());

    println!("1. Initiate a TOPUP of MYR 10.50, reference {REFERENCE};");
    println!("   the mock stores it, then answers 500 (commit-then-error)");
    server.inject_faults([Fault::CommitThenError]);
    let request =
        InitiateRequest::builder(MERCHANT, REFERENCE, MinorAmount::new(1050)?, "TOPUP", "S1")
            .payer_id("60123456789")
            .build()?;
    let initiated = client.initiate(request).await?;
    let tx = initiated.data();
    println!(
        "   -> transaction {} {}, attempts {}, reconciled {}",
        tx.transaction_id,
        tx.status,
        initiated.attempts(),
        initiated.is_reconciled()
    );
    print_wire(&server, initiated.request_id()).await;
    ensure!(initiated.attempts() == 2, "initiate should take 2 attempts");
    ensure!(initiated.is_reconciled(), "initiate should be reconciled");

    println!("2. Confirm it; again the mock confirms, then answers 500");
    server.inject_faults([Fault::CommitThenError]);
    let confirm = ConfirmRequest::builder(&tx.transaction_id, REFERENCE).build()?;
    let confirmed = client.confirm(confirm).await?;
    println!(
        "   -> {} MYR {}, attempts {}, reconciled {}",
        confirmed.data().status,
        confirmed.data().amount,
        confirmed.attempts(),
        confirmed.is_reconciled()
    );
    print_wire(&server, confirmed.request_id()).await;
    ensure!(confirmed.attempts() == 2, "confirm should take 2 attempts");
    ensure!(confirmed.is_reconciled(), "confirm should be reconciled");
    ensure!(confirmed.data().status == TransactionStatus::Successful);

    println!("3. Ask the mock's store what exists for {REFERENCE}");
    let stored: Vec<_> = server
        .transactions()
        .await
        .into_iter()
        .filter(|t| t.reference_no == REFERENCE)
        .collect();
    for t in &stored {
        println!(
            "   - {} {} {} minor units of {}",
            t.transaction_id, t.status, t.amount_minor, t.currency_code
        );
    }
    ensure!(stored.len() == 1, "expected exactly one transaction");
    ensure!(stored[0].transaction_id == tx.transaction_id.as_str());
    ensure!(stored[0].status == "SUCCESSFUL");

    println!("\nDone: two 500s, no error for the caller, one transaction paid once.");
    Ok(())
}

/// Prints the mock's journal of one logical call: every attempt and the
/// read-back share its request id.
async fn print_wire(server: &MockServer, request_id: &str) {
    println!("   on the wire (request id {request_id}):");
    for entry in server
        .requests()
        .await
        .iter()
        .filter(|e| e.request_id == request_id)
    {
        let status = entry
            .status
            .map_or("connection reset".into(), |s| s.to_string());
        let mut line = format!("     {:<4} {} -> {status}", entry.method, entry.path);
        if let Some(code) = &entry.error_code {
            line.push_str(&format!(" {code}"));
        }
        if let Some(fault) = &entry.fault {
            line.push_str(&format!(" (injected {fault})"));
        }
        println!("{line}");
    }
}
