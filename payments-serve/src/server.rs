//! Serving connections: the accept loop, per-connection tasks, connections
//! closed without an answer, and graceful shutdown.
//!
//! Connections are served with hyper directly (not `axum::serve`) so a
//! handler can make its connection close without a response: the
//! connection task owns a [`ConnectionAbort`] that a handler triggers (the
//! mock's `reset` fault), and dropping the connection future closes the
//! socket before a byte of the response is written. A handler that holds
//! its request without an answer (the mock's `hang`) asks the task to
//! close the connection once the client has left
//! ([`ConnectionAbort::close_when_client_leaves`]), where the server
//! watches leaving clients ([`Options::watch_leaving_clients`], off by
//! default: it costs a descriptor per connection).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::Request;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use hyper_util::server::graceful::GracefulConnection;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tower::ServiceExt;

use accept::{ACCEPT_PAUSE, Refused, backlog, not_listening};
use busy::{Busy, HeadWatch, Tracked};
use host::OneHost;
use io::Io;
use linger::Lingering;
use peer::{Asked, Peer, Signals};

pub use options::Options;

mod accept;
mod busy;
mod host;
mod io;
mod linger;
mod options;
mod peer;

/// Default header read timeout: how long a connection may take to send a
/// request's head, from the moment it is ready for one.
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// Closes the connection a request came on, without a response.
#[derive(Debug, Clone, Default)]
pub struct ConnectionAbort(Arc<Signals>);

impl ConnectionAbort {
    /// Asks the connection task to drop the connection now.
    pub fn trigger(&self) {
        self.0.abort();
    }

    /// Asks the connection task to drop the connection (without a
    /// response, the request's handler with it) once its client has left:
    /// closed its side (the end of input, read on the socket) or reset
    /// it. For a request that is never answered (the mock's `hang`): a
    /// client that only shut its sending side and still waits is taken as
    /// gone too (the two cannot be told apart), and what a client sends
    /// after it is dropped unread by hyper. Connections are served
    /// half-closed, so without this nothing reads the socket while a
    /// request is handled, and a client that left is never seen.
    ///
    /// Only a server that watches leaving clients
    /// ([`Options::watch_leaving_clients`]; the mock does, the contract
    /// proxy does not) can see it: its task watches through a duplicate
    /// of the socket's descriptor taken at the accept (TLS: of the TCP
    /// socket beneath), one `dup` per connection, one more descriptor
    /// while it is open. On a server that does not (the default), where
    /// that duplicate could not be taken (no descriptor left), or
    /// in-process without a connection, this does nothing: the request
    /// is held until its handler ends it (the mock's `hang`: its bound),
    /// the connection is aborted, or the server shuts down.
    pub fn close_when_client_leaves(&self) {
        self.0.watch();
    }
}

/// Largest request head (request line and headers) hyper accepts: 64 KiB,
/// like the body. Over it, or over 100 headers, hyper itself answers a bare
/// `431 Request Header Fields Too Large` (no envelope).
pub const HEADER_LIMIT: usize = 64 * 1024;

/// Serves `router` on `listener` until `shutdown` completes, then stops
/// accepting, lets in-flight requests finish and returns, with the
/// default [`Options`] (the header read timeout
/// [`DEFAULT_HEADER_READ_TIMEOUT`], leaving clients not watched).
/// Each request carries its connection's [`ConnectionAbort`] as an
/// extension.
pub async fn run(listener: TcpListener, router: Router, shutdown: impl Future<Output = ()>) {
    run_with(listener, router, Options::default(), shutdown).await;
}

/// [`run`] with these [`Options`] (or a bare header read timeout: the
/// defaults with it). A connection that has not sent a whole request head
/// within the header read timeout after it became ready for one is
/// closed without a response, so slow or idle clients cannot pin
/// connection tasks.
pub async fn run_with(
    listener: TcpListener,
    router: Router,
    options: impl Into<Options>,
    shutdown: impl Future<Output = ()>,
) {
    let per_connection = move |abort: ConnectionAbort| {
        let service = router.clone().map_request(move |req: Request<Incoming>| {
            let mut req = req.map(axum::body::Body::new);
            req.extensions_mut().insert(abort.clone());
            req
        });
        TowerToHyperService::new(service)
    };
    serve(listener, per_connection, options, shutdown).await;
}

