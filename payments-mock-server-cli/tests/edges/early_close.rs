//! Every answer made before the request's body was read says
//! `Connection: close`, as the `/api/` guard's did (docs/mock-server.md,
//! "Limits"): a removed or unknown sandbox's 404, an unknown path's, a
//! 405, a 401 on the admin side, a 415 and a 413 came without it, the
//! server then closed the connection, and a client that sent the body
//! after a pause, or its next request on the same connection (a pooled
//! client: an initiate or a confirm), met it closed: an unknown outcome.
//! A request whose body was read keeps its connection.

use std::net::SocketAddr;
use std::time::Duration;

use payments_mock_server::MockServer;

use crate::common::raw::{Conn, closes};

const UNKNOWN: &str = "00000000-0000-4000-8000-000000000000";
const BODY: &str = r#"{"transactionId":"01a22e38-62ab-76c6-a0c5-b087c56c8a94","referenceNo":"R1"}"#;

/// One answer's head on `conn` (its body read past); `None` at EOF or a
/// reset before a whole answer.
async fn answer(conn: &mut Conn) -> Option<String> {
    conn.answer().await.map(|(head, _)| head)
}

fn status(head: &str) -> &str {
    head.split(' ').nth(1).unwrap_or("")
}

const NEXT: &[u8] = b"GET /_mock/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

/// Sends `head` (which declares `body`), then `body` after the answer
/// came (or after 2 s without one: an answer that waits for the body),
/// then a next request on the same connection. Whether the connection
/// keeps its word: an answer that says `Connection: close` is followed by
/// the connection closing; one that does not keeps the connection, and
/// the next request is answered.
async fn keeps_its_word(addr: SocketAddr, head: &str, body: &str) -> Result<String, String> {
    let mut conn = Conn::open(addr).await;
    conn.send(head.as_bytes()).await.expect("send the head");
    let early = tokio::time::timeout(Duration::from_secs(2), answer(&mut conn)).await;
    let (first, sent_body) = match early {
        Ok(answer) => (answer.ok_or("no answer to the head")?, false),
        Err(_) => {
            conn.send(body.as_bytes()).await.expect("send the body");
            let answer = tokio::time::timeout(Duration::from_secs(10), answer(&mut conn)).await;
            (answer.ok().flatten().ok_or("no answer")?, true)
        }
    };
    if closes(&first) {
        return if conn.closed().await {
            Ok(first)
        } else {
            Err(format!("said close, kept the connection: {first}"))
        };
    }
    // Said nothing: the connection must serve the body and the next one.
    let mut rest = Vec::new();
    if !sent_body {
        rest.extend_from_slice(body.as_bytes());
    }
    rest.extend_from_slice(NEXT);
    let sent = conn.send(&rest).await;
    let next = tokio::time::timeout(Duration::from_secs(10), answer(&mut conn)).await;
    match (sent, next) {
        (Ok(()), Ok(Some(next))) if status(&next) == "200" => Ok(first),
        (sent, next) => Err(format!(
            "answered {first:?} without Connection: close, then the next request met \
             {sent:?} / {next:?}"
        )),
    }
}

fn post(path: &str, content_type: &str, length: usize) -> String {
    format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: {content_type}\r\n\
         Content-Length: {length}\r\n\r\n"
    )
}

