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
//! 6. a gateway's HTML page (HTTP 502) instead of the service's answer;
//! 7. a call that commits, fails with 500, and whose retries are then
//!    rate limited (429): the last attempt alone would mean "not carried
//!    out", but the first one was ambiguous;
//! 8. an unreachable service (a transport error);
//! 9. a service that refuses the TLS handshake (a trust problem).
//!
//! Whenever `outcome()` is `Outcome::Unknown`, whatever the class, the
//! payment may have happened: look it up by your referenceNo before paying
//! again, and never pay again under a new reference (a retry under the
//! same reference is safe: the service refuses a second payment with
//! `DUPLICATE_REFERENCE_NO`).
//!
//! Run it from the repository root:
//!
//! ```sh
//! cargo run --example error_handling
//! ```
//!
//! It starts the mock service in-process. With `PAYMENTS_BASE_URL` set it uses
//! that service instead and skips steps 5 to 7, which need the mock's fault
//! injection. The example checks the advice it prints for each failure and
//! fails if it differs from what it teaches.

use std::env;
use std::time::Duration;

use payments_client::error::TransportKind;
use payments_client::{
    Client, ConfirmRequest, Currency, Error, ErrorCode, InitiateRequest, MinorAmount, Outcome,
    RetryPolicy, Uuid, money,
};
use payments_mock_server::{Fault, MockServer};

/// Any merchant will do for the mock; a real service knows yours.
const DEMO_MERCHANT: Uuid = Uuid::from_u128(0x4f9a1a8e_2c36_4d7e_9b1a_0c2a8f3d5e61);

/// The advice for every failure whose outcome is unknown.
const LOOK_IT_UP: &str = "it may have happened: look it up by your referenceNo before paying \
     again (never pay again under a new reference)";
/// The advice for a refused TLS handshake.
const FIX_THE_TRUST: &str = "nothing was sent, and retrying will not heal it: fix the trust \
     (the service's CA, your client certificate)";

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

    // The client checks what the interface document states and what it
    // needs itself (a reference it can put in a URL path); lengths and
    // forms of strings are the service's to judge (step 2).
    println!("1. Build a request with three mistakes");
    let err = InitiateRequest::builder(merchant, "", amount, "TOPUP", "")
        .return_url("/done")
        .build()
        .expect_err("the request breaks three rules");
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
    let request = topup(merchant, &reference, amount)?;
    let first = client.initiate(request.clone()).await?.into_data();
    println!(
        "   first initiate  -> {} {}",
        first.transaction_id, first.status
    );
    let err = client
        .initiate(request)
        .await
        .expect_err("reference reused");
    explain(&err);
    let confirm = ConfirmRequest::builder(&first.transaction_id, &reference).build()?;
    let done = client.confirm(confirm.clone()).await?.into_data();
    println!("   first confirm   -> {}", done.status);
    let err = client.confirm(confirm).await.expect_err("second confirm");
    explain(&err);

    println!("\n5. The service fails with HTTP 500 (and this client does not retry)");
    let mut builder = Client::builder(&base_url).retry_policy(RetryPolicy::none());
    if let Some(key) = &api_key {
        builder = builder.api_key(key.as_str());
    }
    let no_retries = builder.build()?;
    if let Some(server) = &server {
        server.inject_faults([Fault::InternalError]);
        let reference = format!("ORDER-{run}-5");
        let err = no_retries
            .initiate(topup(merchant, &reference, amount)?)
            .await
            .expect_err("injected 500");
        explain(&err);
        check_advice(&err, LOOK_IT_UP)?;
        look_up(&client, &reference, merchant).await?;

        println!("\n6. A gateway answers 502 with its own HTML page (no retries)");
        server.inject_faults([Fault::Gateway(502)]);
        let reference = format!("ORDER-{run}-6");
        let err = no_retries
            .initiate(topup(merchant, &reference, amount)?)
            .await
            .expect_err("injected 502");
        explain(&err);
        check_advice(&err, LOOK_IT_UP)?;
        look_up(&client, &reference, merchant).await?;

        println!("\n7. The service commits and answers 500; the two retries are rate limited");
        // Retry-After shortened so that the example does not wait.
        let mut builder = Client::builder(&base_url)
            .retry_policy(RetryPolicy::default().max_retry_after(Duration::from_millis(20)));
        if let Some(key) = &api_key {
            builder = builder.api_key(key.as_str());
        }
        let retrying = builder.build()?;
        server.inject_faults([Fault::CommitThenError, Fault::RateLimit, Fault::RateLimit]);
        let reference = format!("ORDER-{run}-7");
        let err = retrying
            .initiate(topup(merchant, &reference, amount)?)
            .await
            .expect_err("rate limited after the commit");
        explain(&err);
        check_advice(&err, LOOK_IT_UP)?;
        // The first attempt was carried out: the look-up finds it.
        look_up(&client, &reference, merchant).await?;
    } else {
        println!(
            "   skipped with steps 6 and 7: injecting faults needs the in-process mock \
             (unset PAYMENTS_BASE_URL)"
        );
    }

    println!("\n8. Call a port where nothing listens");
    let closed = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?;
    let offline = Client::builder(format!("http://{closed}"))
        .connect_timeout(Duration::from_secs(2))
        .retry_policy(RetryPolicy::none())
        .build()?;
    let err = offline.status("any").await.expect_err("nothing listens");
    explain(&err);

    println!("\n9. Call a service that refuses the TLS handshake");
    // A stand-in for a service that demands a client certificate: it
    // answers the handshake with TLS's fatal alert `certificate_required`.
    let refusing = std::net::TcpListener::bind("127.0.0.1:0")?;
    let address = refusing.local_addr()?;
    let refuser = std::thread::spawn(move || -> std::io::Result<()> {
        use std::io::{Read as _, Write as _};
        let (mut socket, _) = refusing.accept()?;
        let mut hello = [0u8; 1024];
        let _ = socket.read(&mut hello)?;
        // An alert record: type 21, TLS 1.2, 2 bytes: fatal (2), 116.
        socket.write_all(&[21, 3, 3, 0, 2, 2, 116])
    });
    let untrusted = Client::builder(format!("https://{address}"))
        .connect_timeout(Duration::from_secs(2))
        .retry_policy(RetryPolicy::none())
        .build()?;
    let err = untrusted
        .status("any")
        .await
        .expect_err("handshake refused");
    let _ = refuser.join();
    explain(&err);
    check_advice(&err, FIX_THE_TRUST)?;

    println!("\nDone: every failure above was classified without parsing a message.");
    Ok(())
}

