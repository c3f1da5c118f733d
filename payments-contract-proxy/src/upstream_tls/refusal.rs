//! A refused TLS handshake with the upstream, said as which side refused
//! and why: the proxy refusing the upstream's certificate (its issuer not
//! trusted, another name, expired, a CA's certificate as the server's
//! own), with the reason in words and what to do; or the upstream
//! refusing (its alert) and anything else, in rustls's words.

use rustls::CertificateError;

/// Which side refused the handshake, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The proxy refused the upstream's certificate.
    Certificate {
        /// rustls's reason (WebPKI's name of it when rustls has none).
        tls: String,
        /// What is wrong with the certificate, in words.
        words: &'static str,
        /// What to do about it.
        hint: &'static str,
    },
    /// The upstream refused (its alert), or the handshake failed: rustls's
    /// words.
    Other(String),
}

/// The hint when the upstream's issuer is not trusted.
const TRUST_IT: &str =
    "give that CA, or the upstream's own self-signed certificate, with --upstream-ca FILE";

impl Refusal {
    /// The refusal `error` says.
    pub(crate) fn of(error: &rustls::Error) -> Self {
        let certificate = |words, hint| Self::Certificate {
            tls: error.to_string(),
            words,
            hint,
        };
        let rustls::Error::InvalidCertificate(why) = error else {
            return match error {
                rustls::Error::NoCertificatesPresented => certificate(
                    "is missing (it presented none)",
                    "the upstream must present one",
                ),
                other => Self::Other(other.to_string()),
            };
        };
        match why {
            CertificateError::UnknownIssuer => {
                certificate("is not issued by a CA the proxy trusts", TRUST_IT)
            }
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
                certificate(
                    "does not name the host of --upstream",
                    "give --upstream a host name the certificate names, or have the upstream present one that names its host",
                )
            }
            CertificateError::Expired | CertificateError::ExpiredContext { .. } => certificate(
                "has expired",
                "the upstream must renew it (or check this machine's clock)",
            ),
            CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
                certificate(
                    "is not valid yet",
                    "check this machine's clock and the upstream's",
                )
            }
            CertificateError::Other(_) if super::pinned::is_ca_used_as_end_entity(error) => {
                Self::Certificate {
                    tls: "invalid peer certificate: a CA's certificate used as the server's own"
                        .to_owned(),
                    words: "is a CA's (CA:TRUE, as `openssl req -x509` makes a self-signed one) and not one given in --upstream-ca",
                    hint: "give that very certificate with --upstream-ca FILE to trust it",
                }
            }
            CertificateError::Other(_) => Self::Certificate {
                tls: "invalid peer certificate".to_owned(),
                words: "is not one the proxy accepts",
                hint: TRUST_IT,
            },
            _ => certificate("is not one the proxy accepts", TRUST_IT),
        }
    }

    /// The message of the proxy's 502.
    pub(crate) fn message(&self) -> String {
        match self {
            Self::Certificate { tls, words, hint } => format!(
                "the proxy refused TLS ({tls}): the upstream service's certificate {words}; {hint}"
            ),
            Self::Other(tls) => format!("the upstream service refused TLS ({tls})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use rustls::{AlertDescription, CertificateError, Error};

    use super::Refusal;

    #[test]
    fn a_certificate_the_proxy_refuses_is_said_as_the_proxys_refusal_with_a_hint() {
        for (error, words) in [
            (
                CertificateError::UnknownIssuer,
                "is not issued by a CA the proxy trusts",
            ),
            (CertificateError::Expired, "has expired"),
            (
                CertificateError::NotValidForName,
                "does not name the host of --upstream",
            ),
        ] {
            let message = Refusal::of(&Error::InvalidCertificate(error)).message();
            assert!(message.starts_with("the proxy refused TLS ("), "{message}");
            assert!(message.contains(words), "{message}");
            assert!(!message.contains("upstream service refused"), "{message}");
        }
        let unknown = Refusal::of(&Error::InvalidCertificate(CertificateError::UnknownIssuer));
        assert!(unknown.message().contains("--upstream-ca FILE"));
    }

    #[test]
    fn the_upstreams_alert_is_the_upstreams_refusal() {
        let message =
            Refusal::of(&Error::AlertReceived(AlertDescription::CertificateRequired)).message();
        assert_eq!(
            message,
            "the upstream service refused TLS (received fatal alert: CertificateRequired)"
        );
    }
}
