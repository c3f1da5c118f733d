//! What a request's head says about its body and its scope (issue 45's
//! review): an answer made before the body was read says it closes the
//! connection, a body in a content coding or under two content types is
//! refused, and a `merchantId` given twice must name one merchant.

use std::net::SocketAddr;
use std::time::Duration;

use axum::body::Body;
use axum::http::{Method, Request};
use payments_mock_server::MockServer;
use serde_json::json;

use crate::common::raw::{Conn, closes};
use crate::common::{MERCHANT, OTHER_MERCHANT, initiate, initiate_body, redact, send, service};

/// One answer on `conn`, within 10 s.
async fn answer(conn: &mut Conn) -> Option<(String, Vec<u8>)> {
    tokio::time::timeout(Duration::from_secs(10), conn.answer())
        .await
        .expect("an answer or EOF within 10 s")
}

/// Sends `head` on a fresh connection; its first answer's head.
async fn first_answer(addr: SocketAddr, head: &str) -> (Conn, String) {
    let mut conn = Conn::open(addr).await;
    conn.send(head.as_bytes()).await.expect("send");
    let (head, _) = answer(&mut conn).await.expect("an answer");
    (conn, head)
}

/// RFC 9110 section 10.1.1: a server that answers before reading the
/// content says whether it closes. The mock closes (its body unread); the
/// 401 and the 413 did so without a word, and a client that sent the body
/// after `Expect: 100-continue` and then a pipelined GET met EOF.
#[tokio::test]
async fn an_answer_before_the_body_says_connection_close_and_one_after_it_does_not() {
    let server = MockServer::builder()
        .api_key("k1", None)
        .start()
        .await
        .expect("start");
    let addr = server.addr();
    let body = initiate_body("FRAMING-1", "TOPUP").to_string();

    // 401 before the body (Expect: 100-continue): closes, and says so.
    let (_, head) = first_answer(
        addr,
        &format!(
            "POST /api/payments/initiate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nExpect: 100-continue\r\nAuthorization: Bearer wrong\r\n\r\n",
            body.len()
        ),
    )
    .await;
    assert!(head.starts_with("http/1.1 401"), "{head}");
    assert!(closes(&head), "{head}");

    // 413 on a declared length, before the body: the same.
    let (_, head) = first_answer(
        addr,
        "POST /api/payments/initiate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
         Content-Length: 70000\r\nExpect: 100-continue\r\nAuthorization: Bearer k1\r\n\r\n",
    )
    .await;
    assert!(head.starts_with("http/1.1 413"), "{head}");
    assert!(closes(&head), "{head}");

    // A 401 to a GET (no body to leave unread): kept open, and the
    // pipelined request after it answered.
    let (mut stream, head) = first_answer(
        addr,
        "GET /api/payments/x/status HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer wrong\r\n\r\n\
         GET /api/payments/x/status HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k1\r\n\r\n",
    )
    .await;
    assert!(head.starts_with("http/1.1 401"), "{head}");
    assert!(!closes(&head), "{head}");
    let (head, _) = answer(&mut stream).await.expect("the pipelined answer");
    assert!(head.starts_with("http/1.1 404"), "{head}");

    // A POST whose body was read whole: unchanged, kept open.
    let (mut stream, head) = first_answer(
        addr,
        &format!(
            "POST /api/payments/initiate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nAuthorization: Bearer k1\r\n\r\n{body}\
             GET /api/payments/reference/FRAMING-1/status HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k1\r\n\r\n",
            body.len()
        ),
    )
    .await;
    assert!(head.starts_with("http/1.1 200"), "{head}");
    assert!(!closes(&head), "{head}");
    let (head, _) = answer(&mut stream).await.expect("the pipelined answer");
    assert!(head.starts_with("http/1.1 200"), "{head}");
    server.shutdown().await;
}

fn coded_initiate(headers: &[(&str, &str)], body: &[u8]) -> Request<Body> {
    let mut builder = Request::builder()
        .method(Method::POST)
        .uri("/api/payments/initiate");
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    builder.body(Body::from(body.to_vec())).expect("a request")
}

