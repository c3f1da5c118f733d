//! A request held without an answer that asked to be told
//! (`ConnectionAbort::close_when_client_leaves`) ends, its connection
//! closed, once its client has left: closed the connection (the end of
//! input) or reset it. Connections are served half-closed, so hyper never
//! reads the socket while a request is handled: before, such a request
//! was held (and its socket left in CLOSE-WAIT) until it ended by itself.
//! A client that stays is still held, and one whose request did not ask
//! is not watched. Only a server that watches leaving clients
//! (`Options::watch_leaving_clients`) does this: on one that does not,
//! asking does nothing.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::Extension;
use axum::routing::get;
use payments_serve::ConnectionAbort;
use payments_serve::server::{self, Options};
use tokio::io::AsyncWriteExt as _;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

#[cfg(feature = "tls")]
mod common;

const HOUR: Duration = Duration::from_secs(3600);
const BOUND: Duration = Duration::from_secs(20);
const CLIENTS: usize = 50;
/// How long `/bounded` holds its request (the mock's `hang` has a bound).
const HANG_BOUND: Duration = Duration::from_millis(300);

/// Counts the requests held, until their handler is dropped.
struct Held(Arc<AtomicUsize>);

impl Held {
    fn new(count: &Arc<AtomicUsize>) -> Self {
        count.fetch_add(1, Ordering::SeqCst);
        Self(Arc::clone(count))
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A server that watches leaving clients.
fn watching() -> Options {
    Options::from(HOUR).watch_leaving_clients(true)
}

/// `/hang` holds its request forever, asking to be told when the client
/// leaves; `/hold` holds it forever without asking.
/// (`held` counts `/hang`'s requests, `unwatched` `/hold`'s.)
async fn start(
    held: &Arc<AtomicUsize>,
    unwatched: &Arc<AtomicUsize>,
) -> (std::net::SocketAddr, oneshot::Sender<()>) {
    start_with(holding(held, unwatched), watching()).await
}

async fn start_with(
    router: Router,
    options: Options,
) -> (std::net::SocketAddr, oneshot::Sender<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bound");
    let addr = listener.local_addr().expect("an address");
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(server::run_with(listener, router, options, async {
        let _ = stopped.await;
    }));
    (addr, stop)
}

fn holding(held: &Arc<AtomicUsize>, unwatched: &Arc<AtomicUsize>) -> Router {
    let (hang, hold, bounded) = (Arc::clone(held), Arc::clone(unwatched), Arc::clone(held));
    Router::new()
        .route("/answer", get(|| async { "answered" }))
        .route(
            "/bounded",
            get(
                move |Extension(abort): Extension<ConnectionAbort>| async move {
                    abort.close_when_client_leaves();
                    let _held = Held::new(&bounded);
                    tokio::time::sleep(HANG_BOUND).await;
                    "held to its bound"
                },
            ),
        )
        .route(
            "/hang",
            get(
                move |Extension(abort): Extension<ConnectionAbort>| async move {
                    abort.close_when_client_leaves();
                    let _held = Held::new(&hang);
                    std::future::pending::<&'static str>().await
                },
            ),
        )
        .route(
            "/hold",
            get(move || async move {
                let _held = Held::new(&hold);
                std::future::pending::<&'static str>().await
            }),
        )
}

async fn ask(addr: std::net::SocketAddr, path: &str) -> TcpStream {
    let mut stream = TcpStream::connect(addr).await.expect("connects");
    stream
        .write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
        .await
        .expect("sent");
    stream
}

/// Waits (polling, at most [`BOUND`]) until `count` holds `want`.
async fn reach(count: &AtomicUsize, want: usize) {
    tokio::time::timeout(BOUND, async {
        while count.load(Ordering::SeqCst) != want {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("held {}, not {want}", count.load(Ordering::SeqCst)));
}

/// No byte came, and the connection is still open.
fn unanswered_and_open(stream: &TcpStream) {
    let mut buf = [0u8; 64];
    match stream.try_read(&mut buf) {
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
        other => panic!("the held client got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_request_ends_when_its_client_closes_or_resets() {
    let held = Arc::new(AtomicUsize::new(0));
    let (addr, _stop) = start(&held, &Arc::default()).await;
    let stays = ask(addr, "/hang").await;
    let mut leaving = Vec::new();
    for _ in 0..CLIENTS {
        leaving.push(ask(addr, "/hang").await);
    }
    let mut resetting = Vec::new();
    for _ in 0..CLIENTS {
        resetting.push(ask(addr, "/hang").await);
    }
    reach(&held, 2 * CLIENTS + 1).await;

    // Closed fully: the server sees the end of input.
    drop(leaving);
    reach(&held, CLIENTS + 1).await;
    // Reset (a zero linger): the server sees an error.
    for stream in resetting {
        stream.set_zero_linger().expect("linger");
        drop(stream);
    }
    reach(&held, 1).await;
    // The client that stays is still held, unanswered.
    unanswered_and_open(&stays);
    drop(stays);
    reach(&held, 0).await;
}

/// A request that did not ask is not watched: its client leaving ends
/// nothing (the control: the socket is watched only when asked).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_that_did_not_ask_is_not_watched() {
    let (held, unwatched) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (addr, _stop) = start(&held, &unwatched).await;
    let hold = ask(addr, "/hold").await;
    reach(&unwatched, 1).await;
    drop(hold);
    // Then one that asked: once it has ended, the other's leaving (sent
    // first) would have been seen too, had it been watched.
    let hang = ask(addr, "/hang").await;
    reach(&held, 1).await;
    drop(hang);
    reach(&held, 0).await;
    assert_eq!(
        unwatched.load(Ordering::SeqCst),
        1,
        "not watched, still held"
    );
}

/// A client that shut its sending side after its request: answered when
/// the request is (hyper serves it half-closed, unwatched); taken as gone
/// when its request is held without an answer (the two cannot be told
/// apart on the socket, and it is owed none).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_half_closed_client_is_answered_and_its_hang_ends() {
    use tokio::io::AsyncReadExt as _;
    let held = Arc::new(AtomicUsize::new(0));
    let (addr, _stop) = start(&held, &Arc::default()).await;
    let mut answered = ask(addr, "/answer").await;
    answered.shutdown().await.expect("shut");
    let mut answer = Vec::new();
    tokio::time::timeout(BOUND, answered.read_to_end(&mut answer))
        .await
        .expect("in time")
        .expect("read");
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.ends_with("answered"), "{answer}");

    let mut hanging = ask(addr, "/hang").await;
    reach(&held, 1).await;
    hanging.shutdown().await.expect("shut");
    reach(&held, 0).await;
    let mut rest = Vec::new();
    let read = tokio::time::timeout(BOUND, hanging.read_to_end(&mut rest))
        .await
        .expect("closed");
    assert!(read.is_err() || rest.is_empty(), "{rest:?}");
}

/// A client that shut its sending side while `/bounded` holds its
/// request and still reads.
async fn half_closed_during_a_bounded_hang(options: Options) -> String {
    use tokio::io::AsyncReadExt as _;
    let held = Arc::new(AtomicUsize::new(0));
    let (addr, _stop) = start_with(holding(&held, &Arc::default()), options).await;
    let mut hanging = ask(addr, "/bounded").await;
    reach(&held, 1).await;
    hanging.shutdown().await.expect("shut");
    let mut answer = Vec::new();
    let read = tokio::time::timeout(BOUND, hanging.read_to_end(&mut answer))
        .await
        .expect("ended in time");
    reach(&held, 0).await;
    match read {
        Ok(_) => String::from_utf8_lossy(&answer).into_owned(),
        Err(e) => format!("error: {e}"),
    }
}

/// On a server that does not watch leaving clients (the default) asking
/// does nothing, and does not fail: the request is held to its own bound
/// and answered then, to a client that the watch would have taken as
/// gone (the control: a watching server closes it unanswered).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unwatched_asking_does_nothing_and_the_hang_ends_at_its_bound() {
    let answer = half_closed_during_a_bounded_hang(Options::from(HOUR)).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.ends_with("held to its bound"), "{answer}");

    let answer = half_closed_during_a_bounded_hang(watching()).await;
    assert!(
        answer.is_empty() || answer.starts_with("error: "),
        "closed unanswered: {answer}"
    );
}

/// Over TLS the same, watched on the TCP socket beneath.
#[cfg(feature = "tls")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_tls_a_held_request_ends_when_its_client_closes() {
    let (ca, tls) = common::loopback_tls();
    let held = Arc::new(AtomicUsize::new(0));
    let router = holding(&held, &Arc::default());
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bound");
    let addr = listener.local_addr().expect("an address");
    tokio::spawn(server::run_tls(
        listener,
        router,
        tls,
        watching(),
        std::future::pending(),
    ));

    let connector = common::connector_trusting(&ca, &[]);
    let mut clients = Vec::new();
    for _ in 0..10 {
        let tcp = TcpStream::connect(addr).await.expect("connects");
        let name = rustls::pki_types::ServerName::try_from("127.0.0.1").expect("a name");
        let mut tls = connector.connect(name, tcp).await.expect("handshake");
        tls.write_all(b"GET /hang HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .expect("sent");
        tls.flush().await.expect("flushed");
        clients.push(tls);
    }
    reach(&held, 10).await;
    let stays = clients.pop().expect("one");
    // Closed without a TLS goodbye (the socket only).
    drop(clients);
    reach(&held, 1).await;
    drop(stays);
    reach(&held, 0).await;
}
