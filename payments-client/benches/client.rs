//! Client overhead (issue #7, item 4; figures in BENCHMARKS.md).
//!
//! Each of the four calls twice against one in-process mock server: through
//! [`payments_client::Client`] (local validation, request id, retry loop,
//! envelope decode into the typed model, raw envelope kept) and as the same
//! HTTP request by bare `reqwest` plus `serde` into plain structs: the same
//! method, path, body and headers (`Accept`, `User-Agent`, a fresh
//! `X-Request-Id`, `Content-Type` on a POST). The ratio client / bare is the
//! client's overhead; the server's work is the same on both sides.
//! `status_by_id::bare_minimal` sends only `Accept`, to show what the two
//! extra headers cost (the mock copies and echoes the request id and
//! journals every header). A current-thread runtime drives client and server alike, so
//! the figures do not depend on thread hand-offs.
//!
//! `decode` measures envelope decoding alone, on a status envelope the mock
//! produced: [`payments_client::wire::decode_response`] against `serde_json` into
//! plain structs.
//!
//! Run: `cargo bench -p payments-client --bench client` (CI only compiles
//! it: `cargo bench --no-run`). With `--features opentelemetry` and
//! `PAYMENTS_BENCH_OTEL=1`, the client's spans go through
//! `tracing-opentelemetry`'s layer to an SDK tracer with no exporter, as an
//! application that runs OpenTelemetry has them (issue 44's "at most 5 %
//! more" is that run against one without the feature).

use std::sync::LazyLock;
use std::sync::atomic::{AtomicU64, Ordering};

use divan::Bencher;
use divan::counter::{BytesCount, ItemsCount};
use payments_client::{Client, ConfirmRequest, InitiateRequest, MinorAmount, PaymentStatus};
use payments_mock_server::domain::validate::initiate as validate_initiate;
use payments_mock_server::{InitialState, MockServer};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tokio::runtime::Runtime;
use uuid::Uuid;

fn main() {
    #[cfg(feature = "opentelemetry")]
    let _provider = traced();
    divan::main();
}

/// `PAYMENTS_BENCH_OTEL=1`: the client's spans recorded by OpenTelemetry
/// (the W3C propagator, an SDK tracer without an exporter); the mock's own
/// events stay off (the layer sees the client's target only).
#[cfg(feature = "opentelemetry")]
fn traced() -> Option<opentelemetry_sdk::trace::SdkTracerProvider> {
    use opentelemetry::trace::TracerProvider as _;
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::layer::SubscriberExt as _;
    std::env::var_os("PAYMENTS_BENCH_OTEL")?;
    opentelemetry::global::set_text_map_propagator(
        opentelemetry_sdk::propagation::TraceContextPropagator::new(),
    );
    let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder().build();
    // The same provider behind the API's global tracer: the floor's
    // `raw_api_*` benches make their spans there, without the layer.
    opentelemetry::global::set_tracer_provider(provider.clone());
    let layer = tracing_opentelemetry::layer()
        .with_tracer(provider.tracer("bench"))
        .with_filter(
            tracing_subscriber::filter::Targets::new()
                .with_target("payments_client", tracing::Level::INFO),
        );
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(layer))
        .expect("one subscriber");
    eprintln!("client spans recorded by OpenTelemetry (no exporter)");
    Some(provider)
}

const MERCHANT: &str = "6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60";

struct Fixture {
    rt: Runtime,
    server: MockServer,
    client: Client,
    http: reqwest::Client,
    base: String,
    id: String,
    reference: String,
    status_body: Vec<u8>,
}

static FIXTURE: LazyLock<Fixture> = LazyLock::new(|| {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a current-thread runtime");
    let server = rt.block_on(MockServer::start());
    let base = server.base_url();
    let client = Client::builder(&base)
        .build()
        .expect("a client of the mock");
    let http = reqwest::Client::new();
    let reference = "BENCH-STATUS-1".to_owned();
    let (id, _) = preinitiate(&server, &reference);
    let status_body = rt.block_on(async {
        http.get(format!("{base}/api/payments/{id}/status"))
            .send()
            .await
            .expect("status")
            .bytes()
            .await
            .expect("status body")
            .to_vec()
    });
    Fixture {
        rt,
        server,
        client,
        http,
        base,
        id,
        reference,
        status_body,
    }
});