/// RFC 9110 section 8.4.1: the mock decodes no content coding, so a body
/// in one is 415 (a gzipped valid body was 400 "not valid JSON", and plain
/// JSON labelled `br` was accepted). `identity`, in any case, is none.
#[tokio::test]
async fn a_body_in_a_content_coding_is_unsupported_media_type() {
    let (_, router) = service();
    let json = initiate_body("CODED-1", "TOPUP").to_string();
    for coding in ["gzip", "br", "GZIP", "deflate"] {
        let reply = send(
            &router,
            coded_initiate(
                &[
                    ("content-type", "application/json"),
                    ("content-encoding", coding),
                ],
                json.as_bytes(),
            ),
        )
        .await;
        assert_eq!(reply.status, 415, "{coding}: {}", reply.body);
        assert_eq!(reply.code(), "UNSUPPORTED_MEDIA_TYPE");
        assert!(
            reply.message().contains("Content-Encoding"),
            "{}",
            reply.body
        );
        if coding == "gzip" {
            insta::assert_snapshot!(crate::common::pretty(&redact(&reply.body)));
        }
    }
    // Confirm too.
    let confirm = Request::builder()
        .method(Method::POST)
        .uri("/api/payments/confirm")
        .header("content-encoding", "gzip")
        .body(Body::from("{}"))
        .expect("a request");
    assert_eq!(send(&router, confirm).await.status, 415);
    for coding in ["identity", "Identity"] {
        let reply = send(
            &router,
            coded_initiate(
                &[
                    ("content-type", "application/json"),
                    ("content-encoding", coding),
                ],
                initiate_body(&format!("CODED-{coding}"), "TOPUP")
                    .to_string()
                    .as_bytes(),
            ),
        )
        .await;
        assert_eq!(reply.status, 200, "{coding}: {}", reply.body);
    }
}

/// Two `Content-Type` headers that differ: the first decided before; now
/// 415, said as that. The same one twice is one type.
#[tokio::test]
async fn two_content_types_that_differ_are_unsupported_media_type() {
    let (_, router) = service();
    let json = initiate_body("TWO-CT", "TOPUP").to_string();
    for second in ["text/plain", "application/json; charset=utf-8"] {
        let reply = send(
            &router,
            coded_initiate(
                &[
                    ("content-type", "application/json"),
                    ("content-type", second),
                ],
                json.as_bytes(),
            ),
        )
        .await;
        assert_eq!(reply.status, 415, "{second}: {}", reply.body);
        assert_eq!(reply.code(), "UNSUPPORTED_MEDIA_TYPE");
        assert_eq!(
            reply.message(),
            "Content-Type is given twice, with different values"
        );
    }
    let reply = send(
        &router,
        coded_initiate(
            &[
                ("content-type", "application/json"),
                ("content-type", "application/json"),
            ],
            json.as_bytes(),
        ),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
}

/// `merchantId` given twice with two merchants: the first won silently
/// (A's transaction, or B's with the order swapped); now 400
/// `VALIDATION_ERROR` naming it. The same merchant twice is that merchant.
#[tokio::test]
async fn a_merchant_id_query_given_twice_must_name_one_merchant() {
    let (_, router) = service();
    let mut ids = Vec::new();
    for merchant in [MERCHANT, OTHER_MERCHANT] {
        let mut body = initiate_body("DUPQ-1", "TOPUP");
        body["merchantId"] = json!(merchant);
        let reply = initiate(&router, &body).await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        ids.push(reply.data()["transactionId"].clone());
    }
    let path = "/api/payments/reference/DUPQ-1/status";
    for (a, b) in [(MERCHANT, OTHER_MERCHANT), (OTHER_MERCHANT, MERCHANT)] {
        let reply =
            crate::common::get(&router, &format!("{path}?merchantId={a}&merchantId={b}")).await;
        assert_eq!(reply.status, 400, "{}", reply.body);
        assert_eq!(reply.code(), "VALIDATION_ERROR");
        assert_eq!(
            reply.message(),
            "merchantId is given more than once, with different values"
        );
        if a == MERCHANT {
            insta::assert_snapshot!(crate::common::pretty(&redact(&reply.body)));
        }
    }
    for (merchant, id) in [(MERCHANT, &ids[0]), (OTHER_MERCHANT, &ids[1])] {
        let reply = crate::common::get(
            &router,
            &format!("{path}?merchantId={merchant}&x=1&merchantId={merchant}"),
        )
        .await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        assert_eq!(&reply.data()["transactionId"], id);
    }
}