/// [`run_with`] over TLS: each connection's handshake must finish within
/// the header read timeout too, and one that fails or times out is closed
/// without an answer (logged at debug: a scanner must not fill the log).
#[cfg(feature = "tls")]
#[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
pub async fn run_tls(
    listener: TcpListener,
    router: Router,
    tls: crate::tls::ServerTls,
    options: impl Into<Options>,
    shutdown: impl Future<Output = ()>,
) {
    let per_connection = move |abort: ConnectionAbort| {
        let service = router.clone().map_request(move |req: Request<Incoming>| {
            let mut req = req.map(axum::body::Body::new);
            req.extensions_mut().insert(abort.clone());
            req
        });
        TowerToHyperService::new(service)
    };
    serve_tls(listener, tls, per_connection, options, shutdown).await;
}

/// The accept loop: `per_connection` makes the service of one connection,
/// given what closes it; until `shutdown` completes, then in-flight
/// requests finish. `options`: [`Options`], or a bare header read timeout
/// (the defaults with it).
pub async fn serve<S>(
    listener: TcpListener,
    per_connection: impl Fn(ConnectionAbort) -> S,
    options: impl Into<Options>,
    shutdown: impl Future<Output = ()>,
) where
    S: hyper::service::Service<
            Request<Incoming>,
            Response = axum::response::Response,
            Error = std::convert::Infallible,
        > + Send
        + 'static,
    S::Future: Send + 'static,
{
    serve_on(
        listener,
        Handshake::None,
        per_connection,
        options.into(),
        shutdown,
    )
    .await;
}

/// [`serve`] over TLS (HTTPS only): the handshake of each connection runs
/// in its task, bounded by the header read timeout, so a slow or half-open
/// client holds nothing but its own task, and only that long. A failed
/// handshake (a client that does not trust the certificate, or without
/// the client certificate mutual TLS requires) closes the connection
/// without an answer and is logged at debug, without secrets.
#[cfg(feature = "tls")]
#[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
pub async fn serve_tls<S>(
    listener: TcpListener,
    tls: crate::tls::ServerTls,
    per_connection: impl Fn(ConnectionAbort) -> S,
    options: impl Into<Options>,
    shutdown: impl Future<Output = ()>,
) where
    S: hyper::service::Service<
            Request<Incoming>,
            Response = axum::response::Response,
            Error = std::convert::Infallible,
        > + Send
        + 'static,
    S::Future: Send + 'static,
{
    let handshake = Handshake::Tls(tls.acceptor());
    serve_on(
        listener,
        handshake,
        per_connection,
        options.into(),
        shutdown,
    )
    .await;
}

/// What a connection goes through before HTTP.
enum Handshake {
    None,
    #[cfg(feature = "tls")]
    Tls(tokio_rustls::TlsAcceptor),
}

