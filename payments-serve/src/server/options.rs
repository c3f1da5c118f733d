//! How a server serves its connections ([`Options`]).

use std::time::Duration;

use super::DEFAULT_HEADER_READ_TIMEOUT;

/// How a server serves its connections, built from the defaults:
///
/// ```
/// use std::time::Duration;
/// use payments_serve::server::Options;
///
/// let options = Options::default()
///     .header_read_timeout(Duration::from_secs(10))
///     .watch_leaving_clients(true);
/// # let _ = options;
/// ```
///
/// A bare [`Duration`] converts into the defaults with that header read
/// timeout, so `run_with(listener, router, timeout, shutdown)` reads as
/// before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    pub(super) header_read_timeout: Duration,
    pub(super) watch_leaving_clients: bool,
}

impl Default for Options {
    /// [`DEFAULT_HEADER_READ_TIMEOUT`], and leaving clients not watched.
    fn default() -> Self {
        Self {
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            watch_leaving_clients: false,
        }
    }
}

impl From<Duration> for Options {
    fn from(header_read_timeout: Duration) -> Self {
        Self::default().header_read_timeout(header_read_timeout)
    }
}

impl Options {
    /// How long a connection may take to send a request's head, from the
    /// moment it is ready for one (and, over TLS, to finish its
    /// handshake): past it the connection is closed without a response,
    /// so slow or idle clients cannot pin connection tasks. Default
    /// [`DEFAULT_HEADER_READ_TIMEOUT`].
    #[must_use]
    pub fn header_read_timeout(mut self, timeout: Duration) -> Self {
        self.header_read_timeout = timeout;
        self
    }

    /// Whether [`ConnectionAbort::close_when_client_leaves`] works: on,
    /// each accepted connection's socket descriptor is duplicated (one
    /// `dup` at the accept, one more descriptor of the process per open
    /// connection, so about half as many connections fit under
    /// `ulimit -n`), and a request held without an answer that asks is
    /// ended once its client leaves. Off (the default), nothing is
    /// duplicated and the ask does nothing: such a request is held until
    /// its handler ends it, or the connection's shutdown or abort. For a
    /// server that holds requests without an answer (the mock's `hang`).
    ///
    /// [`ConnectionAbort::close_when_client_leaves`]: super::ConnectionAbort::close_when_client_leaves
    #[must_use]
    pub fn watch_leaving_clients(mut self, watch: bool) -> Self {
        self.watch_leaving_clients = watch;
        self
    }
}
