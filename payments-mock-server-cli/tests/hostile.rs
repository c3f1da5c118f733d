//! Hostile input: each gets a clear envelope, never a panic, never a hang.

use std::net::SocketAddr;
use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderValue, Method, Request};
use payments_mock_server::MockServer;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::common::{Reply, get, request, send, service};

fn assert_envelope(reply: &Reply, status: u16, code: &str) {
    assert_eq!(
        reply.status.as_u16(),
        status,
        "{}",
        String::from_utf8_lossy(&reply.raw)
    );
    assert_eq!(reply.code(), code);
    assert_eq!(reply.body["isSuccess"], false);
}

/// A small deterministic generator, so failures reproduce.
fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x.to_le_bytes()[0]
        })
        .collect()
}

#[tokio::test]
async fn random_byte_bodies_are_validation_errors() {
    let (_, router) = service();
    for seed in 1..50u64 {
        let bytes = noise(seed, (seed as usize * 37) % 2000 + 1);
        for path in [
            "/api/payments/initiate",
            "/api/payments/confirm",
            "/_mock/clock/advance",
        ] {
            let req = Request::post(path)
                .header("content-type", "application/json")
                .body(Body::from(bytes.clone()))
                .expect("request");
            let reply = send(&router, req).await;
            assert_envelope(&reply, 400, "VALIDATION_ERROR");
            assert!(
                reply
                    .message()
                    .starts_with("request body is not valid JSON")
            );
        }
    }
}

#[tokio::test]
async fn one_hundred_thousand_open_brackets_are_a_parse_error_not_a_stack_overflow() {
    let (_, router) = service();
    let deep = "[".repeat(100_000);
    // Over 64 KiB: too large before it is parsed.
    let reply = send(
        &router,
        request(Method::POST, "/api/payments/initiate", Some(&deep)),
    )
    .await;
    assert_envelope(&reply, 413, "PAYLOAD_TOO_LARGE");
    // Under the limit, still far deeper than the parser allows.
    let deep = format!("{{\"a\":{}", "[".repeat(60_000));
    let reply = send(
        &router,
        request(Method::POST, "/api/payments/initiate", Some(&deep)),
    )
    .await;
    assert_envelope(&reply, 400, "VALIDATION_ERROR");
    assert!(
        reply.message().contains("recursion limit"),
        "{}",
        reply.message()
    );
}

#[tokio::test]
async fn a_ten_megabyte_body_is_payload_too_large() {
    let (_, router) = service();
    let big = vec![b' '; 10 * 1024 * 1024];
    let req = Request::post("/api/payments/initiate")
        .header("content-type", "application/json")
        .body(Body::from(big))
        .expect("request");
    let reply = send(&router, req).await;
    assert_envelope(&reply, 413, "PAYLOAD_TOO_LARGE");
}

