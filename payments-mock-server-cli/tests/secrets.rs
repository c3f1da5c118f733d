//! No key in any log line (text or JSON, at trace level), answer, journal
//! entry, `Debug` output, configuration or usage error (issue #8).

use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use payments_mock_server::{Config, MockServer};
use serde_json::json;

use crate::common::{
    MERCHANT, OTHER_MERCHANT, initiate_body, spawn_with_banner, terminate_expecting_success,
};
use crate::security::{KEY_A, KEY_B, KEY_OPEN, bearer};

const BIN: &str = env!("CARGO_BIN_EXE_payments-mock-server");

/// A `MakeWriter` into a shared buffer: what the server logs, captured.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("not poisoned").extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Captured {
    type Writer = Captured;

    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

impl Captured {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().expect("not poisoned")).into_owned()
    }
}

fn assert_no_key(what: &str, text: &str) {
    for key in [KEY_A, KEY_B, KEY_OPEN, "SECRET"] {
        assert!(!text.contains(key), "{what} shows a key:\n{text}");
    }
}

/// Every kind of request a keyed server sees: right, wrong and near-miss
/// keys, 401, 403, 404, faults including a reset, and the journal.
async fn exercise(server: &MockServer) -> Vec<String> {
    let client = reqwest::Client::new();
    let base = server.base_url();
    let mut seen = Vec::new();
    let auths = [
        bearer(KEY_A),
        format!("bearer {KEY_OPEN}"),
        bearer(&format!("{KEY_A}x")),
        format!("Basic {KEY_B}"),
        KEY_B.to_owned(),
    ];
    for auth in &auths {
        for fault in [
            "",
            "internal-error",
            "commit-then-error",
            "reset",
            "bogus-fault",
        ] {
            let mut body = initiate_body(&format!("LOG-{}", seen.len()), "TOPUP");
            if fault == "commit-then-error" {
                body["merchantId"] = json!(OTHER_MERCHANT);
            }
            let reply = client
                .post(format!("{base}/api/payments/initiate"))
                .header("authorization", auth)
                // An application's own scheme, beside the mock's.
                .header("x-api-key", KEY_B)
                .header("X-Auth-Token", format!("tok-{KEY_OPEN}"))
                .header("x-mock-fault", fault)
                .header("content-type", "application/json")
                .body(body.to_string())
                .send()
                .await;
            if let Ok(reply) = reply {
                seen.push(reply.text().await.unwrap_or_default());
            }
        }
        for path in [
            "/api/payments/x/status",
            "/api/payments/reference/R/status",
            "/nope",
        ] {
            let reply = client
                .get(format!("{base}{path}"))
                .header("authorization", auth)
                .send()
                .await
                .expect("reply");
            seen.push(reply.text().await.expect("body"));
        }
    }
    for path in ["/_mock/requests", "/_mock/transactions", "/_mock/health"] {
        let reply = client
            .get(format!("{base}{path}"))
            .send()
            .await
            .expect("reply");
        seen.push(reply.text().await.expect("body"));
    }
    seen.push(format!("{:?}", server.requests().await));
    seen.push(format!("{:?}", server.state()));
    seen.push(format!("{server:?}"));
    seen
}

async fn keyed_server() -> MockServer {
    MockServer::builder()
        .api_key(KEY_A, Some(MERCHANT.parse().expect("uuid")))
        .api_key(KEY_OPEN, None)
        .start()
        .await
        .expect("start")
}

#[test]
fn no_key_appears_in_text_or_json_logs_answers_journal_or_debug_output() {
    for json_format in [false, true] {
        let captured = Captured::default();
        let builder = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(false)
            .with_writer(captured.clone());
        let _guard = if json_format {
            tracing::subscriber::set_default(builder.json().finish())
        } else {
            tracing::subscriber::set_default(builder.finish())
        };
        // One thread: every task the server spawns logs to this subscriber.
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let seen = runtime.block_on(async {
            let server = keyed_server().await;
            let seen = exercise(&server).await;
            server.shutdown().await;
            seen
        });
        let log = captured.text();
        assert!(log.contains("request"), "nothing was logged:\n{log}");
        assert!(log.contains("/api/payments/initiate"), "{log}");
        assert_no_key(
            if json_format {
                "the json log"
            } else {
                "the text log"
            },
            &log,
        );
        for answer in &seen {
            assert_no_key("an answer or Debug output", answer);
        }
    }
}

#[test]
fn config_and_key_errors_never_show_the_key() {
    let mut config = Config::default();
    config.api_keys = vec![format!("{KEY_A}={MERCHANT}").parse().expect("key")];
    assert_no_key("Config's Debug", &format!("{config:?} {config:#?}"));
    for bad in [
        format!("{KEY_A}=not-a-uuid"),
        format!("{KEY_A}={KEY_B}"),
        format!("{KEY_A} with space"),
        format!("{KEY_A}\u{7f}"),
    ] {
        let err = bad
            .parse::<payments_mock_server::ApiKey>()
            .expect_err("malformed");
        assert_no_key("an ApiKey parse error", &err);
        assert!(!err.contains("not-a-uuid"), "{err}");
    }
}

