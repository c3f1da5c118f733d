//! Abuse and limits over real TCP: slow and idle clients, oversized heads,
//! the rate limiter. Each test is bounded in time and talks only to its own
//! server on loopback.
//!
//! These tests wait on real timers (the server's header read timeout is a
//! hyper timer on a real socket, which paused Tokio time cannot drive), so
//! they use timeouts of a few hundred milliseconds.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use payments_mock_server::http::HEADER_LIMIT;
use payments_mock_server::{Config, MockServer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::common::{get, service_with};

/// Idle connections opened by `many_idle_connections_do_not_stop_others`:
/// `MOCK_IDLE_CONNECTIONS`, default 2,000 (fast in CI). Issue #8 asks for
/// 10,000: run `MOCK_IDLE_CONNECTIONS=10000 cargo test -p
/// payments-mock-server idle` with `ulimit -n` above twice that.
/// Each idle connection costs two descriptors here (client and server
/// end), so the count is capped below the process's soft limit.
fn idle_connection_count() -> usize {
    let wanted = std::env::var("MOCK_IDLE_CONNECTIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000);
    let limit = std::fs::read_to_string("/proc/self/limits")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("Max open files"))
                .and_then(|l| l.split_whitespace().nth(3))
                .and_then(|soft| soft.parse::<usize>().ok())
        });
    match limit {
        Some(limit) if wanted * 2 + 512 > limit => {
            let capped = limit.saturating_sub(512) / 2;
            eprintln!("MOCK_IDLE_CONNECTIONS={wanted} capped to {capped} by `ulimit -n` {limit}");
            capped
        }
        _ => wanted,
    }
}

/// One whole request on a fresh connection; the status line.
async fn status_line(addr: SocketAddr, request: &[u8]) -> String {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    let _ = stream.write_all(request).await;
    let mut out = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), async {
        let mut buf = [0u8; 4096];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => out.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    assert!(read.is_ok(), "the server did not answer within 10 s");
    let text = String::from_utf8_lossy(&out).into_owned();
    text.lines().next().unwrap_or_default().to_owned()
}

const HEALTH: &[u8] = b"GET /_mock/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";

