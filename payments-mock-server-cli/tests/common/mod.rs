//! Shared helpers: in-process calls on the router, request bodies, and
//! redaction of ids and times for snapshots.

#![allow(dead_code)]

pub mod raw;

use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, Method, Request, StatusCode};
use chrono::{DateTime, Utc};
use http_body_util::BodyExt;
use payments_mock_server::domain::port::{PageQuery, Store};
use payments_mock_server::domain::transaction::{Record, issued_id};
use payments_mock_server::http::app;
use payments_mock_server::state::AppState;
use payments_mock_server::{Config, JournalEntry};
use serde_json::{Value, json};
use tower::ServiceExt;

pub const MERCHANT: &str = "6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60";
pub const OTHER_MERCHANT: &str = "0b0c8a9e-52a4-4c2e-8f6f-2f8f3c4d5e6a";

/// A response as a test sees it.
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Value,
    pub raw: Vec<u8>,
}

impl Reply {
    pub fn code(&self) -> &str {
        self.body["errorCode"].as_str().unwrap_or("")
    }

    pub fn message(&self) -> &str {
        self.body["message"].as_str().unwrap_or("")
    }

    pub fn data(&self) -> &Value {
        &self.body["data"]
    }
}

/// A fresh in-process service with the default configuration.
pub fn service() -> (AppState, Router) {
    service_with(Config::default())
}

pub fn service_with(config: Config) -> (AppState, Router) {
    let state = AppState::new(config);
    (state.clone(), app(state))
}

/// Moves the virtual clock of `state`'s store forward by `by`.
pub async fn advance(state: &AppState, by: Duration) {
    state
        .store
        .advance_clock(by)
        .await
        .expect("the store advances its clock")
        .expect("the clock has room for the advance");
}

/// Virtual now of `state`'s store.
pub async fn now(state: &AppState) -> DateTime<Utc> {
    state.store.now().await.expect("the store reads its clock")
}

/// The offset of `state`'s clock from real time, in nanoseconds.
pub async fn clock_offset(state: &AppState) -> i64 {
    state
        .store
        .clock()
        .await
        .expect("the store reads its clock")
        .offset_nanos
}

/// How many transactions `state`'s store holds.
pub async fn count(state: &AppState) -> usize {
    state.store.count().await.expect("the store counts")
}

/// Every stored transaction, oldest first.
pub async fn records(state: &AppState) -> Vec<Record> {
    state
        .store
        .page(
            &PageQuery::oldest_first(None, usize::MAX),
            |_| true,
            Record::clone,
        )
        .await
        .expect("the store pages")
        .expect("a page from the start")
        .items
}

/// The stored transaction `id` (as issued), if there is one.
pub async fn record(state: &AppState, id: &str) -> Option<Record> {
    let id = issued_id(id)?;
    state
        .store
        .with_id(id, None, Record::clone)
        .await
        .expect("the store looks up")
}

/// The request journal, oldest first (every entry kept).
pub async fn journal(state: &AppState) -> Vec<JournalEntry> {
    state
        .store
        .requests_since(0, 1000)
        .await
        .expect("the store reads its journal")
}

/// Sends one request through the router (`oneshot`).
pub async fn send(router: &Router, request: Request<Body>) -> Reply {
    let response = router
        .clone()
        .oneshot(request)
        .await
        .expect("the router is infallible");
    let status = response.status();
    let headers = response.headers().clone();
    let raw = response
        .into_body()
        .collect()
        .await
        .expect("in-memory body")
        .to_bytes()
        .to_vec();
    let body = serde_json::from_slice(&raw).unwrap_or(Value::Null);
    Reply {
        status,
        headers,
        body,
        raw,
    }
}

pub fn request(method: Method, uri: &str, body: Option<&str>) -> Request<Body> {
    let mut builder = Request::builder().method(method).uri(uri);
    if body.is_some() {
        builder = builder.header("content-type", "application/json");
    }
    builder
        .body(body.map_or_else(Body::empty, |b| Body::from(b.to_owned())))
        .expect("valid test request")
}

pub async fn get(router: &Router, uri: &str) -> Reply {
    send(router, request(Method::GET, uri, None)).await
}

pub async fn post(router: &Router, uri: &str, body: &Value) -> Reply {
    send(router, request(Method::POST, uri, Some(&body.to_string()))).await
}

