//! The TLS library's reason for a refused handshake (CONTRACT section 18),
//! found by type in the HTTP library's error chain: what makes a failure
//! [`TransportKind::Tls`] and ends its message.
//!
//! Only a failure that happens before the service can have read the
//! request counts ([`tls_reason`] says which); any other error of the TLS
//! library (a record that does not decrypt, an alert such as
//! `bad_record_mac` or `decode_error` in the middle of an answer) leaves
//! the failure a [`TransportKind::Connection`], whose call may have been
//! carried out.

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

/// The TLS library's message in an error's chain, when that error is a
/// refused handshake: the service cannot have read the request.
///
/// - rustls: the client's own verification of the service's handshake
///   ([`rustls::Error::InvalidCertificate`],
///   [`rustls::Error::NoCertificatesPresented`],
///   [`rustls::Error::PeerIncompatible`]), raised only while the client
///   handshakes (rustls neither renegotiates nor re-authenticates a
///   server, and the client sends no early data), so before the request
///   is written; and a fatal alert received from the service that refuses
///   the handshake ([`refuses_handshake`]).
/// - native-tls: its own error ([`native_tls::Error`]), which only its
///   handshake returns (reading and writing fail with `io::Error`).
/// - OpenSSL under native-tls on Linux: a received alert that refuses the
///   handshake (`openssl_refusal`).
///
/// Every other rustls or OpenSSL error is `None`: it may come after the
/// request was written, in the middle of the answer.
pub(crate) fn tls_reason(e: &(dyn std::error::Error + 'static)) -> Option<String> {
    // Without a TLS feature there is no TLS error to find.
    #[cfg(not(any(feature = "rustls", feature = "native-tls")))]
    let _ = e;
    #[cfg(any(feature = "rustls", feature = "native-tls"))]
    for error in super::causes(e) {
        #[cfg(feature = "rustls")]
        if let Some(tls) = error.downcast_ref::<rustls::Error>() {
            return rustls_refusal(tls).then(|| tls.to_string());
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
    }
    None
}

/// Whether a rustls error means the handshake was refused, by the client
/// (the service's certificate or parameters) or by the service (its
/// alert): see [`tls_reason`].
#[cfg(feature = "rustls")]
fn rustls_refusal(error: &rustls::Error) -> bool {
    match error {
        rustls::Error::InvalidCertificate(_)
        | rustls::Error::NoCertificatesPresented
        | rustls::Error::PeerIncompatible(_) => true,
        rustls::Error::AlertReceived(alert) => refuses_handshake(*alert),
        _ => false,
    }
}

/// The alerts (RFC 8446 section 6.2) by which a service refuses the
/// handshake: the client's certificate (`certificate_required`,
/// `bad_certificate`, `unsupported_certificate`, `certificate_revoked`,
/// `certificate_expired`, `certificate_unknown`, `unknown_ca`), the access
/// it grants on it (`access_denied`: "decided not to proceed with
/// negotiation"), or the parameters offered (`handshake_failure`,
/// `protocol_version`, `insufficient_security`).
///
/// In TLS 1.3 the client's certificate follows the service's `Finished`,
/// so a refusal of it reaches the client after its side of the handshake,
/// in answer to the request; the service checks that certificate before
/// it can read any application data, so it did not read the request
/// either way. Any other alert (`bad_record_mac`, `decode_error`,
/// `internal_error`, ...) may come in the middle of an answer.
#[cfg(feature = "rustls")]
fn refuses_handshake(alert: rustls::AlertDescription) -> bool {
    use rustls::AlertDescription as Alert;
    matches!(
        alert,
        Alert::CertificateRequired
            | Alert::BadCertificate
            | Alert::UnsupportedCertificate
            | Alert::CertificateRevoked
            | Alert::CertificateExpired
            | Alert::CertificateUnknown
            | Alert::UnknownCA
            | Alert::AccessDenied
            | Alert::HandshakeFailure
            | Alert::ProtocolVersion
            | Alert::InsufficientSecurity
    )
}

/// OpenSSL's words for an alert by which the service refused the
/// handshake, as native-tls gives it on Linux.
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
/// Only the alerts that refuse the handshake count, the same as rustls's
/// (`refuses_handshake`), by OpenSSL's reason code, not its text: another
/// alert from the service (`bad_record_mac` in the middle of an answer),
/// or an error OpenSSL found itself on the way (a record that does not
/// decrypt, a connection closed without `close_notify`), stays a
/// [`TransportKind::Connection`], since the request may have been carried
/// out.
#[cfg(all(
    feature = "native-tls",
    not(any(target_os = "windows", target_vendor = "apple"))
))]
fn openssl_refusal(error: &(dyn std::error::Error + 'static)) -> Option<String> {
    use openssl::error::ErrorStack;
    use openssl::ssl::{Error as SslError, ErrorCode, SslAlert};

    let received_refusal = |stack: &ErrorStack| {
        stack.errors().iter().any(|e| {
            SslAlert::from_reason_code(e.reason_code()).is_some_and(openssl_refuses_handshake)
        })
    };
    if let Some(ssl) = error.downcast_ref::<SslError>() {
        return ssl
            .ssl_error()
            .filter(|stack| ssl.code() == ErrorCode::SSL && received_refusal(stack))
            .map(ToString::to_string);
    }
    error
        .downcast_ref::<ErrorStack>()
        .filter(|stack| received_refusal(stack))
        .map(ToString::to_string)
}

/// [`refuses_handshake`]'s alerts, as OpenSSL names them.
#[cfg(all(
    feature = "native-tls",
    not(any(target_os = "windows", target_vendor = "apple"))
))]
fn openssl_refuses_handshake(alert: openssl::ssl::SslAlert) -> bool {
    use openssl::ssl::SslAlert;
    /// `certificate_required` (TLS 1.3): `SslAlert` names it only when
    /// built against OpenSSL 1.1.1 or later, so by its number.
    const CERTIFICATE_REQUIRED: std::ffi::c_int = 116;
    // An alert's reason code is its number plus OpenSSL's offset, which
    // `close_notify` (number 0) gives.
    let number = alert.reason_code() - SslAlert::CLOSE_NOTIFY.reason_code();
    number == CERTIFICATE_REQUIRED
        || [
            SslAlert::BAD_CERTIFICATE,
            SslAlert::UNSUPPORTED_CERTIFICATE,
            SslAlert::CERTIFICATE_REVOKED,
            SslAlert::CERTIFICATE_EXPIRED,
            SslAlert::CERTIFICATE_UNKNOWN,
            SslAlert::UNKNOWN_CA,
            SslAlert::ACCESS_DENIED,
            SslAlert::HANDSHAKE_FAILURE,
            SslAlert::PROTOCOL_VERSION,
            SslAlert::INSUFFICIENT_SECURITY,
        ]
        .contains(&alert)
}

