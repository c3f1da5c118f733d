//! A TLS failure after the service has read the request is no refused
//! handshake: the service may have carried the call out, so it is
//! `TransportKind::Connection` (outcome `Unknown`, retried with the same
//! request), never `Tls` (`NotCarriedOut`), whichever TLS the client
//! speaks.
//!
//! The server here is rustls itself, driven by hand on a loopback socket:
//! it completes the handshake, reads the whole initiate (the service has
//! received it), and then spoils its answer, either with a record of
//! garbage written straight to the socket or with its own TLS's fatal
//! `bad_record_mac` alert.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::{Arc, mpsc};
use std::time::Duration;

use payments_client::error::TransportKind;
use payments_client::{Client, Error, Outcome, RetryPolicy};
use payments_mock_server::tls::LocalCa;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use crate::common::transport_kind;
use crate::support::{fast_retries, topup};

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

/// How the server spoils its answer, once it has read the request.
#[derive(Debug, Clone, Copy)]
enum Spoil {
    /// [`GARBAGE_RECORD`], straight to the socket: the client cannot
    /// decrypt it (rustls: `DecryptError`; OpenSSL: bad record mac).
    GarbageRecord,
    /// The server's own TLS is fed [`GARBAGE_RECORD`] and fails, sending
    /// its fatal `bad_record_mac` alert to the client, encrypted, as a
    /// TLS stack that breaks in the middle of an answer does.
    BadRecordMacAlert,
}

/// A TLS server on loopback that reads each request and spoils the answer.
struct SpoilingServer {
    url: String,
    ca_pem: String,
    requests: mpsc::Receiver<Vec<u8>>,
}

impl SpoilingServer {
    async fn start(spoil: Spoil) -> Self {
        let ca = LocalCa::generate().expect("a CA");
        let issued = ca
            .server_cert(&["127.0.0.1".to_owned(), "localhost".to_owned()])
            .expect("a certificate");
        let chain = CertificateDer::pem_slice_iter(issued.cert_pem.as_bytes())
            .collect::<Result<Vec<_>, _>>()
            .expect("certificate PEM");
        let key = PrivateKeyDer::from_pem_slice(issued.key_pem().as_bytes()).expect("key PEM");
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
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
            ca_pem: ca.cert_pem().to_owned(),
            requests,
        }
    }

    fn client(&self, retry: RetryPolicy) -> Client {
        Client::builder(&self.url)
            .add_root_certificate_pem(self.ca_pem.clone())
            .retry_policy(retry)
            .timeout(Duration::from_secs(10))
            .build()
            .expect("a client")
    }

    /// Every request read so far, whole (each is sent before its answer
    /// is spoiled, so all of a finished call's are here).
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
        return;
    };
    // What TLS still has to send (TLS 1.3 session tickets) goes first.
    while tls.wants_write() {
        if tls.write_tls(&mut tcp).is_err() {
            return;
        }
    }
    let _ = sender.send(request);
    match spoil {
        Spoil::GarbageRecord => {
            let _ = tcp.write_all(&GARBAGE_RECORD);
        }
        Spoil::BadRecordMacAlert => {
            let _ = tls.read_tls(&mut &GARBAGE_RECORD[..]);
            let _decrypt_error = tls.process_new_packets();
            while tls.wants_write() {
                if tls.write_tls(&mut tcp).is_err() {
                    break;
                }
            }
        }
    }
    let _ = tcp.flush();
    let _ = tcp.shutdown(Shutdown::Write);
    // Until the client closes: nothing it sends is left unread, so no
    // reset can overtake the spoiled answer.
    let _ = std::io::copy(&mut tcp, &mut std::io::sink());
}

/// The request's head and its `Content-Length` body, through TLS (the
/// handshake completes on the way).
fn read_request(tls: &mut rustls::ServerConnection, tcp: &mut TcpStream) -> Option<Vec<u8>> {
    let mut stream = rustls::Stream::new(tls, tcp);
    let mut request = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let n = stream.read(&mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        request.extend_from_slice(&chunk[..n]);
        if let Some(end) = head_end(&request) {
            let length = content_length(&request[..end]);
            if request.len() >= end + length {
                return Some(request);
            }
        }
    }
}

/// Where the head ends (after its blank line), once it is all there.
fn head_end(request: &[u8]) -> Option<usize> {
    request
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|at| at + 4)
}

fn content_length(head: &[u8]) -> usize {
    String::from_utf8_lossy(head)
        .lines()
        .filter_map(|line| line.split_once(':'))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("content-length"))
        .and_then(|(_, value)| value.trim().parse().ok())
        .unwrap_or(0)
}

fn body(request: &[u8]) -> &[u8] {
    &request[head_end(request).expect("a whole head")..]
}

fn header<'a>(request: &'a [u8], name: &str) -> Option<&'a str> {
    std::str::from_utf8(&request[..head_end(request)?])
        .ok()?
        .lines()
        .filter_map(|line| line.split_once(':'))
        .find(|(n, _)| n.trim().eq_ignore_ascii_case(name))
        .map(|(_, value)| value.trim())
}

