//! Why no connection could be made, when the HTTP library's error chain
//! tells ([`ConnectCause`]): what ends a
//! [`TransportKind::Connect`] failure's message.

use super::{Error, TransportKind};

/// Why a [`TransportKind::Connect`] failure happened, when the error's
/// chain tells: see [`Error::connect_cause`]. Nothing was sent either
/// way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ConnectCause {
    /// The host name (the service's, or a proxy's) could not be resolved.
    UnresolvedHost,
    /// An `https` URL whose server answered the TLS handshake in plain
    /// HTTP: it speaks `http://` on that port.
    PlainHttp,
}

impl ConnectCause {
    /// What the message says of it.
    fn said(self) -> &'static str {
        match self {
            ConnectCause::UnresolvedHost => "the host name could not be resolved",
            ConnectCause::PlainHttp => {
                "the server answered in plain HTTP, not TLS (it speaks http://)"
            }
        }
    }
}

impl Error {
    /// Why no connection could be made, for a
    /// [`TransportKind::Connect`] failure (after retries too) whose cause
    /// the HTTP library's error tells: a host name that does not resolve,
    /// an `https` URL whose server speaks plain HTTP. `None` for any other
    /// error or cause (a refused connection, a connect timeout).
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

fn cause_of(e: &(dyn std::error::Error + 'static)) -> Option<ConnectCause> {
    for error in super::causes(e) {
        if error.to_string() == DNS_ERROR {
            return Some(ConnectCause::UnresolvedHost);
        }
        #[cfg(feature = "rustls")]
        if let Some(rustls::Error::InvalidMessage(rustls::InvalidMessage::InvalidContentType)) =
            error.downcast_ref::<rustls::Error>()
        {
            // The first bytes back were no TLS record: `HTTP/1.1 400`.
            return Some(ConnectCause::PlainHttp);
        }
    }
    None
}
