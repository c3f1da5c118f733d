//! The pass-through (docs/contract-proxy.md, "What passes through"): what
//! the application sends reaches the upstream unchanged, and what the
//! upstream answers reaches the application unchanged plus
//! `X-Contract-Verdict`, whatever its bytes, size, encoding or status; the
//! upstream's failures are the proxy's own `502 UPSTREAM_UNAVAILABLE`;
//! `--enforce` replaces only a violation; nothing is retried.

use std::time::{Duration, Instant};

use axum::http::{HeaderMap, HeaderValue, Method};
use bytes::Bytes;
use payments_mock_server::{JUDGE_LIMIT, Level, VERDICT_HEADER};
use serde_json::{Value, json};

use crate::upstream::{
    Canned, Reply, Rig, Setup, client, failure, initiate_body, initiate_data, proxy_in_front_of,
    status_data,
};

/// `len` bytes that show a shift, a truncation or a repetition.
fn pattern(len: usize) -> Bytes {
    (0..len)
        .map(|i| (i.wrapping_mul(31) ^ (i >> 9)) as u8)
        .collect::<Vec<u8>>()
        .into()
}

/// Every value of `name`, as bytes, in order.
fn values(headers: &HeaderMap, name: &str) -> Vec<Vec<u8>> {
    headers
        .get_all(name)
        .iter()
        .map(|v| v.as_bytes().to_vec())
        .collect()
}

fn bytes_of(values: &[&str]) -> Vec<Vec<u8>> {
    values.iter().map(|v| v.as_bytes().to_vec()).collect()
}

/// Asserts two large bodies are the same bytes without printing them.
fn assert_same_bytes(got: &[u8], want: &[u8], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    let first_difference = got.iter().zip(want).position(|(a, b)| a != b);
    assert_eq!(first_difference, None, "{what}: the first differing byte");
}

/// The end-to-end headers sent with every request of the fidelity tests:
/// repeated ones, odd values, raw bytes, an empty value, credentials.
fn odd_request_headers() -> Vec<(&'static str, HeaderValue)> {
    vec![
        ("x-twice", HeaderValue::from_static("first")),
        ("x-twice", HeaderValue::from_static("second, with a comma")),
        (
            "x-odd",
            HeaderValue::from_static("a,  b ;q=\"x, y\"\t;  \\escaped\\ {}[]<>=@?"),
        ),
        (
            "x-raw-bytes",
            HeaderValue::from_bytes(b"caf\xe9 \xff\x80 na\xefve").expect("obs-text is a value"),
        ),
        ("x-empty", HeaderValue::from_static("")),
        (
            "authorization",
            HeaderValue::from_static("Bearer sk_test_1"),
        ),
        ("cookie", HeaderValue::from_static("a=1; b=2")),
        ("cookie", HeaderValue::from_static("c=3")),
        ("accept-encoding", HeaderValue::from_static("gzip, br")),
        ("x-request-id", HeaderValue::from_static("req-0001")),
        (
            "content-type",
            HeaderValue::from_static("application/octet-stream; x=\"1\""),
        ),
    ]
}

#[tokio::test]
async fn method_path_query_body_and_end_to_end_headers_reach_the_upstream_unchanged() {
    let rig = Rig::start().await;
    let path = "/api/v2/things/a%20b/~x.y/%2F/caf%C3%A9";
    let query = "b=2&a=1&a=%2F%20x&empty=&flag&q=caf%C3%A9&plus=a+b&semi=1;2";
    let body = pattern(4099);
    let methods = [
        Method::POST,
        Method::PUT,
        Method::PATCH,
        Method::DELETE,
        Method::GET,
        Method::OPTIONS,
        Method::from_bytes(b"REPORT").expect("an extension method"),
    ];
    for method in &methods {
        rig.upstream.push(Canned::raw(200, "seen"));
        let mut request = rig
            .client
            .request(method.clone(), rig.url(&format!("{path}?{query}")));
        for (name, value) in odd_request_headers() {
            request = request.header(name, value);
        }
        let reply = Reply::of(
            request
                .body(body.clone())
                .send()
                .await
                .expect("the proxy answers"),
        )
        .await;
        assert_eq!((reply.status, &reply.body[..]), (200, &b"seen"[..]));
        assert_eq!(reply.verdict(), "pass", "{method}: not a document endpoint");

        let received = rig
            .upstream
            .received()
            .pop()
            .expect("the request reached the upstream");
        assert_eq!(received.method, *method);
        assert_eq!(received.path, path, "{method}: the path");
        assert_eq!(
            received.query.as_deref(),
            Some(query),
            "{method}: the query"
        );
        assert_same_bytes(&received.body, &body, "the request body");
        for name in [
            "x-twice",
            "x-odd",
            "x-raw-bytes",
            "x-empty",
            "authorization",
            "cookie",
            "accept-encoding",
            "x-request-id",
            "content-type",
        ] {
            let sent: Vec<Vec<u8>> = odd_request_headers()
                .into_iter()
                .filter(|(n, _)| *n == name)
                .map(|(_, v)| v.as_bytes().to_vec())
                .collect();
            assert_eq!(received.values(name), sent, "{method}: header {name}");
        }
        assert_eq!(
            received.values("content-length"),
            bytes_of(&[&body.len().to_string()]),
            "{method}: one Content-Length, the body's"
        );
        assert_eq!(
            received.values("host"),
            bytes_of(&[&rig.upstream.authority()]),
            "{method}: Host is the upstream's"
        );
    }
    assert_eq!(rig.upstream.count(), methods.len());
}

