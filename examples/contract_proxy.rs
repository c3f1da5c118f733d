//! The contract proxy: check a service against the interface document.
//!
//! Starts the mock in-process (or uses the service `PAYMENTS_BASE_URL`
//! names, with `PAYMENTS_API_KEY`, `PAYMENTS_MERCHANT_ID` if it needs
//! them), puts the contract proxy in front of it, runs a few payments
//! through `payments-client` — a top-up, an e-wallet payment with its OTP,
//! a decline, a second confirm that must be refused — and prints what the
//! proxy found: each exchange's verdict, then the summary table.
//!
//! ```sh
//! cargo run --example contract_proxy
//! ```
//!
//! Against this project's mock there is no violation (it is a verified
//! fake); its extensions show as `undocumented`. The same check from a
//! terminal: `payments-mock-server proxy --upstream URL` (docs/contract-proxy.md).

use std::env;

use payments_client::{Client, ConfirmRequest, InitiateRequest, MinorAmount, Uuid};
use payments_contract_proxy::{Level, Proxy, ProxyConfig};
use payments_mock_server::MockServer;

/// Any merchant will do for the mock; a real service knows yours.
const DEMO_MERCHANT: Uuid = Uuid::from_u128(0x4f9a1a8e_2c36_4d7e_9b1a_0c2a8f3d5e61);

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let (_server, upstream) = match env::var("PAYMENTS_BASE_URL") {
        Ok(url) => (None, url),
        Err(_) => {
            let server = MockServer::start().await;
            let url = server.base_url();
            (Some(server), url)
        }
    };
    let proxy = Proxy::start(ProxyConfig::new(upstream.parse()?)).await?;
    println!(
        "contract proxy at {} in front of {upstream}\n",
        proxy.base_url()
    );
    let mut builder = Client::builder(proxy.base_url());
    if let Ok(key) = env::var("PAYMENTS_API_KEY") {
        builder = builder.api_key(key);
    }
    let client = builder.build()?;
    let merchant = match env::var("PAYMENTS_MERCHANT_ID") {
        Ok(id) => id.parse()?,
        Err(_) => DEMO_MERCHANT,
    };
    let run = Uuid::new_v4().simple().to_string();

    for (product, payer, code) in [
        ("TOPUP", Some("60123456789"), None),
        ("EWALLET", None, Some("123456")),
        ("DECLINED", None, None),
    ] {
        let reference = format!("PROXY-{product}-{}", &run[..8]);
        let mut request = InitiateRequest::builder(
            merchant,
            reference.as_str(),
            MinorAmount::new(1050)?,
            product,
            "STORE-1",
        );
        if let Some(payer) = payer {
            request = request.payer_id(payer);
        }
        let tx = client.initiate(request.build()?).await?.into_data();
        let mut confirm = ConfirmRequest::builder(&tx.transaction_id, reference.as_str());
        if let Some(code) = code {
            confirm = confirm.confirmation_code(code);
        }
        let confirmed = client.confirm(confirm.build()?).await?.into_data();
        client.status(&tx.transaction_id).await?;
        client
            .status_by_reference(&reference, Some(merchant))
            .await?;
        println!("{product}: {}", confirmed.status);
        if product == "TOPUP" {
            // A second confirm: the document says it is refused with 400.
            let again = client
                .confirm(ConfirmRequest::builder(&tx.transaction_id, reference.as_str()).build()?)
                .await;
            println!("TOPUP confirmed again: refused = {}", again.is_err());
        }
    }

    println!("\nexchanges:");
    for (exchange, verdict, findings) in proxy.exchanges() {
        println!(
            "  #{:<2} {:<4} {:<55} {} {}",
            exchange.seq,
            exchange.request.method,
            exchange.request.path,
            exchange.response.status,
            verdict.as_str()
        );
        for f in findings {
            println!("       {} {}: {}", f.level.as_str(), f.rule, f.message);
        }
    }
    let summary = proxy.shutdown().await;
    println!("\n{}", summary.table());
    anyhow::ensure!(
        summary.count(Level::Violation) == 0,
        "the service broke the interface document"
    );
    Ok(())
}
