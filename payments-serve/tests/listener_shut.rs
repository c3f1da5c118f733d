//! A listener shut down through another descriptor of its socket (what an
//! embedded mock's drop does, on Linux): new connections are refused at
//! once, and the accept loop waits for the stop without warning that
//! accepts fail or trying again.
#![cfg(target_os = "linux")]

use std::net::Shutdown;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::Router;
use axum::routing::get;
use payments_serve::server;
use tokio::sync::oneshot;

const BOUND: Duration = Duration::from_secs(20);

/// What the server logged, every level.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Captured {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap_or_else(PoisonError::into_inner)).into_owned()
    }
}

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Shuts the socket of `dup` (a duplicate of a listener's descriptor)
/// down, as `socket2::SockRef::shutdown` does: on Linux a listening
/// socket then stops listening.
fn shut_down(dup: std::net::TcpListener) {
    let socket = std::net::TcpStream::from(std::os::fd::OwnedFd::from(dup));
    socket.shutdown(Shutdown::Both).expect("shut down");
}

#[test]
fn a_listener_shut_down_refuses_at_once_and_the_loop_waits_for_the_stop_quietly() {
    let captured = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::DEBUG)
        .with_ansi(false)
        .with_writer({
            let captured = captured.clone();
            move || captured.clone()
        })
        .finish();
    // The runtime's one thread is this one: the serve loop logs here.
    let _log = tracing::subscriber::set_default(subscriber);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bound");
        let addr = listener.local_addr().expect("an address");
        let dup = listener.try_clone().expect("a duplicate");
        listener.set_nonblocking(true).expect("non-blocking");
        let listener = tokio::net::TcpListener::from_std(listener).expect("registered");
        let router = Router::new().route("/", get(|| async { "ok" }));
        let (stop, stopped) = oneshot::channel::<()>();
        let serving = tokio::spawn(server::run(listener, router, async {
            let _ = stopped.await;
        }));
        // Served before.
        let mut before = tokio::net::TcpStream::connect(addr)
            .await
            .expect("connects");
        tokio::io::AsyncWriteExt::write_all(
            &mut before,
            b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        )
        .await
        .expect("sent");
        let mut answer = Vec::new();
        tokio::io::AsyncReadExt::read_to_end(&mut before, &mut answer)
            .await
            .expect("answered");
        assert!(answer.starts_with(b"HTTP/1.1 200"), "{answer:?}");

        shut_down(dup);
        for _ in 0..50 {
            let refused = std::net::TcpStream::connect(addr).expect_err("refused");
            assert_eq!(refused.kind(), std::io::ErrorKind::ConnectionRefused);
        }
        // The loop sees its listener gone, and says so at debug only.
        let waited = Instant::now();
        while !captured.text().contains("no longer listens") && waited.elapsed() < BOUND {
            if captured.text().contains("WARN") {
                break;
            }
            tokio::task::yield_now().await;
        }
        let log = captured.text();
        assert!(!log.contains("WARN"), "{log}");
        assert!(log.contains("no longer listens"), "{log}");
        stop.send(()).expect("still serving");
        tokio::time::timeout(BOUND, serving)
            .await
            .expect("stops at once")
            .expect("no panic");
        let log = captured.text();
        assert!(!log.contains("WARN"), "{log}");
    });
}