#[tokio::test]
async fn hop_by_hop_request_headers_are_dropped_and_host_is_the_upstreams() {
    let rig = Rig::start().await;
    rig.upstream.push(Canned::raw(200, "seen"));
    let reply = Reply::of(
        rig.client
            .get(rig.url("/api/hop"))
            .header("connection", "keep-alive, X-Private-Hop")
            .header("connection", "x-second-hop")
            .header("x-private-hop", "dropped")
            .header("x-second-hop", "dropped")
            .header("keep-alive", "timeout=5, max=100")
            .header("te", "trailers")
            .header("trailer", "x-checksum")
            .header("upgrade", "h2c")
            .header("proxy-connection", "keep-alive")
            .header("x-end-to-end", "kept")
            .send()
            .await
            .expect("the proxy answers"),
    )
    .await;
    assert_eq!(reply.status, 200);

    let hop = [
        "connection",
        "x-private-hop",
        "x-second-hop",
        "keep-alive",
        "te",
        "trailer",
        "upgrade",
        "proxy-connection",
        "transfer-encoding",
    ];
    let exchanges = rig.proxy.exchanges();
    let (exchange, _, _) = exchanges.last().expect("the exchange");
    for name in hop.iter().filter(|n| **n != "transfer-encoding") {
        assert!(
            exchange.request.header(name).is_some(),
            "the proxy received {name} (else this test proves nothing): {:?}",
            exchange.request.headers
        );
    }
    let received = rig.upstream.only_request();
    for name in hop {
        assert!(
            received.values(name).is_empty(),
            "{name} must not be forwarded: {:?}",
            received.headers
        );
    }
    assert_eq!(received.values("x-end-to-end"), bytes_of(&["kept"]));
    assert_eq!(
        received.values("host"),
        bytes_of(&[&rig.upstream.authority()])
    );
    assert_ne!(rig.upstream.authority(), rig.proxy.addr().to_string());
}

/// An answer with every kind of hop-by-hop header and end-to-end ones
/// beside them.
fn hop_by_hop_answer() -> Canned {
    Canned::raw(200, "answered")
        .header("connection", "X-Upstream-Hop")
        .header("x-upstream-hop", "dropped")
        .header("keep-alive", "timeout=7")
        .header("proxy-connection", "keep-alive")
        .header("trailer", "x-sum")
        .header("upgrade", "h2c")
        .header("te", "trailers")
        .header("x-kept", "yes")
        .header("content-type", "text/plain")
}

#[tokio::test]
async fn hop_by_hop_answer_headers_are_dropped() {
    let rig = Rig::start().await;
    let hop = [
        "connection",
        "x-upstream-hop",
        "keep-alive",
        "proxy-connection",
        "trailer",
        "upgrade",
        "te",
    ];
    // Straight from the upstream first: these headers are on the wire.
    rig.upstream.push(hop_by_hop_answer());
    let direct = Reply::of(
        client()
            .get(format!("{}/api/hop", rig.upstream.url()))
            .send()
            .await
            .expect("the upstream answers"),
    )
    .await;
    for name in hop {
        assert!(
            direct.headers.contains_key(name),
            "the upstream sends {name} (else this test proves nothing): {:?}",
            direct.headers
        );
    }

    rig.upstream.push(hop_by_hop_answer());
    let reply = rig.send(&Method::GET, "/api/hop", None).await;
    assert_eq!((reply.status, &reply.body[..]), (200, &b"answered"[..]));
    for name in hop {
        assert!(
            !reply.headers.contains_key(name),
            "{name} must not be passed back: {:?}",
            reply.headers
        );
    }
    assert_eq!(values(&reply.headers, "x-kept"), bytes_of(&["yes"]));
    assert_eq!(reply.verdict(), "pass");
}

