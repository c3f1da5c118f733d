//! A server's own spans exported over OTLP/HTTP (feature `otlp`, the
//! binaries' `--otlp-endpoint URL`, CONTRACT section 21): one span of kind
//! server per request served, a child of the caller's `traceparent`, so
//! one trace shows the shop, the contract proxy and the service.
//!
//! - [`OtlpEndpoint`]: the flag's URL, checked.
//! - [`SpanExport`]: the tracer provider (its resource names the tool and
//!   the replica), a batch span processor on a thread of its own, the
//!   OpenTelemetry project's OTLP exporter (protobuf over reqwest's
//!   blocking client), and the bounded flush at the stop.
//! - [`ServerSpans`]: the per-connection service that wraps a server's
//!   own (`spans.rs`): what each span is named and carries.
//! - [`ShowPath`]: what the spans show of a request's path, its secrets
//!   replaced ([`RequestSecrets`] by default: the credentials the request
//!   carries; [`SpanExport::with_paths`] for a server's own rule).
//!
//! Without an endpoint nothing of this is installed: a server's hot path
//! is the same with the feature compiled in as without it.
//!
//! ```no_run
//! use payments_serve::otlp::{OtlpEndpoint, SpanExport};
//!
//! # async fn demo() -> Result<(), payments_serve::otlp::ExportError> {
//! let endpoint: OtlpEndpoint = "http://localhost:4318".parse().expect("a URL");
//! let export = SpanExport::start(&endpoint, "payments-mock-server", "127.0.0.1:8080")?;
//! // … serve, each connection's service wrapped by `export.spans(service, false)` …
//! export.shutdown().await; // the last batch sent, within 5 s
//! # Ok(()) }
//! ```

mod calls;
mod endpoint;
mod spans;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use opentelemetry::KeyValue;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig as _};
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider, SpanData, SpanExporter};

pub use endpoint::{OtlpEndpoint, TRACES_PATH};
pub use spans::{
    RequestSecrets, SHOWN_MINIMUM, ServerSpans, ShowPath, ShownPath, redacted_path, route_of,
};

/// How long the stop waits for the last batch to be sent.
pub const FLUSH_TIMEOUT: Duration = Duration::from_secs(5);

/// How long one export may take before it is given up (its spans
/// dropped): a receiver that does not answer holds the exporter's thread
/// no longer, never a request.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(3);

/// Why the export could not start.
#[derive(Debug)]
pub struct ExportError(String);

impl std::fmt::Display for ExportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot export spans: {}", self.0)
    }
}

impl std::error::Error for ExportError {}

/// A server's span export: cheap to clone (one provider behind them all).
///
/// Resource: `service.name` names the tool (`payments-mock-server`,
/// `payments-contract-proxy`), `service.instance.id` the replica (the
/// mock's `--replica-name`, by default `HOST:PORT`; the proxy's
/// `HOST:PORT`), `service.version` this crate's version.
#[derive(Debug, Clone)]
pub struct SpanExport {
    inner: Arc<Inner>,
    /// What the spans show of a request's path.
    show: Arc<dyn ShowPath>,
}

#[derive(Debug)]
struct Inner {
    provider: SdkTracerProvider,
    tracer: SdkTracer,
    /// The client spans of a server's own calls, on `tracer`.
    calls: crate::trace::CallSpans,
}

impl SpanExport {
    /// Starts the export to `endpoint` for the tool `service` and its
    /// replica `instance`. Nothing is sent yet: a receiver that is down
    /// is found (and logged once, as a warning) at the first batch, and
    /// requests are served all the same.
    ///
    /// # Errors
    ///
    /// [`ExportError`] when the exporter cannot be built (its HTTP client
    /// cannot start).
    pub fn start(
        endpoint: &OtlpEndpoint,
        service: &'static str,
        instance: &str,
    ) -> Result<Self, ExportError> {
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(endpoint.traces_url())
            .with_timeout(EXPORT_TIMEOUT)
            .build()
            .map_err(|e| ExportError(e.to_string()))?;
        let watched = Watched {
            inner: exporter,
            endpoint: endpoint.to_string(),
            failing: AtomicBool::new(false),
        };
        let resource = opentelemetry_sdk::Resource::builder_empty()
            .with_service_name(service)
            .with_attributes([
                KeyValue::new("service.instance.id", instance.to_owned()),
                KeyValue::new("service.version", env!("CARGO_PKG_VERSION")),
            ])
            .build();
        let provider = SdkTracerProvider::builder()
            .with_batch_exporter(watched)
            .with_resource(resource)
            .build();
        let tracer = provider.tracer(service);
        tracing::info!(endpoint = %endpoint, "exporting spans to {endpoint} (OTLP/HTTP)");
        Ok(Self {
            inner: Arc::new(Inner {
                provider,
                calls: crate::trace::CallSpans(Arc::new(calls::Calls(tracer.clone()))),
                tracer,
            }),
            show: Arc::new(RequestSecrets::default()),
        })
    }

