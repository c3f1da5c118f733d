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
/// passes on as an `OtherError` holding WebPKI's error (whose text is its
/// name).
pub(crate) fn is_ca_used_as_end_entity(error: &Error) -> bool {
    matches!(
        error,
        Error::InvalidCertificate(CertificateError::Other(other))
            if other.0.to_string() == "CaUsedAsEndEntity"
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

/// One DER element of `input`: its tag, its contents, and what follows.
fn element(input: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = input.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (length, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let count = usize::from(first & 0x7f);
        if count == 0 || count > 4 || rest.len() < count {
            return None;
        }
        let (bytes, rest) = rest.split_at(count);
        let length = bytes.iter().fold(0usize, |n, &b| (n << 8) | usize::from(b));
        (length, rest)
    };
    (rest.len() >= length).then(|| (tag, &rest[..length], &rest[length..]))
}

/// A certificate's `notBefore` and `notAfter` (RFC 5280 section 4.1.2.5),
/// in seconds since the Unix epoch.
pub(crate) fn validity(der: &[u8]) -> Option<(u64, u64)> {
    let (0x30, certificate, _) = element(der)? else {
        return None;
    };
    let (0x30, tbs, _) = element(certificate)? else {
        return None;
    };
    let mut rest = tbs;
    // [0] version (optional), serialNumber, signature, issuer.
    let (tag, _, after) = element(rest)?;
    if tag == 0xa0 {
        rest = after;
    }
    for _ in 0..3 {
        rest = element(rest)?.2;
    }
    let (0x30, validity, _) = element(rest)? else {
        return None;
    };
    let (from_tag, from, rest) = element(validity)?;
    let (until_tag, until, _) = element(rest)?;
    Some((time(from_tag, from)?, time(until_tag, until)?))
}

/// A UTCTime (tag 23, `YYMMDDHHMMSSZ`, 1950 to 2049) or GeneralizedTime
/// (tag 24, `YYYYMMDDHHMMSSZ`), in seconds since the Unix epoch.
fn time(tag: u8, bytes: &[u8]) -> Option<u64> {
    let text = std::str::from_utf8(bytes).ok()?;
    let full = match tag {
        23 => {
            let year: u32 = text.get(..2)?.parse().ok()?;
            let century = if year >= 50 { "19" } else { "20" };
            format!("{century}{text}")
        }
        24 => text.to_owned(),
        _ => return None,
    };
    let at = chrono::NaiveDateTime::parse_from_str(&full, "%Y%m%d%H%M%SZ").ok()?;
    u64::try_from(at.and_utc().timestamp()).ok()
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
