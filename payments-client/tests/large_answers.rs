//! An answer larger than the client reads (1 MiB; the service's are under
//! 1 KiB) is an unexpected response carrying its first 512 bytes, and is
//! never read whole: neither one announced by its `Content-Length` nor one
//! streamed in chunks without end.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use common::*;
use payments_client::{Error, Outcome};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

const MIB: usize = 1024 * 1024;

/// A status envelope padded with spaces to exactly `len` bytes.
fn padded_status(len: usize) -> String {
    let mut body = ok_envelope(&status_data());
    assert!(body.len() < len);
    body.push_str(&" ".repeat(len - body.len()));
    body
}

/// A server that answers every request `200` with `body` in chunks of
/// `chunk` bytes (chunked transfer coding; `body` is repeated while `endless`)
/// and counts the bytes it managed to write before the client went away.
async fn chunked_server(body: Vec<u8>, chunk: usize, endless: bool) -> (String, Arc<AtomicU64>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let written = Arc::new(AtomicU64::new(0));
    let counted = written.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let (body, counted) = (body.clone(), counted.clone());
            tokio::spawn(async move {
                let mut request = [0u8; 8192];
                let _ = socket.read(&mut request).await;
                let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n";
                if socket.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                loop {
                    for part in body.chunks(chunk) {
                        let framed =
                            [format!("{:x}\r\n", part.len()).as_bytes(), part, b"\r\n"].concat();
                        if socket.write_all(&framed).await.is_err() {
                            return;
                        }
                        counted.fetch_add(part.len() as u64, Ordering::SeqCst);
                    }
                    if !endless {
                        let _ = socket.write_all(b"0\r\n\r\n").await;
                        return;
                    }
                }
            });
        }
    });
    (format!("http://{addr}"), written)
}

fn expect_too_large(err: &Error, start: &str) {
    let Error::UnexpectedResponse {
        status,
        body_prefix,
        reason,
        ..
    } = err
    else {
        panic!("expected UnexpectedResponse, got {err:?}")
    };
    assert_eq!(*status, 200);
    assert_eq!(body_prefix.len(), 512, "{body_prefix}");
    assert_eq!(body_prefix.as_str(), &start[..512]);
    assert!(reason.contains("larger than 1024 KiB"), "{reason}");
    assert_eq!(err.outcome(), Outcome::Unknown);
}

#[tokio::test]
async fn an_answer_announced_larger_than_a_mib_is_refused_with_its_start() {
    let body = padded_status(64 * MIB);
    let err = status_error_from(json(200, body.clone())).await;
    expect_too_large(&err, &body);
}

#[tokio::test]
async fn an_endless_chunked_answer_is_read_no_further_than_a_mib() {
    let start = padded_status(4096);
    let (base, written) = chunked_server(start.clone().into_bytes(), 4096, true).await;
    let err = client_for(&base).status(TX_ID).await.unwrap_err();
    expect_too_large(&err, &start);
    // What the server got out before the client closed: the client's MiB
    // and what the two sockets' buffers hold, never the stream's whole.
    let sent = written.load(Ordering::SeqCst);
    assert!(sent > MIB as u64, "{sent}");
    assert!(
        sent < 32 * MIB as u64,
        "the client kept reading: {sent} bytes"
    );
}

#[tokio::test]
async fn an_answer_of_exactly_a_mib_is_read_and_one_byte_more_is_not() {
    for chunk in [1000, MIB, 2 * MIB] {
        let (base, _) = chunked_server(padded_status(MIB).into_bytes(), chunk, false).await;
        let reply = client_for(&base).status(TX_ID).await;
        assert!(reply.is_ok(), "chunks of {chunk}: {reply:?}");
        let over = padded_status(MIB + 1);
        let (base, _) = chunked_server(over.clone().into_bytes(), chunk, false).await;
        let err = client_for(&base).status(TX_ID).await.unwrap_err();
        expect_too_large(&err, &over);
    }
}
