//! Why no connection could be made, when the HTTP library's error chain
//! tells ([`ConnectCause`]): what ends a
//! [`TransportKind::Connect`] failure's message.

use super::{Error, TransportKind};

/// Why a [`TransportKind::Connect`] failure happened, when the error's
/// chain tells: see [`Error::connect_cause`]. Nothing was sent to the
/// service either way (the outcome stays
/// [`NotCarriedOut`](crate::Outcome::NotCarriedOut)).
///
/// Its `Display` is what the error's message ends with (`could not
/// connect to the service: CAUSE`).
///
/// # Examples
///
/// ```
/// use payments_client::error::ConnectCause;
///
/// // What a tool might advise for each cause it knows of.
/// fn advice(cause: Option<ConnectCause>) -> &'static str {
///     match cause {
///         Some(ConnectCause::ProxyAuthenticationRequired) => "give the proxy's user:pass@",
///         Some(ConnectCause::UnsupportedProxyScheme) => "use an http:// proxy",
///         Some(ConnectCause::PlainHttp) => "use http://",
///         Some(_) => "see the message",
///         None => "is the service running?",
///     }
/// }
/// assert_eq!(advice(Some(ConnectCause::PlainHttp)), "use http://");
/// assert_eq!(
///     ConnectCause::ProxyRefusedTunnel.to_string(),
///     "the proxy refused the tunnel (it answered the CONNECT with an error status)"
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ConnectCause {
    /// The host name (the service's, or a proxy's) could not be resolved.
    UnresolvedHost,
    /// An `https` URL whose server answered the TLS handshake in plain
    /// HTTP: it speaks `http://` on that port.
    PlainHttp,
    /// No connection within the connect timeout (see
    /// [`ClientBuilder::connect_timeout`](crate::ClientBuilder::connect_timeout)):
    /// the server, or a proxy, accepted nothing or answered nothing in
    /// time (a proxy that takes the connection and never answers its
    /// `CONNECT`).
    TimedOut,
    /// The connection closed during the TLS handshake, before the service
    /// could read anything: the server ended it, or, through a proxy that
    /// opened the tunnel, the proxy or the service behind it did.
    ClosedInHandshake,
    /// The proxy answered the `CONNECT` for an `https` service with `407
    /// Proxy Authentication Required`: it wants credentials (a
    /// `user:pass@` in its URL), or refused the ones given.
    ProxyAuthenticationRequired,
    /// The proxy answered the `CONNECT` for an `https` service with
    /// another status than 200 (`403`, `502`, ...: it will not open a
    /// tunnel to the service), or with something that is no HTTP answer.
    /// The HTTP library does not keep the status.
    ProxyRefusedTunnel,
    /// The proxy closed the connection (or it broke) before it answered
    /// the `CONNECT` for an `https` service.
    ProxyClosed,
    /// The proxy's URL has a scheme the client cannot use: only `http://`
    /// and `https://` proxies are supported, not SOCKS (`socks5://` in
    /// `ALL_PROXY`), for which reqwest is built without support here.
    UnsupportedProxyScheme,
}

impl ConnectCause {
    /// What the message says of it.
    fn said(self) -> &'static str {
        match self {
            ConnectCause::UnresolvedHost => "the host name could not be resolved",
            ConnectCause::PlainHttp => {
                "the server answered in plain HTTP, not TLS (it speaks http://)"
            }
            ConnectCause::TimedOut => "no connection within the connect timeout",
            ConnectCause::ClosedInHandshake => "the connection closed during the TLS handshake",
            ConnectCause::ProxyAuthenticationRequired => {
                "the proxy refused the tunnel with 407 Proxy Authentication Required (it wants \
                 credentials, or other ones)"
            }
            ConnectCause::ProxyRefusedTunnel => {
                "the proxy refused the tunnel (it answered the CONNECT with an error status)"
            }
            ConnectCause::ProxyClosed => {
                "the proxy closed the connection before answering the CONNECT"
            }
            ConnectCause::UnsupportedProxyScheme => {
                "the proxy's scheme is not supported (only http:// and https:// proxies are, \
                 not SOCKS)"
            }
        }
    }
}

impl std::fmt::Display for ConnectCause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.said())
    }
}