async fn serve_on<S>(
    listener: TcpListener,
    handshake: Handshake,
    per_connection: impl Fn(ConnectionAbort) -> S,
    options: Options,
    shutdown: impl Future<Output = ()>,
) where
    S: hyper::service::Service<
            Request<Incoming>,
            Response = axum::response::Response,
            Error = std::convert::Infallible,
        > + Send
        + 'static,
    S::Future: Send + 'static,
{
    // At the shutdown every connection task is told, and the server waits
    // for them all: each with a request under way finishes it (no
    // keep-alive after it), the others close at once.
    let (stop, stopping) = tokio::sync::watch::channel(false);
    let mut shutdown = std::pin::pin!(shutdown);
    // `held`: a connection the kernel completed before the stop, whose
    // whole request head had come (see [`backlog`]): it is served one
    // request whatever the stop, as one accepted before it would be.
    // A TLS connection's request cannot have come before its handshake,
    // so only a plain listener's backlog can hold one.
    let plain = matches!(handshake, Handshake::None);
    let Options {
        header_read_timeout,
        watch_leaving_clients,
    } = options;
    // Owns what it uses (it lives across the loop's awaits: a borrow would
    // need `per_connection` to be `Sync`).
    let start = move |stream: tokio::net::TcpStream, _peer: std::net::SocketAddr, held: bool| {
        let _ = stream.set_nodelay(true);
        let peer = if watch_leaving_clients {
            Peer::of(&stream)
        } else {
            Peer::unwatched()
        };
        let abort = ConnectionAbort::default();
        let busy = Busy::default();
        let service = {
            let (host, busy) = (OneHost(per_connection(abort.clone())), busy.clone());
            hyper::service::service_fn(move |req| {
                let answering = hyper::service::Service::call(&host, req);
                let started = busy.start();
                async move {
                    let answer = answering.await?;
                    Ok::<_, std::convert::Infallible>(
                        answer.map(|body| Tracked::new(body, started)),
                    )
                }
            })
        };
        let mut builder = hyper::server::conn::http1::Builder::new();
        // A client may shut its side down once its request is sent (`nc
        // -N`, `curl` through some proxies): the request is answered all
        // the same. By default hyper read that end of input as the
        // connection gone and dropped the request's handler, so most such
        // requests went unanswered (and a confirm could be cut off
        // anywhere). The price: hyper never reads the socket while a
        // request is handled, so a client that leaves then is not seen; a
        // hanging request asks the task to watch for that itself ([`Peer`]).
        // The header read timeout is the connection task's own watch
        // ([`drive`]): hyper's armed a timer for every request (~550
        // instructions of a status read's ~19.6k, callgrind).
        builder
            .half_close(true)
            .header_read_timeout(None)
            .max_header_size(HEADER_LIMIT)
            .keep_alive(!held);
        let stopping = stopping.clone();
        let watch = Watch {
            stopping,
            header_read_timeout,
            held,
            peer,
        };
        match &handshake {
            Handshake::None => {
                let io = Lingering::new(Io::Plain(stream), watch.stopping.clone());
                let conn = builder.serve_connection(TokioIo::new(io), service);
                tokio::spawn(drive(conn, busy, abort, watch));
            }
            #[cfg(feature = "tls")]
            Handshake::Tls(acceptor) => {
                let accepting = acceptor.accept(stream);
                tokio::spawn(async move {
                    let mut stopping = watch.stopping.clone();
                    // An unfinished handshake is no request: the shutdown
                    // closes it at once.
                    let stream = tokio::select! {
                        done = tokio::time::timeout(header_read_timeout, accepting) => match done {
                            Ok(Ok(stream)) => stream,
                            Ok(Err(e)) => {
                                tracing::debug!(peer = %_peer, error = %e, "TLS handshake failed");
                                return;
                            }
                            Err(_) => {
                                tracing::debug!(peer = %_peer, "TLS handshake timed out");
                                return;
                            }
                        },
                        _ = stopping.wait_for(|stop| *stop) => return,
                    };
                    let io = Io::Tls(Box::new(stream));
                    let io = Lingering::new(io, watch.stopping.clone());
                    let conn = builder.serve_connection(TokioIo::new(io), service);
                    drive(conn, busy, abort, watch).await;
                });
            }
        }
    };
    // Accepts failed in a row (out of descriptors: transient).
    let mut refused = Refused::default();
    loop {
        tokio::select! {
            // The stop first: once it has come, nothing more is accepted.
            biased;
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    refused.accepted();
                    start(stream, peer, false);
                }
                Err(e) if not_listening(&e) => {
                    // Its socket was shut down (an embedding's drop does
                    // so, then sends the stop): nothing will be accepted
                    // again, each try fails at once. Not retried (it
                    // failed every pause, warning) and not logged as a
                    // failure: the stop is on its way.
                    tracing::debug!("the listener no longer listens; waiting for the stop");
                    (&mut shutdown).await;
                    break;
                }
                Err(e) => {
                    // Tried again after a pause, and said at most once a
                    // minute: retried at once, a full descriptor table spun
                    // a core and wrote a line per try (30 MB a second).
                    refused.failed(&e);
                    tokio::select! {
                        () = tokio::time::sleep(ACCEPT_PAUSE) => {}
                        () = &mut shutdown => break,
                    }
                }
            },
        }
    }
    for (stream, peer) in backlog(listener, plain) {
        start(stream, peer, true);
    }
    // The last receiver outside the connections' tasks.
    drop(start);
    let _ = stop.send(true);
    stop.closed().await;
}