/// A scripted answer with repeated and odd headers and raw body bytes.
fn odd_answer(status: u16, body: Bytes) -> Canned {
    Canned::raw(status, body)
        .header("set-cookie", "session=abc; Path=/; HttpOnly")
        .header("set-cookie", "theme=dark; Max-Age=60")
        .header("x-twice", "one")
        .header("x-twice", "two, three")
        .header_bytes("x-raw-bytes", b"\xe9t\xe9 \xff")
        .header("x-empty", "")
        .header("x-request-id", "upstream-req-9")
        .header("cache-control", "no-store, private")
        .header(
            "content-type",
            "application/vnd.odd+json; charset=\"utf-8\"",
        )
}

#[tokio::test]
async fn the_upstreams_status_headers_and_body_bytes_are_answered_unchanged_with_the_verdict() {
    let rig = Rig::start().await;
    let mut sent = 0;
    for status in [200, 201, 202, 203, 206, 302, 400, 404, 418, 500, 503] {
        let body = pattern(777 + usize::from(status));
        let mut canned = odd_answer(status, body.clone());
        if status == 302 {
            // Never followed: the upstream would see a second request.
            canned = canned.header("location", &format!("{}/api/elsewhere", rig.upstream.url()));
        }
        let headers: Vec<_> = canned.headers().to_vec();

        // The same answer straight from the upstream, for its exact headers.
        rig.upstream.push(canned.clone());
        let direct = Reply::of(
            client()
                .get(format!("{}/api/odd", rig.upstream.url()))
                .send()
                .await
                .expect("the upstream answers"),
        )
        .await;
        rig.upstream.push(canned);
        let reply = rig.send(&Method::GET, "/api/odd", None).await;
        sent += 2;

        assert_eq!(reply.status, status);
        assert_same_bytes(&reply.body, &body, "the answer's body");
        assert_eq!(reply.verdict(), "pass", "{status}: not a document endpoint");
        for (name, _) in &headers {
            assert_eq!(
                values(&reply.headers, name.as_str()),
                headers
                    .iter()
                    .filter(|(n, _)| n == name)
                    .map(|(_, v)| v.as_bytes().to_vec())
                    .collect::<Vec<_>>(),
                "{status}: header {name}"
            );
        }
        // Nothing added or taken away but the verdict (the date may tick).
        let mut proxied = reply.headers.clone();
        proxied.remove(VERDICT_HEADER);
        let mut straight = direct.headers.clone();
        assert!(proxied.remove("date").is_some() && straight.remove("date").is_some());
        assert_eq!(proxied, straight, "{status}: the answer's headers");
    }
    assert_eq!(rig.upstream.count(), sent, "nothing followed or retried");
}

#[tokio::test]
async fn an_upstream_path_prefix_is_kept() {
    for (prefix, expected) in [
        ("/stage", "/stage/api/payments/initiate"),
        ("/stage/", "/stage/api/payments/initiate"),
        ("/stage/v1", "/stage/v1/api/payments/initiate"),
        ("", "/api/payments/initiate"),
    ] {
        let rig = Rig::with(Setup {
            prefix,
            ..Setup::default()
        })
        .await;
        let reply = rig
            .exchange(
                &Method::POST,
                "/api/payments/initiate?channel=web",
                Some(&initiate_body("R-prefix", 1050)),
                Canned::ok(initiate_data("t-prefix", "R-prefix", 1050)),
            )
            .await;
        assert_eq!(reply.status, 200);
        let received = rig.upstream.only_request();
        assert_eq!(received.path, expected, "prefix {prefix:?}");
        assert_eq!(received.query.as_deref(), Some("channel=web"));
        // Judged as the initiate the application sent.
        assert_eq!(reply.verdict(), "pass", "prefix {prefix:?}");
        let summary = rig.proxy.summary();
        assert_eq!(summary.endpoints.get("initiate"), Some(&1));
        let exchanges = rig.proxy.exchanges();
        assert_eq!(
            exchanges.last().expect("the exchange").0.request.path,
            "/api/payments/initiate",
            "the exchange is the request as the application sent it"
        );
    }
}