static COUNTER: AtomicU64 = AtomicU64::new(0);

fn unique_reference(prefix: &str) -> String {
    format!("{prefix}-{}", COUNTER.fetch_add(1, Ordering::Relaxed))
}

fn initiate_body(reference: &str) -> Map<String, Value> {
    match json!({
        "merchantId": MERCHANT,
        "referenceNo": reference,
        "amount": 1050,
        "productCode": "TOPUP",
        "storeId": "S1",
        "payerId": "60123456789",
    }) {
        Value::Object(map) => map,
        _ => unreachable!("an object literal"),
    }
}

/// Creates a transaction straight in the store (outside the timed part of
/// the confirm benchmarks, which set up in sync closures: the memory
/// store's sync calls): `(transactionId, referenceNo)`.
fn preinitiate(server: &MockServer, reference: &str) -> (String, String) {
    let state = server.state();
    let store = state.store.as_memory().expect("a memory store");
    let fields =
        validate_initiate(&initiate_body(reference), &state.catalog).expect("a valid initiate");
    let now = store.virtual_clock().now();
    let record = store
        .initiate(fields, InitialState::Initiated, now, now + state.expiry)
        .expect("a new reference");
    (record.id.to_string(), reference.to_owned())
}

/// The envelope as a caller without the client would decode it.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct Envelope<T> {
    is_success: bool,
    error_code: Option<String>,
    message: Option<String>,
    data: Option<T>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct BareStatus {
    transaction_id: String,
    reference_no: String,
    status: String,
    amount: serde_json::Number,
    product_code: String,
    created_at: String,
    last_modified_at: Option<String>,
    provider_reference: Option<String>,
    message: Option<String>,
    extra_properties: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct BareInitiated {
    transaction_id: String,
    reference_no: String,
    status: String,
    amount: u64,
    currency_code: Option<String>,
    product_code: String,
    created_at: String,
    extra_properties: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct BareConfirmation {
    transaction_id: String,
    reference_no: String,
    status: String,
    amount: serde_json::Number,
    provider_reference: Option<String>,
    confirmed_at: Option<String>,
    error_message: Option<String>,
    extra_properties: Option<String>,
}

/// A fresh request id, as the client sends with every call.
fn request_id() -> String {
    Uuid::new_v4().to_string()
}

/// Sends a bare request and decodes its envelope into plain structs.
async fn bare_send<T: serde::de::DeserializeOwned>(request: reqwest::RequestBuilder) -> T {
    let body = request
        .send()
        .await
        .expect("send")
        .bytes()
        .await
        .expect("body");
    let envelope: Envelope<T> = serde_json::from_slice(&body).expect("an envelope");
    assert!(envelope.is_success, "{}", String::from_utf8_lossy(&body));
    envelope.data.expect("data")
}

async fn bare_get<T: serde::de::DeserializeOwned>(url: String) -> T {
    bare_send(
        FIXTURE
            .http
            .get(url)
            .header("accept", "application/json")
            .header("user-agent", payments_client::wire::DEFAULT_USER_AGENT)
            .header("x-request-id", request_id()),
    )
    .await
}

async fn bare_post<T: serde::de::DeserializeOwned>(path: &str, body: Vec<u8>) -> T {
    bare_send(
        FIXTURE
            .http
            .post(format!("{}{path}", FIXTURE.base))
            .header("accept", "application/json")
            .header("content-type", "application/json")
            .header("user-agent", payments_client::wire::DEFAULT_USER_AGENT)
            .header("x-request-id", request_id())
            .body(body),
    )
    .await
}

mod status_by_id {
    use super::*;

    #[divan::bench]
    fn client() -> PaymentStatus {
        let f = &*FIXTURE;
        f.rt.block_on(f.client.status(&f.id))
            .expect("status")
            .into_data()
    }

    #[divan::bench]
    fn bare() -> BareStatus {
        let f = &*FIXTURE;
        f.rt.block_on(bare_get(format!("{}/api/payments/{}/status", f.base, f.id)))
    }

    /// `bare` without `User-Agent` and `X-Request-Id`.
    #[divan::bench]
    fn bare_minimal() -> BareStatus {
        let f = &*FIXTURE;
        f.rt.block_on(bare_send(
            f.http
                .get(format!("{}/api/payments/{}/status", f.base, f.id))
                .header("accept", "application/json"),
        ))
    }
}

mod status_by_reference {
    use super::*;

    #[divan::bench]
    fn client() -> PaymentStatus {
        let f = &*FIXTURE;
        f.rt.block_on(f.client.status_by_reference(&f.reference, None))
            .expect("status")
            .into_data()
    }

    #[divan::bench]
    fn bare() -> BareStatus {
        let f = &*FIXTURE;
        f.rt.block_on(bare_get(format!(
            "{}/api/payments/reference/{}/status",
            f.base, f.reference
        )))
    }
}

mod initiate {
    use super::*;

    #[divan::bench]
    fn client(bencher: Bencher<'_, '_>) {
        let f = &*FIXTURE;
        let merchant = Uuid::parse_str(MERCHANT).expect("a literal UUID");
        bencher
            .with_inputs(|| unique_reference("BENCH-CLIENT"))
            .bench_local_values(|reference| {
                let req = InitiateRequest::builder(
                    merchant,
                    reference,
                    MinorAmount::new(1050).expect("positive"),
                    "TOPUP",
                    "S1",
                )
                .payer_id("60123456789")
                .build()
                .expect("valid");
                f.rt.block_on(f.client.initiate(req))
                    .expect("initiate")
                    .into_data()
            });
    }

    #[divan::bench]
    fn bare(bencher: Bencher<'_, '_>) {
        let f = &*FIXTURE;
        bencher
            .with_inputs(|| unique_reference("BENCH-BARE"))
            .bench_local_values(|reference| {
                let body = Value::Object(initiate_body(&reference))
                    .to_string()
                    .into_bytes();
                f.rt.block_on(bare_post::<BareInitiated>("/api/payments/initiate", body))
            });
    }
}

mod confirm {
    use super::*;

    #[divan::bench]
    fn client(bencher: Bencher<'_, '_>) {
        let f = &*FIXTURE;
        bencher
            .with_inputs(|| preinitiate(&f.server, &unique_reference("BENCH-CONFIRM-CLIENT")))
            .bench_local_values(|(id, reference)| {
                let req = ConfirmRequest::builder(id, reference)
                    .build()
                    .expect("valid");
                f.rt.block_on(f.client.confirm(req))
                    .expect("confirm")
                    .into_data()
            });
    }

    #[divan::bench]
    fn bare(bencher: Bencher<'_, '_>) {
        let f = &*FIXTURE;
        bencher
            .with_inputs(|| preinitiate(&f.server, &unique_reference("BENCH-CONFIRM-BARE")))
            .bench_local_values(|(id, reference)| {
                let body = json!({ "transactionId": id, "referenceNo": reference })
                    .to_string()
                    .into_bytes();
                f.rt.block_on(bare_post::<BareConfirmation>("/api/payments/confirm", body))
            });
    }
}

mod decode {
    use super::*;

    #[divan::bench]
    fn client(bencher: Bencher<'_, '_>) {
        let body = FIXTURE.status_body.as_slice();
        bencher
            .counter(BytesCount::of_slice(body))
            .counter(ItemsCount::new(1usize))
            .bench(|| {
                payments_client::wire::decode_response::<PaymentStatus>(
                    200,
                    Some("application/json"),
                    divan::black_box(body),
                )
                .expect("a status envelope")
            });
    }

    #[divan::bench]
    fn bare(bencher: Bencher<'_, '_>) {
        let body = FIXTURE.status_body.as_slice();
        bencher
            .counter(BytesCount::of_slice(body))
            .counter(ItemsCount::new(1usize))
            .bench(|| {
                serde_json::from_slice::<Envelope<BareStatus>>(divan::black_box(body))
                    .expect("a status envelope")
            });
    }
}

/// The floor of a span under OpenTelemetry (feature `opentelemetry`, with
/// `PAYMENTS_BENCH_OTEL=1`): one span in the client's target, made,
/// entered and closed, empty and with an attempt span's fields. A call
/// makes two (its own and one per attempt).
#[cfg(feature = "opentelemetry")]
mod otel_floor {
    #[divan::bench]
    fn empty_span() {
        let span = tracing::info_span!(target: "payments_client", "floor");
        let _entered = span.enter();
    }

    #[divan::bench]
    fn attempt_like_span() {
        let span = tracing::info_span!(
            target: "payments_client",
            "attempt",
            otel.name = "GET /api/payments/{transactionId}/status",
            otel.kind = "client",
            attempt = 1u32,
            "http.request.method" = "GET",
            "server.address" = "127.0.0.1",
            "server.port" = 8080u16,
            "url.template" = "/api/payments/{transactionId}/status",
            "http.response.status_code" = 200u16,
        );
        let _entered = span.enter();
    }

    /// A call's two spans (the call's, and its attempt's with the nine
    /// attributes an attempt carries) through the layer, as the client
    /// makes them.
    #[divan::bench]
    fn layer_call_and_attempt() {
        let call = tracing::info_span!(
            target: "payments_client",
            "call",
            otel.name = "GET /api/payments/{transactionId}/status",
            otel.kind = "client",
            "payments.outcome" = "ok",
        );
        let _call = call.enter();
        let attempt = tracing::info_span!(
            target: "payments_client",
            "attempt",
            otel.name = "GET /api/payments/{transactionId}/status",
            otel.kind = "client",
            "http.request.method" = "GET",
            "server.address" = "127.0.0.1",
            "server.port" = 8080u16,
            "url.template" = "/api/payments/{transactionId}/status",
            "http.response.status_code" = 200u16,
            "http.request.resend_count" = 0u32,
            "payments.transaction_id" = "0b6f1c2e-6a4c-4f7e-9d7a-000000000001",
            "payments.reference_no" = "BENCH-STATUS-1",
        );
        let _attempt = attempt.enter();
    }

    /// The same two spans, with the same attributes, made through the
    /// OpenTelemetry API's global tracer (the same SDK provider) without
    /// `tracing` or the layer: what the spans themselves cost.
    #[divan::bench]
    fn raw_api_call_and_attempt() {
        use opentelemetry::KeyValue;
        use opentelemetry::trace::{Span as _, SpanKind, TraceContextExt as _, Tracer as _};
        let tracer = opentelemetry::global::tracer("bench");
        let parent = opentelemetry::Context::current();
        let call = tracer
            .span_builder("GET /api/payments/{transactionId}/status")
            .with_kind(SpanKind::Client)
            .with_attributes([KeyValue::new("payments.outcome", "ok")])
            .start_with_context(&tracer, &parent);
        let context = parent.with_span(call);
        let mut attempt = tracer
            .span_builder("GET /api/payments/{transactionId}/status")
            .with_kind(SpanKind::Client)
            .with_attributes([
                KeyValue::new("http.request.method", "GET"),
                KeyValue::new("server.address", "127.0.0.1"),
                KeyValue::new("server.port", 8080_i64),
                KeyValue::new("url.template", "/api/payments/{transactionId}/status"),
                KeyValue::new("http.response.status_code", 200_i64),
                KeyValue::new("http.request.resend_count", 0_i64),
                KeyValue::new(
                    "payments.transaction_id",
                    "0b6f1c2e-6a4c-4f7e-9d7a-000000000001",
                ),
                KeyValue::new("payments.reference_no", "BENCH-STATUS-1"),
            ])
            .start_with_context(&tracer, &context);
        attempt.end();
        context.span().end();
    }
}
