//! The TLS accept loop (feature `tls`): a client that never finishes its
//! handshake is dropped after the timeout, and a failed handshake does not
//! stop the loop from serving the next client; and the protocols it
//! offers a client in ALPN.
#![cfg(feature = "tls")]

mod common;

use std::time::Duration;

use axum::Router;
use payments_serve::server;
use payments_serve::tls::LocalCa;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

async fn https_server(handshake_timeout: Duration) -> (LocalCa, std::net::SocketAddr) {
    let (ca, tls) = common::loopback_tls();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bound");
    let addr = listener.local_addr().expect("an address");
    let router = Router::new().fallback(|| async { "hello" });
    tokio::spawn(server::run_tls(
        listener,
        router,
        tls,
        handshake_timeout,
        std::future::pending(),
    ));
    (ca, addr)
}

/// One GET over TLS, trusting `ca`: the first line of the answer.
async fn get(ca: &LocalCa, addr: std::net::SocketAddr) -> String {
    let connector = common::connector_trusting(ca, &[]);
    get_over(connector, addr, "HTTP/1.1")
        .await
        .expect("handshake")
}

/// One GET as `version` over TLS through `connector`: the first line of
/// the answer, or the handshake's error.
async fn get_over(
    connector: tokio_rustls::TlsConnector,
    addr: std::net::SocketAddr,
    version: &str,
) -> std::io::Result<String> {
    let tcp = TcpStream::connect(addr).await.expect("connects");
    let name = rustls::pki_types::ServerName::try_from("127.0.0.1").expect("a name");
    let mut tls = connector.connect(name, tcp).await?;
    let request = format!("GET / {version}\r\nhost: x\r\nconnection: close\r\n\r\n");
    tls.write_all(request.as_bytes()).await.expect("sent");
    let mut answer = Vec::new();
    let _ = tls.read_to_end(&mut answer).await;
    Ok(String::from_utf8_lossy(&answer)
        .lines()
        .next()
        .unwrap_or_default()
        .to_owned())
}

#[tokio::test]
async fn a_client_that_never_finishes_its_handshake_is_dropped_after_the_timeout() {
    let (_ca, addr) = https_server(Duration::from_millis(200)).await;
    let mut idle = TcpStream::connect(addr).await.expect("connects");
    let mut buf = [0u8; 16];
    let read = tokio::time::timeout(Duration::from_secs(10), idle.read(&mut buf))
        .await
        .expect("closed by the server, not by this test's limit");
    assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");
}

#[tokio::test]
async fn a_failed_handshake_leaves_the_loop_serving() {
    let (ca, addr) = https_server(Duration::from_secs(5)).await;
    let mut garbage = TcpStream::connect(addr).await.expect("connects");
    garbage
        .write_all(b"GET / HTTP/1.1\r\n\r\n")
        .await
        .expect("sent");
    let mut buf = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), garbage.read_to_end(&mut buf)).await;
    assert!(!String::from_utf8_lossy(&buf).contains("hello"));
    assert_eq!(get(&ca, addr).await, "HTTP/1.1 200 OK");
}

/// `curl --http1.0 https://…` offers only `http/1.0` in ALPN: it is
/// answered, not refused with TLS's `no_application_protocol` alert. A
/// client offering only `h2` gets the alert (HTTP/1 is all this server
/// speaks), and one offering both `h2` and `http/1.1` gets HTTP/1.1.
#[tokio::test]
async fn alpn_offers_http_1_1_and_1_0_never_h2() {
    let (ca, addr) = https_server(Duration::from_secs(5)).await;
    let http_1_0 = common::connector_trusting(&ca, &[b"http/1.0"]);
    assert_eq!(
        get_over(http_1_0, addr, "HTTP/1.0")
            .await
            .expect("handshake"),
        "HTTP/1.0 200 OK"
    );
    let browser = common::connector_trusting(&ca, &[b"h2", b"http/1.1"]);
    assert_eq!(
        get_over(browser, addr, "HTTP/1.1")
            .await
            .expect("handshake"),
        "HTTP/1.1 200 OK"
    );
    let h2_only = common::connector_trusting(&ca, &[b"h2"]);
    let refused = get_over(h2_only, addr, "HTTP/1.1")
        .await
        .expect_err("no h2");
    assert!(
        refused.to_string().contains("NoApplicationProtocol"),
        "{refused}"
    );
}