/// An error and all its sources in one line; an `io::Error`'s own words
/// are those of the error it wraps (the TLS library's).
fn chain(error: &Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// The TLS library's words the chain must show for `spoil`, by the TLS
/// the client speaks (without an identity, `native-tls` wins when both
/// features are on).
fn tls_words(spoil: Spoil) -> String {
    if cfg!(feature = "native-tls") {
        return "bad record mac".to_owned();
    }
    match spoil {
        Spoil::GarbageRecord => rustls::Error::DecryptError.to_string(),
        Spoil::BadRecordMacAlert => {
            rustls::Error::AlertReceived(rustls::AlertDescription::BadRecordMac).to_string()
        }
    }
}

/// The answer to an initiate the service has read is spoiled by TLS:
/// a broken connection (`Unknown`: the payment may be made), not a refused
/// handshake (`NotCarriedOut`), with TLS's reason kept in the chain.
#[tokio::test]
async fn a_tls_failure_after_the_request_was_read_is_unknown_not_a_refused_handshake() {
    for spoil in [Spoil::GarbageRecord, Spoil::BadRecordMacAlert] {
        let server = SpoilingServer::start(spoil).await;
        let error = server
            .client(RetryPolicy::none())
            .initiate(topup("TLS-SPOILED"))
            .await
            .expect_err("the answer is spoiled");
        let case = format!("{spoil:?}: {error:?}");
        super::assert_broken_after_sending(&error, &case);
        assert!(error.is_retryable(), "{case}");
        assert!(!error.to_string().contains("TLS"), "{case}");
        let text = chain(&error);
        assert!(text.contains(&tls_words(spoil)), "{case}: {text}");
        let received = server.received();
        assert_eq!(received.len(), 1, "{case}");
        assert!(
            received[0].starts_with(b"POST /api/payments/initiate "),
            "{case}"
        );
    }
}

/// The client's policy for a broken connection on initiate: the same
/// request again (same referenceNo, body and request id), which the
/// service refuses as a repeat if the first was carried out; never a new
/// payment. Every attempt spoiled: the call ends `Unknown`.
#[tokio::test]
async fn an_initiate_whose_answers_tls_spoils_is_only_ever_repeated_as_the_same_request() {
    for spoil in [Spoil::GarbageRecord, Spoil::BadRecordMacAlert] {
        let server = SpoilingServer::start(spoil).await;
        let error = server
            .client(fast_retries())
            .initiate(topup("TLS-SPOILED-RETRY"))
            .await
            .expect_err("every answer is spoiled");
        let case = format!("{spoil:?}: {error:?}");
        super::assert_broken_after_sending(&error, &case);
        let received = server.received();
        assert_eq!(
            received.len(),
            1 + fast_retries().max_retries_value() as usize,
            "{case}"
        );
        let first = &received[0];
        assert!(
            String::from_utf8_lossy(body(first)).contains("\"referenceNo\":\"TLS-SPOILED-RETRY\""),
            "{case}"
        );
        for again in &received[1..] {
            assert!(again.starts_with(b"POST /api/payments/initiate "), "{case}");
            assert_eq!(body(again), body(first), "{case}");
            assert_eq!(
                header(again, "x-request-id"),
                header(first, "x-request-id"),
                "{case}"
            );
        }
        assert_eq!(header(first, "x-request-id"), error.request_id(), "{case}");
    }
}

/// The same garbage in answer to the client's hello: a failure while the
/// client handshakes, before it writes the request, so nothing was
/// carried out (rustls: no refusal, so the connection failed, `Connect`;
/// native-tls: its handshake's error, `Tls`).
#[tokio::test]
async fn garbage_in_answer_to_the_hello_is_not_carried_out() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("binds");
    let port = listener.local_addr().expect("an address").port();
    tokio::spawn(async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        while let Ok((mut stream, _)) = listener.accept().await {
            let mut hello = [0u8; 512];
            let _ = stream.read(&mut hello).await;
            let _ = stream.write_all(&GARBAGE_RECORD).await;
            let _ = stream.shutdown().await;
            let _ = tokio::io::copy(&mut stream, &mut tokio::io::sink()).await;
        }
    });
    let error = Client::builder(format!("https://127.0.0.1:{port}"))
        .retry_policy(RetryPolicy::none())
        .timeout(Duration::from_secs(10))
        .build()
        .expect("a client")
        .initiate(topup("TLS-HELLO"))
        .await
        .expect_err("no handshake");
    let expected = if cfg!(feature = "native-tls") {
        TransportKind::Tls
    } else {
        TransportKind::Connect
    };
    assert_eq!(transport_kind(&error), Some(expected), "{error:?}");
    assert_eq!(error.outcome(), Outcome::NotCarriedOut, "{error:?}");
}
