//! Following a payment that settles later, with `Client::wait_for_final`.
//!
//! A bill payment (`BILLPAY`) is `CONFIRMED` when the confirm returns and
//! becomes `SUCCESSFUL` once the provider settles it, 2 seconds later on the
//! mock's clock. `wait_for_final` polls the status until it is final
//! (`SUCCESSFUL`, `FAILED` or `EXPIRED`) or its timeout passes.
//!
//! Against the in-process mock the example moves the mock's virtual clock
//! forward while the wait is running, so nobody really waits 2 seconds; the
//! same trick makes your own tests fast. It then shows a wait that gives up,
//! and what `Error::WaitTimeout` carries.
//!
//! Run it from the repository root:
//!
//! ```sh
//! cargo run --example wait_for_completion
//! ```
//!
//! With `PAYMENTS_BASE_URL` set it follows a payment on that service instead,
//! waiting in real time (the clock of a remote service cannot be moved).

use std::env;
use std::time::{Duration, Instant};

use payments_client::{
    Client, ConfirmRequest, Currency, Error, InitiateRequest, MinorAmount, TransactionId, Uuid,
    WaitOptions,
};
use payments_mock_server::MockServer;

/// Any merchant will do for the mock; a real service knows yours.
const DEMO_MERCHANT: Uuid = Uuid::from_u128(0x4f9a1a8e_2c36_4d7e_9b1a_0c2a8f3d5e61);

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let (server, base_url) = match env::var("PAYMENTS_BASE_URL") {
        Ok(url) => (None, url),
        Err(_) => {
            let server = MockServer::start().await;
            let url = server.base_url();
            (Some(server), url)
        }
    };
    let mut builder = Client::builder(&base_url);
    if let Ok(key) = env::var("PAYMENTS_API_KEY") {
        builder = builder.api_key(key);
    }
    let client = builder.build()?;
    let merchant = match env::var("PAYMENTS_MERCHANT_ID") {
        Ok(id) => id.parse()?,
        Err(_) => DEMO_MERCHANT,
    };
    let run = &Uuid::new_v4().simple().to_string()[..8];
    println!("Waiting for completion against {base_url}\n");

    println!("1. Pay a bill of MYR 150.00 (initiate, then confirm)");
    let id = pay_bill(&client, merchant, &format!("BILL-{run}-1")).await?;

    // Poll quickly: every 100 ms at first, doubling up to 1 s.
    let options = WaitOptions::default()
        .timeout(Duration::from_secs(30))
        .poll_interval(Duration::from_millis(100))
        .max_poll_interval(Duration::from_secs(1));
    println!("2. Wait for the final state (polling from every 100 ms, 30 s at most)");
    let started = Instant::now();
    let wait = client.wait_for_final(&id, options);
    let settled = match &server {
        Some(server) => {
            // While the client waits, fast-forward the mock's clock past the
            // settle delay.
            let fast_forward = async {
                tokio::time::sleep(Duration::from_millis(250)).await;
                server.advance_clock(Duration::from_secs(2)).await;
                println!("   (meanwhile: the mock's clock moved forward 2 s)");
            };
            tokio::join!(wait, fast_forward).0?
        }
        None => wait.await?,
    };
    let status = settled.data();
    println!(
        "   -> {} after {} ms of real time; amount MYR {}, settled at {}",
        status.status,
        started.elapsed().as_millis(),
        status.amount,
        status
            .last_modified_at
            .map_or("-".into(), |t| t.to_string())
    );

    println!("3. Pay another bill, but wait at most 300 ms");
    let id = pay_bill(&client, merchant, &format!("BILL-{run}-3")).await?;
    let impatient = WaitOptions::default()
        .timeout(Duration::from_millis(300))
        .poll_interval(Duration::from_millis(100));
    match client.wait_for_final(&id, impatient).await {
        Ok(reply) => println!("   -> already final: {}", reply.data().status),
        Err(Error::WaitTimeout { waited, last }) => {
            let last = last.map_or("no status read".into(), |r| r.data().status.to_string());
            println!(
                "   -> gave up after {} ms; last status seen {last}",
                waited.as_millis()
            );
            println!("      (not a failure of the payment: ask again later)");
        }
        Err(e) => return Err(e.into()),
    }

    println!("\nDone.");
    Ok(())
}

/// Initiates and confirms a MYR 150.00 bill payment; returns its id.
async fn pay_bill(
    client: &Client,
    merchant: Uuid,
    reference: &str,
) -> anyhow::Result<TransactionId> {
    let amount = MinorAmount::new(15_000)?;
    let request = InitiateRequest::builder(merchant, reference, amount, "BILLPAY", "STORE-1")
        .currency(Currency::MYR)
        .payer_id("ACC-778899")
        .build()?;
    let initiated = client.initiate(request).await?.into_data();
    println!(
        "   initiate {reference} -> {} {}",
        initiated.transaction_id, initiated.status
    );
    let confirm = ConfirmRequest::builder(&initiated.transaction_id, reference).build()?;
    let confirmed = client.confirm(confirm).await?.into_data();
    println!(
        "   confirm -> {}, provider reference {}",
        confirmed.status,
        confirmed.provider_reference.as_deref().unwrap_or("-")
    );
    Ok(initiated.transaction_id)
}
