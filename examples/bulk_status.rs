//! Many calls at once: create 1,000 transactions, then read all of them back.
//!
//! `Client` is cheap to clone and shares one connection pool, so concurrent
//! calls need nothing more than a stream with `buffer_unordered`. For reads
//! the client has two helpers that bound concurrency for you:
//! `status_many(ids, n)` returns every result in input order, and
//! `status_stream(ids, n)` yields `(index, result)` as each read completes,
//! which this example uses to print progress. It ends with the total time and
//! the look-up rate.
//!
//! Run it from the repository root:
//!
//! ```sh
//! cargo run --example bulk_status
//! ```
//!
//! It starts the mock service in-process; with `PAYMENTS_BASE_URL` set it
//! creates and reads the transactions on that service instead.

use std::collections::BTreeMap;
use std::env;
use std::time::Instant;

use futures::{StreamExt, TryStreamExt, stream};
use payments_client::{Client, InitiateRequest, MinorAmount, TransactionId, Uuid};
use payments_mock_server::MockServer;

/// Any merchant will do for the mock; a real service knows yours.
const DEMO_MERCHANT: Uuid = Uuid::from_u128(0x4f9a1a8e_2c36_4d7e_9b1a_0c2a8f3d5e61);
const COUNT: usize = 1_000;
const CONCURRENCY: usize = 32;
const PROGRESS_EVERY: usize = 250;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let (_server, base_url) = match env::var("PAYMENTS_BASE_URL") {
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
    println!("Bulk status against {base_url}\n");

    println!("1. Create {COUNT} TOPUP transactions, {CONCURRENCY} at a time");
    let started = Instant::now();
    let ids: Vec<TransactionId> = stream::iter(1..=COUNT)
        .map(|i| {
            let client = client.clone();
            async move {
                // MYR 1.01, 1.02, ... so the amounts differ.
                let amount = MinorAmount::new(100 + i as u64)?;
                let reference = format!("BULK-{run}-{i:04}");
                let request = InitiateRequest::builder(merchant, reference, amount, "TOPUP", "S1")
                    .payer_id("60123456789")
                    .build()?;
                let reply = client.initiate(request).await?;
                anyhow::Ok(reply.into_data().transaction_id)
            }
        })
        .buffer_unordered(CONCURRENCY)
        .try_collect()
        .await?;
    println!(
        "   -> {} created in {} ms",
        ids.len(),
        started.elapsed().as_millis()
    );

    println!("2. Read all {COUNT} back by id, {CONCURRENCY} at a time");
    let started = Instant::now();
    let mut results = client.status_stream(&ids, CONCURRENCY);
    let mut by_status = BTreeMap::<String, usize>::new();
    let mut failures = 0;
    let mut done = 0;
    while let Some((index, result)) = results.next().await {
        match result {
            Ok(reply) => {
                *by_status
                    .entry(reply.data().status.to_string())
                    .or_default() += 1
            }
            Err(e) => {
                failures += 1;
                eprintln!("   ! {}: {e}", ids[index]);
            }
        }
        done += 1;
        if done % PROGRESS_EVERY == 0 {
            println!("   {done:>5} / {COUNT}");
        }
    }
    let elapsed = started.elapsed();
    // A float is fine for a rate; it never goes near money.
    let rate = done as f64 / elapsed.as_secs_f64();
    println!(
        "   -> {done} look-ups in {} ms: {rate:.0} look-ups/s",
        elapsed.as_millis()
    );
    for (status, n) in &by_status {
        println!("      {status}: {n}");
    }
    anyhow::ensure!(failures == 0, "{failures} look-ups failed");

    println!("\nDone.");
    Ok(())
}
