//! The graceful shutdown: a request under way is finished, and a
//! connection without one (idle, half a request head, a TLS handshake not
//! finished) is closed at once instead of after the header read timeout.
//! A request whose whole head came before the stop, on a connection still
//! in the listener's backlog, is answered too.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::routing::get;
use payments_serve::server;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, oneshot};

#[cfg(feature = "tls")]
mod common;

/// Far longer than any test may take: a connection that waited for it
/// would fail the test's bound.
const HOUR: Duration = Duration::from_secs(3600);
const BOUND: Duration = Duration::from_secs(20);

/// Reads to the end (or a reset): what came.
async fn to_the_end(stream: &mut TcpStream) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = [0u8; 1024];
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return out,
            Ok(n) => out.extend_from_slice(&buf[..n]),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_a_head_closes_at_once_and_a_request_under_way_finishes() {
    let entered = Arc::new(Notify::new());
    let release = Arc::new(Notify::new());
    let router = {
        let (entered, release) = (Arc::clone(&entered), Arc::clone(&release));
        Router::new().route(
            "/slow",
            get(move || async move {
                entered.notify_one();
                release.notified().await;
                "done"
            }),
        )
    };
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bound");
    let addr = listener.local_addr().expect("an address");
    let (stop, stopped) = oneshot::channel::<()>();
    let serving = tokio::spawn(server::run_with(listener, router, HOUR, async {
        let _ = stopped.await;
    }));

    let mut half = TcpStream::connect(addr).await.expect("connects");
    half.write_all(b"GET /slow HTTP/1.1\r\nHost: x\r\n")
        .await
        .expect("sent");
    let mut idle = TcpStream::connect(addr).await.expect("connects");
    let mut busy = TcpStream::connect(addr).await.expect("connects");
    busy.write_all(b"GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .expect("sent");
    entered.notified().await;

    stop.send(()).expect("serving");
    let cut = tokio::time::timeout(BOUND, to_the_end(&mut half))
        .await
        .expect("half a head is closed at the shutdown");
    assert!(cut.is_empty(), "{:?}", String::from_utf8_lossy(&cut));
    tokio::time::timeout(BOUND, to_the_end(&mut idle))
        .await
        .expect("an idle connection is closed at the shutdown");
    assert!(!serving.is_finished(), "the request under way holds it");

    release.notify_one();
    let answer = tokio::time::timeout(BOUND, to_the_end(&mut busy))
        .await
        .expect("answered, then closed");
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.ends_with("done"), "{answer}");
    tokio::time::timeout(BOUND, serving)
        .await
        .expect("the server returns")
        .expect("joined");
}

#[cfg(feature = "tls")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unfinished_tls_handshake_closes_at_once() {
    let (_ca, tls) = common::loopback_tls();
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bound");
    let addr = listener.local_addr().expect("an address");
    let router = Router::new().fallback(|| async { "hello" });
    let (stop, stopped) = oneshot::channel::<()>();
    let serving = tokio::spawn(server::run_tls(listener, router, tls, HOUR, async {
        let _ = stopped.await;
    }));
    let mut silent = TcpStream::connect(addr).await.expect("connects");
    // Half a ClientHello's record header: the handshake has begun.
    silent.write_all(&[0x16, 0x03, 0x01]).await.expect("sent");
    stop.send(()).expect("serving");
    tokio::time::timeout(BOUND, serving)
        .await
        .expect("the shutdown does not wait for the handshake")
        .expect("joined");
    tokio::time::timeout(BOUND, to_the_end(&mut silent))
        .await
        .expect("closed");
}

/// Connections the kernel completed before the stop, never accepted: each
/// whose client sent a whole request (it counts it sent) is answered,
/// once, then closed; an idle one and one with half a head are closed
/// without an answer. Before, dropping the listener reset them all (a
/// reviewer's SIGTERM right after a request: 3 resets in 30).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_waiting_in_the_backlog_at_the_stop_are_answered() {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bound");
    let addr = listener.local_addr().expect("an address");
    let mut sent = Vec::new();
    for n in 0..20 {
        let mut stream = TcpStream::connect(addr).await.expect("connects");
        let request = format!("GET /n/{n} HTTP/1.1\r\nHost: x\r\n\r\n");
        stream.write_all(request.as_bytes()).await.expect("sent");
        sent.push(stream);
    }
    let mut idle = TcpStream::connect(addr).await.expect("connects");
    let mut half = TcpStream::connect(addr).await.expect("connects");
    half.write_all(b"GET /n/half HTTP/1.1\r\nHost: x\r\n")
        .await
        .expect("sent");
    let router = Router::new().route(
        "/n/{n}",
        get(|axum::extract::Path(n): axum::extract::Path<String>| async move { n }),
    );
    // Stopped before it ever accepts.
    let serving = tokio::spawn(server::run_with(listener, router, HOUR, async {}));
    for (n, stream) in sent.iter_mut().enumerate() {
        let answer = tokio::time::timeout(BOUND, to_the_end(stream))
            .await
            .expect("answered and closed, never held");
        let answer = String::from_utf8_lossy(&answer);
        assert!(
            answer.starts_with("HTTP/1.1 200"),
            "request {n}: {answer:?}"
        );
        assert!(answer.ends_with(&format!("\r\n\r\n{n}")), "{answer:?}");
    }
    for (what, stream) in [("idle", &mut idle), ("half a head", &mut half)] {
        let cut = tokio::time::timeout(BOUND, to_the_end(stream))
            .await
            .expect("closed at once");
        assert!(
            cut.is_empty(),
            "{what}: {:?}",
            String::from_utf8_lossy(&cut)
        );
    }
    tokio::time::timeout(BOUND, serving)
        .await
        .expect("the server returns")
        .expect("joined");
}