/// A valid initiate body for `product`.
pub fn initiate_body(reference: &str, product: &str) -> Value {
    json!({
        "merchantId": MERCHANT,
        "referenceNo": reference,
        "amount": 15000,
        "productCode": product,
        "storeId": "S1",
        "payerId": "60123456789",
    })
}

pub async fn initiate(router: &Router, body: &Value) -> Reply {
    post(router, "/api/payments/initiate", body).await
}

/// Initiates `product` and returns the transaction id.
pub async fn initiated(router: &Router, reference: &str, product: &str) -> String {
    let reply = initiate(router, &initiate_body(reference, product)).await;
    assert_eq!(reply.status, StatusCode::OK, "{:?}", reply.body);
    reply.data()["transactionId"]
        .as_str()
        .expect("transactionId")
        .to_owned()
}

pub async fn confirm(router: &Router, id: &str, reference: &str, code: Option<&str>) -> Reply {
    let mut body = json!({ "transactionId": id, "referenceNo": reference });
    if let Some(code) = code {
        body["confirmationCode"] = json!(code);
    }
    post(router, "/api/payments/confirm", &body).await
}

pub async fn status(router: &Router, id: &str) -> Reply {
    get(router, &format!("/api/payments/{id}/status")).await
}

fn is_uuid_at(bytes: &[u8], i: usize) -> bool {
    const SHAPE: [usize; 5] = [8, 4, 4, 4, 12];
    let mut pos = i;
    for (n, len) in SHAPE.iter().enumerate() {
        for _ in 0..*len {
            match bytes.get(pos) {
                Some(b) if b.is_ascii_hexdigit() => pos += 1,
                _ => return false,
            }
        }
        if n < 4 {
            if bytes.get(pos) != Some(&b'-') {
                return false;
            }
            pos += 1;
        }
    }
    true
}

/// Replaces every UUID inside `text` by `[uuid]`.
pub fn redact_uuids(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    while i < bytes.len() {
        if is_uuid_at(bytes, i) {
            out.push_str("[uuid]");
            i += 36;
        } else {
            let ch = text[i..].chars().next().expect("in bounds");
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

/// Redacts ids, times and provider references for snapshots.
pub fn redact(value: &Value) -> Value {
    match value {
        Value::String(s) => Value::String(redact_uuids(s)),
        Value::Array(items) => Value::Array(items.iter().map(redact).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let redacted = match (k.as_str(), v) {
                        (_, Value::Null) => Value::Null,
                        (k, _) if k.ends_with("At") || k == "now" => json!("[time]"),
                        ("providerReference", _) => json!("[providerReference]"),
                        _ => redact(v),
                    };
                    (k.clone(), redacted)
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Pretty JSON text for snapshots; numbers keep their literal text
/// (`150.00`), which insta's own JSON serializer would not show.
pub fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).expect("a Value always serializes")
}

/// POSTs `body` as JSON to `url` over real HTTP (a server on a port, not
/// the router in-process) and returns the envelope it answers.
pub async fn post_over_http(url: &str, body: &Value) -> Value {
    reqwest::Client::new()
        .post(url)
        .json(body)
        .send()
        .await
        .expect("sent")
        .json()
        .await
        .expect("an envelope")
}

/// Spawns `cmd` (the mock binary, its flags and stderr already set) with
/// stdout piped, reads its `listening on http://HOST:PORT` banner, and
/// returns the child and the base URL.
pub fn spawn_with_banner(cmd: &mut std::process::Command) -> (std::process::Child, String) {
    use std::io::BufRead as _;
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("banner");
    let base = line
        .trim_end()
        .strip_prefix("listening on ")
        .expect("banner shape")
        .to_owned();
    (child, base)
}

/// The `HOST:PORT` of a base URL from [`spawn_with_banner`].
pub fn address_of(base: &str) -> &str {
    base.strip_prefix("http://").expect("an http base URL")
}

/// Sends SIGTERM to a child from [`spawn_with_banner`], asserts that it
/// exits 0 (COMMANDS.md), and returns what it wrote to stderr (piped).
pub fn terminate_expecting_success(child: std::process::Child) -> String {
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    let output = child.wait_with_output().expect("exit");
    assert!(output.status.success(), "{:?}", output.status);
    String::from_utf8_lossy(&output.stderr).into_owned()
}
