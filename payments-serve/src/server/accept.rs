//! Taking connections: what an accept that fails does (a pause, a word
//! in the log at most once a minute; a listener shut down waits for the
//! stop), and the backlog taken at the stop.

use std::time::Duration;

use tokio::net::TcpListener;

use super::HEADER_LIMIT;

/// The pause after an accept that failed (no descriptor left), before
/// the next try.
pub(super) const ACCEPT_PAUSE: Duration = Duration::from_millis(100);

/// How often the log may say that accepts fail (out of descriptors): a
/// table that stays nearly full fails, frees one and fails again many
/// times a second.
const REFUSED_SAID_EVERY: Duration = Duration::from_secs(60);

/// The log's word on accepts that fail: once, then at most once every
/// [`REFUSED_SAID_EVERY`] with how many failed since; "again" once after
/// each time it was said.
#[derive(Default)]
pub(super) struct Refused {
    /// Failed since it was last said.
    failed: u64,
    /// When it was last said.
    said: Option<tokio::time::Instant>,
    /// Said, and not yet said to be over.
    open: bool,
}

impl Refused {
    pub(super) fn failed(&mut self, error: &std::io::Error) {
        self.failed += 1;
        let now = tokio::time::Instant::now();
        if self
            .said
            .is_some_and(|said| now.duration_since(said) < REFUSED_SAID_EVERY)
        {
            return;
        }
        tracing::warn!(
            error = %error,
            failed = self.failed,
            "accept failed; trying again every {} ms, connections already open are \
             still served (said at most once a minute)",
            ACCEPT_PAUSE.as_millis()
        );
        self.said = Some(now);
        self.failed = 0;
        self.open = true;
    }

    pub(super) fn accepted(&mut self) {
        if self.open {
            tracing::warn!("accepting connections again");
            self.open = false;
        }
    }
}

/// Most connections taken from the backlog at the stop: a listen queue's
/// usual length (`somaxconn`).
const BACKLOG_LIMIT: usize = 4096;

/// The connections the kernel completed before the stop and nobody
/// accepted yet, whose client already sent a whole request head: its
/// client counts that request sent, and dropping the listener would reset
/// it unanswered. The others (nothing sent yet, half a head, a TLS
/// listener's, which cannot have sent a request before its handshake) are
/// closed, as an idle connection is at the stop. Taken with the socket's
/// own calls, not the runtime's readiness: no connection waits for the
/// next turn of the reactor.
pub(super) fn backlog(
    listener: TcpListener,
    plain: bool,
) -> Vec<(tokio::net::TcpStream, std::net::SocketAddr)> {
    let mut held = Vec::new();
    // Still non-blocking, as the runtime set it.
    let Ok(listener) = listener.into_std() else {
        return held;
    };
    let mut head = vec![0u8; HEADER_LIMIT];
    while held.len() < BACKLOG_LIMIT {
        let Ok((stream, peer)) = listener.accept() else {
            // Nothing more waiting (or no descriptor left for it).
            break;
        };
        if !plain || stream.set_nonblocking(true).is_err() {
            continue;
        }
        let whole = stream
            .peek(&mut head)
            .is_ok_and(|n| head[..n].windows(4).any(|w| w == b"\r\n\r\n"));
        if !whole {
            continue;
        }
        if let Ok(stream) = tokio::net::TcpStream::from_std(stream) {
            held.push((stream, peer));
        }
    }
    held
}

/// Whether an accept failed because the socket no longer listens (`EINVAL`:
/// shut down through another descriptor of it, as
/// `MockServer`'s drop does on Linux): every later try fails the same.
pub(super) fn not_listening(error: &std::io::Error) -> bool {
    error.kind() == std::io::ErrorKind::InvalidInput
}
