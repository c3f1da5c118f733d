//! Shared helpers: envelopes, fixtures, clients and a connection dropper.
#![allow(dead_code)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use payments_client::{Client, RetryPolicy};
use tokio::io::AsyncReadExt;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

pub const MERCHANT: &str = "4f9a1a8e-2c36-4d7e-9b1a-0c2a8f3d5e61";
pub const TX_ID: &str = "0192f7c4-2d1e-7a10-9c55-5d3a8f7b1e01";

pub fn merchant() -> uuid::Uuid {
    uuid::Uuid::parse_str(MERCHANT).expect("literal uuid")
}

/// The kind of a transport error, `None` for any other error.
pub fn transport_kind(
    err: &payments_client::Error,
) -> Option<payments_client::error::TransportKind> {
    match err {
        payments_client::Error::Transport { kind, .. } => Some(*kind),
        _ => None,
    }
}

/// A retry policy with tiny delays so tests stay fast.
pub fn fast_retries() -> RetryPolicy {
    RetryPolicy::default()
        .base_delay(Duration::from_millis(1))
        .max_delay(Duration::from_millis(5))
}

/// A client for `server` with fast retries.
pub fn client(server: &MockServer) -> Client {
    client_for(&server.uri())
}

pub fn client_for(base: &str) -> Client {
    Client::builder(base)
        .retry_policy(fast_retries())
        .timeout(Duration::from_secs(5))
        .build()
        .expect("valid test client")
}

/// A client for `base` that sends `key`, with fast retries and the default
/// timeout.
pub fn client_with_key(base: &str, key: &str) -> Client {
    Client::builder(base)
        .api_key(key)
        .retry_policy(fast_retries())
        .build()
        .expect("valid test client")
}

/// Mounts on `server`: the first POST fails with a 500 `INTERNAL_ERROR`,
/// every later POST is answered with `then`.
pub async fn post_fails_once_then(server: &MockServer, then: ResponseTemplate) {
    Mock::given(method("POST"))
        .respond_with(json(500, err_envelope("INTERNAL_ERROR", "boom")))
        .up_to_n_times(1)
        .mount(server)
        .await;
    Mock::given(method("POST"))
        .respond_with(then)
        .mount(server)
        .await;
}

/// A success envelope around raw `data` JSON text.
pub fn ok_envelope(data: &str) -> String {
    format!(r#"{{"isSuccess":true,"errorCode":null,"message":null,"data":{data}}}"#)
}

/// A failure envelope.
pub fn err_envelope(code: &str, message: &str) -> String {
    format!(r#"{{"isSuccess":false,"errorCode":"{code}","message":"{message}","data":null}}"#)
}

/// A JSON response with exactly this body.
pub fn json(status: u16, body: impl Into<String>) -> ResponseTemplate {
    ResponseTemplate::new(status).set_body_raw(body.into().into_bytes(), "application/json")
}

/// The initiate request [`initiate_data`] echoes: INV-1, 150.00 in the
/// default currency, TOPUP at S1, no payer.
pub fn plain_initiate_request() -> payments_client::InitiateRequest {
    payments_client::InitiateRequest::builder(
        merchant(),
        "INV-1",
        payments_client::MinorAmount::new(15000).expect("a positive amount"),
        "TOPUP",
        "S1",
    )
    .build()
    .expect("a valid request")
}

pub fn initiate_data() -> String {
    format!(
        r#"{{"transactionId":"{TX_ID}","referenceNo":"INV-1","status":"INITIATED","amount":15000,"currencyCode":"MYR","productCode":"TOPUP","createdAt":"2026-11-22T08:15:30.123Z","extraProperties":null}}"#
    )
}

pub fn confirm_data() -> String {
    format!(
        r#"{{"transactionId":"{TX_ID}","referenceNo":"INV-1","status":"SUCCESSFUL","amount":150.00,"providerReference":"PRV-1","confirmedAt":"2026-11-22T08:16:00.000Z","errorMessage":null,"extraProperties":null}}"#
    )
}

/// Status data with the given status and amount text (a JSON value).
pub fn status_data_with(status: &str, amount: &str, product: &str) -> String {
    format!(
        r#"{{"transactionId":"{TX_ID}","referenceNo":"INV-1","status":"{status}","amount":{amount},"productCode":"{product}","createdAt":"2026-11-22T08:15:30.123Z","lastModifiedAt":null,"providerReference":null,"message":null,"extraProperties":null}}"#
    )
}

/// A 200 status answer with the given status, amount text and product.
pub fn status_answer(status: &str, amount: &str, product: &str) -> ResponseTemplate {
    json(200, ok_envelope(&status_data_with(status, amount, product)))
}

pub fn status_data() -> String {
    status_data_with("INITIATED", "150.00", "TOPUP")
}

/// Reads [`TX_ID`]'s status from a fresh server on which `mock` is
/// mounted; the error the read ends in (the mock's expectations are
/// checked when the server is dropped, before this returns).
pub async fn status_error_with(mock: Mock) -> payments_client::Error {
    let server = MockServer::start().await;
    mock.mount(&server).await;
    client(&server).status(TX_ID).await.unwrap_err()
}

/// [`status_error_with`] a GET answered with `answer`.
pub async fn status_error_from(answer: ResponseTemplate) -> payments_client::Error {
    status_error_with(Mock::given(method("GET")).respond_with(answer)).await
}

/// A loopback server that accepts connections, reads the request and
/// closes without answering. Returns its base URL and a connection counter.
pub async fn dropping_server() -> (String, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let addr = listener.local_addr().expect("local addr");
    let count = Arc::new(AtomicUsize::new(0));
    let seen = count.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            seen.fetch_add(1, Ordering::SeqCst);
            let mut buf = [0u8; 4096];
            let _ = socket.read(&mut buf).await;
            drop(socket);
        }
    });
    (format!("http://{addr}"), count)
}