/// A TOPUP of `amount` under `reference`.
fn topup(merchant: Uuid, reference: &str, amount: MinorAmount) -> Result<InitiateRequest, Error> {
    InitiateRequest::builder(merchant, reference, amount, "TOPUP", "STORE-1")
        .payer_id("60123456789")
        .build()
}

/// What to do on `Outcome::Unknown`: find out by reference before paying
/// again.
async fn look_up(client: &Client, reference: &str, merchant: Uuid) -> anyhow::Result<()> {
    match client.status_by_reference(reference, Some(merchant)).await {
        Ok(found) => println!(
            "   by reference: it was created, {}; do not pay again",
            found.data().status
        ),
        Err(e) if e.error_code() == Some(&ErrorCode::TransactionNotFound) => {
            println!("   by reference: not found, so nothing was created; safe to send again");
        }
        Err(e) => return Err(e.into()),
    }
    Ok(())
}

/// The example's own check that it teaches what it says.
fn check_advice(err: &Error, expected: &str) -> anyhow::Result<()> {
    anyhow::ensure!(
        advice(err) == expected,
        "the advice for {err} is {:?}, expected {expected:?}",
        advice(err)
    );
    Ok(())
}

/// The class of an error, as a caller matches it.
fn class(err: &Error) -> String {
    match err {
        Error::InvalidInput(problems) => {
            format!("InvalidInput, {} problem(s)", problems.errors().len())
        }
        Error::Money(e) => format!("Money: {e}"),
        Error::Api(api) => format!("Api: HTTP {} {}", api.status, api.code),
        Error::Transport { kind, .. } => format!("Transport: {kind}"),
        Error::UnexpectedResponse { status, .. } => format!("UnexpectedResponse: HTTP {status}"),
        // Its helpers (`as_api()`, `error_code()`, ...) answer for `last`.
        Error::AfterAmbiguousAttempt { attempts, last, .. } => {
            format!(
                "AfterAmbiguousAttempt after {attempts} attempts, the last {}",
                class(last)
            )
        }
        Error::AnswerMismatch(_) => "AnswerMismatch".to_owned(),
        Error::Reconciliation { .. } => "Reconciliation".to_owned(),
        other => format!("other: {other}"),
    }
}

/// Prints what a caller can learn from an error without parsing strings.
fn explain(err: &Error) {
    println!("   error       {}", class(err));
    if let Some(api) = err.as_api() {
        if api.code == ErrorCode::ValidationError {
            // VALIDATION_ERROR lists every broken rule, joined by "; ".
            for (i, rule) in api.message.split("; ").enumerate() {
                println!("   {:<11} {rule}", if i == 0 { "message" } else { "" });
            }
        } else if !api.message.is_empty() {
            println!("   message     {}", api.message);
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
        Error::InvalidInput(_) | Error::Money(_) | Error::Config { .. } => {
            "fix the request; nothing was sent"
        }
        // Whatever the class (a 500, a gateway's page, a dropped
        // connection, an earlier ambiguous attempt, an answer about
        // another transaction): the payment may exist.
        _ if err.outcome() == Outcome::Unknown => LOOK_IT_UP,
        // A certificate problem does not heal by itself.
        Error::Transport {
            kind: TransportKind::Tls,
            ..
        } => FIX_THE_TRUST,
        Error::Transport { .. } => "nothing was sent: retry when the service is reachable",
        // The one Reconciliation whose outcome is known: the reference
        // belongs to another payment.
        Error::Reconciliation { .. } => {
            "nothing was created: the reference is another payment's, use a new one"
        }
        _ => match err.error_code() {
            Some(ErrorCode::ValidationError) => "fix every rule the service listed",
            Some(ErrorCode::TransactionNotFound) => "check the id, reference and merchant",
            Some(ErrorCode::DuplicateReferenceNo) => {
                "look the reference up instead of paying twice"
            }
            Some(ErrorCode::TransactionAlreadyConfirmed) => "already done: read its status",
            _ if err.is_retryable() => "nothing was done: try again later",
            _ => "not carried out: report it with the request id",
        },
    }
}