async fn raw(addr: SocketAddr, request: &[u8]) -> Vec<u8> {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    // The server may answer and close before reading it all.
    let _ = stream.write_all(request).await;
    let mut out = Vec::new();
    let finished = tokio::time::timeout(Duration::from_secs(10), async {
        let mut buf = [0u8; 4096];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => out.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    assert!(finished.is_ok(), "hang");
    out
}

#[tokio::test]
async fn a_declared_ten_megabyte_body_is_refused_over_tcp_before_it_is_sent() {
    let server = MockServer::start().await;
    let head = format!(
        "POST /api/payments/initiate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        10 * 1024 * 1024
    );
    let bytes = raw(server.addr(), head.as_bytes()).await;
    let text = String::from_utf8_lossy(&bytes);
    assert!(text.starts_with("HTTP/1.1 413"), "{text}");
    assert!(text.contains("PAYLOAD_TOO_LARGE"));
}

/// RFC 9112, section 3.2: an HTTP/1.1 request without a `Host`, with
/// two, or with one that is not a host and port is a 400 envelope, and
/// never reaches the service (nothing journaled); HTTP/1.0 needs none.
#[tokio::test]
async fn a_missing_a_second_or_a_malformed_host_is_a_validation_error() {
    let server = MockServer::start().await;
    for heads in [
        "GET /api/payments/x/status HTTP/1.1\r\n",
        "GET /api/payments/x/status HTTP/1.1\r\nHost: a\r\nHost: b\r\n",
        "GET /api/payments/x/status HTTP/1.1\r\nHost: user@a\r\n",
        "GET /api/payments/x/status HTTP/1.0\r\nHost: a\r\nHost: b\r\n",
    ] {
        let bytes = raw(
            server.addr(),
            format!("{heads}Connection: close\r\n\r\n").as_bytes(),
        )
        .await;
        let text = String::from_utf8_lossy(&bytes);
        // An HTTP/1.0 request is answered in HTTP/1.0.
        assert!(
            text.starts_with("HTTP/1.1 400") || text.starts_with("HTTP/1.0 400"),
            "{heads:?}: {text}"
        );
        let body = text.split("\r\n\r\n").nth(1).unwrap_or_default();
        let body: serde_json::Value = serde_json::from_str(body).expect("an envelope");
        assert_eq!(body["errorCode"], "VALIDATION_ERROR", "{heads:?}");
        assert!(
            body["message"]
                .as_str()
                .unwrap_or_default()
                .contains("Host"),
            "{body}"
        );
    }
    assert!(
        server.requests().await.is_empty(),
        "none reached the service"
    );
    let bytes = raw(
        server.addr(),
        b"GET /api/payments/x/status HTTP/1.0\r\n\r\n",
    )
    .await;
    let text = String::from_utf8_lossy(&bytes);
    assert!(
        text.starts_with("HTTP/1.0 404"),
        "HTTP/1.0 without Host: {text}"
    );
}

/// A client that shuts its side down once its request is sent (`nc -N`)
/// still gets its answer: hyper's default took that end of input for the
/// connection gone and dropped most such requests unanswered (a confirm
/// among them, cut off wherever it was).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_half_closes_after_its_request_gets_its_answer() {
    let server = MockServer::start().await;
    let client = reqwest::Client::new();
    for round in 0..20 {
        let reference = format!("HALF-{round}");
        let initiated: serde_json::Value = client
            .post(format!("{}/api/payments/initiate", server.base_url()))
            .json(&crate::common::initiate_body(&reference, "TOPUP"))
            .send()
            .await
            .expect("initiated")
            .json()
            .await
            .expect("an envelope");
        let id = initiated["data"]["transactionId"].as_str().expect("an id");
        let body = format!(r#"{{"transactionId":"{id}","referenceNo":"{reference}"}}"#);
        for request in [
            format!(
                "POST /api/payments/confirm HTTP/1.1\r\nHost: x\r\n\
                 Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            ),
            format!("GET /api/payments/{id}/status HTTP/1.1\r\nHost: x\r\n\r\n"),
        ] {
            let mut stream = TcpStream::connect(server.addr()).await.expect("connect");
            stream.write_all(request.as_bytes()).await.expect("sent");
            stream.shutdown().await.expect("half-closed");
            let mut answer = Vec::new();
            tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut answer))
                .await
                .expect("answered and closed, not a hang")
                .expect("read");
            let text = String::from_utf8_lossy(&answer);
            assert!(
                text.starts_with("HTTP/1.1 200") && text.contains("SUCCESSFUL"),
                "round {round}, {request:?}: {text:?}"
            );
        }
    }
}

/// A client that gives up during an injected `delay` (a test of its
/// timeout) left no journal entry: its handler was dropped with the
/// connection. The service carries on with a request whose client left,
/// and so does the mock: answered after the delay, journaled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_whose_client_left_during_a_delay_is_carried_out_and_journaled() {
    let server = MockServer::start().await;
    let mut stream = TcpStream::connect(server.addr()).await.expect("connect");
    stream
        .write_all(
            b"GET /api/payments/01930000-0000-7000-8000-000000000000/status HTTP/1.1\r\n\
              Host: x\r\nX-Mock-Fault: delay=300\r\nX-Request-Id: gave-up\r\n\r\n",
        )
        .await
        .expect("sent");
    drop(stream);
    // Woken when the request is journaled and counted, not polled.
    tokio::time::timeout(Duration::from_secs(10), server.answered_reach(1))
        .await
        .expect("answered and journaled within 10 s");
    let entries = server.requests().await;
    assert_eq!(entries.len(), 1, "journaled");
    assert_eq!(entries[0].request_id, "gave-up");
    assert_eq!(entries[0].fault.as_deref(), Some("delay=300"));
    assert_eq!(entries[0].status, Some(404));
}