#[tokio::test]
async fn answers_that_are_not_json_pass_through_byte_for_byte_as_envelope_shape_violations() {
    let rig = Rig::start().await;
    let html = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n\
                <center><h1>502 Bad Gateway</h1></center>\r\n</body>\r\n</html>\r\n";
    let cases = [
        (
            "an HTML 502",
            Canned::raw(502, html).header("content-type", "text/html"),
        ),
        (
            "a 501 with a text body",
            Canned::raw(501, "Not Implemented\n").header("content-type", "text/plain"),
        ),
        ("an empty 504", Canned::raw(504, "")),
    ];
    for (what, canned) in cases {
        let body = canned.body().clone();
        let status = canned.status();
        let content_type = values(
            &canned
                .headers()
                .iter()
                .cloned()
                .collect::<HeaderMap<HeaderValue>>(),
            "content-type",
        );
        let reply = rig
            .exchange(&Method::GET, "/api/payments/t-html/status", None, canned)
            .await;
        assert_eq!(reply.status, status, "{what}");
        assert_eq!(reply.body, body, "{what}: the very bytes");
        assert_eq!(
            values(&reply.headers, "content-type"),
            content_type,
            "{what}"
        );
        assert_eq!(reply.verdict(), "violation", "{what}");
        let exchanges = rig.proxy.exchanges();
        let (_, _, findings) = exchanges.last().expect("the exchange");
        assert!(
            findings
                .iter()
                .any(|f| f.rule == "envelope.shape" && f.level == Level::Violation),
            "{what}: {findings:?}"
        );
    }
}