/// A loopback address on which nothing listens.
pub async fn refused_url() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let addr = listener.local_addr().expect("local addr");
    drop(listener);
    format!("http://{addr}")
}

/// Request ids of every request `server` received.
pub async fn request_ids(server: &MockServer) -> Vec<String> {
    server
        .received_requests()
        .await
        .expect("recording on")
        .iter()
        .map(|r| {
            r.headers
                .get("x-request-id")
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

/// A raw HTTP response with a JSON body and extra header lines.
pub fn raw_response(status: u16, extra_headers: &str, body: &str) -> String {
    format!(
        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n{extra_headers}\r\n{body}",
        body.len()
    )
}

/// A loopback HTTP server on the caller's runtime that answers connection
/// number `n` with `script[n]` (`None` drops it unanswered; the last entry
/// repeats). Running on the test's own runtime keeps it usable with paused
/// time: loopback I/O is always ready, so the clock only jumps when the
/// client sleeps.
pub async fn scripted_server(script: Vec<Option<String>>) -> (String, Arc<AtomicUsize>) {
    use tokio::io::AsyncWriteExt;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let addr = listener.local_addr().expect("local addr");
    let count = Arc::new(AtomicUsize::new(0));
    let seen = count.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let n = seen.fetch_add(1, Ordering::SeqCst);
            let mut buf = [0u8; 8192];
            let _ = socket.read(&mut buf).await;
            let step = script.get(n).or(script.last()).cloned().flatten();
            if let Some(response) = step {
                let _ = socket.write_all(response.as_bytes()).await;
                let _ = socket.shutdown().await;
            }
        }
    });
    (format!("http://{addr}"), count)
}

/// A loopback HTTP server that drops the first `drops` connections without
/// answering, then answers every later request with `200` and `body`.
pub async fn flaky_server(drops: usize, body: String) -> (String, Arc<AtomicUsize>) {
    let mut script: Vec<Option<String>> = vec![None; drops];
    script.push(Some(raw_response(200, "", &body)));
    scripted_server(script).await
}

/// Answers a status read as a correct service would: by id with that id,
/// by reference with that reference, one transaction per id and per
/// reference (`REF-<id>`, `TX-<reference>` as encoded in the path).
/// For tests about paths and headers, whose answers the client checks.
pub fn echoing_status(request: &wiremock::Request) -> ResponseTemplate {
    let segments: Vec<&str> = request.url.path().split('/').collect();
    let n = segments.len();
    let (segment, by_reference) = match n {
        3.. => (segments[n - 2], segments[n - 3] == "reference"),
        _ => ("", false),
    };
    let decoded = percent_encoding::percent_decode_str(segment)
        .decode_utf8_lossy()
        .into_owned();
    let (id, reference) = if by_reference {
        (format!("TX-{segment}"), decoded)
    } else {
        (decoded, format!("REF-{segment}"))
    };
    let data = format!(
        r#"{{"transactionId":{},"referenceNo":{},"status":"INITIATED","amount":150.00,"productCode":"TOPUP","createdAt":"2026-11-22T08:15:30.123Z"}}"#,
        serde_json::to_string(&id).expect("a string serialises"),
        serde_json::to_string(&reference).expect("a string serialises"),
    );
    json(200, ok_envelope(&data))
}

/// The client's spans recorded as an application running OpenTelemetry
/// records them: `tracing-opentelemetry`'s layer over an SDK tracer
/// ("shop") whose spans go to the in-memory exporter, for this thread
/// while the guard lives.
#[cfg(feature = "opentelemetry")]
pub struct Traced {
    pub exporter: opentelemetry_sdk::trace::InMemorySpanExporter,
    pub provider: opentelemetry_sdk::trace::SdkTracerProvider,
    pub guard: tracing::subscriber::DefaultGuard,
}

#[cfg(feature = "opentelemetry")]
pub fn traced() -> Traced {
    use opentelemetry::trace::TracerProvider as _;
    use tracing_subscriber::layer::SubscriberExt as _;
    let exporter = opentelemetry_sdk::trace::InMemorySpanExporter::default();
    let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("shop")));
    let guard = tracing::subscriber::set_default(subscriber);
    Traced {
        exporter,
        provider,
        guard,
    }
}
