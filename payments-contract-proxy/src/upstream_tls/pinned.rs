//! The upstream's certificate verified as rustls's WebPKI verifier does,
//! with one exception, as curl (OpenSSL) makes it: a certificate that is
//! a CA's (`CA:TRUE`, as `openssl req -x509` makes a self-signed one)
//! presented as the server's own is refused by WebPKI
//! (`CaUsedAsEndEntity`) even when it is the very certificate the user
//! gave in `--upstream-ca`. It is trusted when it is byte for byte one of
//! those, valid for the upstream's name and within its validity period;
//! the handshake's signatures are still verified (by the provider, with
//! its key). Anything else keeps WebPKI's refusal.

use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, Error, SignatureScheme};

/// WebPKI's verifier and the certificates of `--upstream-ca`.
#[derive(Debug)]
pub(crate) struct PinnedOrWebPki {
    webpki: Arc<WebPkiServerVerifier>,
    given: Vec<CertificateDer<'static>>,
}

impl PinnedOrWebPki {
    pub(crate) fn new(
        webpki: Arc<WebPkiServerVerifier>,
        given: Vec<CertificateDer<'static>>,
    ) -> Self {
        Self { webpki, given }
    }
}

/// Whether rustls's error is WebPKI's `CaUsedAsEndEntity`, which rustls
/// passes on as an `OtherError` holding WebPKI's own error.
pub(crate) fn is_ca_used_as_end_entity(error: &Error) -> bool {
    matches!(
        error,
        Error::InvalidCertificate(CertificateError::Other(other))
            if matches!(
                other.0.downcast_ref::<webpki::Error>(),
                Some(webpki::Error::CaUsedAsEndEntity)
            )
    )
}

impl ServerCertVerifier for PinnedOrWebPki {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        let refused = match self.webpki.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        ) {
            Ok(verified) => return Ok(verified),
            Err(e) if is_ca_used_as_end_entity(&e) => e,
            Err(e) => return Err(e),
        };
        if !self.given.iter().any(|c| c.as_ref() == end_entity.as_ref()) {
            return Err(refused);
        }
        let parsed = rustls::server::ParsedCertificate::try_from(end_entity)?;
        rustls::client::verify_server_name(&parsed, server_name)?;
        match validity(end_entity.as_ref()) {
            Some((from, _)) if now.as_secs() < from => {
                Err(Error::InvalidCertificate(CertificateError::NotValidYet))
            }
            Some((_, until)) if now.as_secs() > until => {
                Err(Error::InvalidCertificate(CertificateError::Expired))
            }
            Some(_) => Ok(ServerCertVerified::assertion()),
            None => Err(Error::InvalidCertificate(CertificateError::BadEncoding)),
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.webpki.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.webpki.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.webpki.supported_verify_schemes()
    }
}

/// A certificate's `notBefore` and `notAfter` (RFC 5280 section 4.1.2.5),
/// in seconds since the Unix epoch (x509-parser reads it).
pub(crate) fn validity(der: &[u8]) -> Option<(u64, u64)> {
    let (_, certificate) = x509_parser::parse_x509_certificate(der).ok()?;
    let validity = certificate.validity();
    Some((
        u64::try_from(validity.not_before.timestamp()).ok()?,
        u64::try_from(validity.not_after.timestamp()).ok()?,
    ))
}

#[cfg(test)]
mod tests {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject as _;

    use super::validity;

    #[test]
    fn the_validity_of_a_certificate_is_read() {
        let ca = payments_serve::tls::LocalCa::generate().expect("a CA");
        let expired = ca
            .expired_server_cert(&["localhost".to_owned()])
            .expect("a certificate");
        let der = CertificateDer::from_pem_slice(expired.cert_pem.as_bytes()).expect("PEM");
        // 2000-01-01 and 2001-01-01, midnight UTC.
        assert_eq!(validity(der.as_ref()), Some((946_684_800, 978_307_200)));
    }

    #[test]
    fn what_is_not_a_certificate_has_no_validity() {
        for bytes in [
            &b""[..],
            b"\x30",
            b"\x30\x85\x00\x00\x00\x00\x00",
            b"\x30\x03\x02\x01\x01",
        ] {
            assert_eq!(validity(bytes), None, "{bytes:?}");
        }
    }
}
