//! Tracing: spans per call and per attempt, and never the API key.
//!
//! Alone in its own test binary because a thread-scoped subscriber races
//! with callsite caching when other tests run in parallel.

mod common;

use std::io::Write;
use std::sync::{Arc, Mutex};

use common::*;
use payments_client::ConfirmRequest;
use wiremock::MockServer;

const KEY: &str = "sk_live_TOP_SECRET_42";

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn traces_show_calls_and_attempts_but_never_the_key() {
    let captured = Captured::default();
    let sink = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(move || sink.clone())
        .with_ansi(false)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let server = MockServer::start().await;
    post_fails_once_then(&server, json(200, ok_envelope(&confirm_data()))).await;
    let c = client_with_key(&server.uri(), KEY);
    let reply = c
        .confirm(ConfirmRequest::builder(TX_ID, "INV-1").build().unwrap())
        .await
        .unwrap();

    let logs = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    assert!(!logs.contains(KEY), "{logs}");
    assert!(logs.contains(reply.request_id()), "{logs}");
    assert!(logs.contains("payments.call"), "{logs}");
    assert!(logs.contains("attempt=2"), "{logs}");
    assert!(logs.contains("status=500"), "{logs}");
    assert!(logs.contains("retrying"), "{logs}");
}
