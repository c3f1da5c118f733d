//! The upstream gives no whole answer: a dropped connection, a reset
//! after the request, an upstream not listening, answering bytes that are
//! not HTTP, or hanging. Each is the proxy's own 502
//! `UPSTREAM_UNAVAILABLE` (within the timeout), `unchecked`, never
//! retried, and its message and metric tell one that never got the
//! request from one that may have carried it out.

use std::time::Duration;

use tokio::time::Instant;

use axum::http::Method;
use serde_json::{Value, json};

use crate::passthrough::{bytes_of, values};
use crate::rig::{
    Reply, Rig, Setup, client, failures, initiate_body, proxy_in_front_of, status_data,
};
use crate::upstream::Canned;

/// Asserts `reply` is the proxy's own 502 `UPSTREAM_UNAVAILABLE`.
pub fn assert_upstream_unavailable(reply: &Reply, what: &str) {
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

/// An upstream that reads the whole confirm, then resets the connection
/// (as a process killed mid-exchange does): it may have carried the
/// confirm out, so never "could not be reached".
#[tokio::test]
async fn an_upstream_that_resets_after_reading_the_request_may_have_carried_it_out() {
    use tokio::io::AsyncReadExt as _;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let addr = listener.local_addr().expect("its address");
    let server = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.expect("a connection");
        let mut request = Vec::new();
        let mut chunk = [0u8; 4096];
        // The body is the last thing sent, and ends with its `}`.
        while !request.ends_with(b"}") {
            let n = socket.read(&mut chunk).await.expect("the request");
            assert_ne!(n, 0, "the request ended early");
            request.extend_from_slice(&chunk[..n]);
        }
        socket.set_zero_linger().expect("SO_LINGER 0");
        drop(socket);
        request
    });
    let proxy = proxy_in_front_of(&format!("http://{addr}"), &Setup::default()).await;
    let reply = Reply::of(
        client()
            .post(format!("{}/api/payments/confirm", proxy.base_url()))
            .json(&json!({ "transactionId": "t-reset", "referenceNo": "R-reset" }))
            .send()
            .await
            .expect("the proxy answers"),
    )
    .await;
    let request = server.await.expect("the upstream read the whole request");
    assert!(request.starts_with(b"POST /api/payments/confirm "));
    assert_upstream_unavailable(&reply, "a reset after the request");
    assert_eq!(
        reply.json()["message"],
        json!(
            "the upstream service closed the connection without answering \
             (it may have carried the request out)"
        )
    );
    assert_eq!(failures(&proxy, "broke_off").await, "1");
    assert_eq!(failures(&proxy, "unreachable").await, "0");
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
    // A refused connection took no time: the timeout explains nothing.
    assert_eq!(
        reply.json()["message"],
        json!(
            "the upstream service could not be connected to: it refused the connection \
             (nothing listens at its address)"
        )
    );
    assert_eq!(failures(&proxy, "connect").await, "1");
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
        assert_eq!(
            reply.json()["message"],
            json!("the upstream service did not answer in time (upstream timeout 300ms)"),
            "{what}"
        );
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
