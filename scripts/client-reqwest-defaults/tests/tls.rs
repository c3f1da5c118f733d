//! payments-client beside an application's `reqwest` with its default
//! features: the client speaks rustls still, so a refused handshake is
//! told as TLS (not carried out), as with the client alone.

use std::io::{Read as _, Write as _};
use std::time::Duration;

use payments_client::error::TransportKind;
use payments_client::{Client, Outcome, RetryPolicy};

/// Before: reqwest's defaults turned native-tls on, reqwest took it for
/// the client's HTTPS, and the client, which knows rustls's errors only
/// without its own `native-tls` feature, said "could not connect".
#[tokio::test]
async fn a_refused_handshake_is_a_tls_failure_with_reqwests_defaults_on() {
    // The application's reqwest, with its defaults: native-tls is on.
    let _ = reqwest::Client::new();
    let refusing = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let address = refusing.local_addr().expect("an address");
    let refuser = std::thread::spawn(move || {
        let (mut socket, _) = refusing.accept().expect("the client");
        let mut hello = [0u8; 1024];
        let _ = socket.read(&mut hello);
        // A TLS alert record: fatal (2), certificate_required (116).
        let _ = socket.write_all(&[21, 3, 3, 0, 2, 2, 116]);
    });
    let client = Client::builder(format!("https://{address}"))
        .connect_timeout(Duration::from_secs(10))
        .retry_policy(RetryPolicy::none())
        .build()
        .expect("a client");
    let error = client.status("any").await.expect_err("refused");
    refuser.join().expect("the refuser");
    match &error {
        payments_client::Error::Transport { kind, .. } => {
            assert_eq!(*kind, TransportKind::Tls, "{error}");
        }
        other => panic!("a transport error: {other:?}"),
    }
    assert_eq!(error.outcome(), Outcome::NotCarriedOut, "{error}");
}
