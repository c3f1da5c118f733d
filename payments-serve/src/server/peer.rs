//! What a connection task is asked ([`Signals`]: close now, or close once
//! the client has left) and how it sees a client leave ([`Peer`]).
//!
//! Connections are served half-closed (a client that shuts its sending
//! side after its request is still answered), so hyper never reads the
//! socket while a request is being handled: a client that leaves then
//! (closes, or resets) is not seen. A request held without an answer (the
//! mock's `hang`) asks the connection task to watch the socket itself,
//! through a duplicate of its descriptor taken at the accept (a socket may
//! be registered with the reactor through two descriptors): the end of
//! input or an error there means the client has gone, and the connection
//! is closed without an answer.

use std::os::fd::AsFd as _;
use std::pin::Pin;
use std::sync::atomic::{AtomicU8, Ordering};

use tokio::sync::Notify;

/// What a connection's handlers ask its task, and the wake-up that says
/// they did. One [`Notify`] for both: the task waits on it anyway (a
/// second would cost a registration each time the task wakes, a request
/// at least).
#[derive(Debug, Default)]
pub(super) struct Signals {
    notify: Notify,
    asked: AtomicU8,
}

/// Close the connection now.
const ABORT: u8 = 1;
/// Close the connection once its client has left.
const WATCH: u8 = 2;

/// What the task was asked, most pressing first.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Asked {
    Abort,
    Watch,
    Nothing,
}

impl Signals {
    pub(super) fn abort(&self) {
        self.ask(ABORT);
    }

    pub(super) fn watch(&self) {
        self.ask(WATCH);
    }

    /// Set before the wake-up: two asks that meet one stored wake-up are
    /// both seen, an abort first.
    fn ask(&self, what: u8) {
        self.asked.fetch_or(what, Ordering::SeqCst);
        self.notify.notify_one();
    }

    /// A wake-up: then [`Signals::asked`] tells why.
    pub(super) async fn notified(&self) {
        self.notify.notified().await;
    }

    pub(super) fn asked(&self) -> Asked {
        let asked = self.asked.load(Ordering::SeqCst);
        if asked & ABORT != 0 {
            Asked::Abort
        } else if asked & WATCH != 0 {
            Asked::Watch
        } else {
            Asked::Nothing
        }
    }
}

/// A connection's client, seen through a duplicate of its socket's
/// descriptor: unwatched (and unregistered) until a handler asks.
pub(super) struct Peer {
    /// The duplicate, until the watch starts. None when it could not be
    /// taken (no descriptor left), or the server does not watch leaving
    /// clients: that connection's client is not watched.
    socket: Option<std::net::TcpStream>,
    /// Ends once the client has left; only a watched connection's.
    gone: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
}

impl Peer {
    /// Takes the duplicate: one `dup` at the accept, and one more
    /// descriptor for as long as the connection lives.
    pub(super) fn of(stream: &tokio::net::TcpStream) -> Self {
        let socket = stream
            .as_fd()
            .try_clone_to_owned()
            .ok()
            .map(std::net::TcpStream::from);
        Self { socket, gone: None }
    }

    /// A client never watched: a server that does not watch leaving
    /// clients (`Options::watch_leaving_clients`) takes no duplicate.
    pub(super) fn unwatched() -> Self {
        Self {
            socket: None,
            gone: None,
        }
    }

    /// Starts watching (once; again does nothing).
    pub(super) fn watch(&mut self) {
        if let Some(socket) = self.socket.take() {
            self.gone = Some(Box::pin(gone(socket)));
        }
    }

    pub(super) fn watching(&self) -> bool {
        self.gone.is_some()
    }

    /// Once the client has left; never when not watched.
    pub(super) async fn left(&mut self) {
        match &mut self.gone {
            Some(gone) => gone.as_mut().await,
            None => std::future::pending().await,
        }
    }
}

/// Ends once `socket`'s peer has closed its side (the end of input) or
/// reset it (an error). What it sends meanwhile is read and dropped: the
/// connection is closed without an answer whatever comes, so nothing of
/// it is owed. A client that only shut its sending side and still waits
/// looks the same as one that closed: both are taken as gone.
async fn gone(socket: std::net::TcpStream) {
    // The flag belongs to the socket, which the runtime already made
    // non-blocking; set again for the registration's sake.
    let registered = socket
        .set_nonblocking(true)
        .and_then(|()| tokio::net::TcpStream::from_std(socket));
    let Ok(socket) = registered else {
        return std::future::pending().await;
    };
    let mut scratch = [0u8; 512];
    loop {
        if socket.readable().await.is_err() {
            // The reactor is gone: nothing more can be seen.
            return std::future::pending().await;
        }
        match socket.try_read(&mut scratch) {
            Ok(0) => return,
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted
                ) => {}
            Err(_) => return,
        }
    }
}
