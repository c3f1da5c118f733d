//! What an open connection costs in descriptors: one (its socket) on a
//! server that does not watch leaving clients (the default, the contract
//! proxy), two on one that does (`Options::watch_leaving_clients`, the
//! mock: a duplicate of the socket's, to see a client leave during a
//! `hang`). One test in this binary: the count is the whole process's.

use std::time::Duration;

use axum::Router;
use axum::routing::get;
use payments_serve::server::{self, Options};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

const CONNECTIONS: usize = 40;
const BOUND: Duration = Duration::from_secs(20);

/// The process's open descriptors.
fn open_descriptors() -> usize {
    std::fs::read_dir("/proc/self/fd")
        .expect("/proc/self/fd")
        .count()
}

/// How many more descriptors the process holds with [`CONNECTIONS`]
/// connections open and each answered once (so the server has accepted
/// them all), both ends in this process.
async fn descriptors_per_connections(options: Options) -> usize {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bound");
    let addr = listener.local_addr().expect("an address");
    let router = Router::new().route("/answer", get(|| async { "answered" }));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(server::run_with(listener, router, options, async {
        let _ = stopped.await;
    }));
    let before = open_descriptors();
    let mut clients = Vec::new();
    for _ in 0..CONNECTIONS {
        let mut stream = TcpStream::connect(addr).await.expect("connects");
        stream
            .write_all(b"GET /answer HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .expect("sent");
        let mut answer = Vec::new();
        tokio::time::timeout(BOUND, async {
            let mut buf = [0u8; 256];
            while !answer.ends_with(b"answered") {
                let n = stream.read(&mut buf).await.expect("read");
                assert!(n > 0, "closed before the answer");
                answer.extend_from_slice(&buf[..n]);
            }
        })
        .await
        .expect("answered in time");
        clients.push(stream);
    }
    let added = open_descriptors() - before;
    drop(clients);
    let _ = stop.send(());
    tokio::time::timeout(BOUND, serving)
        .await
        .expect("stopped in time")
        .expect("the server stops");
    added
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_a_server_watching_leaving_clients_duplicates_descriptors() {
    // The client's socket and the server's: two per connection.
    let unwatched = descriptors_per_connections(Options::default()).await;
    assert!(
        (2 * CONNECTIONS..2 * CONNECTIONS + CONNECTIONS / 2).contains(&unwatched),
        "{unwatched} descriptors for {CONNECTIONS} connections"
    );
    // And the server's duplicate of its socket: three.
    let watched = descriptors_per_connections(Options::default().watch_leaving_clients(true)).await;
    assert!(
        watched >= 3 * CONNECTIONS,
        "{watched} descriptors for {CONNECTIONS} connections"
    );
}
