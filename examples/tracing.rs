//! One trace from your application to the payment service (OpenTelemetry).
//!
//! With the client's feature `opentelemetry`, every call is a span and
//! every attempt a child span (named and attributed by OpenTelemetry's
//! HTTP client conventions), and every attempt sends the W3C `traceparent`
//! of its span. The service (here the mock, in-process) keeps the trace id
//! in its request journal, so the journal entry of a payment is found from
//! the application's trace, and back.
//!
//! ```sh
//! cargo run --example tracing
//! ```
//!
//! What an application sets up once, at start (the three lines marked
//! "set up"): the W3C propagator, a tracer provider (here without an
//! exporter; yours sends to your collector, for example with
//! `opentelemetry-otlp`), and `tracing-opentelemetry`'s layer, which turns
//! `tracing` spans (the client's and yours) into OpenTelemetry spans.
//!
//! It always uses the in-process mock (it reads the mock's journal), with
//! `PAYMENTS_API_KEY` and `PAYMENTS_MERCHANT_ID` when they are set.

use std::env;

use opentelemetry::trace::{TraceContextExt as _, TracerProvider as _};
use payments_client::{Client, InitiateRequest, MinorAmount, Uuid};
use payments_mock_server::MockServer;
use tracing::Instrument as _;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;
use tracing_subscriber::layer::SubscriberExt as _;

/// Any merchant will do for the mock; a real service knows yours.
const DEMO_MERCHANT: Uuid = Uuid::from_u128(0x4f9a1a8e_2c36_4d7e_9b1a_0c2a8f3d5e61);

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    // Set up: the W3C trace context on outgoing requests...
    opentelemetry::global::set_text_map_propagator(
        opentelemetry_sdk::propagation::TraceContextPropagator::new(),
    );
    // ...a tracer provider (add your exporter here)...
    let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder().build();
    // ...and the bridge from `tracing` spans to OpenTelemetry.
    tracing::subscriber::set_global_default(
        tracing_subscriber::registry()
            .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("shop"))),
    )?;

    let server = MockServer::start().await;
    let mut builder = Client::builder(server.base_url());
    if let Ok(key) = env::var("PAYMENTS_API_KEY") {
        builder = builder.api_key(key);
    }
    let client = builder.build()?;
    let merchant = match env::var("PAYMENTS_MERCHANT_ID") {
        Ok(id) => id.parse()?,
        Err(_) => DEMO_MERCHANT,
    };

    // The application's own span: a checkout. The client's spans are its
    // children, and the service sees its trace.
    let checkout = tracing::info_span!("checkout", order = "ORDER-7");
    let trace_id = checkout.context().span().span_context().trace_id();
    let reference = format!("ORDER-7-{}", &Uuid::new_v4().simple().to_string()[..8]);
    let request =
        InitiateRequest::builder(merchant, &reference, MinorAmount::new(1050)?, "TOPUP", "S1")
            .payer_id("60123456789")
            .build()?;
    let reply = client.initiate(request).instrument(checkout).await?;
    println!("the application's trace:      {trace_id}");
    println!(
        "initiated:                    {}",
        reply.data().transaction_id
    );

    // What the service journaled: the same trace, and the id of the
    // client's attempt span that sent the request.
    let journal: serde_json::Value = reqwest::get(format!("{}/_mock/requests", server.base_url()))
        .await?
        .json()
        .await?;
    let entry = journal["data"]["items"]
        .as_array()
        .and_then(|items| items.last())
        .ok_or_else(|| anyhow::anyhow!("the journal is empty"))?;
    println!(
        "the service's journal entry:  {} {} trace {} span {}",
        entry["method"].as_str().unwrap_or("?"),
        entry["path"].as_str().unwrap_or("?"),
        entry["traceId"].as_str().unwrap_or("(none)"),
        entry["spanId"].as_str().unwrap_or("(none)"),
    );
    anyhow::ensure!(
        entry["traceId"].as_str() == Some(trace_id.to_string().as_str()),
        "the journal entry is not in the application's trace"
    );
    println!("\none trace: the checkout, the client's call and attempt, the service's entry");
    let _ = provider.shutdown();
    Ok(())
}