#[tokio::test]
async fn every_early_answer_says_it_closes_and_a_read_body_keeps_the_connection() {
    let server = MockServer::start().await;
    let addr = server.addr();
    let json = "application/json";
    let cases = [
        (
            "a confirm under an unknown sandbox",
            post(
                &format!("/sandboxes/{UNKNOWN}/api/payments/confirm"),
                json,
                BODY.len(),
            ),
            "404",
        ),
        (
            "a fault rule under an unknown sandbox",
            post(
                &format!("/sandboxes/{UNKNOWN}/_mock/faults"),
                json,
                BODY.len(),
            ),
            "404",
        ),
        ("an unknown path", post("/nope", json, BODY.len()), "404"),
        (
            "a method the route does not take",
            post("/_mock/health", json, BODY.len()),
            "405",
        ),
        (
            "a body that is not JSON",
            post("/_mock/clock/advance", "text/plain", BODY.len()),
            "415",
        ),
    ];
    for (what, head, expected) in &cases {
        let first = keeps_its_word(addr, head, BODY)
            .await
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(status(&first), *expected, "{what}: {first}");
        // Answered before the body came: so it says it closes.
        assert!(closes(&first), "{what}: {first}");
    }
    // A body over the limit, refused by its declared length.
    let big = "x".repeat(70 * 1024);
    let first = keeps_its_word(addr, &post("/_mock/clock/advance", json, big.len()), &big)
        .await
        .unwrap_or_else(|e| panic!("413: {e}"));
    assert_eq!(status(&first), "413", "{first}");
    assert!(closes(&first), "{first}");

    // A body sent with its head and read: the connection stays, the next
    // request is answered on it.
    let advance = r#"{"seconds":1}"#;
    let mut conn = Conn::open(addr).await;
    let whole = format!(
        "{}{advance}",
        post("/_mock/clock/advance", json, advance.len())
    );
    conn.send(whole.as_bytes()).await.expect("send");
    let first = answer(&mut conn).await.expect("an answer");
    assert_eq!(status(&first), "200", "{first}");
    assert!(!closes(&first), "{first}");
    conn.send(NEXT).await.expect("the next request");
    let next = answer(&mut conn)
        .await
        .expect("answered on the same connection");
    assert_eq!(status(&next), "200", "{next}");
    server.shutdown().await;
}

#[tokio::test]
async fn an_admin_refusal_before_the_body_says_it_closes() {
    let server = MockServer::builder()
        .admin_key("adm_early_close")
        .start()
        .await
        .expect("start");
    let addr = server.addr();
    for (what, head, expected) in [
        (
            "a reset without a key",
            post("/_mock/reset", "application/json", BODY.len()),
            "401",
        ),
        (
            "a sandbox without a key",
            post("/_mock/sandboxes", "application/json", BODY.len()),
            "401",
        ),
        (
            "a confirm under an unknown sandbox, without a key",
            post(
                &format!("/sandboxes/{UNKNOWN}/api/payments/confirm"),
                "application/json",
                BODY.len(),
            ),
            "404",
        ),
    ] {
        let first = keeps_its_word(addr, &head, BODY)
            .await
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(status(&first), expected, "{what}: {first}");
        assert!(closes(&first), "{what}: {first}");
    }
    server.shutdown().await;
}

fn chunked(method: &str, path: &str) -> String {
    format!("{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n")
}

/// Issue: an empty chunked body (`0\r\n\r\n`, sent with its head) to a
/// route that takes no body cost the connection: the answer said
/// `Connection: close` (the body was not known to end until read) and the
/// next request met EOF. Its end, already come, keeps the connection; a
/// chunked body still to come when the answer is made closes it as before.
#[tokio::test]
async fn an_empty_chunked_body_keeps_the_connection_and_a_late_one_closes_it() {
    let server = MockServer::start().await;
    let addr = server.addr();
    for (method, path) in [
        ("POST", "/_mock/reset"),
        ("GET", "/_mock/clock"),
        ("GET", "/_mock/requests"),
        ("DELETE", "/_mock/faults"),
        ("GET", "/_mock/ui/"),
    ] {
        let mut conn = Conn::open(addr).await;
        let whole = format!("{}0\r\n\r\n", chunked(method, path));
        conn.send(whole.as_bytes()).await.expect("send");
        let first = tokio::time::timeout(Duration::from_secs(10), answer(&mut conn))
            .await
            .ok()
            .flatten()
            .unwrap_or_else(|| panic!("{method} {path}: no answer"));
        assert!(!closes(&first), "{method} {path}: {first}");
        conn.send(NEXT).await.expect("the next request");
        let next = tokio::time::timeout(Duration::from_secs(10), answer(&mut conn))
            .await
            .ok()
            .flatten()
            .unwrap_or_else(|| panic!("{method} {path}: the next request met EOF"));
        assert_eq!(status(&next), "200", "{method} {path}: {next}");
    }
    // The same body sent after the answer: the answer says it closes, and
    // the connection does.
    let first = keeps_its_word(addr, &chunked("POST", "/_mock/reset"), "0\r\n\r\n")
        .await
        .unwrap_or_else(|e| panic!("a late chunked body: {e}"));
    assert!(closes(&first), "{first}");
    server.shutdown().await;
}