#[tokio::test]
async fn very_long_paths_and_headers_get_envelopes() {
    let (_, router) = service();
    let long = "a".repeat(20_000);
    let reply = get(&router, &format!("/{long}")).await;
    assert_envelope(&reply, 404, "NOT_FOUND");
    let reply = get(&router, &format!("/api/payments/{long}/status")).await;
    assert_envelope(&reply, 404, "TRANSACTION_NOT_FOUND");
    let reply = get(&router, &format!("/api/payments/reference/{long}/status")).await;
    assert_envelope(&reply, 404, "TRANSACTION_NOT_FOUND");
    let req = Request::get("/_mock/health")
        .header("x-long", "v".repeat(60_000))
        .header("x-request-id", "r".repeat(129))
        .body(Body::empty())
        .expect("request");
    let reply = send(&router, req).await;
    assert_eq!(reply.status, 200);
    assert_ne!(reply.headers["x-request-id"], "r".repeat(129).as_str());

    let server = MockServer::start().await;
    let req = format!(
        "GET /{} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        "p".repeat(8000)
    );
    let text = String::from_utf8_lossy(&raw(server.addr(), req.as_bytes()).await).into_owned();
    assert!(
        text.starts_with("HTTP/1.1 404") && text.contains("NOT_FOUND"),
        "{text}"
    );
}

#[tokio::test]
async fn odd_request_ids_are_replaced() {
    let (_, router) = service();
    for bad in [&b"a\tb"[..], b"caf\xc3\xa9", b"a b", b"\x7f"] {
        let Ok(value) = HeaderValue::from_bytes(bad) else {
            continue;
        };
        let req = Request::get("/_mock/health")
            .header("x-request-id", value.clone())
            .body(Body::empty())
            .expect("request");
        let reply = send(&router, req).await;
        assert_eq!(reply.status, 200);
        let echoed = &reply.headers["x-request-id"];
        assert_ne!(echoed, &value);
        assert!(echoed.as_bytes().iter().all(|b| (0x21..=0x7e).contains(b)));
    }
}

#[tokio::test]
async fn control_characters_and_crlf_in_request_id_over_tcp_never_break_the_server() {
    let server = MockServer::start().await;
    for id in ["a\u{1}b", "a\rb", "a\r\nX-Injected: 1"] {
        let req = format!(
            "GET /_mock/health HTTP/1.1\r\nHost: x\r\nX-Request-Id: {id}\r\nConnection: close\r\n\r\n"
        );
        let text = String::from_utf8_lossy(&raw(server.addr(), req.as_bytes()).await).into_owned();
        // Either a malformed request (hyper's 400) or a normal answer whose
        // id is not the caller's; never an echo of the injected header.
        assert!(text.starts_with("HTTP/1.1 "), "{text:?}");
        assert!(!text.to_ascii_lowercase().contains("x-injected"), "{text}");
    }
    let health = reqwest::get(format!("{}/_mock/health", server.base_url()))
        .await
        .expect("alive");
    assert_eq!(health.status(), 200);
}

/// An id or reference that is not UTF-8 once decoded is not empty, so not
/// the document's 400: it is no stored transaction's, simply unknown
/// (CONTRACT section 3), and the message says why.
#[tokio::test]
async fn invalid_utf8_in_path_segments_is_an_unknown_transaction() {
    let (_, router) = service();
    let reply = get(&router, "/api/payments/%FF/status").await;
    assert_envelope(&reply, 404, "TRANSACTION_NOT_FOUND");
    assert!(
        reply.message().contains("%FF (not UTF-8"),
        "{}",
        reply.message()
    );
    let reply = get(&router, "/api/payments/reference/%C3%28/status").await;
    assert_envelope(&reply, 404, "TRANSACTION_NOT_FOUND");
    assert!(
        reply.message().contains("referenceNo %C3%28"),
        "{}",
        reply.message()
    );
    let reply = get(&router, "/api/payments/reference/%zz/status").await;
    assert_envelope(&reply, 404, "TRANSACTION_NOT_FOUND");
}

#[tokio::test]
async fn bad_query_strings_do_not_panic() {
    let (_, router) = service();
    let reply = get(
        &router,
        "/_mock/transactions?limit=%FF&merchantId=%00&after=",
    )
    .await;
    assert_envelope(&reply, 400, "VALIDATION_ERROR");
    let reply = get(&router, "/_mock/requests?limit=0").await;
    assert_envelope(&reply, 400, "VALIDATION_ERROR");
    let reply = get(
        &router,
        "/api/payments/reference/R/status?merchantId=%FF%FE",
    )
    .await;
    assert_envelope(&reply, 400, "VALIDATION_ERROR");
}
