//! Why a page of the journal or of the exchanges could not be read, and
//! how `tail` says it.

use crate::output::printable;

/// Why a page could not be read.
#[derive(Debug)]
pub enum Failure {
    /// No answer: `connect`, `timeout`, `tls` or `broke off`, the
    /// innermost reason, and the error as the client's (for the advice
    /// the payment commands give on the same failure).
    NoAnswer {
        kind: NoAnswer,
        reason: String,
        error: Box<payments_client::Error>,
    },
    /// An envelope with `isSuccess` false.
    Refused {
        status: u16,
        code: String,
        message: String,
    },
    /// Not the envelope (an HTML page, an empty answer).
    NotEnvelope {
        status: u16,
        content_type: Option<String>,
    },
    /// An envelope `tail` cannot read.
    Unreadable { status: u16, reason: String },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoAnswer {
    Connect,
    Timeout,
    Tls,
    BrokeOff,
    /// It answered at once, with something that is not valid HTTP.
    InvalidHttp,
}

impl Failure {
    /// Whether asking again may help.
    pub(super) fn is_transient(&self) -> bool {
        match self {
            Self::NoAnswer { kind, .. } => *kind != NoAnswer::Tls,
            Self::Refused { status, .. }
            | Self::NotEnvelope { status, .. }
            | Self::Unreadable { status, .. } => *status == 429 || *status >= 500,
        }
    }
}

/// A failure in words, the server's text escaped for the terminal.
pub(super) fn describe(failure: &Failure) -> String {
    match failure {
        Failure::NoAnswer { kind, reason, .. } => {
            let what = match kind {
                NoAnswer::Connect => "could not connect",
                NoAnswer::Timeout => "no answer in time",
                NoAnswer::Tls => "the TLS handshake failed",
                NoAnswer::BrokeOff => "the connection broke off",
                NoAnswer::InvalidHttp => "its answer was not valid HTTP",
            };
            format!("{what} ({})", printable(reason))
        }
        Failure::Refused {
            status,
            code,
            message,
        } => {
            let code = if code.is_empty() {
                "no errorCode"
            } else {
                code
            };
            if message.is_empty() {
                printable(&format!("{code} (HTTP {status})"))
            } else {
                printable(&format!("{code} (HTTP {status}): {message}"))
            }
        }
        Failure::NotEnvelope {
            status,
            content_type,
        } => format!(
            "it answered HTTP {status} with {} instead of the JSON envelope",
            crate::error::content_type_said(content_type.as_deref())
        ),
        Failure::Unreadable { status, reason } => {
            format!("its answer (HTTP {status}) cannot be read: {reason}")
        }
    }
}

/// What kept a request from an answer, and its innermost reason (without
/// the URL).
pub(super) fn no_answer(error: reqwest::Error) -> Failure {
    use payments_client::error::TransportKind;
    let mut client = Box::new(payments_client::Error::Transport {
        kind: TransportKind::Connect,
        request_id: String::new(),
        source: Some(error),
    });
    // A cause the client names (a proxy's answer, a handshake closed
    // midway) is a connect failure, whatever words its chain uses.
    let named_cause = client.connect_cause().is_some();
    let payments_client::Error::Transport {
        kind: slot,
        source: Some(error),
        ..
    } = client.as_mut()
    else {
        return Failure::NoAnswer {
            kind: NoAnswer::BrokeOff,
            reason: String::new(),
            error: client,
        };
    };
    let mut reason = error.to_string();
    let mut chain = String::new();
    let mut source = std::error::Error::source(&*error);
    while let Some(inner) = source {
        reason = inner.to_string();
        chain.push_str(&reason);
        chain.push(' ');
        source = inner.source();
    }
    let lower = chain.to_ascii_lowercase();
    let connect = error.is_connect() && named_cause;
    let (kind, transport) = if !connect
        && (lower.contains("certificate") || lower.contains("tls") || lower.contains("alert"))
    {
        (NoAnswer::Tls, TransportKind::Tls)
    } else if connect {
        (NoAnswer::Connect, TransportKind::Connect)
    } else if error.is_timeout() {
        (NoAnswer::Timeout, TransportKind::Timeout)
    } else if error.is_connect() {
        (NoAnswer::Connect, TransportKind::Connect)
    } else if let Some(parse) = payments_client::error::invalid_http(&*error) {
        reason = parse;
        (NoAnswer::InvalidHttp, TransportKind::InvalidHttp)
    } else {
        (NoAnswer::BrokeOff, TransportKind::Connection)
    };
    *slot = transport;
    if kind == NoAnswer::Timeout {
        reason = "timed out".to_owned();
    }
    Failure::NoAnswer {
        kind,
        reason,
        error: client,
    }
}
