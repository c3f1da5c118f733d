//! An https upstream whose TLS fails: a refused handshake (nothing was
//! carried out) is `refused TLS (...)`, counted `tls`; a TLS failure after
//! the handshake, once the upstream has read the request, is an answer
//! broken off (the upstream may have carried the request out), with TLS's
//! reason, counted `broke_off`. Both 502 `UPSTREAM_UNAVAILABLE`,
//! `unchecked`, recorded as the proxy's own answer, not retried.
//!
//! The upstream here is rustls itself, driven by hand on a loopback
//! socket: it completes the handshake, reads the whole request, and then
//! writes a record of garbage straight to the socket, before or after an
//! answer's head.

use std::io::{Read as _, Write as _};
use std::net::{Shutdown, TcpStream};
use std::sync::{Arc, mpsc};
use std::time::Duration;

use payments_contract_proxy::{Proxy, ProxyConfig};
use payments_serve::tls::LocalCa;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde_json::json;

use crate::rig::{Reply, client, failures, initiate_body};

/// An application-data record (type 23, TLS 1.2 on the wire, as TLS 1.3
/// records are) of 32 bytes no key decrypts.
const GARBAGE_RECORD: [u8; 37] = {
    let mut record = [0xA5; 37];
    record[0] = 0x17;
    record[1] = 0x03;
    record[2] = 0x03;
    record[3] = 0x00;
    record[4] = 0x20;
    record
};

/// What the upstream writes once it has read the request.
#[derive(Debug, Clone, Copy)]
enum Spoil {
    /// [`GARBAGE_RECORD`] at once: the answer's head never comes.
    BeforeHead,
    /// An answer's head (and a little of its body) through TLS, then
    /// [`GARBAGE_RECORD`]: the body breaks off.
    AfterHead,
}

/// A TLS upstream on loopback that reads each request and spoils its
/// answer.
struct SpoilingUpstream {
    url: String,
    ca: tempfile::NamedTempFile,
    requests: mpsc::Receiver<Vec<u8>>,
}

impl SpoilingUpstream {
    /// `mutual`: it demands a client certificate (of its CA).
    async fn start(spoil: Spoil, mutual: bool) -> Self {
        let ca = LocalCa::generate().expect("a CA");
        let issued = ca
            .server_cert(&["127.0.0.1".to_owned(), "localhost".to_owned()])
            .expect("a certificate");
        let chain = CertificateDer::pem_slice_iter(issued.cert_pem.as_bytes())
            .collect::<Result<Vec<_>, _>>()
            .expect("certificate PEM");
        let key = PrivateKeyDer::from_pem_slice(issued.key_pem().as_bytes()).expect("key PEM");
        let builder = rustls::ServerConfig::builder_with_provider(payments_serve::tls::provider())
            .with_safe_default_protocol_versions()
            .expect("protocol versions");
        let builder = if mutual {
            let mut roots = rustls::RootCertStore::empty();
            for cert in CertificateDer::pem_slice_iter(ca.cert_pem().as_bytes()) {
                roots.add(cert.expect("CA PEM")).expect("a CA");
            }
            let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
                Arc::new(roots),
                payments_serve::tls::provider(),
            )
            .build()
            .expect("a client verifier");
            builder.with_client_cert_verifier(verifier)
        } else {
            builder.with_no_client_auth()
        };
        let mut config = builder
            .with_single_cert(chain, key)
            .expect("a server configuration");
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        let config = Arc::new(config);
        let mut ca_file = tempfile::NamedTempFile::new().expect("a temporary file");
        ca_file
            .write_all(ca.cert_pem().as_bytes())
            .expect("the CA written");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("binds");
        let port = listener.local_addr().expect("an address").port();
        let (sender, requests) = mpsc::channel();
        // Accepts until the test's runtime ends; each connection is served
        // by blocking rustls on a thread of its own.
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let Ok(stream) = stream.into_std() else {
                    continue;
                };
                let (config, sender) = (Arc::clone(&config), sender.clone());
                std::thread::spawn(move || serve(config, stream, spoil, &sender));
            }
        });
        Self {
            url: format!("https://127.0.0.1:{port}"),
            ca: ca_file,
            requests,
        }
    }

    /// A proxy in front of it, trusting its CA or not.
    async fn proxy(&self, trusting: bool) -> Proxy {
        let mut config = ProxyConfig::new(self.url.parse().expect("an upstream URL"));
        config.upstream_timeout = Duration::from_secs(10);
        if trusting {
            config.upstream_ca = Some(self.ca.path().to_owned());
        }
        Proxy::start(config).await.expect("the proxy starts")
    }

    /// Every request read so far, whole.
    fn received(&self) -> Vec<Vec<u8>> {
        self.requests.try_iter().collect()
    }
}