/// Whether the server closed `stream` (EOF or reset) within `within`.
async fn closed_within(stream: &mut TcpStream, within: Duration) -> Option<Vec<u8>> {
    let mut got = Vec::new();
    let closed = tokio::time::timeout(within, async {
        let mut buf = [0u8; 1024];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    closed.is_ok().then_some(got)
}

// On tokio's paused clock: the client's pauses and the server's header
// timeout are the same virtual timers, so no real time passes waiting.
#[tokio::test(start_paused = true)]
async fn a_client_sending_headers_a_byte_at_a_time_is_cut_off_while_others_are_served() {
    let timeout = Duration::from_millis(200);
    let server = MockServer::builder()
        .header_read_timeout(timeout)
        .start()
        .await
        .expect("start");
    let addr = server.addr();
    let started = tokio::time::Instant::now();
    let slow = tokio::spawn(async move {
        let mut stream = TcpStream::connect(addr).await.expect("connect");
        // 25 ms a byte: the whole head would take about 1.5 s.
        for byte in HEALTH {
            if stream.write_all(&[*byte]).await.is_err() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
            if started.elapsed() > Duration::from_secs(5) {
                break;
            }
        }
        closed_within(&mut stream, Duration::from_secs(5)).await
    });
    // Meanwhile, others are served at once.
    for _ in 0..5 {
        assert_eq!(status_line(addr, HEALTH).await, "HTTP/1.1 200 OK");
    }
    let got = slow.await.expect("slow client task").expect("closed");
    let elapsed = started.elapsed();
    // Unhindered, the head would be complete (and answered 200) at ~1.5 s.
    assert!(
        elapsed < Duration::from_secs(4),
        "the slow client held its connection for {elapsed:?}"
    );
    // Cut off without a normal answer (hyper closes it, no response).
    assert!(!got.starts_with(b"HTTP/1.1 200"), "{got:?}");
    assert_eq!(status_line(addr, HEALTH).await, "HTTP/1.1 200 OK");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_idle_connections_do_not_stop_others_and_are_closed_after_the_timeout() {
    let count = idle_connection_count();
    let server = MockServer::builder()
        .header_read_timeout(Duration::from_millis(1500))
        .start()
        .await
        .expect("start");
    let addr = server.addr();
    let opened_at = Instant::now();
    let mut idle = Vec::with_capacity(count);
    for i in 0..count {
        let mut stream = TcpStream::connect(addr).await.expect("connect");
        // A third send half a request head, the rest nothing at all.
        if i % 3 == 0 {
            stream
                .write_all(b"GET /_mock/health HTTP/1.1\r\nHost:")
                .await
                .expect("write");
        }
        idle.push(stream);
    }
    // Everyone else is still served, promptly, over new connections...
    let serving = Instant::now();
    for _ in 0..20 {
        assert_eq!(status_line(addr, HEALTH).await, "HTTP/1.1 200 OK");
    }
    let reply = reqwest::get(format!("{}/api/payments/x/status", server.base_url()))
        .await
        .expect("reply");
    assert_eq!(reply.status(), 404);
    assert!(
        serving.elapsed() < Duration::from_secs(5),
        "{count} idle connections slowed others to {:?}",
        serving.elapsed()
    );
    // ...and the idle ones are dropped by the server, not kept forever.
    let deadline = Duration::from_secs(10).saturating_sub(opened_at.elapsed());
    for stream in idle.iter_mut().step_by(count.div_ceil(50).max(1)) {
        let got = closed_within(stream, deadline.max(Duration::from_secs(3))).await;
        assert!(got.is_some(), "an idle connection was still open");
    }
    drop(idle);
    server.shutdown().await;
}

#[tokio::test]
async fn a_head_over_the_limit_is_431_not_a_hang_and_the_server_goes_on() {
    let server = MockServer::start().await;
    let addr = server.addr();
    let big = format!(
        "GET /_mock/health HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\nConnection: close\r\n\r\n",
        "v".repeat(HEADER_LIMIT + 1)
    );
    assert!(
        status_line(addr, big.as_bytes())
            .await
            .starts_with("HTTP/1.1 431"),
    );
    let mut many = String::from("GET /_mock/health HTTP/1.1\r\nHost: x\r\n");
    for i in 0..150 {
        many.push_str(&format!("X-H{i}: v\r\n"));
    }
    many.push_str("Connection: close\r\n\r\n");
    assert!(
        status_line(addr, many.as_bytes())
            .await
            .starts_with("HTTP/1.1 431"),
    );
    // Just under the limit is still served, with the envelope.
    let fits = format!(
        "GET /_mock/health HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\nConnection: close\r\n\r\n",
        "v".repeat(HEADER_LIMIT - 200)
    );
    assert_eq!(status_line(addr, fits.as_bytes()).await, "HTTP/1.1 200 OK");
    assert_eq!(status_line(addr, HEALTH).await, "HTTP/1.1 200 OK");
    server.shutdown().await;
}

#[tokio::test]
async fn garbage_instead_of_a_request_line_is_a_bare_400_and_the_server_goes_on() {
    let server = MockServer::start().await;
    let addr = server.addr();
    for junk in [
        &b"\x00\x01\x02\r\n\r\n"[..],
        b"GET / HTTP/9.9\r\n\r\n",
        b"GET /\xff HTTP/1.1\r\nHost: x\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost x\r\n\r\n",
        b"POST /api/payments/initiate HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
    ] {
        let line = status_line(addr, junk).await;
        assert!(line.is_empty() || line.starts_with("HTTP/1.1 4"), "{line}");
    }
    assert_eq!(status_line(addr, HEALTH).await, "HTTP/1.1 200 OK");
    server.shutdown().await;
}

#[tokio::test]
async fn the_rate_limiter_answers_429_with_retry_after_and_spares_the_controls() {
    let mut config = Config::default();
    config.rate_limit = Some(2);
    let (_, router) = service_with(config);
    let mut limited = Vec::new();
    for _ in 0..6 {
        let reply = get(&router, "/api/payments/x/status").await;
        if reply.status == 429 {
            limited.push(reply);
        } else {
            assert_eq!(reply.status, 404);
        }
    }
    assert!(
        !limited.is_empty(),
        "six requests at a limit of two per second"
    );
    for reply in &limited {
        assert_eq!(reply.code(), "RATE_LIMITED");
        assert_eq!(reply.body["data"], serde_json::Value::Null);
        let seconds: u64 = reply.headers["retry-after"]
            .to_str()
            .expect("ascii")
            .parse()
            .expect("Retry-After in whole seconds");
        assert!((1..=60).contains(&seconds), "{seconds}");
    }
    for _ in 0..10 {
        assert_eq!(get(&router, "/_mock/health").await.status, 200);
    }
}

/// Over a real connection the limit answers 429 with `Retry-After: 1` and
/// keeps the connection usable. That the window lifts a second after it
/// opened is the unit test `faults::tests::the_rate_limit_lifts_one_second_after_its_window_opened`
/// (its own instants: no second waited here).
#[tokio::test]
async fn the_rate_limit_answers_429_with_retry_after_over_tcp() {
    let server = MockServer::builder()
        .rate_limit(1)
        .start()
        .await
        .expect("start");
    let url = format!("{}/api/payments/x/status", server.base_url());
    let client = reqwest::Client::new();
    // The first request of a window passes; the next within its second is
    // refused (a machine so slow that a second passes between two requests
    // opens a new window, so a few are sent).
    let first = client.get(&url).send().await.expect("reply");
    assert_eq!(first.status(), 404, "the first request of the window");
    let mut limited = None;
    for _ in 0..5 {
        let reply = client.get(&url).send().await.expect("reply");
        if reply.status() == 429 {
            limited = Some(reply);
            break;
        }
        assert_eq!(reply.status(), 404);
    }
    let limited = limited.expect("a 429 at one request a second");
    assert_eq!(limited.headers()["retry-after"], "1");
    let body: serde_json::Value = limited.json().await.expect("JSON");
    assert_eq!(body["errorCode"], "RATE_LIMITED", "{body}");
    // The controls are never limited, on the same connection.
    let health = client
        .get(format!("{}/_mock/health", server.base_url()))
        .send()
        .await
        .expect("reply");
    assert_eq!(health.status(), 200);
    server.shutdown().await;
}

#[tokio::test]
async fn the_binary_takes_header_read_timeout_as_a_flag() {
    let (mut child, base) = crate::common::spawn_with_banner(
        std::process::Command::new(env!("CARGO_BIN_EXE_payments-mock-server"))
            .args(["--port", "0", "--header-read-timeout", "200ms"])
            .stderr(std::process::Stdio::null()),
    );
    let addr: SocketAddr = crate::common::address_of(&base).parse().expect("address");
    let started = Instant::now();
    let mut idle = TcpStream::connect(addr).await.expect("connect");
    let closed = closed_within(&mut idle, Duration::from_secs(5)).await;
    let elapsed = started.elapsed();
    let _ = child.kill();
    let _ = child.wait();
    assert!(closed.is_some(), "an idle connection outlived the timeout");
    assert!(elapsed < Duration::from_secs(3), "{elapsed:?}");
}

/// A request whose body stops short (its `Content-Length` says 10, 4
/// bytes come) is answered 400 once `--header-read-timeout` has passed
/// since its head, on the API and on the admin routes, and such a request
/// never holds the server's shutdown: it waited for the rest without end,
/// and a SIGTERM never finished.
#[tokio::test(start_paused = true)]
async fn a_body_that_stops_short_is_answered_400_and_never_holds_the_shutdown() {
    let timeout = Duration::from_millis(500);
    let server = MockServer::builder()
        .header_read_timeout(timeout)
        .start()
        .await
        .expect("start");
    let addr = server.addr();
    let stalled = |path: &str| {
        format!(
            "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             Content-Length: 10\r\n\r\n{{\"a\""
        )
    };
    for path in [
        "/api/payments/initiate",
        "/_mock/sandboxes",
        "/_mock/faults",
    ] {
        let mut stream = TcpStream::connect(addr).await.expect("connect");
        stream
            .write_all(stalled(path).as_bytes())
            .await
            .expect("sent");
        let mut got = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(10), async {
            let mut buf = [0u8; 4096];
            while !got.windows(4).any(|w| w == b"\r\n\r\n") || !got.ends_with(b"}") {
                match stream.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => got.extend_from_slice(&buf[..n]),
                }
            }
        })
        .await;
        assert!(read.is_ok(), "{path}: no answer within 10 s");
        let text = String::from_utf8_lossy(&got);
        assert!(text.starts_with("HTTP/1.1 400"), "{path}: {text}");
        assert!(text.contains("VALIDATION_ERROR"), "{path}: {text}");
        assert!(
            text.contains("request body did not arrive within 0.5 s of its head"),
            "{path}: {text}"
        );
    }
    // One left waiting: the shutdown still finishes.
    let mut waiting = TcpStream::connect(addr).await.expect("connect");
    waiting
        .write_all(stalled("/api/payments/initiate").as_bytes())
        .await
        .expect("sent");
    tokio::time::sleep(Duration::from_millis(50)).await;
    tokio::time::timeout(Duration::from_secs(10), server.shutdown())
        .await
        .expect("the shutdown finished");
}