/// Asserts `reply` is the proxy's own 502 `UPSTREAM_UNAVAILABLE`.
fn assert_upstream_unavailable(reply: &Reply, what: &str) {
    assert_eq!(reply.status, 502, "{what}");
    assert_eq!(reply.verdict(), "unchecked", "{what}");
    let body = reply.json();
    assert_eq!(body["isSuccess"], json!(false), "{what}: {body}");
    assert_eq!(body["errorCode"], json!("UPSTREAM_UNAVAILABLE"), "{what}");
    assert!(
        body["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{what}: {body}"
    );
    assert_eq!(body["data"], Value::Null, "{what}");
    assert_eq!(
        values(&reply.headers, "content-type"),
        bytes_of(&["application/json"]),
        "{what}"
    );
}

#[tokio::test]
async fn a_dropped_connection_or_an_answer_that_breaks_off_is_502_upstream_unavailable_unchecked() {
    let rig = Rig::start().await;
    // Straight to the upstream first: not one byte of an answer comes.
    rig.upstream.push(Canned::drop_connection());
    let direct = client()
        .get(format!("{}/api/payments/t-drop/status", rig.upstream.url()))
        .send()
        .await;
    assert!(direct.is_err(), "the upstream answered: {direct:?}");
    let reply = rig
        .exchange(
            &Method::POST,
            "/api/payments/initiate",
            Some(&initiate_body("R-drop", 1050)),
            Canned::drop_connection(),
        )
        .await;
    assert_upstream_unavailable(&reply, "a dropped connection");
    assert_eq!(rig.upstream.count(), 2, "not retried");

    let reply = rig
        .exchange(
            &Method::GET,
            "/api/payments/t-broken/status",
            None,
            Canned::raw(200, r#"{"isSuccess":true,"errorCode":null,"#)
                .header("content-type", "application/json")
                .then_break_off(),
        )
        .await;
    assert_upstream_unavailable(&reply, "an answer broken off midway");
    assert_eq!(rig.upstream.count(), 3, "not retried");

    let summary = rig.proxy.summary();
    assert_eq!(summary.verdicts.get("unchecked"), Some(&2));
    assert!(summary.rules.is_empty(), "unjudged: {:?}", summary.rules);
}

#[tokio::test]
async fn an_upstream_that_is_not_listening_is_502_upstream_unavailable_unchecked() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let addr = closed.local_addr().expect("its address");
    drop(closed);
    let proxy = proxy_in_front_of(&format!("http://{addr}"), &Setup::default()).await;
    let reply = Reply::of(
        client()
            .get(format!("{}/api/payments/t-1/status", proxy.base_url()))
            .send()
            .await
            .expect("the proxy answers"),
    )
    .await;
    assert_upstream_unavailable(&reply, "nothing listening");
    assert_eq!(proxy.summary().verdicts.get("unchecked"), Some(&1));
}

#[tokio::test]
async fn an_upstream_that_hangs_is_502_upstream_unavailable_within_the_upstream_timeout() {
    let timeout = Duration::from_millis(300);
    let rig = Rig::with(Setup {
        upstream_timeout: timeout,
        ..Setup::default()
    })
    .await;
    let cases = [
        (
            "no answer at all",
            Canned::ok(status_data("t-hang", "R-hang", "INITIATED", "1"))
                .delayed(Duration::from_secs(120)),
        ),
        (
            "the head, then a body that never ends",
            Canned::raw(200, r#"{"isSuccess":true,"#)
                .header("content-type", "application/json")
                .then_stall(),
        ),
    ];
    for (n, (what, canned)) in cases.into_iter().enumerate() {
        let started = Instant::now();
        let reply = rig
            .exchange(&Method::GET, "/api/payments/t-hang/status", None, canned)
            .await;
        let took = started.elapsed();
        assert_upstream_unavailable(&reply, what);
        assert!(
            took >= timeout - Duration::from_millis(50),
            "{what}: answered after {took:?}, before the timeout"
        );
        assert!(
            took < Duration::from_secs(5),
            "{what}: answered after {took:?}"
        );
        assert_eq!(rig.upstream.count(), n + 1, "{what}: not retried");
    }
}

#[tokio::test]
async fn bodies_larger_than_the_judging_limit_pass_through_whole_and_unchecked_never_413() {
    let rig = Rig::start().await;
    let big = JUDGE_LIMIT + 1024 * 1024;
    let request_body = pattern(big);
    let answer_body = pattern(big + 7);

    // A large request, a small answer.
    rig.upstream.push(Canned::ok(json!({})));
    let reply = Reply::of(
        rig.client
            .post(rig.url("/api/payments/initiate"))
            .header("content-type", "application/json")
            .body(request_body.clone())
            .send()
            .await
            .expect("the proxy answers"),
    )
    .await;
    assert_eq!(reply.status, 200, "never a 413");
    assert_eq!(reply.verdict(), "unchecked");
    let received = rig.upstream.only_request();
    assert_same_bytes(&received.body, &request_body, "the large request");
    assert_eq!(
        received.values("content-length"),
        bytes_of(&[&big.to_string()]),
        "one Content-Length, the body's"
    );

    // A small request, a large answer.
    rig.upstream.push(
        Canned::raw(200, answer_body.clone()).header("content-type", "application/octet-stream"),
    );
    let reply = rig
        .send(
            &Method::POST,
            "/api/payments/initiate",
            Some(&initiate_body("R-big", 1050)),
        )
        .await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.verdict(), "unchecked");
    assert_same_bytes(&reply.body, &answer_body, "the large answer");

    // Both large.
    rig.upstream.push(Canned::raw(201, answer_body.clone()));
    let reply = Reply::of(
        rig.client
            .put(rig.url("/api/payments/t-big/status"))
            .body(request_body.clone())
            .send()
            .await
            .expect("the proxy answers"),
    )
    .await;
    assert_eq!(reply.status, 201);
    assert_eq!(reply.verdict(), "unchecked");
    assert_same_bytes(&reply.body, &answer_body, "the large answer");
    let received = rig.upstream.received();
    assert_same_bytes(
        &received.last().expect("the third request").body,
        &request_body,
        "the large request",
    );

    // At the limit exactly, a body is still read whole and judged.
    rig.upstream.push(Canned::raw(200, pattern(JUDGE_LIMIT)));
    let reply = rig
        .send(&Method::GET, "/api/payments/t-edge/status", None)
        .await;
    assert_eq!(reply.body.len(), JUDGE_LIMIT);
    assert_eq!(reply.verdict(), "violation", "judged: not the envelope");

    let summary = rig.proxy.summary();
    assert_eq!(summary.verdicts.get("unchecked"), Some(&3));
    assert_eq!(rig.upstream.count(), 4);
}

/// A gzip member holding `data` in one stored (uncompressed) deflate block.
fn gzip(data: &[u8]) -> Vec<u8> {
    let mut crc = !0u32;
    for &byte in data {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            let mask = (crc & 1).wrapping_neg();
            crc = (crc >> 1) ^ (0xEDB8_8320 & mask);
        }
    }
    let len = u16::try_from(data.len()).expect("one stored block holds it");
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff, 1];
    out.extend(len.to_le_bytes());
    out.extend((!len).to_le_bytes());
    out.extend(data);
    out.extend((!crc).to_le_bytes());
    out.extend(u32::from(len).to_le_bytes());
    out
}

