//! Handling failures: what each error class means and what to do about it.
//!
//! Every call returns `payments_client::Error`. Match on its class
//! (`Error::InvalidInput`, `Error::Api`, `Error::Transport`, ...), on the
//! service's `ErrorCode` inside `Error::Api`, and ask the error itself:
//! `is_retryable()` (could the same call succeed later?), `outcome()` (could
//! the service have carried it out?) and `request_id()` (for the logs and
//! support). This example provokes, in turn:
//!
//! 1. a request the client rejects before sending, listing every problem;
//! 2. a request the client accepts but the service rejects with
//!    `VALIDATION_ERROR`, listing every broken rule;
//! 3. an unknown transaction (`TRANSACTION_NOT_FOUND`);
//! 4. a reused reference (`DUPLICATE_REFERENCE_NO`) and a second confirm
//!    (`TRANSACTION_ALREADY_CONFIRMED`);
//! 5. a server failure (HTTP 500) whose outcome is unknown;
//! 6. an unreachable service (a transport error).
//!
//! Run it from the repository root:
//!
//! ```sh
//! cargo run --example error_handling
//! ```
//!
//! It starts the mock service in-process. With `PAYMENTS_BASE_URL` set it uses
//! that service instead and skips step 5, which needs the mock's fault
//! injection.

use std::env;
use std::time::Duration;

use payments_client::{
    Client, ConfirmRequest, Currency, Error, ErrorCode, InitiateRequest, MinorAmount, Outcome,
    RetryPolicy, Uuid, money,
};
use payments_mock_server::{Fault, MockServer};

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
    let api_key = env::var("PAYMENTS_API_KEY").ok();
    let mut builder = Client::builder(&base_url);
    if let Some(key) = &api_key {
        builder = builder.api_key(key.as_str());
    }
    let client = builder.build()?;
    let merchant = match env::var("PAYMENTS_MERCHANT_ID") {
        Ok(id) => id.parse()?,
        Err(_) => DEMO_MERCHANT,
    };
    let run = &Uuid::new_v4().simple().to_string()[..8];
    let amount = MinorAmount::new(1050)?;
    println!("Error handling against {base_url}\n");

    println!("1. Build a request with four mistakes");
    let err = InitiateRequest::builder(merchant, " ORDER-1 ", amount, "top up", "")
        .return_url("ftp://shop.example/done")
        .build()
        .expect_err("the request breaks four rules");
    if let Error::InvalidInput(problems) = &err {
        for problem in problems.errors() {
            println!("   - {}: {}", problem.field, problem.message);
        }
    }
    explain(&err);
    // Money conversions are checked too: MYR has two decimal places.
    let too_precise = money::to_minor("10.505".parse()?, Currency::MYR).expect_err("3 decimals");
    println!("   and 10.505 MYR -> {too_precise}");

    println!("\n2. Send what the client accepts but the service rejects:");
    println!("   a GIFTCARD of 50 cards (the product allows 10), and");
    println!("   then a product LOTTERY the catalogue does not offer");
    let request = InitiateRequest::builder(
        merchant,
        format!("ORDER-{run}-2"),
        amount,
        "GIFTCARD",
        "STORE-1",
    )
    .quantity(50)
    .build()?;
    let err = client.initiate(request).await.expect_err("over the limit");
    explain(&err);
    let request = InitiateRequest::builder(
        merchant,
        format!("ORDER-{run}-3"),
        amount,
        "LOTTERY",
        "STORE-1",
    )
    .build()?;
    let err = client.initiate(request).await.expect_err("not offered");
    explain(&err);

    println!("\n3. Look up a transaction that does not exist");
    let err = client
        .status("no-such-transaction")
        .await
        .expect_err("unknown id");
    explain(&err);

    let reference = format!("ORDER-{run}-4");
    println!("\n4. Reuse reference {reference}, then confirm twice");
    let topup = InitiateRequest::builder(merchant, &reference, amount, "TOPUP", "STORE-1")
        .payer_id("60123456789")
        .build()?;
    let first = client.initiate(topup.clone()).await?.into_data();
    println!(
        "   first initiate  -> {} {}",
        first.transaction_id, first.status
    );
    let err = client.initiate(topup).await.expect_err("reference reused");
    explain(&err);
    let confirm = ConfirmRequest::builder(&first.transaction_id, &reference).build()?;
    let done = client.confirm(confirm.clone()).await?.into_data();
    println!("   first confirm   -> {}", done.status);
    let err = client.confirm(confirm).await.expect_err("second confirm");
    explain(&err);

    println!("\n5. The service fails with HTTP 500 (and this client does not retry)");
    if let Some(server) = &server {
        let mut builder = Client::builder(&base_url).retry_policy(RetryPolicy::none());
        if let Some(key) = &api_key {
            builder = builder.api_key(key.as_str());
        }
        let no_retries = builder.build()?;
        server.inject_faults([Fault::InternalError]);
        let reference = format!("ORDER-{run}-5");
        let request = InitiateRequest::builder(merchant, &reference, amount, "TOPUP", "STORE-1")
            .payer_id("60123456789")
            .build()?;
        let err = no_retries
            .initiate(request)
            .await
            .expect_err("injected 500");
        explain(&err);
        // Outcome::Unknown: find out by reference before paying again.
        match client.status_by_reference(&reference, Some(merchant)).await {
            Ok(found) => println!("   by reference: it was created, {}", found.data().status),
            Err(e) if e.error_code() == Some(&ErrorCode::TransactionNotFound) => {
                println!("   by reference: not found, so nothing was created; safe to send again");
            }
            Err(e) => return Err(e.into()),
        }
    } else {
        println!(
            "   skipped: injecting faults needs the in-process mock (unset PAYMENTS_BASE_URL)"
        );
    }

    println!("\n6. Call a port where nothing listens");
    let closed = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?;
    let offline = Client::builder(format!("http://{closed}"))
        .connect_timeout(Duration::from_secs(2))
        .retry_policy(RetryPolicy::none())
        .build()?;
    let err = offline.status("any").await.expect_err("nothing listens");
    explain(&err);

    println!("\nDone: every failure above was classified without parsing a message.");
    Ok(())
}

