//! Answers the proxy cannot pass on as they are: a `101 Switching
//! Protocols` it never asked for, a transfer coding other than `chunked`,
//! and an answer broken off mid-body. Each is the proxy's own 502
//! `UPSTREAM_UNAVAILABLE`, `unchecked`, recorded and counted `broke_off`,
//! saying the upstream may have carried the request out; the
//! application's connection stays usable.

use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use crate::framing::{once, raw_upstream};
use crate::rig::{Reply, Setup, client, failures, initiate_body, proxy_in_front_of};
use crate::unanswered::assert_upstream_unavailable;

/// One answer read off `socket`: its status line and headers, and its
/// `Content-Length` body (none without one).
async fn read_answer(socket: &mut tokio::net::TcpStream) -> (String, Vec<u8>) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        let n = tokio::time::timeout(Duration::from_secs(10), socket.read(&mut byte))
            .await
            .expect("the answer comes")
            .expect("read");
        assert_ne!(n, 0, "closed mid-head: {}", String::from_utf8_lossy(&head));
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let length: usize = head
        .lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(n, _)| n.trim().eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.trim().parse().ok())
        .unwrap_or(0);
    let mut body = vec![0u8; length];
    socket.read_exact(&mut body).await.expect("the body");
    (head, body)
}

/// An unasked-for `101 Switching Protocols` (to a plain GET) is no answer
/// to pass on: passed on, it switched the application's connection to
/// what nobody agreed on, and the proxy closed it. Now the proxy's 502,
/// and the next request on the same connection is answered.
#[tokio::test]
async fn an_unasked_for_switch_of_protocols_is_the_proxys_502_and_the_connection_stays() {
    let upstream = raw_upstream(vec![
        once(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\nRAWBYTES"),
        once(b"HTTP/1.1 204 No Content\r\n\r\n"),
    ])
    .await;
    let proxy = proxy_in_front_of(&upstream, &Setup::default()).await;
    let mut socket = tokio::net::TcpStream::connect(proxy.addr())
        .await
        .expect("connects");
    socket
        .write_all(b"GET /api/payments/t-101/status HTTP/1.1\r\nhost: x\r\n\r\n")
        .await
        .expect("sent");
    let (head, body) = read_answer(&mut socket).await;
    assert!(head.starts_with("HTTP/1.1 502 "), "{head}");
    assert!(!head.to_ascii_lowercase().contains("upgrade"), "{head}");
    let body: serde_json::Value = serde_json::from_slice(&body).expect("an envelope");
    assert_eq!(body["errorCode"], "UPSTREAM_UNAVAILABLE", "{body}");
    assert_eq!(
        body["message"],
        "the upstream service answered with something that is not HTTP (101 Switching \
         Protocols as its final answer, which the proxy never asked for; it may have carried \
         the request out)"
    );
    // The same connection, the next request.
    socket
        .write_all(b"GET /api/payments/t-next/status HTTP/1.1\r\nhost: x\r\n\r\n")
        .await
        .expect("sent again");
    let (head, _) = read_answer(&mut socket).await;
    assert!(head.starts_with("HTTP/1.1 204 "), "{head}");
    let exchanges = proxy.exchanges();
    assert_eq!(exchanges.len(), 2, "both recorded");
    assert!(exchanges[0].0.proxy_answer, "the proxy's own answer");
    assert_eq!(exchanges[0].0.response.status, 502);
    assert_eq!(failures(&proxy, "broke_off").await, "1");
}

/// `Transfer-Encoding: gzip, chunked`: the proxy neither asked for gzip
/// nor decodes it. It once passed the gzip bytes on, without the
/// `Transfer-Encoding` (hop-by-hop), as `application/json`, and judged
/// them as the service's JSON. Now the proxy's 502.
#[tokio::test]
async fn a_transfer_coding_other_than_chunked_is_the_proxys_502_never_relabelled() {
    let upstream = raw_upstream(vec![once(
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
          transfer-encoding: gzip, chunked\r\n\r\n4\r\n\x1f\x8b\x08\x00\r\n0\r\n\r\n",
    )])
    .await;
    let proxy = proxy_in_front_of(&upstream, &Setup::default()).await;
    let reply = Reply::of(
        client()
            .get(format!("{}/api/payments/t-te/status", proxy.base_url()))
            .send()
            .await
            .expect("the proxy answers"),
    )
    .await;
    assert_upstream_unavailable(&reply, "a transfer coding it does not decode");
    assert_eq!(
        reply.json()["message"],
        "the upstream service answered with a transfer coding the proxy never asked for and \
         does not decode (Transfer-Encoding: gzip, chunked; it may have carried the request out)"
    );
    let exchanges = proxy.exchanges();
    assert_eq!(exchanges.len(), 1);
    assert!(exchanges[0].0.proxy_answer);
    assert!(
        exchanges[0].2.is_empty(),
        "not judged: {:?}",
        exchanges[0].2
    );
    assert_eq!(failures(&proxy, "broke_off").await, "1");
}

/// An answer broken off mid-body (a `Content-Length` larger than what
/// comes before the close): the upstream had begun to answer, so it read
/// the initiate and may have carried it out, which the message says as
/// "closed the connection without answering" does.
#[tokio::test]
async fn an_answer_broken_off_says_the_request_may_have_been_carried_out() {
    let upstream = raw_upstream(vec![once(
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{\"isSuccess\":true,",
    )])
    .await;
    let proxy = proxy_in_front_of(&upstream, &Setup::default()).await;
    let reply = Reply::of(
        client()
            .post(format!("{}/api/payments/initiate", proxy.base_url()))
            .json(&initiate_body("R-BROKE", 1050))
            .send()
            .await
            .expect("the proxy answers"),
    )
    .await;
    assert_upstream_unavailable(&reply, "an answer broken off");
    assert_eq!(
        reply.json()["message"],
        "the upstream service broke off its answer (it may have carried the request out)"
    );
    assert_eq!(failures(&proxy, "broke_off").await, "1");
}

/// A request with `Transfer-Encoding: gzip, chunked` was forwarded without
/// its coding (hop-by-hop), so the upstream took the gzip bytes for the
/// body itself. RFC 9112 section 6.1: a coding the server does not
/// understand is answered 501. Now the proxy's own 501, never forwarded,
/// recorded like its other refusals.
#[tokio::test]
async fn a_request_coded_other_than_chunked_is_the_proxys_501_never_forwarded() {
    let rig = crate::rig::Rig::start().await;
    let mut socket = tokio::net::TcpStream::connect(rig.proxy.addr())
        .await
        .expect("connects");
    socket
        .write_all(
            b"POST /api/payments/initiate HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n\
              transfer-encoding: gzip, chunked\r\n\r\n4\r\n\x1f\x8b\x08\x00\r\n0\r\n\r\n",
        )
        .await
        .expect("sent");
    let (head, body) = read_answer(&mut socket).await;
    assert!(head.starts_with("HTTP/1.1 501 "), "{head}");
    assert!(
        head.to_ascii_lowercase()
            .contains("x-contract-verdict: unchecked"),
        "{head}"
    );
    let body: serde_json::Value = serde_json::from_slice(&body).expect("an envelope");
    assert_eq!(body["isSuccess"], false, "{body}");
    assert_eq!(
        body["message"],
        "the request's transfer coding is not one the proxy implements (Transfer-Encoding: \
         gzip, chunked; only chunked is): it was not forwarded"
    );
    assert_eq!(rig.upstream.count(), 0, "never forwarded");
    let exchanges = rig.proxy.exchanges();
    assert_eq!(exchanges.len(), 1, "recorded");
    assert!(exchanges[0].0.proxy_answer, "the proxy's own answer");
    assert_eq!(exchanges[0].0.response.status, 501);
    assert_eq!(rig.proxy.summary().verdicts.get("unchecked"), Some(&1));
}