#[tokio::test]
async fn a_compressed_answer_passes_through_untouched_and_unchecked() {
    let rig = Rig::start().await;
    // Decoded and judged, this would be a violation (not the envelope).
    let compressed = gzip(br#"{"ok":true}"#);
    rig.upstream.push(
        Canned::raw(200, compressed.clone())
            .header("content-type", "application/json")
            .header("content-encoding", "gzip")
            .header("vary", "Accept-Encoding"),
    );
    let reply = Reply::of(
        rig.client
            .get(rig.url("/api/payments/t-gzip/status"))
            .header("accept-encoding", "gzip")
            .send()
            .await
            .expect("the proxy answers"),
    )
    .await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.body, compressed, "the compressed bytes, not decoded");
    assert_eq!(
        values(&reply.headers, "content-encoding"),
        bytes_of(&["gzip"])
    );
    assert_eq!(
        values(&reply.headers, "content-length"),
        bytes_of(&[&compressed.len().to_string()])
    );
    assert_eq!(reply.verdict(), "unchecked");
    assert_eq!(
        rig.upstream.only_request().values("accept-encoding"),
        bytes_of(&["gzip"])
    );
    assert!(rig.proxy.summary().rules.is_empty());
}

#[tokio::test]
async fn with_enforce_a_violation_is_replaced_by_502_contract_violation_and_the_rest_is_answered_unchanged()
 {
    let rig = Rig::with(Setup {
        enforce: true,
        ..Setup::default()
    })
    .await;

    let reply = rig
        .exchange(
            &Method::GET,
            "/api/payments/t-enforce/status",
            None,
            Canned::raw(502, "<html>Bad Gateway</html>").header("content-type", "text/html"),
        )
        .await;
    assert_eq!(reply.status, 502);
    assert_eq!(reply.verdict(), "violation");
    assert_eq!(reply.code(), "CONTRACT_VIOLATION");
    let body = reply.json();
    assert_eq!(body["isSuccess"], json!(false));
    assert_eq!(body["data"], Value::Null);
    let message = body["message"].as_str().expect("a message");
    assert!(message.contains("envelope.shape"), "{message}");
    assert!(
        !message.contains("http.undocumented"),
        "only violations are listed: {message}"
    );

    let mut major = initiate_data("t-enforce-2", "R-enforce-2", 1050);
    major["amount"] = json!(10.5);
    let reply = rig
        .exchange(
            &Method::POST,
            "/api/payments/initiate",
            Some(&initiate_body("R-enforce-2", 1050)),
            Canned::ok(major),
        )
        .await;
    assert_eq!(
        (reply.status, reply.code()),
        (502, "CONTRACT_VIOLATION".to_owned())
    );
    let message = reply.json()["message"].as_str().unwrap_or("").to_owned();
    assert!(
        message.contains("data.echo") && message.contains("data.fields"),
        "{message}"
    );

    // A pass, an undocumented answer, and a client finding: unchanged.
    let passing =
        Canned::ok(initiate_data("t-enforce-3", "R-enforce-3", 1050)).header("x-upstream", "kept");
    let passing_body = passing.body().clone();
    let reply = rig
        .exchange(
            &Method::POST,
            "/api/payments/initiate",
            Some(&initiate_body("R-enforce-3", 1050)),
            passing,
        )
        .await;
    assert_eq!((reply.status, reply.verdict()), (200, "pass"));
    assert_eq!(reply.body, passing_body);
    assert_eq!(values(&reply.headers, "x-upstream"), bytes_of(&["kept"]));

    let limited = Canned::failure(429, "RATE_LIMITED");
    let limited_body = limited.body().clone();
    let reply = rig
        .exchange(
            &Method::GET,
            "/api/payments/t-enforce-4/status",
            None,
            limited,
        )
        .await;
    assert_eq!((reply.status, reply.verdict()), (429, "undocumented"));
    assert_eq!(reply.body, limited_body);

    let mut not_uuid = initiate_body("R-enforce-5", 1050);
    not_uuid["merchantId"] = json!("merchant-1");
    let refused = Canned::failure(400, "VALIDATION_ERROR");
    let refused_body = refused.body().clone();
    let reply = rig
        .exchange(
            &Method::POST,
            "/api/payments/initiate",
            Some(&not_uuid),
            refused,
        )
        .await;
    assert_eq!((reply.status, reply.verdict()), (400, "pass"));
    assert_eq!(reply.body, refused_body);

    // The upstream's own failure stays UPSTREAM_UNAVAILABLE.
    let reply = rig
        .exchange(
            &Method::GET,
            "/api/payments/t-enforce-6/status",
            None,
            Canned::drop_connection(),
        )
        .await;
    assert_upstream_unavailable(&reply, "a dropped connection under --enforce");
    assert_eq!(rig.upstream.count(), 6, "each forwarded once");
}

