//! An https upstream whose certificate is self-signed with `CA:TRUE`, as
//! `openssl req -x509 -newkey … -addext subjectAltName=…` makes one:
//! given in `--upstream-ca`, it is trusted as curl trusts it (WebPKI alone
//! refuses a CA's certificate as the server's own); not given, for
//! another name, or expired, the proxy refuses it and says so: the
//! proxy's refusal, in words, with what to do.
//!
//! The certificates are made here: a certificate of the local CA (rcgen,
//! through `payments_serve::tls::LocalCa`) made again as its own issuer
//! with `basicConstraints CA:TRUE`, signed with its key by the TLS
//! provider.

use std::io::Write as _;
use std::net::{Shutdown, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use payments_contract_proxy::{Proxy, ProxyConfig};
use payments_serve::tls::{Issued, LocalCa};
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde_json::json;

use crate::rig::{Reply, client, failures, ok, status_data};
use crate::tls_upstream::read_request;

/// A DER element: `tag`, its length, `content`.
fn tlv(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    let len = content.len();
    if len < 0x80 {
        out.push(u8::try_from(len).expect("short"));
    } else {
        let bytes: Vec<u8> = len
            .to_be_bytes()
            .into_iter()
            .skip_while(|&b| b == 0)
            .collect();
        out.push(0x80 | u8::try_from(bytes.len()).expect("a length"));
        out.extend_from_slice(&bytes);
    }
    out.extend_from_slice(content);
    out
}

/// The elements of a DER sequence's content, each whole (tag and length
/// included).
fn elements(mut content: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    while !content.is_empty() {
        let first = content[1];
        let (header, len) = if first < 0x80 {
            (2, usize::from(first))
        } else {
            let count = usize::from(first & 0x7f);
            let len = content[2..2 + count]
                .iter()
                .fold(0usize, |n, &b| (n << 8) | usize::from(b));
            (2 + count, len)
        };
        let (element, rest) = content.split_at(header + len);
        out.push(element);
        content = rest;
    }
    out
}

/// An element's content (past its tag and length).
fn content(element: &[u8]) -> &[u8] {
    let first = element[1];
    if first < 0x80 {
        &element[2..]
    } else {
        &element[2 + usize::from(first & 0x7f)..]
    }
}

/// `basicConstraints` (2.5.29.19), critical, `CA:TRUE`.
const CA_TRUE: [u8; 17] = [
    0x30, 0x0f, 0x06, 0x03, 0x55, 0x1d, 0x13, 0x01, 0x01, 0xff, 0x04, 0x05, 0x30, 0x03, 0x01, 0x01,
    0xff,
];

/// `issued` made again as its own issuer, with `CA:TRUE`, signed with its
/// own key: a self-signed CA certificate for its names, and that key.
fn self_signed_ca(issued: &Issued) -> (String, String) {
    let der = CertificateDer::from_pem_slice(issued.cert_pem.as_bytes()).expect("PEM");
    let certificate = elements(content(elements(der.as_ref())[0]));
    let (tbs, algorithm) = (certificate[0], certificate[1]);
    let fields = elements(content(tbs));
    // version, serial, signature, issuer, validity, subject, key, [3].
    let [
        version,
        serial,
        signature,
        _issuer,
        validity,
        subject,
        key,
        extensions,
    ] = fields[..]
    else {
        panic!("a v3 certificate of eight fields: {}", fields.len());
    };
    let mut kept: Vec<u8> = elements(content(content(extensions)))
        .into_iter()
        // Neither basicConstraints nor the CA's key identifier.
        .filter(|e| !e.windows(5).any(|w| w == [0x06, 0x03, 0x55, 0x1d, 0x13]))
        .filter(|e| !e.windows(5).any(|w| w == [0x06, 0x03, 0x55, 0x1d, 0x23]))
        .flatten()
        .copied()
        .collect();
    kept.extend_from_slice(&CA_TRUE);
    let extensions = tlv(0xa3, &tlv(0x30, &kept));
    let tbs = tlv(
        0x30,
        &[
            version,
            serial,
            signature,
            subject,
            validity,
            subject,
            key,
            &extensions,
        ]
        .concat(),
    );
    let key_der = PrivateKeyDer::from_pem_slice(issued.key_pem().as_bytes()).expect("a key");
    let signer = payments_serve::tls::provider()
        .key_provider
        .load_private_key(key_der)
        .expect("a signing key")
        .choose_scheme(&[rustls::SignatureScheme::ECDSA_NISTP256_SHA256])
        .expect("ECDSA P-256");
    let signature = signer.sign(&tbs).expect("signed");
    let bits = tlv(0x03, &[&[0u8][..], &signature].concat());
    let cert = tlv(0x30, &[&tbs[..], algorithm, &bits].concat());
    let pem = CertificateDer::from(cert);
    (pem_of(pem.as_ref()), issued.key_pem().to_owned())
}

fn pem_of(der: &[u8]) -> String {
    use base64::Engine as _;
    let text = base64::engine::general_purpose::STANDARD.encode(der);
    let lines: Vec<&str> = text
        .as_bytes()
        .chunks(64)
        .map(|c| std::str::from_utf8(c).expect("base64"))
        .collect();
    format!(
        "-----BEGIN CERTIFICATE-----\n{}\n-----END CERTIFICATE-----\n",
        lines.join("\n")
    )
}

/// A TLS upstream on loopback serving `cert_pem` that answers every
/// request with a status read's success.
async fn upstream(cert_pem: &str, key_pem: &str) -> String {
    let chain = CertificateDer::pem_slice_iter(cert_pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .expect("certificate PEM");
    let key = PrivateKeyDer::from_pem_slice(key_pem.as_bytes()).expect("key PEM");
    let mut config = rustls::ServerConfig::builder_with_provider(payments_serve::tls::provider())
        .with_safe_default_protocol_versions()
        .expect("protocol versions")
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .expect("a server configuration");
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    let config = Arc::new(config);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("binds");
    let port = listener.local_addr().expect("an address").port();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let Ok(stream) = stream.into_std() else {
                continue;
            };
            let config = Arc::clone(&config);
            std::thread::spawn(move || answer(config, stream));
        }
    });
    format!("https://127.0.0.1:{port}")
}

