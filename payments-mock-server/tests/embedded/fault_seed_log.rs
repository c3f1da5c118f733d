//! A random fault seed is logged as a string field: as a number, a seed
//! above 2^53 (most random ones) was rounded by a JSON reader's f64 (jq,
//! JavaScript), and `fault_seed(seed)` with what it read repeated another
//! run's faults.

use std::io::Write;
use std::sync::{Arc, Mutex};

use payments_mock_server::MockServer;

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn a_random_fault_seed_is_logged_as_a_string_equal_to_the_seed() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .json()
        .with_writer(move || writer.clone())
        .finish();
    let server = {
        let _default = tracing::subscriber::set_default(subscriber);
        // A seed is drawn (and logged) when faults are drawn.
        MockServer::builder()
            .fail_rate(0.5)
            .start()
            .await
            .expect("a server")
    };
    let seed = server.fault_seed();
    server.shutdown().await;
    let text = String::from_utf8(captured.0.lock().expect("the log").clone()).expect("UTF-8");
    let line = text
        .lines()
        .find(|l| l.contains("\"fault_seed\""))
        .unwrap_or_else(|| panic!("no fault_seed line: {text}"));
    let entry: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
    let fields = &entry["fields"];
    assert_eq!(
        fields["fault_seed"].as_str(),
        Some(seed.to_string().as_str()),
        "{line}"
    );
    let message = fields["message"].as_str().expect("a message");
    assert!(
        message.starts_with(&format!("fault seed {seed} ")),
        "{line}"
    );
}