fn serve(
    config: Arc<rustls::ServerConfig>,
    mut tcp: TcpStream,
    spoil: Spoil,
    sender: &mpsc::Sender<Vec<u8>>,
) {
    if tcp.set_nonblocking(false).is_err()
        || tcp.set_read_timeout(Some(Duration::from_secs(10))).is_err()
    {
        return;
    }
    let Ok(mut tls) = rustls::ServerConnection::new(config) else {
        return;
    };
    let Some(request) = read_request(&mut tls, &mut tcp) else {
        // A refused handshake: its alert goes out.
        while tls.wants_write() {
            if tls.write_tls(&mut tcp).is_err() {
                break;
            }
        }
        let _ = tcp.shutdown(Shutdown::Write);
        let _ = std::io::copy(&mut tcp, &mut std::io::sink());
        return;
    };
    if let Spoil::AfterHead = spoil {
        let head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{\"isSuccess\":true,";
        if tls.writer().write_all(head).is_err() {
            return;
        }
    }
    // What TLS still has to send (TLS 1.3 session tickets, the head) goes
    // first.
    while tls.wants_write() {
        if tls.write_tls(&mut tcp).is_err() {
            return;
        }
    }
    let _ = sender.send(request);
    let _ = tcp.write_all(&GARBAGE_RECORD);
    let _ = tcp.flush();
    let _ = tcp.shutdown(Shutdown::Write);
    // Until the proxy closes: nothing it sends is left unread, so no
    // reset can overtake the spoiled answer.
    let _ = std::io::copy(&mut tcp, &mut std::io::sink());
}

/// The request's head and its `Content-Length` body, through TLS (the
/// handshake completes on the way).
pub fn read_request(tls: &mut rustls::ServerConnection, tcp: &mut TcpStream) -> Option<Vec<u8>> {
    let mut stream = rustls::Stream::new(tls, tcp);
    let mut request = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let n = stream.read(&mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        request.extend_from_slice(&chunk[..n]);
        if let Some(end) = request
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .map(|at| at + 4)
        {
            let length = String::from_utf8_lossy(&request[..end])
                .lines()
                .filter_map(|line| line.split_once(':'))
                .find(|(name, _)| name.trim().eq_ignore_ascii_case("content-length"))
                .and_then(|(_, value)| value.trim().parse().ok())
                .unwrap_or(0);
            if request.len() >= end + length {
                return Some(request);
            }
        }
    }
}

/// An initiate through `proxy`: its reply and the message it says.
async fn initiate(proxy: &Proxy, reference: &str) -> (Reply, String) {
    let reply = Reply::of(
        client()
            .post(format!("{}/api/payments/initiate", proxy.base_url()))
            .json(&initiate_body(reference, 1050))
            .send()
            .await
            .expect("the proxy answers"),
    )
    .await;
    let body = reply.json();
    assert_eq!(reply.status, 502, "{body}");
    assert_eq!(reply.verdict(), "unchecked", "{body}");
    assert_eq!(body["errorCode"], json!("UPSTREAM_UNAVAILABLE"), "{body}");
    let message = body["message"].as_str().unwrap_or_default().to_owned();
    (reply, message)
}

/// The message the recording and the console show for the only exchange.
fn recorded_message(proxy: &Proxy) -> String {
    let exchanges = proxy.exchanges();
    assert_eq!(exchanges.len(), 1, "one exchange");
    let (exchange, ..) = &exchanges[0];
    assert!(exchange.proxy_answer, "the proxy's own answer");
    let body = exchange.response.body.as_deref().unwrap_or_default();
    let body: serde_json::Value = serde_json::from_str(body).expect("a JSON body recorded");
    body["message"].as_str().unwrap_or_default().to_owned()
}

/// Garbage instead of the answer, once the upstream has read the whole
/// initiate: its answer broke off (TLS's reason given), no refused TLS.
/// And the same garbage in the middle of an answer's body.
#[tokio::test]
async fn a_tls_failure_after_the_upstream_read_the_request_is_an_answer_broken_off() {
    let decrypt = rustls::Error::DecryptError.to_string();
    for spoil in [Spoil::BeforeHead, Spoil::AfterHead] {
        let upstream = SpoilingUpstream::start(spoil, false).await;
        let proxy = upstream.proxy(true).await;
        let (_, message) = initiate(&proxy, "R-TLS-SPOILED").await;
        let case = format!("{spoil:?}: {message}");
        assert!(
            message.starts_with(&format!(
                "the upstream service broke off its answer (TLS: {decrypt}; it may have carried the request out)"
            )),
            "{case}"
        );
        assert!(!message.contains("refused"), "{case}");
        assert_eq!(recorded_message(&proxy), message, "{case}");
        assert_eq!(failures(&proxy, "broke_off").await, "1", "{case}");
        assert_eq!(failures(&proxy, "tls").await, "0", "{case}");
        let received = upstream.received();
        assert_eq!(received.len(), 1, "read once, not retried: {case}");
        assert!(
            received[0].starts_with(b"POST /api/payments/initiate "),
            "{case}"
        );
    }
}

/// A handshake the proxy refuses (the upstream's CA not trusted) keeps
/// its words: refused TLS, counted `tls`, and nothing reaches the
/// upstream.
#[tokio::test]
async fn a_refused_handshake_is_still_refused_tls() {
    let upstream = SpoilingUpstream::start(Spoil::BeforeHead, false).await;
    let proxy = upstream.proxy(false).await;
    let (_, message) = initiate(&proxy, "R-TLS-REFUSED").await;
    assert!(
        message.starts_with(
            "the proxy refused TLS (invalid peer certificate: UnknownIssuer): the upstream service's \
             certificate is not issued by a CA the proxy trusts; give that CA, or the upstream's \
             own self-signed certificate, with --upstream-ca FILE"
        ),
        "{message}"
    );
    assert_eq!(recorded_message(&proxy), message);
    assert_eq!(failures(&proxy, "tls").await, "1");
    assert_eq!(failures(&proxy, "broke_off").await, "0");
    assert!(upstream.received().is_empty(), "no request read");
}

/// An upstream that demands a client certificate the proxy has not got
/// refuses the handshake with its alert, which in TLS 1.3 reaches the
/// proxy after its side of the handshake, in answer to the request: still
/// refused TLS, counted `tls`, and the upstream read no request.
#[tokio::test]
async fn an_upstream_refusing_the_missing_client_certificate_is_refused_tls() {
    let upstream = SpoilingUpstream::start(Spoil::BeforeHead, true).await;
    let proxy = upstream.proxy(true).await;
    let (_, message) = initiate(&proxy, "R-TLS-MUTUAL").await;
    assert!(
        message.starts_with(
            "the upstream service refused TLS (received fatal alert: CertificateRequired)"
        ),
        "{message}"
    );
    assert_eq!(recorded_message(&proxy), message);
    assert_eq!(failures(&proxy, "tls").await, "1");
    assert_eq!(failures(&proxy, "broke_off").await, "0");
    assert!(upstream.received().is_empty(), "no request read");
}
