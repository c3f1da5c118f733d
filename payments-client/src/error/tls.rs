//! The TLS library's reason for a refused handshake (CONTRACT section 18),
//! found by type in the HTTP library's error chain: what makes a failure
//! [`TransportKind::Tls`] and ends its message.

use super::TransportKind;

/// `: REASON` for a TLS failure, from the innermost error in `source`'s
/// chain: the TLS library's own words (rustls's, e.g. `invalid peer
/// certificate: Expired` or `received fatal alert: CertificateRequired`;
/// OpenSSL's under `native-tls` on Linux, e.g. `error:0A000086:SSL
/// routines:...:certificate verify failed:...: (certificate has expired)`).
pub(super) fn tls_reason_suffix(kind: TransportKind, source: Option<&reqwest::Error>) -> String {
    if kind != TransportKind::Tls {
        return String::new();
    }
    source
        .and_then(|e| tls_reason(e))
        .map(|reason| format!(": {reason}"))
        .unwrap_or_default()
}

/// The TLS library's message in an error's chain, when it has one.
pub(crate) fn tls_reason(e: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut current = Some(e);
    while let Some(error) = current {
        #[cfg(feature = "rustls")]
        if let Some(tls) = error.downcast_ref::<rustls::Error>() {
            return Some(tls.to_string());
        }
        #[cfg(feature = "native-tls")]
        if let Some(tls) = error.downcast_ref::<native_tls::Error>() {
            return Some(tls.to_string());
        }
        #[cfg(all(
            feature = "native-tls",
            not(any(target_os = "windows", target_vendor = "apple"))
        ))]
        if let Some(reason) = openssl_refusal(error) {
            return Some(reason);
        }
        // An io::Error's source() skips the error it wraps: go into it.
        current = match error.downcast_ref::<std::io::Error>() {
            Some(io) => io
                .get_ref()
                .map(|inner| inner as &(dyn std::error::Error + 'static)),
            None => error.source(),
        };
    }
    None
}

/// OpenSSL's words for an alert the service sent to end the connection
/// after the handshake, as native-tls gives it on Linux.
///
/// In TLS 1.3 the client finishes its side of the handshake before the
/// service checks the client's certificate: a service that refuses it
/// (none, or one from another CA) sends its alert (`certificate_required`,
/// `unknown_ca`, ...) in answer to the request, which then fails with an
/// `io::Error` holding OpenSSL's error, not with native-tls's handshake
/// error. The service never read the request, as with a refusal during
/// the handshake: the same [`TransportKind::Tls`] (not carried out, not
/// retried) that rustls gives it (`received fatal alert: ...`).
///
/// Only an alert received from the peer counts (by OpenSSL's reason code,
/// not its text): an error OpenSSL found itself on the way, such as a
/// connection closed without `close_notify` in the middle of an answer,
/// stays a [`TransportKind::Connection`], since the request may have been
/// carried out.
#[cfg(all(
    feature = "native-tls",
    not(any(target_os = "windows", target_vendor = "apple"))
))]
fn openssl_refusal(error: &(dyn std::error::Error + 'static)) -> Option<String> {
    use openssl::error::ErrorStack;
    use openssl::ssl::{Error as SslError, ErrorCode, SslAlert};

    let received_alert = |stack: &ErrorStack| {
        stack.errors().iter().any(|e| {
            SslAlert::from_reason_code(e.reason_code())
                .is_some_and(|alert| alert != SslAlert::CLOSE_NOTIFY)
        })
    };
    if let Some(ssl) = error.downcast_ref::<SslError>() {
        return ssl
            .ssl_error()
            .filter(|stack| ssl.code() == ErrorCode::SSL && received_alert(stack))
            .map(ToString::to_string);
    }
    error
        .downcast_ref::<ErrorStack>()
        .filter(|stack| received_alert(stack))
        .map(ToString::to_string)
}

#[cfg(all(
    test,
    feature = "native-tls",
    not(any(target_os = "windows", target_vendor = "apple"))
))]
mod tests {
    use super::*;

    /// OpenSSL's own failure (here a PEM it cannot read; on a connection,
    /// e.g. an end without `close_notify`) is no alert from the service:
    /// not a TLS refusal. The refusals themselves are in tests/e2e/tls.rs.
    #[test]
    fn an_openssl_error_without_a_received_alert_is_no_tls_reason() {
        let stack = openssl::x509::X509::from_pem(b"no certificate").expect_err("not PEM");
        assert!(!stack.errors().is_empty());
        assert_eq!(tls_reason(&stack), None);
        let ssl = openssl::ssl::Error::from(stack);
        assert_eq!(tls_reason(&ssl), None);
        let io = std::io::Error::other(ssl);
        assert_eq!(tls_reason(&io), None);
    }
}
