//! A header sent more than once keeps all its values in the journal:
//! `headers` joins them (`, `, a `Cookie`'s by `; `), `headerLines` has
//! each line as it came, and a secret sent twice is redacted in both.
//! Sent over a real socket, byte by byte as written here.

use payments_mock_server::MockServer;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

use super::call;

const TRACE_A: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
const TRACE_B: &str = "00-11111111111111111111111111111111-2222222222222222-01";

/// Sends `head` (a request line and header lines, no blank line) to the
/// server at `root` on its own connection, and reads the answer to its
/// end.
async fn send_raw(root: &str, head: &str) -> String {
    let address = host(root);
    let mut stream = TcpStream::connect(address).await.expect("a connection");
    let request = format!("{head}Host: {address}\r\nConnection: close\r\n\r\n");
    stream
        .write_all(request.as_bytes())
        .await
        .expect("the request sent");
    let mut answer = Vec::new();
    stream
        .read_to_end(&mut answer)
        .await
        .expect("the answer read");
    String::from_utf8_lossy(&answer).into_owned()
}

/// The journal's newest item at `base`.
async fn newest(base: &str) -> Value {
    let client = reqwest::Client::new();
    let (status, page) = call(
        &client,
        reqwest::Method::GET,
        format!("{base}/_mock/requests?limit=1"),
        None,
    )
    .await;
    assert_eq!(status, 200, "{page}");
    page["data"]["items"][0].clone()
}

/// `HOST:PORT` of a server's root URL.
fn host(root: &str) -> &str {
    root.trim_start_matches("http://").trim_end_matches('/')
}

fn lines(item: &Value) -> Vec<(String, String)> {
    item["headerLines"]
        .as_array()
        .expect("headerLines")
        .iter()
        .map(|line| {
            let pair = line.as_array().expect("a pair");
            assert_eq!(pair.len(), 2, "{line}");
            (
                pair[0].as_str().expect("a name").to_owned(),
                pair[1].as_str().expect("a value").to_owned(),
            )
        })
        .collect()
}

fn owned(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
        .collect()
}

/// Sends repeated headers to `{root}{prefix}/api/`, reads the journal at
/// `{root}{prefix}/_mock/requests`.
async fn repeated_headers_are_all_kept_at(root: &str, prefix: &str) {
    let head = format!(
        "GET {prefix}/api/payments/T-1/status HTTP/1.1\r\n\
         X-Shop: a\r\n\
         Authorization: Bearer sk_first_canary\r\n\
         X-Shop: b\r\n\
         Cookie: theme=dark\r\n\
         traceparent: {TRACE_A}\r\n\
         Cookie: payments_mock_session=session_canary; lang=en\r\n\
         Authorization: Bearer sk_second_canary\r\n\
         X-Api-Key: key_canary\r\n\
         traceparent: {TRACE_B}\r\n\
         X-Shop: c\r\n"
    );
    let answer = send_raw(root, &head).await;
    assert!(answer.starts_with("HTTP/1.1 "), "{answer}");

    let item = newest(&format!("{root}{prefix}")).await;
    let text = item.to_string();
    assert!(!text.contains("canary"), "no secret shown: {text}");
    let headers = &item["headers"];
    assert_eq!(headers["x-shop"], "a, b, c", "{headers}");
    assert_eq!(
        headers["cookie"],
        "theme=dark; payments_mock_session=[redacted]; lang=en"
    );
    assert_eq!(headers["traceparent"], format!("{TRACE_A}, {TRACE_B}"));
    assert_eq!(headers["authorization"], "[redacted], [redacted]");
    assert_eq!(headers["x-api-key"], "[redacted]");
    // Each line, in the order sent; a repeated header's lines together,
    // where its first came (as the HTTP library hands them over).
    let host = host(root);
    assert_eq!(
        lines(&item),
        owned(&[
            ("x-shop", "a"),
            ("x-shop", "b"),
            ("x-shop", "c"),
            ("authorization", "[redacted]"),
            ("authorization", "[redacted]"),
            ("cookie", "theme=dark"),
            ("cookie", "payments_mock_session=[redacted]; lang=en"),
            ("traceparent", TRACE_A),
            ("traceparent", TRACE_B),
            ("x-api-key", "[redacted]"),
            ("host", host),
            ("connection", "close"),
        ])
    );
    // Every line is in `headers`, and nothing else is.
    let names = headers.as_object().expect("headers").len();
    assert_eq!(names, 7, "{headers}");
    // A repeated traceparent is ignored, as before.
    assert_eq!(item["traceId"], Value::Null);
}

#[tokio::test]
async fn a_repeated_header_keeps_all_its_values_and_its_secrets_stay_hidden() {
    let server = MockServer::start().await;
    let base = server.base_url().trim_end_matches('/').to_owned();
    repeated_headers_are_all_kept_at(&base, "").await;

    // Under a sandbox, the same.
    let client = reqwest::Client::new();
    let (status, made) = call(
        &client,
        reqwest::Method::POST,
        format!("{base}/_mock/sandboxes"),
        Some(json!({})),
    )
    .await;
    assert_eq!(status, 201, "{made}");
    let id = made["data"]["id"].as_str().expect("an id");
    repeated_headers_are_all_kept_at(&base, &format!("/sandboxes/{id}")).await;
}

#[tokio::test]
async fn headers_sent_once_are_as_before() {
    let server = MockServer::start().await;
    let base = server.base_url().trim_end_matches('/').to_owned();
    let head = format!(
        "GET /api/payments/T-2/status HTTP/1.1\r\n\
         X-Shop: one\r\n\
         traceparent: {TRACE_A}\r\n"
    );
    send_raw(&base, &head).await;
    let item = newest(&base).await;
    let host = host(&base);
    assert_eq!(
        item["headers"],
        json!({
            "x-shop": "one",
            "traceparent": TRACE_A,
            "host": host,
            "connection": "close",
        })
    );
    assert_eq!(
        lines(&item),
        owned(&[
            ("x-shop", "one"),
            ("traceparent", TRACE_A),
            ("host", host),
            ("connection", "close"),
        ])
    );
    assert_eq!(item["traceId"], "0af7651916cd43dd8448eb211c80319c");
}

/// The document describes `headerLines` (schemathesis checks the answers
/// against it): an entry with repeated headers matches it, and a line that
/// is not a pair of strings does not.
#[cfg(feature = "openapi")]
#[tokio::test]
async fn the_document_describes_the_header_lines() {
    let server = MockServer::start().await;
    let base = server.base_url().trim_end_matches('/').to_owned();
    repeated_headers_are_all_kept_at(&base, "").await;
    let item = newest(&base).await;
    let doc: Value = reqwest::get(format!("{base}/openapi.json"))
        .await
        .expect("an answer")
        .json()
        .await
        .expect("the document");
    let schema = &doc["components"]["schemas"]["JournalItem"];
    let required = schema["required"].as_array().expect("required");
    assert!(required.contains(&json!("headerLines")), "{schema}");
    let root = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "components": doc["components"],
        "$ref": "#/components/schemas/JournalItem",
    });
    let validator = jsonschema::validator_for(&root).expect("the schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(&item)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}: {item}");
    for wrong in [
        json!([["x-shop"]]),
        json!([["x-shop", 1]]),
        json!({"x-shop": "a"}),
    ] {
        let mut bad = item.clone();
        bad["headerLines"] = wrong;
        assert!(!validator.is_valid(&bad), "{bad}");
    }
}