/// Serves one connection until it ends, its [`ConnectionAbort`] fires (or
/// its client leaves once a handler asked to be told), it waits longer
/// than `header_read_timeout` for a head ([`HeadWatch`]: it is closed
/// without an answer), or the shutdown: then a request under
/// way is finished, the connection closed after it; one without (idle,
/// half a head) is closed at once.
async fn drive<C>(conn: C, busy: Busy, abort: ConnectionAbort, watch: Watch)
where
    C: GracefulConnection,
    C::Error: std::fmt::Display,
{
    let Watch {
        mut stopping,
        header_read_timeout,
        held,
        mut peer,
    } = watch;
    let mut conn = std::pin::pin!(conn);
    let mut watch = HeadWatch::new(header_read_timeout, &busy);
    let tick = tokio::time::sleep(watch.tick);
    let mut tick = std::pin::pin!(tick);
    // Serving: the branches each wake-up of the task pays for.
    let watched = loop {
        tokio::select! {
            biased;
            result = conn.as_mut() => return ended(result),
            () = abort.0.notified() => match abort.0.asked() {
                Asked::Abort => return,
                Asked::Watch => {
                    peer.watch();
                    if peer.watching() {
                        break true;
                    }
                }
                Asked::Nothing => {}
            },
            // A held connection's one request is served (no keep-alive):
            // the stop does not close it.
            _ = stopping.wait_for(|stop| *stop), if !held => break false,
            () = tick.as_mut() => {
                if head_late(&mut watch, &busy, tick.as_mut()) {
                    return;
                }
            }
        }
    };
    // A request held without an answer asked to be told when its client
    // leaves: the same, and the client watched. A loop of its own, so
    // that serving pays nothing for it.
    if watched {
        loop {
            tokio::select! {
                biased;
                result = conn.as_mut() => return ended(result),
                () = abort.0.notified() => if abort.0.asked() == Asked::Abort {
                    return;
                },
                () = peer.left() => {
                    tracing::debug!("the client of a request held without an answer left");
                    return;
                }
                _ = stopping.wait_for(|stop| *stop), if !held => break,
                () = tick.as_mut() => {
                    if head_late(&mut watch, &busy, tick.as_mut()) {
                        return;
                    }
                }
            }
        }
    }
    conn.as_mut().graceful_shutdown();
    if busy.idle() {
        return;
    }
    loop {
        tokio::select! {
            result = conn.as_mut() => return ended(result),
            () = abort.0.notified() => match abort.0.asked() {
                Asked::Abort => return,
                Asked::Watch => peer.watch(),
                Asked::Nothing => {}
            },
            () = peer.left(), if peer.watching() => return,
        }
    }
}

/// Whether the connection waited too long for a request head (then it is
/// closed); else the next tick is set.
fn head_late(
    watch: &mut HeadWatch,
    busy: &Busy,
    tick: std::pin::Pin<&mut tokio::time::Sleep>,
) -> bool {
    if watch.expired(busy) {
        tracing::debug!("no whole request head within the header read timeout");
        return true;
    }
    tick.reset(tokio::time::Instant::now() + watch.tick);
    false
}

/// What a connection task watches besides its connection.
struct Watch {
    /// Becomes true at the shutdown.
    stopping: tokio::sync::watch::Receiver<bool>,
    /// See [`Options::header_read_timeout`].
    header_read_timeout: Duration,
    /// Taken from the backlog after the stop, a whole request head there:
    /// served one request, never closed by the stop.
    held: bool,
    /// The client, watched once a handler asks.
    peer: Peer,
}

fn ended<E: std::fmt::Display>(result: Result<(), E>) {
    if let Err(e) = result {
        tracing::debug!(error = %e, "connection ended with an error");
    }
}

/// `reading` (a request body being read) to its end, or `Err(())` once
/// `limit` has passed. A body that is already there (the common case: it
/// came with the head, or a test's in-memory body) is read without a
/// timer, so a runtime without timers (an embedding test's) serves it as
/// before.
pub async fn read_within<F: std::future::Future>(
    limit: std::time::Duration,
    reading: F,
) -> Result<F::Output, ()> {
    let mut reading = std::pin::pin!(reading);
    let first = std::future::poll_fn(|cx| std::task::Poll::Ready(reading.as_mut().poll(cx))).await;
    match first {
        std::task::Poll::Ready(read) => Ok(read),
        std::task::Poll::Pending => tokio::time::timeout(limit, reading).await.map_err(|_| ()),
    }
}

#[cfg(test)]
mod tests;
