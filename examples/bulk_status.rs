//! Many calls at once: create 1,000 transactions, then read all of them back.
//!
//! `Client` is cheap to clone and shares one connection pool, so concurrent
//! calls are a stream with `buffer_unordered`. Collect each call's own
//! result, not the first error (`try_collect` drops the initiates still in
//! flight, whose outcome is then unknown, and the ids already created):
//! an initiate that failed with an unknown outcome (`outcome()` is
//! `Outcome::Unknown`: a 500, a gateway's page, a dropped connection) may
//! have created its transaction, so look it up by its referenceNo, and
//! send it again under the same reference only if it is not there. Step 1
//! shows both with two scripted faults (in-process mock only).
//!
//! For reads the client has two helpers that bound concurrency for you:
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
//! creates and reads the transactions on that service instead (with
//! `PAYMENTS_API_KEY`, `PAYMENTS_MERCHANT_ID` if it needs them).

use std::collections::BTreeMap;
use std::env;
use std::time::Instant;

use futures::{StreamExt, stream};
use payments_client::{
    Client, Error, ErrorCode, InitiateRequest, MinorAmount, Outcome, TransactionId, Uuid,
};
use payments_mock_server::{Endpoint, Fault, FaultRule, MockServer};

/// Any merchant will do for the mock; a real service knows yours.
const DEMO_MERCHANT: Uuid = Uuid::from_u128(0x4f9a1a8e_2c36_4d7e_9b1a_0c2a8f3d5e61);
const COUNT: usize = 1_000;
const CONCURRENCY: usize = 32;
const PROGRESS_EVERY: usize = 250;

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
    println!("Bulk status against {base_url}\n");

    println!("1. Create {COUNT} TOPUP transactions, {CONCURRENCY} at a time");
    let reference = |i: usize| format!("BULK-{run}-{i:04}");
    if let Some(server) = &server {
        // Two initiates fail on every attempt (the client's first and its
        // two retries): one after committing, one before.
        for (i, fault) in [(100, Fault::CommitThenError), (200, Fault::Gateway(503))] {
            let rule = FaultRule::new(fault)
                .on(Endpoint::Initiate)
                .reference(reference(i))
                .times(3);
            server.add_fault_rule(rule)?;
        }
    }
    let started = Instant::now();
    // Every initiate's own result, whatever the others did.
    let results: Vec<(usize, Result<TransactionId, Error>)> = stream::iter(1..=COUNT)
        .map(|i| {
            let client = client.clone();
            let reference = reference(i);
            async move { (i, initiate(&client, merchant, &reference, i).await) }
        })
        .buffer_unordered(CONCURRENCY)
        .collect()
        .await;
    let mut ids = Vec::with_capacity(COUNT);
    let mut failed = Vec::new();
    for (i, result) in results {
        match result {
            Ok(id) => ids.push(id),
            Err(e) => failed.push((i, e)),
        }
    }
    println!(
        "   -> {} created, {} failed, in {} ms",
        ids.len(),
        failed.len(),
        started.elapsed().as_millis()
    );
    let mut lost = 0;
    for (i, err) in failed {
        let reference = reference(i);
        println!("   ! {reference}: {err}");
        if err.outcome() != Outcome::Unknown {
            // Not carried out: nothing exists; fix it or send it later.
            lost += 1;
            continue;
        }
        // It may exist: look it up before sending it again.
        match client.status_by_reference(&reference, Some(merchant)).await {
            Ok(found) => {
                let found = found.into_data();
                println!(
                    "     it was created: {} {}",
                    found.transaction_id, found.status
                );
                ids.push(found.transaction_id);
            }
            Err(e) if e.error_code() == Some(&ErrorCode::TransactionNotFound) => {
                // Never created: the same reference again is safe.
                let id = initiate(&client, merchant, &reference, i).await?;
                println!("     it was not created; sent again: {id}");
                ids.push(id);
            }
            Err(e) => {
                println!("     still unknown ({e}): look it up later");
                lost += 1;
            }
        }
    }
    anyhow::ensure!(
        lost == 0 && ids.len() == COUNT,
        "{lost} initiates not settled"
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

/// One TOPUP of MYR 1.01, 1.02, ... (so the amounts differ) under `reference`.
async fn initiate(
    client: &Client,
    merchant: Uuid,
    reference: &str,
    i: usize,
) -> Result<TransactionId, Error> {
    let amount = MinorAmount::new(100 + i as u64)?;
    let request = InitiateRequest::builder(merchant, reference, amount, "TOPUP", "S1")
        .payer_id("60123456789")
        .build()?;
    Ok(client.initiate(request).await?.into_data().transaction_id)
}