impl Error {
    /// Why no connection could be made, for a
    /// [`TransportKind::Connect`] failure (after retries too) whose cause
    /// the HTTP library's error tells: a host name that does not resolve,
    /// an `https` URL whose server speaks plain HTTP, a connect timeout, a
    /// connection closed in the TLS handshake, or a proxy that refused
    /// the tunnel, closed it unanswered or has a scheme the client cannot
    /// use. `None` for any other error or cause (a refused connection, to
    /// the service or to a proxy).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use payments_client::error::ConnectCause;
    /// use payments_client::Client;
    ///
    /// # async fn run() -> Result<(), payments_client::Error> {
    /// let client = Client::builder("https://payments.example").build()?;
    /// match client.status("0193a0b4-0000-7000-8000-000000000000").await {
    ///     Err(e) if e.connect_cause() == Some(ConnectCause::ProxyAuthenticationRequired) => {
    ///         eprintln!("the proxy wants credentials: user:pass@ in HTTPS_PROXY");
    ///     }
    ///     Err(e) => eprintln!("{e}"),
    ///     Ok(reply) => println!("{:?}", reply.data().status),
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn connect_cause(&self) -> Option<ConnectCause> {
        match self {
            Error::Transport {
                kind: TransportKind::Connect,
                source: Some(source),
                ..
            } => cause_of(source),
            Error::AfterAmbiguousAttempt { last, .. } => last.connect_cause(),
            _ => None,
        }
    }
}

/// `: CAUSE` for a connect failure whose cause is known.
pub(super) fn connect_cause_suffix(kind: TransportKind, source: Option<&reqwest::Error>) -> String {
    if kind != TransportKind::Connect {
        return String::new();
    }
    source
        .and_then(|e| cause_of(e))
        .map(|cause| format!(": {}", cause.said()))
        .unwrap_or_default()
}

/// hyper-util's message for a failed name resolution (its `ConnectError`,
/// whose type is private: recognised by its fixed text, compared whole).
const DNS_ERROR: &str = "dns error";

/// hyper-util's messages for a failed `CONNECT` tunnel through a proxy
/// (its `TunnelError`, whose type is not exported: recognised by its fixed
/// texts, compared whole), and the cause each is.
const TUNNEL_ERRORS: [(&str, Option<ConnectCause>); 6] = [
    (
        "tunnel error: proxy authorization required",
        Some(ConnectCause::ProxyAuthenticationRequired),
    ),
    (
        "tunnel error: unsuccessful",
        Some(ConnectCause::ProxyRefusedTunnel),
    ),
    (
        "tunnel error: proxy response headers too long",
        Some(ConnectCause::ProxyRefusedTunnel),
    ),
    (
        "tunnel error: unexpected end of file",
        Some(ConnectCause::ProxyClosed),
    ),
    (
        "tunnel error: io error establishing tunnel",
        Some(ConnectCause::ProxyClosed),
    ),
    // No connection to the proxy: what is under it tells why (a name
    // that does not resolve, a scheme that cannot be used, or a refusal).
    ("tunnel error: failed to create underlying connection", None),
];

/// The start of hyper-rustls's message for a URL (here the proxy's: the
/// service's is `http` or `https`) whose scheme it cannot connect to.
const UNSUPPORTED_SCHEME: &str = "unsupported scheme ";

fn cause_of(e: &(dyn std::error::Error + 'static)) -> Option<ConnectCause> {
    for error in super::causes(e) {
        let text = error.to_string();
        if let Some((_, cause)) = TUNNEL_ERRORS.iter().find(|(said, _)| *said == text) {
            if cause.is_some() {
                return *cause;
            }
            continue;
        }
        if text == DNS_ERROR {
            return Some(ConnectCause::UnresolvedHost);
        }
        if text.starts_with(UNSUPPORTED_SCHEME)
            && error
                .downcast_ref::<std::io::Error>()
                .is_none_or(|io| io.kind() == std::io::ErrorKind::Other)
        {
            return Some(ConnectCause::UnsupportedProxyScheme);
        }
        #[cfg(feature = "rustls")]
        if let Some(rustls::Error::InvalidMessage(rustls::InvalidMessage::InvalidContentType)) =
            error.downcast_ref::<rustls::Error>()
        {
            // The first bytes back were no TLS record: `HTTP/1.1 400`.
            return Some(ConnectCause::PlainHttp);
        }
        if error.downcast_ref::<std::io::Error>().is_some_and(|io| {
            use std::io::ErrorKind::{
                BrokenPipe, ConnectionAborted, ConnectionReset, UnexpectedEof,
            };
            matches!(
                io.kind(),
                UnexpectedEof | ConnectionReset | ConnectionAborted | BrokenPipe
            )
        }) {
            // Only a TLS handshake reads and writes on a connection made
            // (a tunnel's end before its answer is the tunnel error
            // above; a refused TCP connection is `ConnectionRefused`):
            // closed, or reset with the client's hello unread.
            return Some(ConnectCause::ClosedInHandshake);
        }
    }
    e.downcast_ref::<reqwest::Error>()
        .filter(|e| e.is_timeout())
        .map(|_| ConnectCause::TimedOut)
}