#[test]
fn a_malformed_api_key_flag_is_a_usage_error_that_does_not_echo_the_value() {
    for bad in [
        format!("{KEY_A}=not-a-uuid"),
        format!("{KEY_A} with space"),
        String::new(),
        format!("={MERCHANT}"),
    ] {
        let output = Command::new(BIN)
            .args(["--port", "0", "--api-key", &bad])
            .output()
            .expect("run");
        assert_eq!(output.status.code(), Some(2), "{bad:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("--api-key"), "{stderr}");
        assert_no_key("the usage error", &stderr);
        assert!(
            !stderr.contains("not-a-uuid") && !stderr.contains("with space"),
            "{stderr}"
        );
    }
}

/// A key that starts with `-` is read by clap as an argument of its own;
/// its "unexpected argument" error never repeats it (for the mock and its
/// `proxy` subcommand).
#[test]
fn a_key_that_starts_with_a_dash_is_never_echoed() {
    for args in [
        vec!["--port", "0", "--api-key", "--sk_DASH_CANARY"],
        vec!["--port", "0", "--admin-key", "-adm_DASH_CANARY"],
        vec![
            "proxy",
            "--upstream",
            "http://127.0.0.1:9",
            "--admin-key",
            "--adm_DASH_CANARY",
        ],
    ] {
        let output = Command::new(BIN).args(&args).output().expect("run");
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!stderr.contains("CANARY"), "{args:?}: {stderr}");
        assert!(stderr.contains("needs a value"), "{args:?}: {stderr}");
    }
}

/// Runs the binary with a key and trace logging, drives it, stops it, and
/// returns its stderr.
async fn binary_stderr(log_format: &str) -> String {
    let (child, base) = spawn_with_banner(
        Command::new(BIN)
            .args(["--port", "0", "--log-format", log_format])
            .args([
                "--api-key",
                &format!("{KEY_A}={MERCHANT}"),
                "--api-key",
                KEY_OPEN,
            ])
            .env("RUST_LOG", "trace")
            .stderr(Stdio::piped()),
    );
    let client = reqwest::Client::new();
    for auth in [
        bearer(KEY_A),
        bearer(KEY_OPEN),
        bearer(&format!("{KEY_B}z")),
        KEY_A.to_owned(),
    ] {
        for fault in ["", "reset", "internal-error"] {
            let _ = client
                .post(format!("{base}/api/payments/initiate"))
                .header("authorization", &auth)
                .header("x-mock-fault", fault)
                .header("content-type", "application/json")
                .body(initiate_body("BIN-1", "TOPUP").to_string())
                .send()
                .await;
        }
        let _ = client
            .get(format!("{base}/api/payments/reference/BIN-1/status"))
            .header("authorization", &auth)
            .send()
            .await;
    }
    let _ = client.get(format!("{base}/_mock/requests")).send().await;
    terminate_expecting_success(child)
}

#[tokio::test]
async fn the_binary_never_logs_a_key_in_text_or_json_at_trace_level() {
    for format in ["text", "json"] {
        let stderr = binary_stderr(format).await;
        assert!(stderr.contains("/api/payments/initiate"), "{stderr}");
        assert_no_key(&format!("the binary's {format} log"), &stderr);
    }
}

#[tokio::test]
async fn the_same_key_twice_is_a_configuration_error_naming_positions_not_keys() {
    let mut config = Config::default();
    config.api_keys = vec![
        format!("{KEY_A}={MERCHANT}").parse().expect("key"),
        KEY_OPEN.parse().expect("key"),
        KEY_A.parse().expect("key"),
    ];
    let err = MockServer::builder()
        .config(config)
        .start()
        .await
        .expect_err("a repeated key");
    let message = err.to_string();
    assert!(
        message.contains("the same API key is given twice (keys #1 and #3)"),
        "{message}"
    );
    assert_no_key("the builder's error", &format!("{message} {err:?}"));

    let err = MockServer::builder()
        .api_key(KEY_B, None)
        .api_key(KEY_B, None)
        .start()
        .await
        .expect_err("a repeated key");
    assert!(err.to_string().contains("(keys #1 and #2)"), "{err}");

    for args in [
        vec![
            format!("--api-key={KEY_A}={MERCHANT}"),
            format!("--api-key={KEY_OPEN}"),
            format!("--api-key={KEY_A}={OTHER_MERCHANT}"),
        ],
        vec![
            format!("--api-key={KEY_OPEN}"),
            format!("--api-key={KEY_B}"),
            format!("--api-key={KEY_OPEN}"),
        ],
    ] {
        let output = Command::new(BIN)
            .args(["--port", "0"])
            .args(&args)
            .output()
            .expect("run");
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("the same API key is given twice (keys #1 and #3)"),
            "{stderr}"
        );
        assert_no_key("the binary's configuration error", &stderr);
        assert!(output.stdout.is_empty(), "no banner: it must not start");
    }
}