fn answer(config: Arc<rustls::ServerConfig>, mut tcp: TcpStream) {
    if tcp.set_nonblocking(false).is_err()
        || tcp.set_read_timeout(Some(Duration::from_secs(10))).is_err()
    {
        return;
    }
    let Ok(mut tls) = rustls::ServerConnection::new(config) else {
        return;
    };
    if read_request(&mut tls, &mut tcp).is_some() {
        let body = ok(status_data("t-pin", "R-pin", "INITIATED", "10.50")).to_string();
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
            body.len()
        );
        let mut stream = rustls::Stream::new(&mut tls, &mut tcp);
        let _ = stream.write_all(head.as_bytes());
        let _ = stream.write_all(body.as_bytes());
        let _ = stream.flush();
        tls.send_close_notify();
    }
    while tls.wants_write() {
        if tls.write_tls(&mut tcp).is_err() {
            break;
        }
    }
    let _ = tcp.shutdown(Shutdown::Write);
    let _ = std::io::copy(&mut tcp, &mut std::io::sink());
}

/// A proxy in front of `url` trusting the PEM `trusted` (`--upstream-ca`).
async fn proxy(url: &str, trusted: &str) -> (Proxy, tempfile::NamedTempFile) {
    let mut file = tempfile::NamedTempFile::new().expect("a temporary file");
    file.write_all(trusted.as_bytes()).expect("written");
    let mut config = ProxyConfig::new(url.parse().expect("an upstream URL"));
    config.upstream_timeout = Duration::from_secs(10);
    config.upstream_ca = Some(file.path().to_owned());
    (Proxy::start(config).await.expect("the proxy starts"), file)
}

async fn status_read(proxy: &Proxy) -> Reply {
    Reply::of(
        client()
            .get(format!("{}/api/payments/t-pin/status", proxy.base_url()))
            .send()
            .await
            .expect("the proxy answers"),
    )
    .await
}

fn names(names: &[&str]) -> Vec<String> {
    names.iter().map(|&n| n.to_owned()).collect()
}

#[tokio::test]
async fn a_self_signed_ca_certificate_given_in_upstream_ca_is_trusted() {
    let ca = LocalCa::generate().expect("a CA");
    let (cert, key) = self_signed_ca(
        &ca.server_cert(&names(&["127.0.0.1", "localhost"]))
            .expect("a certificate"),
    );
    let url = upstream(&cert, &key).await;
    let (proxy, _file) = proxy(&url, &cert).await;
    let reply = status_read(&proxy).await;
    assert_eq!(
        reply.status,
        200,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    assert_eq!(reply.json()["data"]["transactionId"], json!("t-pin"));
    assert_eq!(failures(&proxy, "tls").await, "0");
}

/// The message of the proxy's 502 to a status read through `proxy`.
async fn refused(proxy: &Proxy) -> String {
    let reply = status_read(proxy).await;
    assert_eq!(
        reply.status,
        502,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    assert_eq!(failures(proxy, "tls").await, "1");
    reply.json()["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn a_self_signed_ca_certificate_not_given_is_refused_by_the_proxy_in_words() {
    let ca = LocalCa::generate().expect("a CA");
    let issued = ca
        .server_cert(&names(&["127.0.0.1"]))
        .expect("a certificate");
    let (cert, key) = self_signed_ca(&issued);
    // Another self-signed certificate of the same names is given.
    let (other, _) = self_signed_ca(&ca.server_cert(&names(&["127.0.0.1"])).expect("another"));
    let url = upstream(&cert, &key).await;
    let (proxy, _file) = proxy(&url, &other).await;
    let message = refused(&proxy).await;
    assert_eq!(
        message,
        "the proxy refused TLS (invalid peer certificate: a CA's certificate used as the \
         server's own): the upstream service's certificate is a CA's (CA:TRUE, as `openssl req \
         -x509` makes a self-signed one) and not one given in --upstream-ca; give that very \
         certificate with --upstream-ca FILE to trust it"
    );
    assert!(!message.contains("OtherError"), "{message}");
}

#[tokio::test]
async fn a_given_self_signed_ca_certificate_for_another_name_is_refused() {
    let ca = LocalCa::generate().expect("a CA");
    let (cert, key) = self_signed_ca(
        &ca.server_cert(&names(&["payments.example"]))
            .expect("a certificate"),
    );
    let url = upstream(&cert, &key).await;
    let (proxy, _file) = proxy(&url, &cert).await;
    let message = refused(&proxy).await;
    assert!(message.starts_with("the proxy refused TLS ("), "{message}");
    assert!(
        message.contains("certificate does not name the host of --upstream"),
        "{message}"
    );
}

#[tokio::test]
async fn a_given_self_signed_ca_certificate_that_expired_is_refused() {
    let ca = LocalCa::generate().expect("a CA");
    let (cert, key) = self_signed_ca(
        &ca.expired_server_cert(&names(&["127.0.0.1"]))
            .expect("a certificate"),
    );
    let url = upstream(&cert, &key).await;
    let (proxy, _file) = proxy(&url, &cert).await;
    let message = refused(&proxy).await;
    assert!(message.starts_with("the proxy refused TLS ("), "{message}");
    assert!(message.contains("certificate has expired"), "{message}");
}
