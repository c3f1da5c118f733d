//! Your first payments: initiate, confirm and look up a transaction.
//!
//! Shows the whole happy path with `payments-client`:
//!
//! 1. a mobile top-up (`TOPUP`), confirmed at once, then read back by
//!    transaction id and by the merchant's own reference;
//! 2. an e-wallet payment (`EWALLET`) that waits in `PENDING` for the payer's
//!    one-time password and succeeds when confirmed with it.
//!
//! Run it from the repository root:
//!
//! ```sh
//! cargo run --example quickstart
//! ```
//!
//! It starts the mock service in-process on a free loopback port. To talk to
//! a running service instead, set `PAYMENTS_BASE_URL` (and `PAYMENTS_API_KEY`,
//! `PAYMENTS_MERCHANT_ID` if it needs them).

use std::env;

use payments_client::{
    Client, ConfirmRequest, Currency, InitiateRequest, MinorAmount, Uuid, money,
};
use payments_mock_server::MockServer;

/// Any merchant will do for the mock; a real service knows yours.
const DEMO_MERCHANT: Uuid = Uuid::from_u128(0x4f9a1a8e_2c36_4d7e_9b1a_0c2a8f3d5e61);

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    // The mock service in-process, unless PAYMENTS_BASE_URL names another.
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
    // References must be unique per merchant, so each run makes its own.
    let run = &Uuid::new_v4().simple().to_string()[..8];
    let what = if server.is_some() {
        " (in-process mock)"
    } else {
        ""
    };
    println!("Payments quickstart against {base_url}{what}\n");

    // Amounts are integers in minor units: 1050 sen is MYR 10.50.
    let reference = format!("ORDER-{run}-1");
    let amount = MinorAmount::new(1050)?;
    println!(
        "1. Initiate a TOPUP of {} for payer 60123456789, reference {reference}",
        show(amount, &Currency::MYR)?
    );
    let request = InitiateRequest::builder(merchant, &reference, amount, "TOPUP", "STORE-1")
        .currency(Currency::MYR)
        .payer_id("60123456789")
        .description("Prepaid airtime")
        .build()?;
    let initiated = client.initiate(request).await?.into_data();
    println!("   -> transaction {}", initiated.transaction_id);
    println!(
        "      status {}, amount {}",
        initiated.status,
        show(initiated.amount, &initiated.currency_code)?
    );

    println!("2. Confirm it");
    let confirm = ConfirmRequest::builder(&initiated.transaction_id, &reference).build()?;
    let confirmed = client.confirm(confirm).await?.into_data();
    println!(
        "   -> status {}, amount {} {}, provider reference {}",
        confirmed.status,
        initiated.currency_code,
        confirmed.amount,
        confirmed.provider_reference.as_deref().unwrap_or("-")
    );

    println!("3. Status by transaction id");
    let by_id = client.status(&initiated.transaction_id).await?;
    println!(
        "   -> status {}, amount {} {} (request id {})",
        by_id.data().status,
        initiated.currency_code,
        by_id.data().amount,
        by_id.request_id()
    );

    println!("4. Status by reference {reference}");
    let by_ref = client
        .status_by_reference(&reference, Some(merchant))
        .await?
        .into_data();
    println!(
        "   -> transaction {}, status {}",
        by_ref.transaction_id, by_ref.status
    );

    // EWALLET payments wait for the payer's one-time password; the mock's
    // correct OTP is 123456.
    let reference = format!("ORDER-{run}-2");
    let amount = MinorAmount::new(2500)?;
    println!(
        "5. Initiate an EWALLET payment of {}, reference {reference}",
        show(amount, &Currency::MYR)?
    );
    let request =
        InitiateRequest::builder(merchant, &reference, amount, "EWALLET", "STORE-1").build()?;
    let pending = client.initiate(request).await?.into_data();
    println!(
        "   -> transaction {}, status {} (waiting for the payer's OTP)",
        pending.transaction_id, pending.status
    );

    println!("6. Confirm with the OTP 123456");
    let confirm = ConfirmRequest::builder(&pending.transaction_id, &reference)
        .confirmation_code("123456")
        .build()?;
    let confirmed = client.confirm(confirm).await?.into_data();
    println!(
        "   -> status {}, amount {} {}",
        confirmed.status, pending.currency_code, confirmed.amount
    );

    // Each payment's own final status: a catalogue that declines TOPUP, or
    // a wrong OTP, makes one of them FAILED.
    println!(
        "\nDone: the TOPUP is {}, the EWALLET payment is {}.",
        by_ref.status, confirmed.status
    );
    Ok(())
}

/// `MYR 10.50`: minor units shown with the currency's own number of digits.
fn show(amount: MinorAmount, currency: &Currency) -> anyhow::Result<String> {
    Ok(format!("{currency} {}", money::to_major(amount, currency)?))
}