#[cfg(all(test, feature = "rustls"))]
mod rustls_tests {
    use rustls::{AlertDescription as Alert, CertificateError, Error, PeerMisbehaved};

    use super::tls_reason;

    /// As reqwest's chain holds it: inside an `io::Error`.
    fn reason(error: Error) -> Option<String> {
        tls_reason(&std::io::Error::new(std::io::ErrorKind::InvalidData, error))
    }

    #[test]
    fn the_clients_verification_of_the_service_and_its_refusals_are_tls_reasons() {
        for refused in [
            Error::InvalidCertificate(CertificateError::UnknownIssuer),
            Error::InvalidCertificate(CertificateError::Expired),
            Error::NoCertificatesPresented,
            Error::AlertReceived(Alert::CertificateRequired),
            Error::AlertReceived(Alert::UnknownCA),
            Error::AlertReceived(Alert::BadCertificate),
            Error::AlertReceived(Alert::HandshakeFailure),
        ] {
            let text = refused.to_string();
            assert_eq!(reason(refused), Some(text));
        }
    }

    /// A certificate whose `notBefore` is ahead of this machine's clock is
    /// a problem of its own, with its date when rustls gives it.
    #[test]
    fn a_certificate_not_valid_yet_is_a_problem_with_its_date() {
        use rustls::pki_types::UnixTime;
        let problem = |cert| {
            super::problem_in(&std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                Error::InvalidCertificate(cert),
            ))
        };
        let not_before = UnixTime::since_unix_epoch(std::time::Duration::from_secs(1_893_456_000));
        assert_eq!(
            problem(CertificateError::NotValidYetContext {
                time: UnixTime::since_unix_epoch(std::time::Duration::from_secs(1_700_000_000)),
                not_before,
            }),
            Some(super::CertificateProblem::NotValidYet {
                not_before: chrono::DateTime::from_timestamp(1_893_456_000, 0),
            })
        );
        assert_eq!(
            problem(CertificateError::NotValidYet),
            Some(super::CertificateProblem::NotValidYet { not_before: None })
        );
        assert_eq!(problem(CertificateError::UnknownIssuer), None);
    }

    /// What may break an answer after the request was written is no
    /// refused handshake: the call may have been carried out.
    #[test]
    fn a_tls_error_that_can_come_mid_answer_is_no_tls_reason() {
        for broken in [
            Error::DecryptError,
            Error::AlertReceived(Alert::BadRecordMac),
            Error::AlertReceived(Alert::DecodeError),
            Error::AlertReceived(Alert::InternalError),
            Error::AlertReceived(Alert::CloseNotify),
            Error::PeerMisbehaved(PeerMisbehaved::IllegalMiddleboxChangeCipherSpec),
            Error::PeerSentOversizedRecord,
            Error::General("anything".to_owned()),
        ] {
            assert_eq!(reason(broken.clone()), None, "{broken:?}");
        }
    }
}

