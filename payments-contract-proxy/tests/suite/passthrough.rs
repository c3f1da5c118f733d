//! The pass-through (docs/contract-proxy.md, "What passes through"): what
//! the application sends reaches the upstream unchanged, and what the
//! upstream answers reaches the application unchanged plus
//! `X-Contract-Verdict`, whatever its bytes, size, encoding or status; the
//! upstream's failures are the proxy's own `502 UPSTREAM_UNAVAILABLE`;
//! `--enforce` replaces only a violation; nothing is retried.

use axum::http::{HeaderMap, HeaderValue, Method};
use bytes::Bytes;
use payments_contract_proxy::{Level, VERDICT_HEADER};

use crate::rig::{Reply, Rig, Setup, client, initiate_body, initiate_data};
use crate::upstream::Canned;

/// `len` bytes that show a shift, a truncation or a repetition.
pub(crate) fn pattern(len: usize) -> Bytes {
    (0..len)
        .map(|i| (i.wrapping_mul(31) ^ (i >> 9)) as u8)
        .collect::<Vec<u8>>()
        .into()
}

/// Every value of `name`, as bytes, in order.
pub(crate) fn values(headers: &HeaderMap, name: &str) -> Vec<Vec<u8>> {
    headers
        .get_all(name)
        .iter()
        .map(|v| v.as_bytes().to_vec())
        .collect()
}

pub(crate) fn bytes_of(values: &[&str]) -> Vec<Vec<u8>> {
    values.iter().map(|v| v.as_bytes().to_vec()).collect()
}

/// Asserts two large bodies are the same bytes without printing them.
pub(crate) fn assert_same_bytes(got: &[u8], want: &[u8], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    let first_difference = got.iter().zip(want).position(|(a, b)| a != b);
    assert_eq!(first_difference, None, "{what}: the first differing byte");
}

/// The end-to-end headers sent with every request of the fidelity tests:
/// repeated ones, odd values, raw bytes, an empty value, credentials.
pub(crate) fn odd_request_headers() -> Vec<(&'static str, HeaderValue)> {
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
        assert_eq!(
            reply.verdict(),
            "unchecked",
            "{method}: not a document endpoint"
        );

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

/// The proxy's own console session is a credential of the proxy: a
/// browser signed in to the console sends it with every request to the
/// host, and it never goes on to the service; the application's cookies
/// do, as they came.
#[tokio::test]
async fn the_proxys_own_session_cookie_never_goes_upstream() {
    let rig = Rig::start().await;
    for (sent, upstream) in [
        (
            "theme=dark; payments_proxy_session=abc123; cart=7",
            Some("theme=dark; cart=7"),
        ),
        ("payments_proxy_session=abc123", None),
        ("theme=dark", Some("theme=dark")),
    ] {
        rig.upstream.push(Canned::raw(200, "seen"));
        let reply = rig
            .client
            .get(rig.url("/api/cookies"))
            .header("cookie", sent)
            .send()
            .await
            .expect("the proxy answers");
        assert_eq!(reply.status(), 200);
        let received = rig.upstream.received().pop().expect("forwarded");
        let expected = upstream.map_or_else(Vec::new, |c| bytes_of(&[c]));
        assert_eq!(received.values("cookie"), expected, "{sent}");
    }
}

/// An answer with every kind of hop-by-hop header and end-to-end ones
/// beside them.
pub(crate) fn hop_by_hop_answer() -> Canned {
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
    // `/api/hop` is none of the document's endpoints: not judged.
    assert_eq!(reply.verdict(), "unchecked");
}

/// A scripted answer with repeated and odd headers and raw body bytes.
pub(crate) fn odd_answer(status: u16, body: Bytes) -> Canned {
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
        assert_eq!(
            reply.verdict(),
            "unchecked",
            "{status}: not a document endpoint"
        );
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