#[tokio::test]
async fn the_report_endpoint_answers_the_running_summary_and_is_never_forwarded() {
    let rig = Rig::start().await;
    let scripted = [
        (
            Method::POST,
            "/api/payments/initiate",
            Some(initiate_body("R-report", 1050)),
            Canned::ok(initiate_data("t-report", "R-report", 1050)),
        ),
        (
            Method::GET,
            "/api/payments/t-report/status",
            None,
            Canned::raw(502, "<html>Bad Gateway</html>"),
        ),
        (
            Method::GET,
            "/api/payments/reference/R-report/status",
            None,
            Canned::failure(429, "RATE_LIMITED"),
        ),
        (
            Method::GET,
            "/api/payments/t-report/status",
            None,
            Canned::drop_connection(),
        ),
    ];
    for (method, path, body, canned) in scripted {
        rig.exchange(&method, path, body.as_ref(), canned).await;
    }
    let reply = Reply::of(
        rig.client
            .get(rig.url("/_proxy/report"))
            .send()
            .await
            .expect("the proxy answers"),
    )
    .await;
    assert_eq!(reply.status, 200);
    let body = reply.json();
    assert_eq!(body["isSuccess"], json!(true));
    assert_eq!(body["errorCode"], Value::Null);
    let data = &body["data"];
    assert_eq!(data["exchanges"], json!(4));
    assert_eq!(
        data["verdicts"],
        json!({ "pass": 1, "violation": 1, "undocumented": 1, "unchecked": 1 })
    );
    assert_eq!(
        data["endpoints"],
        json!({ "initiate": 1, "statusById": 2, "statusByReference": 1 })
    );
    let first = &data["rules"]["envelope.shape"]["first"];
    assert_eq!(first["seq"], json!(2));
    assert_eq!(first["request"], json!("GET /api/payments/t-report/status"));
    assert_eq!(first["status"], json!(502));
    assert_eq!(
        data["rules"]["code.undocumented"]["levels"],
        json!({ "undocumented": 1 })
    );
    assert_eq!(
        *data,
        serde_json::to_value(rig.proxy.summary()).expect("the summary as JSON"),
        "the report is the running summary"
    );
    assert_eq!(rig.upstream.count(), 4, "the report is the proxy's own");
}

#[tokio::test]
async fn a_path_outside_api_is_404_not_found_and_never_forwarded() {
    let rig = Rig::start().await;
    for path in [
        "/",
        "/nope",
        "/apix/payments/initiate",
        "/API/payments/initiate",
        "/payments/initiate",
        "/v1/api/payments/initiate",
        "/_mock/nothing",
        "/_proxy/nothing",
    ] {
        for method in [Method::GET, Method::POST] {
            let reply = rig
                .send(&method, path, Some(&initiate_body("R-404", 1050)))
                .await;
            assert_eq!(reply.status, 404, "{method} {path}");
            assert_eq!(reply.code(), "NOT_FOUND", "{method} {path}");
        }
    }
    assert_eq!(rig.upstream.count(), 0, "nothing was forwarded");
    assert_eq!(rig.proxy.summary().exchanges, 0);
}

#[tokio::test]
async fn nothing_is_retried() {
    let rig = Rig::start().await;
    let cases = [
        (
            Method::POST,
            "/api/payments/initiate",
            Some(initiate_body("R-retry", 1050)),
            Canned::json(500, &failure("INTERNAL_ERROR")),
            500,
        ),
        (
            Method::POST,
            "/api/payments/confirm",
            Some(json!({ "transactionId": "t-retry", "referenceNo": "R-retry" })),
            Canned::raw(503, "Service Unavailable").header("retry-after", "1"),
            503,
        ),
        (
            Method::GET,
            "/api/payments/t-retry/status",
            None,
            Canned::raw(502, ""),
            502,
        ),
        (
            Method::GET,
            "/api/payments/t-retry/status",
            None,
            Canned::drop_connection(),
            502,
        ),
        (
            Method::POST,
            "/api/payments/initiate",
            Some(initiate_body("R-retry-2", 1050)),
            Canned::drop_connection(),
            502,
        ),
    ];
    for (n, (method, path, body, canned, status)) in cases.into_iter().enumerate() {
        let reply = rig.exchange(&method, path, body.as_ref(), canned).await;
        assert_eq!(reply.status, status, "{method} {path}");
        assert_eq!(
            rig.upstream.count(),
            n + 1,
            "{method} {path} → {status}: the upstream saw it exactly once"
        );
    }
}