/// Both TLS libraries take the same alerts as refusals.
#[cfg(all(
    test,
    feature = "rustls",
    feature = "native-tls",
    not(any(target_os = "windows", target_vendor = "apple"))
))]
#[test]
fn rustls_and_openssl_agree_on_the_refusing_alerts() {
    use openssl::ssl::SslAlert;
    let base = SslAlert::CLOSE_NOTIFY.reason_code();
    for number in 0..=u8::MAX {
        let openssl = SslAlert::from_reason_code(base + std::ffi::c_int::from(number))
            .expect("an alert's reason code");
        assert_eq!(
            refuses_handshake(rustls::AlertDescription::from(number)),
            openssl_refuses_handshake(openssl),
            "alert {number}"
        );
    }
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

/// What is wrong with the service's certificate, when the client refused
/// it for one of these reasons (rustls's verification; `None` under
/// `native-tls` alone): see [`Error::certificate_problem`](super::Error::certificate_problem).
///
/// The verification checks the certificate's dates before its issuer: an
/// expired (or not yet valid) certificate may also be from a CA the
/// client does not trust.
///
/// # Examples
///
/// ```
/// use payments_client::error::CertificateProblem;
///
/// fn advice(problem: &CertificateProblem) -> String {
///     match problem {
///         CertificateProblem::WrongName { presented } => {
///             format!("it names {}", presented.join(", "))
///         }
///         CertificateProblem::Expired { not_after: Some(at) } => format!("expired on {at}"),
///         CertificateProblem::NotValidYet { not_before: Some(at) } => {
///             format!("not valid before {at}: check this machine's clock")
///         }
///         _ => "see the message".to_owned(),
///     }
/// }
/// let problem = CertificateProblem::WrongName {
///     presented: vec!["other.example".to_owned()],
/// };
/// assert_eq!(advice(&problem), "it names other.example");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CertificateProblem {
    /// It names other hosts than the base URL's: the DNS names and
    /// addresses it presents (the service's text: escape it before
    /// showing it), empty when it presents none.
    WrongName {
        /// The names in its subject alternative names.
        presented: Vec<String>,
    },
    /// It has expired: its `notAfter`, when the TLS library says.
    Expired {
        /// When it expired.
        not_after: Option<chrono::DateTime<chrono::Utc>>,
    },
    /// It is not valid yet (its `notBefore` is after this machine's
    /// time: a clock behind, or a certificate issued with a clock ahead):
    /// its `notBefore`, when the TLS library says.
    NotValidYet {
        /// From when it is valid.
        not_before: Option<chrono::DateTime<chrono::Utc>>,
    },
}

