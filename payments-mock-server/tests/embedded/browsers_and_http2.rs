//! What docs/mock-server.md says of browsers and HTTP/2, held to the
//! server: HTTP/1.x only (an h2c upgrade answered as HTTP/1.1, a client
//! with prior knowledge of HTTP/2 only closed on), no CORS (a preflight
//! is a journaled 405 counted under `outside`, no `Access-Control-*`), and
//! exactly which controls a page of another site is refused (403).

use std::time::Duration;

use payments_mock_server::MockServer;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

use super::call;

/// The guide, as the user reads it.
fn guide() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/mock-server.md");
    std::fs::read_to_string(path).expect("docs/mock-server.md")
}

/// The guide with its lines joined by spaces (a phrase may wrap).
fn guide_flat() -> String {
    guide().split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Sends `bytes` to the server at `root` on its own connection and reads
/// until it closes (bounded: a server that never closes fails the test).
async fn exchange(root: &str, bytes: &[u8]) -> Vec<u8> {
    let address = root.trim_start_matches("http://").trim_end_matches('/');
    let mut stream = TcpStream::connect(address).await.expect("a connection");
    stream.write_all(bytes).await.expect("sent");
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(20), stream.read_to_end(&mut answer))
        .await
        .expect("the server closes the connection")
        .ok();
    answer
}

#[tokio::test]
async fn http2_is_not_spoken_and_the_guide_says_so() {
    let server = MockServer::start().await;
    let root = server.base_url().trim_end_matches('/').to_owned();
    let host = root.trim_start_matches("http://");

    // An upgrade to h2c: answered as HTTP/1.1, the upgrade ignored.
    let upgrade = format!(
        "GET /_mock/health HTTP/1.1\r\nHost: {host}\r\n\
         Connection: Upgrade, HTTP2-Settings, close\r\nUpgrade: h2c\r\n\
         HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n"
    );
    let answer = exchange(&root, upgrade.as_bytes()).await;
    let text = String::from_utf8_lossy(&answer);
    assert!(text.starts_with("HTTP/1.1 200 "), "{text}");

    // HTTP/2 with prior knowledge: its preface and an empty SETTINGS
    // frame. No HTTP/2 frame comes back, only the connection closed.
    let mut preface = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    preface.extend_from_slice(&[0, 0, 0, 4, 0, 0, 0, 0, 0]);
    let answer = exchange(&root, &preface).await;
    // A SETTINGS frame would start with a 3-byte length and type 4.
    assert!(
        answer.len() < 9 || answer[3] != 4,
        "an HTTP/2 frame: {answer:?}"
    );
    assert!(!answer.starts_with(b"HTTP/2"), "{answer:?}");

    let guide = guide_flat();
    assert!(guide.contains("**HTTP/1.x only.**"), "the guide says it");
    assert!(guide.contains("--http2-prior-knowledge"));
}

#[tokio::test]
async fn a_preflight_is_a_journaled_405_without_cors_and_the_guide_says_so() {
    let server = MockServer::start().await;
    let root = server.base_url().trim_end_matches('/').to_owned();
    let client = reqwest::Client::new();
    let answer = client
        .request(
            reqwest::Method::OPTIONS,
            format!("{root}/api/payments/initiate"),
        )
        .header("origin", "https://shop.example")
        .header("access-control-request-method", "POST")
        .header(
            "access-control-request-headers",
            "authorization, content-type",
        )
        .send()
        .await
        .expect("an answer");
    assert_eq!(answer.status(), 405);
    let cors: Vec<_> = answer
        .headers()
        .keys()
        .filter(|name| name.as_str().starts_with("access-control-"))
        .collect();
    assert!(cors.is_empty(), "{cors:?}");

    let (_, page) = call(
        &client,
        reqwest::Method::GET,
        format!("{root}/_mock/requests"),
        None,
    )
    .await;
    let items = page["data"]["items"].as_array().expect("items");
    assert_eq!(items.len(), 1, "{page}");
    assert_eq!(items[0]["method"], "OPTIONS");
    assert_eq!(items[0]["status"], 405);
    let (_, coverage) = call(
        &client,
        reqwest::Method::GET,
        format!("{root}/_mock/coverage"),
        None,
    )
    .await;
    assert_eq!(
        coverage["data"]["outside"],
        json!([{ "name": "initiate 405 METHOD_NOT_ALLOWED", "count": 1 }])
    );

    let guide = guide_flat();
    assert!(guide.contains("**No CORS.**"), "the guide says it");
    assert!(guide.contains("goes through its own backend"));
}

/// Every control that changes the mock, as the guide lists them: `true`
/// where it is under a sandbox as well as at the root.
const CONTROLS: [(&str, &str, bool); 8] = [
    ("POST", "/_mock/reset", true),
    ("POST", "/_mock/clock/advance", true),
    ("POST", "/_mock/transactions/{id}/payer", true),
    ("POST", "/_mock/faults", true),
    ("DELETE", "/_mock/faults", true),
    ("DELETE", "/_mock/faults/{ruleId}", true),
    ("POST", "/_mock/sandboxes", false),
    ("DELETE", "/_mock/sandboxes/{sandboxId}", false),
];

#[tokio::test]
async fn every_control_refuses_another_site_and_the_guide_lists_each() {
    let server = MockServer::start().await;
    let root = server.base_url().trim_end_matches('/').to_owned();
    let client = reqwest::Client::new();
    let (status, made) = call(
        &client,
        reqwest::Method::POST,
        format!("{root}/_mock/sandboxes"),
        Some(json!({})),
    )
    .await;
    assert_eq!(status, 201, "{made}");
    let sandbox = format!(
        "{root}/sandboxes/{}",
        made["data"]["id"].as_str().expect("an id")
    );
    let id = "00000000-0000-4000-8000-000000000000";
    // The guide's list: from the console's forms to the 403.
    let guide = guide_flat();
    let start = guide
        .find("They only accept posts from the console itself")
        .expect("the guide's list");
    let end = start + guide[start..].find("is 403 `FORBIDDEN`").expect("its end");
    let list = &guide[start..end];
    assert_eq!(
        list.matches("`POST /_mock/").count() + list.matches("`DELETE /_mock/").count(),
        CONTROLS.len(),
        "these and no others: {list}"
    );
    for (method, template, in_sandbox) in CONTROLS {
        assert!(
            list.contains(&format!("`{method} {template}`")),
            "the guide lists {method} {template}: {list}"
        );
        let path = template
            .replace("{id}", id)
            .replace("{ruleId}", id)
            .replace("{sandboxId}", id);
        let bases = if in_sandbox {
            vec![root.as_str(), sandbox.as_str()]
        } else {
            vec![root.as_str()]
        };
        for base in bases {
            let method = reqwest::Method::from_bytes(method.as_bytes()).expect("a method");
            let answer = client
                .request(method.clone(), format!("{base}{path}"))
                .header("origin", "https://elsewhere.example")
                .header("content-type", "application/json")
                .body(json!({ "seconds": 1 }).to_string())
                .send()
                .await
                .expect("an answer");
            let status = answer.status();
            let body: Value = answer.json().await.expect("the envelope");
            assert_eq!(status, 403, "{method} {base}{path}: {body}");
            assert_eq!(body["errorCode"], "FORBIDDEN");
        }
    }
    // A read is not refused (a page elsewhere still cannot read it: no
    // CORS).
    let answer = client
        .get(format!("{root}/_mock/requests"))
        .header("origin", "https://elsewhere.example")
        .send()
        .await
        .expect("an answer");
    assert_eq!(answer.status(), 200);
}
