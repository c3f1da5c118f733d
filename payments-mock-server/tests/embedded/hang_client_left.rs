//! A `hang` or `commit-then-hang` ends, its connection closed without an
//! answer, once its client has left: 50 clients that send their request
//! and close leave no socket held by the server (before, each stayed in
//! CLOSE-WAIT for the ten minutes of the hold, and enough of them took
//! every descriptor the process had). A client that stays is still held,
//! and the shutdown still ends it at once.

use std::net::SocketAddr;
use std::time::Duration;

use payments_mock_server::{Endpoint, Fault, FaultRule, MockServer};
use serde_json::json;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

const BOUND: Duration = Duration::from_secs(30);
const CLIENTS: usize = 50;
const MERCHANT: &str = "6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60";

/// The server's sockets on `port` that are still open on its side
/// (established, or closed by the client and not yet by the server:
/// CLOSE-WAIT), from the kernel's table.
fn server_sockets(port: u16) -> usize {
    let table = std::fs::read_to_string("/proc/net/tcp").expect("the kernel's TCP table");
    let local = format!(":{port:04X}");
    table
        .lines()
        .skip(1)
        .filter(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            fields.len() > 3 && fields[1].ends_with(&local) && matches!(fields[3], "01" | "08")
        })
        .count()
}

/// Waits (polling, at most [`BOUND`]) until the server holds `want`
/// sockets on `port`.
async fn sockets_reach(port: u16, want: usize) {
    tokio::time::timeout(BOUND, async {
        while server_sockets(port) != want {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .unwrap_or_else(|_| {
        panic!(
            "the server holds {} sockets, not {want}",
            server_sockets(port)
        )
    });
}

async fn send(addr: SocketAddr, request: &[u8]) -> TcpStream {
    let mut stream = TcpStream::connect(addr).await.expect("connects");
    stream.write_all(request).await.expect("sent");
    stream
}

fn status_request(_: usize) -> Vec<u8> {
    b"GET /api/payments/abc/status HTTP/1.1\r\nHost: x\r\n\r\n".to_vec()
}

fn initiate_request(i: usize) -> Vec<u8> {
    let body = json!({
        "merchantId": MERCHANT,
        "referenceNo": format!("LEFT-{i}"),
        "amount": 1050,
        "productCode": "TOPUP",
        "storeId": "S1",
        "payerId": "60123456789",
        "returnUrl": "https://shop.example/back",
    })
    .to_string();
    format!(
        "POST /api/payments/initiate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// `rule` on every request; one client stays, [`CLIENTS`] leave.
async fn leaving_clients_are_let_go(rule: FaultRule, request: fn(usize) -> Vec<u8>) {
    let server = MockServer::start().await;
    server.add_fault_rule(rule.times(0)).expect("valid");
    let addr = server.addr();
    let port = addr.port();
    let mut stays = send(addr, &request(0)).await;
    let mut leaving = Vec::new();
    for i in 1..=CLIENTS {
        leaving.push(send(addr, &request(i)).await);
    }
    // All of them are held: journaled unanswered, each socket open.
    server.answered_reach(CLIENTS as u64 + 1).await;
    assert!(server.requests().await.iter().all(|r| r.status.is_none()));
    sockets_reach(port, CLIENTS + 1).await;

    // They close fully: the server closes its side of each, and holds
    // only the one that stays.
    drop(leaving);
    sockets_reach(port, 1).await;
    let mut buf = [0u8; 64];
    match stays.try_read(&mut buf) {
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
        other => panic!("the client that stays got {other:?}"),
    }

    // The shutdown ends its hang at once, without a byte.
    tokio::time::timeout(BOUND, server.shutdown())
        .await
        .expect("the shutdown is not held by the hang");
    let mut rest = Vec::new();
    let read = tokio::time::timeout(BOUND, stays.read_to_end(&mut rest))
        .await
        .expect("closed at the shutdown");
    assert!(read.is_err() || rest.is_empty(), "{rest:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hang_ends_when_its_client_leaves() {
    let rule = FaultRule::new(Fault::Hang).on(Endpoint::StatusById);
    leaving_clients_are_let_go(rule, status_request).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_commit_then_hang_ends_when_its_client_leaves() {
    let rule = FaultRule::new(Fault::CommitThenHang).on(Endpoint::Initiate);
    leaving_clients_are_let_go(rule, initiate_request).await;
}