    /// The export with `show` saying what its spans show of a request's
    /// path (`url.path`, and the path of a call's `url.full`) instead of
    /// [`RequestSecrets`]'s default: the mock names its configured keys,
    /// the contract proxy replaces what its recording replaces.
    #[must_use]
    pub fn with_paths(mut self, show: impl ShowPath + 'static) -> Self {
        self.show = Arc::new(show);
        self
    }

    /// `service` (one connection's) with a span around each request;
    /// `https` says the connection's scheme (`url.scheme`).
    pub fn spans<S>(&self, service: S, https: bool) -> ServerSpans<S> {
        ServerSpans::new(
            service,
            self.inner.tracer.clone(),
            https,
            None,
            Arc::clone(&self.show),
        )
    }

    /// As [`SpanExport::spans`], for a server that makes calls of its own
    /// while serving (the contract proxy): each request also carries
    /// [`CallSpans`](crate::trace::CallSpans) in its extensions, which
    /// open a span of kind client per call, a child of the request's, and
    /// [`ShownPath`], the path as the request's span shows it, for the
    /// call's span to show no more of it.
    pub fn spans_with_calls<S>(&self, service: S, https: bool) -> ServerSpans<S> {
        ServerSpans::new(
            service,
            self.inner.tracer.clone(),
            https,
            Some(self.inner.calls.clone()),
            Arc::clone(&self.show),
        )
    }

    /// Sends what is still batched and stops the export, within
    /// [`FLUSH_TIMEOUT`]: a receiver that is down or slow never holds the
    /// stop longer. What could not be sent is said in the log.
    pub async fn shutdown(&self) {
        let provider = self.inner.provider.clone();
        // The processor's shutdown blocks its caller until the exporter's
        // thread has sent the batch: not on a runtime's worker.
        let done =
            tokio::task::spawn_blocking(move || provider.shutdown_with_timeout(FLUSH_TIMEOUT))
                .await;
        match done {
            Ok(Ok(())) => tracing::debug!("spans exported"),
            Ok(Err(e)) => tracing::warn!(error = %e, "the last spans could not all be exported"),
            Err(e) => tracing::warn!(error = %e, "the last spans could not all be exported"),
        }
    }
}

/// The OTLP exporter, saying in the log when the receiver stops taking
/// spans and when it takes them again: once each, never per batch or
/// request.
#[derive(Debug)]
struct Watched {
    inner: opentelemetry_otlp::SpanExporter,
    endpoint: String,
    failing: AtomicBool,
}

impl SpanExporter for Watched {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        let spans = batch.len();
        let result = self.inner.export(batch).await;
        match &result {
            Ok(()) => {
                if self.failing.swap(false, Ordering::Relaxed) {
                    tracing::info!(endpoint = %self.endpoint, "spans are exported to {} again", self.endpoint);
                }
            }
            Err(e) => {
                if !self.failing.swap(true, Ordering::Relaxed) {
                    tracing::warn!(
                        endpoint = %self.endpoint,
                        error = %e,
                        spans,
                        "cannot export spans to {}: requests are served, their spans dropped until it takes them",
                        self.endpoint
                    );
                }
            }
        }
        result
    }

    fn shutdown_with_timeout(&mut self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn force_flush(&mut self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn set_resource(&mut self, resource: &opentelemetry_sdk::Resource) {
        self.inner.set_resource(resource);
    }
}