/// Prints what a caller can learn from an error without parsing strings.
fn explain(err: &Error) {
    let class = match err {
        Error::InvalidInput(problems) => {
            format!("InvalidInput, {} problem(s)", problems.errors().len())
        }
        Error::Money(e) => format!("Money: {e}"),
        Error::Api(api) => format!("Api: HTTP {} {}", api.status, api.code),
        Error::Transport { kind, .. } => format!("Transport: {kind}"),
        Error::UnexpectedResponse { status, .. } => format!("UnexpectedResponse: HTTP {status}"),
        other => format!("other: {other}"),
    };
    println!("   error       {class}");
    if let Some(api) = err.as_api() {
        // VALIDATION_ERROR lists every broken rule, joined by "; ".
        for (i, rule) in api.message.split("; ").enumerate() {
            println!("   {:<11} {rule}", if i == 0 { "message" } else { "" });
        }
    }
    println!(
        "   retryable   {}, outcome {:?}, request id {}",
        err.is_retryable(),
        err.outcome(),
        err.request_id().unwrap_or("- (nothing sent)")
    );
    println!("   what to do  {}", advice(err));
}

/// The decision an application makes from the class, code and outcome.
fn advice(err: &Error) -> &'static str {
    match err {
        Error::InvalidInput(_) | Error::Money(_) => "fix the request; nothing was sent",
        Error::Api(api) => match api.code {
            ErrorCode::ValidationError => "fix every rule the service listed",
            ErrorCode::TransactionNotFound => "check the id, reference and merchant",
            ErrorCode::DuplicateReferenceNo => "look the reference up instead of paying twice",
            ErrorCode::TransactionAlreadyConfirmed => "already done: read its status",
            _ if err.is_retryable() && err.outcome() == Outcome::Unknown => {
                "it may have happened: retry (safe) or look it up by reference"
            }
            _ if err.is_retryable() => "try again later",
            _ => "not retryable: report it with the request id",
        },
        Error::Transport { .. } if err.outcome() == Outcome::NotCarriedOut => {
            "nothing was sent: retry when the service is reachable"
        }
        Error::Transport { .. } => "it may have happened: retry (safe) or look it up by reference",
        _ => "report it with the request id",
    }
}