impl super::Error {
    /// What is wrong with the service's certificate, for a
    /// [`TransportKind::Tls`] failure where the client refused it because
    /// it names another host, has expired or is not valid yet; `None` for
    /// every other error (an unknown CA, an alert from the service).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use payments_client::error::CertificateProblem;
    /// use payments_client::Client;
    ///
    /// # async fn run() -> Result<(), payments_client::Error> {
    /// let client = Client::builder("https://payments.example").build()?;
    /// if let Err(e) = client.status("0193a0b4-0000-7000-8000-000000000000").await {
    ///     match e.certificate_problem() {
    ///         Some(CertificateProblem::Expired { not_after: Some(at) }) => {
    ///             eprintln!("its certificate expired on {at}");
    ///         }
    ///         Some(CertificateProblem::NotValidYet { .. }) => {
    ///             eprintln!("its certificate is not valid yet: check this machine's clock");
    ///         }
    ///         Some(problem) => eprintln!("{problem:?}"),
    ///         None => eprintln!("{e}"),
    ///     }
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn certificate_problem(&self) -> Option<CertificateProblem> {
        match self {
            super::Error::Transport {
                kind: TransportKind::Tls,
                source: Some(source),
                ..
            } => problem_in(source),
            _ => None,
        }
    }
}

#[cfg(not(feature = "rustls"))]
fn problem_in(_: &(dyn std::error::Error + 'static)) -> Option<CertificateProblem> {
    None
}

#[cfg(feature = "rustls")]
fn problem_in(e: &(dyn std::error::Error + 'static)) -> Option<CertificateProblem> {
    use rustls::CertificateError as Cert;
    for error in super::causes(e) {
        if let Some(rustls::Error::InvalidCertificate(cert)) = error.downcast_ref::<rustls::Error>()
        {
            return match cert {
                Cert::NotValidForName => Some(CertificateProblem::WrongName {
                    presented: Vec::new(),
                }),
                Cert::NotValidForNameContext { presented, .. } => {
                    Some(CertificateProblem::WrongName {
                        presented: presented.iter().map(|name| general_name(name)).collect(),
                    })
                }
                Cert::Expired => Some(CertificateProblem::Expired { not_after: None }),
                Cert::ExpiredContext { not_after, .. } => Some(CertificateProblem::Expired {
                    not_after: date(*not_after),
                }),
                Cert::NotValidYet => Some(CertificateProblem::NotValidYet { not_before: None }),
                Cert::NotValidYetContext { not_before, .. } => {
                    Some(CertificateProblem::NotValidYet {
                        not_before: date(*not_before),
                    })
                }
                _ => None,
            };
        }
    }
    None
}

/// A time of rustls's as a date, when it is one chrono can hold.
#[cfg(feature = "rustls")]
fn date(at: rustls::pki_types::UnixTime) -> Option<chrono::DateTime<chrono::Utc>> {
    i64::try_from(at.as_secs())
        .ok()
        .and_then(|secs| chrono::DateTime::from_timestamp(secs, 0))
}

/// A presented name as webpki writes it (`DnsName("a.example")`,
/// `IpAddress(127.0.0.1)`), as the name alone.
#[cfg(feature = "rustls")]
fn general_name(written: &str) -> String {
    written
        .strip_prefix("DnsName(\"")
        .and_then(|rest| rest.strip_suffix("\")"))
        .or_else(|| {
            written
                .strip_prefix("IpAddress(")
                .and_then(|rest| rest.strip_suffix(')'))
        })
        .unwrap_or(written)
        .to_owned()
}
