//! A lingering close: a connection the server closes after an early
//! answer (a `413` made before the body was read) shuts its sending side
//! down, then reads and drops what the client still sends (up to 2 s or
//! 64 MiB) before it closes. Before, it closed at once on unread data: the
//! kernel reset the connection, and a client still writing its body met
//! the reset under its write (the contract proxy's HTTP client then lost
//! the `413` waiting for it and blamed the service).

use std::time::Duration;

use axum::Router;
use axum::http::StatusCode;
use axum::routing::post;
use payments_serve::server;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

/// A server whose `POST /early` answers `413` without reading the body.
async fn start() -> std::net::SocketAddr {
    let router = Router::new().route(
        "/early",
        post(|| async { (StatusCode::PAYLOAD_TOO_LARGE, "too large") }),
    );
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
    let addr = listener.local_addr().expect("its address");
    tokio::spawn(server::run(listener, router, std::future::pending()));
    addr
}

const BOUND: Duration = Duration::from_secs(20);

/// Opens a connection and sends the head of a `POST /early` declaring
/// `length` bytes of body.
async fn posting(addr: std::net::SocketAddr, length: usize) -> TcpStream {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    let head = format!(
        "POST /early HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Content-Length: {length}\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.expect("the head");
    stream
}

/// Reads to the end of input: what came before it (or before a reset).
async fn read_all(stream: &mut TcpStream) -> Vec<u8> {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return got,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
}

/// Issue: the server closed the connection with the body unread; the
/// kernel reset it, and the client's write of the rest failed.
#[tokio::test]
async fn a_client_still_sending_its_body_after_an_early_answer_sends_it_all_and_reads_the_answer() {
    let addr = start().await;
    // Far more than the socket buffers hold between the two ends.
    const LENGTH: usize = 16 * 1024 * 1024;
    let mut stream = posting(addr, LENGTH).await;
    let chunk = vec![b'x'; 64 * 1024];
    let sent = tokio::time::timeout(BOUND, async {
        let mut sent = 0;
        while sent < LENGTH {
            stream.write_all(&chunk).await?;
            sent += chunk.len();
        }
        Ok::<_, std::io::Error>(sent)
    })
    .await
    .expect("sent in time");
    assert_eq!(
        sent.expect("the whole body is taken, not reset"),
        LENGTH,
        "sent"
    );
    let got = tokio::time::timeout(BOUND, read_all(&mut stream))
        .await
        .expect("the end of the connection in time");
    let text = String::from_utf8_lossy(&got);
    assert!(text.starts_with("HTTP/1.1 413 "), "{text}");
    assert!(text.ends_with("too large"), "{text}");
}

/// The lingering is bounded: a client that never stops sending is cut off
/// (after 64 MiB or 2 s), and it got its answer all the same.
#[tokio::test]
async fn a_client_that_never_stops_sending_is_cut_off_and_has_its_answer() {
    let addr = start().await;
    let mut stream = posting(addr, usize::MAX / 2).await;
    let chunk = vec![b'x'; 64 * 1024];
    let failed = tokio::time::timeout(BOUND, async {
        loop {
            if let Err(e) = stream.write_all(&chunk).await {
                return e;
            }
        }
    })
    .await
    .expect("cut off within the bound");
    assert!(
        matches!(
            failed.kind(),
            std::io::ErrorKind::BrokenPipe | std::io::ErrorKind::ConnectionReset
        ),
        "{failed}"
    );
    let got = tokio::time::timeout(BOUND, read_all(&mut stream))
        .await
        .expect("read in time");
    let text = String::from_utf8_lossy(&got);
    assert!(text.starts_with("HTTP/1.1 413 "), "{text}");
}

/// Issue: a stop that began while a connection lingered (a client still
/// sending the body of a request answered early) waited the whole 2 s of
/// lingering, though a connection closed by the stop closes at once. The
/// stop begins while the request is under way (its handler waits), the
/// answer then comes and the connection is closed after it: it lingers no
/// longer, and the server is done well within the 2 s.
#[tokio::test]
async fn a_stop_ends_the_lingering_of_a_connection_answered_early() {
    let release = std::sync::Arc::new(tokio::sync::Notify::new());
    let (entered, mut inside) = tokio::sync::mpsc::unbounded_channel::<()>();
    let router = Router::new().route(
        "/early",
        post({
            let release = std::sync::Arc::clone(&release);
            move || async move {
                let _ = entered.send(());
                release.notified().await;
                (StatusCode::PAYLOAD_TOO_LARGE, "too large")
            }
        }),
    );
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
    let addr = listener.local_addr().expect("its address");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(server::run(listener, router, async {
        let _ = stopped.await;
    }));
    let stream = posting(addr, usize::MAX / 2).await;
    let (mut reading, mut writing) = stream.into_split();
    // The client keeps sending, slowly, whatever comes back.
    let sender = tokio::spawn(async move {
        let chunk = [b'x'; 1024];
        let mut tick = tokio::time::interval(Duration::from_millis(5));
        loop {
            tick.tick().await;
            if writing.write_all(&chunk).await.is_err() {
                return;
            }
        }
    });
    tokio::time::timeout(BOUND, inside.recv())
        .await
        .expect("the request reaches its handler in time")
        .expect("the handler says so");
    stop.send(()).expect("the server waits for its stop");
    // The stop has begun once the listener is closed (on this one-thread
    // runtime the server tells its connections in the same step).
    tokio::time::timeout(BOUND, async {
        while let Ok(probe) = TcpStream::connect(addr).await {
            drop(probe);
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("the listener closed in time");
    let began = std::time::Instant::now();
    release.notify_one();
    let answered = tokio::time::timeout(BOUND, async {
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            match reading.read(&mut buf).await {
                Ok(0) | Err(_) => return got,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await
    .expect("the answer and the end in time");
    let text = String::from_utf8_lossy(&answered);
    assert!(text.starts_with("HTTP/1.1 413 "), "{text}");
    tokio::time::timeout(Duration::from_millis(700), server)
        .await
        .expect("the stop is done well within the 2 s of lingering")
        .expect("the server's task");
    assert!(
        began.elapsed() < Duration::from_millis(700),
        "{:?}",
        began.elapsed()
    );
    sender.abort();
}