/// Sends `GET target` as raw bytes (no client in between to re-encode
/// it) with these extra header lines, reads until the proxy closes (a
/// guard against a hang, not a sleep), and returns the answer's status.
async fn raw_get(addr: std::net::SocketAddr, target: &str, headers: &str) -> u16 {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let mut stream = tokio::net::TcpStream::connect(addr)
        .await
        .expect("connect to the proxy");
    let request =
        format!("GET {target} HTTP/1.1\r\nHost: proxy.test\r\n{headers}Connection: close\r\n\r\n");
    stream
        .write_all(request.as_bytes())
        .await
        .expect("write the request");
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut answer))
        .await
        .expect("the proxy answers and closes")
        .expect("read the answer");
    let head = String::from_utf8_lossy(&answer);
    head.split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("an HTTP status line: {head:?}"))
}

/// Asserts each raw target reaches the upstream with exactly its path and
/// query.
async fn assert_targets_forwarded_unchanged(targets: &[(&str, Option<&str>)]) {
    let rig = Rig::start().await;
    for (n, (path, query)) in targets.iter().enumerate() {
        rig.upstream.push(Canned::raw(200, "seen"));
        let target = match query {
            Some(q) => format!("{path}?{q}"),
            None => (*path).to_owned(),
        };
        assert_eq!(
            raw_get(rig.proxy.addr(), &target, "").await,
            200,
            "{target}"
        );
        assert_eq!(rig.upstream.count(), n + 1, "{target} forwarded once");
        let received = rig.upstream.received().pop().expect("received");
        assert_eq!(
            (received.path.as_str(), received.query.as_deref()),
            (*path, *query),
            "{target}"
        );
    }
}

#[tokio::test]
async fn unusual_but_valid_path_and_query_bytes_reach_the_upstream_unchanged() {
    assert_targets_forwarded_unchanged(&[
        ("/api/x/a|b^c", Some("x=a|b^c")),
        ("/api/x/a%zzb/%2F%2f/%7e", Some("x=%2f%2F&y=%zz&z=%7e~")),
        ("/api/x;p=1/.../y", Some("a=b?c=d/e")),
        ("/api/a//b", Some("")),
        ("/api/x/..%2f..%2fadmin", None),
    ])
    .await;
}

#[tokio::test]
async fn quotes_braces_and_backslashes_in_the_path_and_query_reach_the_upstream_unchanged() {
    assert_targets_forwarded_unchanged(&[
        ("/api/x/it's", Some("name=O'Brien")),
        ("/api/x/{id}", Some("filter={a}")),
        ("/api/x/a\\b", Some("x=a\\b")),
    ])
    .await;
}

#[tokio::test]
async fn a_dot_segment_never_takes_a_request_out_of_api_or_the_upstream_prefix() {
    for prefix in ["", "/stage"] {
        let rig = Rig::with(Setup {
            prefix,
            ..Setup::default()
        })
        .await;
        for target in [
            "/api/../admin",
            "/api/%2e%2e/admin",
            "/api/payments/../../../../x",
            "/api/x/%2E%2e/%2e./y",
        ] {
            let before = rig.upstream.count();
            rig.upstream.push(Canned::raw(200, "seen"));
            let status = raw_get(rig.proxy.addr(), target, "").await;
            if rig.upstream.count() == before {
                // Refusing it is as good as forwarding it unchanged.
                assert_eq!(status, 404, "{prefix:?} {target}: refused as NOT_FOUND");
                let _ = rig.upstream.received();
            } else {
                let received = rig.upstream.received().pop().expect("received");
                assert_eq!(
                    received.path,
                    format!("{prefix}{target}"),
                    "{prefix:?} {target}: forwarded unchanged (or refused), \
                     never resolved to another path of the upstream"
                );
            }
        }
    }
}

#[tokio::test]
async fn no_header_is_added_to_a_forwarded_request() {
    let rig = Rig::start().await;
    rig.upstream.push(Canned::raw(200, "seen"));
    assert_eq!(
        raw_get(
            rig.proxy.addr(),
            "/api/payments/t-1/status",
            "X-Only: this\r\n"
        )
        .await,
        200
    );
    let received = rig.upstream.only_request();
    let mut names: Vec<&str> = received.headers.keys().map(|n| n.as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["host", "x-only"], "{:?}", received.headers);
}

#[tokio::test]
async fn an_upstreams_own_verdict_header_is_replaced_never_passed_on() {
    let rig = Rig::start().await;
    let reply = rig
        .exchange(
            &Method::GET,
            "/api/payments/t-spoof/status",
            None,
            Canned::raw(502, "<html>Bad Gateway</html>")
                .header(VERDICT_HEADER, "pass")
                .header(VERDICT_HEADER, "pass"),
        )
        .await;
    assert_eq!(reply.verdict(), "violation", "exactly one, the proxy's");
}
