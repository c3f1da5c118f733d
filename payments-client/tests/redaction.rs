//! A base URL's `user:pass@` never reaches `Display`, `Debug` or logs.
//!
//! Alone in its own test binary because it installs a tracing subscriber.

mod common;

use std::io::Write;
use std::sync::{Arc, Mutex};

use common::*;
use payments_client::{Client, RetryPolicy};

const PASSWORD: &str = "s3cr3t-pw";

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

fn with_userinfo(base: &str) -> String {
    base.replacen("http://", &format!("http://user:{PASSWORD}@"), 1)
}

/// The error, its `Debug`, and every source in its chain.
fn everything_shown(err: &(dyn std::error::Error + 'static)) -> String {
    let mut text = format!("{err} {err:?}");
    let mut source = err.source();
    while let Some(s) = source {
        text.push_str(&format!(" | {s} {s:?}"));
        source = s.source();
    }
    text
}

#[tokio::test]
async fn userinfo_of_the_base_url_is_never_shown() {
    let captured = Captured::default();
    let sink = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(move || sink.clone())
        .with_ansi(false)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    // Dropped and refused connections: errors that carry the request URL.
    let (dropping, _) = dropping_server().await;
    let refused = refused_url().await;
    for base in [dropping, refused] {
        let builder = Client::builder(with_userinfo(&base)).retry_policy(fast_retries());
        let shown = format!("{builder:?} {builder:#?}");
        assert!(!shown.contains(PASSWORD), "the builder's Debug: {shown}");
        assert!(shown.contains("***@"), "{shown}");
        let client = builder.build().unwrap();
        assert!(
            client.base_url().contains(PASSWORD),
            "documented: kept as given"
        );
        let shown = format!("{client:?}");
        assert!(!shown.contains(PASSWORD), "{shown}");
        assert!(shown.contains("***@"), "{shown}");
        let err = client.status(TX_ID).await.unwrap_err();
        let shown = everything_shown(&err);
        assert!(!shown.contains(PASSWORD), "{shown}");
    }

    // Base URLs the builder rejects.
    for bad in [
        format!("ftp://user:{PASSWORD}@host/"),
        format!("http://user:{PASSWORD}@host/?q=1"),
        format!("http://user:{PASSWORD}@ho st/"),
    ] {
        let err = Client::builder(&bad)
            .retry_policy(RetryPolicy::none())
            .build()
            .unwrap_err();
        let shown = everything_shown(&err);
        assert!(!shown.contains(PASSWORD), "{shown}");
    }

    let logs = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    assert!(logs.contains("attempt failed"), "{logs}");
    assert!(!logs.contains(PASSWORD), "{logs}");
}
