//! The tests' OTLP/HTTP receiver and what it got: an axum server on a
//! loopback port that decodes each `ExportTraceServiceRequest` with the
//! OpenTelemetry project's own types, and the spans as the tests read them.

use std::time::Duration;

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode, header};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use opentelemetry_proto::tonic::trace::v1::Span;
use payments_serve::otlp::OtlpEndpoint;
use prost::Message as _;
use tokio::sync::mpsc;

/// A span as the receiver got it, with its resource's attributes.
#[derive(Debug, Clone)]
pub(super) struct Seen {
    pub(super) resource: Vec<KeyValue>,
    pub(super) span: Span,
}

impl Seen {
    pub(super) fn service(&self) -> Option<&str> {
        text(&self.resource, "service.name")
    }

    pub(super) fn instance(&self) -> Option<&str> {
        text(&self.resource, "service.instance.id")
    }

    pub(super) fn text(&self, key: &str) -> Option<&str> {
        text(&self.span.attributes, key)
    }

    pub(super) fn int(&self, key: &str) -> Option<i64> {
        match value(&self.span.attributes, key)? {
            any_value::Value::IntValue(n) => Some(*n),
            _ => None,
        }
    }

    pub(super) fn trace_id(&self) -> String {
        hex(&self.span.trace_id)
    }

    pub(super) fn parent_id(&self) -> String {
        hex(&self.span.parent_span_id)
    }

    pub(super) fn span_id(&self) -> String {
        hex(&self.span.span_id)
    }
}

pub(super) fn value<'a>(attributes: &'a [KeyValue], key: &str) -> Option<&'a any_value::Value> {
    attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref())
        .and_then(|v| v.value.as_ref())
}

pub(super) fn text<'a>(attributes: &'a [KeyValue], key: &str) -> Option<&'a str> {
    match value(attributes, key)? {
        any_value::Value::StringValue(s) => Some(s),
        _ => None,
    }
}

pub(super) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Every value an attribute list holds, as text (nested values too).
pub(super) fn all_values(attributes: &[KeyValue]) -> Vec<String> {
    pub(super) fn walk(value: &AnyValue, out: &mut Vec<String>) {
        match &value.value {
            Some(any_value::Value::StringValue(s)) => out.push(s.clone()),
            Some(any_value::Value::IntValue(n)) => out.push(n.to_string()),
            Some(any_value::Value::DoubleValue(n)) => out.push(n.to_string()),
            Some(any_value::Value::BoolValue(b)) => out.push(b.to_string()),
            Some(any_value::Value::BytesValue(b)) => {
                out.push(String::from_utf8_lossy(b).into_owned());
            }
            Some(any_value::Value::ArrayValue(array)) => {
                for v in &array.values {
                    walk(v, out);
                }
            }
            Some(any_value::Value::KvlistValue(list)) => {
                for kv in &list.values {
                    out.push(kv.key.clone());
                    if let Some(v) = &kv.value {
                        walk(v, out);
                    }
                }
            }
            None => {}
        }
    }
    let mut out = Vec::new();
    for kv in attributes {
        out.push(kv.key.clone());
        if let Some(v) = &kv.value {
            walk(v, &mut out);
        }
    }
    out
}

/// An OTLP/HTTP receiver on a loopback port: `POST /v1/traces` with a
/// protobuf `ExportTraceServiceRequest`, each decoded one handed to the
/// test through a channel.
pub(super) struct Receiver {
    pub(super) base: String,
    pub(super) requests: mpsc::UnboundedReceiver<ExportTraceServiceRequest>,
}

impl Receiver {
    pub(super) async fn start() -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a port");
        let base = format!("http://{}", listener.local_addr().expect("an address"));
        let (sent, requests) = mpsc::unbounded_channel();
        let app = axum::Router::new().route(
            "/v1/traces",
            axum::routing::post(move |headers: HeaderMap, body: Bytes| {
                let sent = sent.clone();
                async move {
                    let protobuf = headers
                        .get(header::CONTENT_TYPE)
                        .is_some_and(|v| v == "application/x-protobuf");
                    let Ok(request) = ExportTraceServiceRequest::decode(body) else {
                        return (StatusCode::BAD_REQUEST, Vec::new());
                    };
                    if !protobuf {
                        return (StatusCode::UNSUPPORTED_MEDIA_TYPE, Vec::new());
                    }
                    let _ = sent.send(request);
                    (
                        StatusCode::OK,
                        ExportTraceServiceResponse::default().encode_to_vec(),
                    )
                }
            }),
        );
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self { base, requests }
    }

    pub(super) fn endpoint(&self) -> OtlpEndpoint {
        self.base.parse().expect("the receiver's URL")
    }

    /// The spans received so far (the senders have flushed: their
    /// shutdown returned once the receiver answered).
    pub(super) fn spans(&mut self) -> Vec<Seen> {
        let mut seen = Vec::new();
        while let Ok(request) = self.requests.try_recv() {
            flatten(request, &mut seen);
        }
        seen
    }

    /// Waits (at most 20 s) for the next export, then takes all there is.
    pub(super) async fn next_spans(&mut self) -> Vec<Seen> {
        let first = tokio::time::timeout(Duration::from_secs(20), self.requests.recv())
            .await
            .expect("an export within 20 s")
            .expect("the receiver runs");
        let mut seen = Vec::new();
        flatten(first, &mut seen);
        seen.extend(self.spans());
        seen
    }
}

pub(super) fn flatten(request: ExportTraceServiceRequest, out: &mut Vec<Seen>) {
    for resource_spans in request.resource_spans {
        let resource = resource_spans
            .resource
            .map(|r| r.attributes)
            .unwrap_or_default();
        for scope in resource_spans.scope_spans {
            for span in scope.spans {
                out.push(Seen {
                    resource: resource.clone(),
                    span,
                });
            }
        }
    }
}

pub(super) fn named<'a>(spans: &'a [Seen], name: &str) -> Vec<&'a Seen> {
    spans.iter().filter(|s| s.span.name == name).collect()
}
