//! The upstream's failures and the proxy's limits: a dropped connection,
//! an upstream not listening, answering bytes that are not HTTP, or
//! hanging (502 `UPSTREAM_UNAVAILABLE` within the timeout, `unchecked`),
//! bodies over the judging limit streamed whole
//! and never a 413, a compressed answer untouched, `--enforce` replacing
//! only a violation, the proxy's own paths, and nothing retried.

use std::time::Duration;

use tokio::time::Instant;

use axum::http::Method;
use payments_contract_proxy::JUDGE_LIMIT;
use serde_json::{Value, json};

use crate::passthrough::{assert_same_bytes, bytes_of, pattern, values};
use crate::rig::{
    Reply, Rig, Setup, client, failure, failures, initiate_body, initiate_data, proxy_in_front_of,
    status_data,
};
use crate::upstream::Canned;

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
    // It read the initiate: "could not be reached" would tell support it
    // never went out, when it may have been carried out.
    let message = reply.json()["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        message.starts_with(
            "the upstream service closed the connection without answering \
             (it may have carried the request out)"
        ),
        "{message}"
    );

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

    assert_eq!(failures(&rig.proxy, "broke_off").await, "2");
    assert_eq!(failures(&rig.proxy, "unreachable").await, "0");
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
async fn an_upstream_that_answers_bytes_that_are_not_http_is_502_upstream_unavailable_unchecked() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    // Each connection gets the next of these instead of an HTTP answer.
    let garbage: Vec<Vec<u8>> = vec![
        b"SSH-2.0-OpenSSH_9.6\r\n".to_vec(),
        b"HTTP/1.1 abc Nope\r\n\r\n".to_vec(),
        [b"HTTP/1.1 200 OK\r\nX: ".as_slice(), &vec![b'a'; 1 << 20]].concat(),
        vec![0xff, 0x00, 0xfe, b'\n', b'\r', 0x80],
    ];
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let addr = listener.local_addr().expect("its address");
    let answers = garbage.clone();
    let server = tokio::spawn(async move {
        for answer in answers {
            let (mut socket, _) = listener.accept().await.expect("a connection");
            let mut request = vec![0u8; 16 * 1024];
            let _ = socket.read(&mut request).await;
            let _ = socket.write_all(&answer).await;
            let _ = socket.shutdown().await;
        }
    });
    let proxy = proxy_in_front_of(&format!("http://{addr}"), &Setup::default()).await;
    for (n, answer) in garbage.iter().enumerate() {
        let reply = Reply::of(
            client()
                .get(format!(
                    "{}/api/payments/t-garbage-{n}/status",
                    proxy.base_url()
                ))
                .send()
                .await
                .expect("the proxy answers"),
        )
        .await;
        let shown = String::from_utf8_lossy(&answer[..answer.len().min(24)]).into_owned();
        assert_upstream_unavailable(&reply, &format!("an upstream answering {shown:?}"));
        let message = reply.json()["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(
            message.starts_with("the upstream service answered with something that is not HTTP (")
                && message.contains("it may have carried the request out"),
            "{shown:?}: {message}"
        );
    }
    server.await.expect("the fake upstream ends");
    assert_eq!(
        proxy.summary().verdicts.get("unchecked"),
        Some(&(garbage.len() as u64))
    );
    assert_eq!(
        failures(&proxy, "broke_off").await,
        garbage.len().to_string()
    );
}

// On tokio's paused clock: the upstream's two-minute silence and the
// proxy's timeout are virtual timers.
#[tokio::test(start_paused = true)]
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
