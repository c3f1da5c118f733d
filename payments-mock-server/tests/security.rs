//! Security with API keys on (CONTRACT section 9, issue #8): no `/api/`
//! route without a valid key, no way across merchants, and no key in any
//! log line, error, `Debug` output, journal entry or usage error.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Body;
use axum::http::Request;
use payments_mock_server::{AppState, Config, MockServer};
use serde_json::{Value, json};

use crate::common::{MERCHANT, OTHER_MERCHANT, Reply, initiate_body, send, service_with};

const BIN: &str = env!("CARGO_BIN_EXE_payments-mock-server");

/// Distinctive, so a leak anywhere is found by a plain substring search.
const KEY_A: &str = "sk_live_SECRET_A_7f3c9e";
const KEY_B: &str = "sk_live_SECRET_B_2d81aa";
const KEY_OPEN: &str = "sk_live_SECRET_OPEN_5b0d";

fn keyed() -> (AppState, Router) {
    let mut config = Config::default();
    config.api_keys = vec![
        format!("{KEY_A}={MERCHANT}").parse().expect("key"),
        format!("{KEY_B}={OTHER_MERCHANT}").parse().expect("key"),
        KEY_OPEN.parse().expect("key"),
    ];
    service_with(config)
}

async fn call(
    router: &Router,
    auth: Option<&str>,
    method: &str,
    uri: &str,
    body: Option<&Value>,
) -> Reply {
    let mut req = Request::builder().method(method).uri(uri);
    if let Some(auth) = auth {
        req = req.header("authorization", auth);
    }
    if body.is_some() {
        req = req.header("content-type", "application/json");
    }
    let body = body.map_or_else(Body::empty, |b| Body::from(b.to_string()));
    send(router, req.body(body).expect("request")).await
}

fn bearer(key: &str) -> String {
    format!("Bearer {key}")
}

/// Every `/api/` operation of the OpenAPI document, with a plausible body.
fn api_operations() -> Vec<(String, String, Option<Value>)> {
    let doc: Value = serde_json::from_str(payments_mock_server_document()).expect("document");
    let mut ops = Vec::new();
    for (template, methods) in doc["paths"].as_object().expect("paths") {
        if !template.starts_with("/api/") {
            continue;
        }
        let path = template
            .replace("{transactionId}", "0197a0a0-0000-7000-8000-000000000000")
            .replace("{referenceNo}", "R-1");
        for method in methods.as_object().expect("operations").keys() {
            let body = match template.as_str() {
                "/api/payments/initiate" => Some(initiate_body("NOKEY-1", "TOPUP")),
                "/api/payments/confirm" => Some(json!({
                    "transactionId": "0197a0a0-0000-7000-8000-000000000000",
                    "referenceNo": "R-1",
                })),
                _ => None,
            };
            ops.push((method.to_ascii_uppercase(), path.clone(), body));
        }
    }
    assert!(ops.len() >= 4, "{ops:?}");
    ops
}

fn payments_mock_server_document() -> &'static str {
    // The served document is the crate's own file.
    include_str!("../src/openapi.json")
}

#[tokio::test]
async fn no_api_route_answers_without_a_valid_key() {
    let (state, router) = keyed();
    let near_misses = [
        None,
        Some(String::new()),
        Some("Bearer".to_owned()),
        Some("Bearer ".to_owned()),
        Some(KEY_A.to_owned()),
        Some(format!("Basic {KEY_A}")),
        Some(format!("Token {KEY_A}")),
        Some(bearer(&KEY_A[..KEY_A.len() - 1])),
        Some(bearer(&format!("{KEY_A}x"))),
        Some(bearer(&format!("{}X", &KEY_A[..KEY_A.len() - 1]))),
        Some(bearer(&format!("X{}", &KEY_A[1..]))),
        Some(bearer(&KEY_A.to_ascii_lowercase())),
        Some(bearer(&format!("{KEY_A}={MERCHANT}"))),
        Some(format!("Bearer {KEY_A} {KEY_B}")),
        Some(format!("Bearer {KEY_A},{KEY_B}")),
    ];
    for (method, path, body) in api_operations() {
        for auth in &near_misses {
            for fault in [None, Some("commit-then-error")] {
                let mut req = Request::builder().method(method.as_str()).uri(&path);
                if let Some(auth) = auth {
                    req = req.header("authorization", auth.as_str());
                }
                if let Some(fault) = fault {
                    req = req.header("x-mock-fault", fault);
                }
                let req = req
                    .header("content-type", "application/json")
                    .body(
                        body.as_ref()
                            .map_or_else(Body::empty, |b| Body::from(b.to_string())),
                    )
                    .expect("request");
                let reply = send(&router, req).await;
                assert_eq!(
                    (reply.status.as_u16(), reply.code()),
                    (401, "UNAUTHORIZED"),
                    "{method} {path} with {auth:?}"
                );
                assert_eq!(reply.headers["www-authenticate"], "Bearer");
            }
        }
        // The right key gets through (whatever the answer, it is not 401).
        let reply = call(
            &router,
            Some(&bearer(KEY_OPEN)),
            &method,
            &path,
            body.as_ref(),
        )
        .await;
        assert_ne!(reply.status, 401, "{method} {path}");
    }
    // Nothing was created by any refused request.
    assert_eq!(
        state.store.all().len(),
        1,
        "only the one keyed initiate may have created a transaction"
    );
}

#[tokio::test]
async fn a_key_bound_to_merchant_a_cannot_create_read_or_confirm_for_merchant_b() {
    let (state, router) = keyed();
    let (a, b) = (bearer(KEY_A), bearer(KEY_B));
    let initiate = "/api/payments/initiate";
    let mut theirs = initiate_body("B-ONLY", "TOPUP");
    theirs["merchantId"] = json!(OTHER_MERCHANT);
    let reply = call(&router, Some(&b), "POST", initiate, Some(&theirs)).await;
    assert_eq!(reply.status, 200);
    let their_id = reply.data()["transactionId"]
        .as_str()
        .expect("id")
        .to_owned();
    let mut shared_b = initiate_body("SHARED", "TOPUP");
    shared_b["merchantId"] = json!(OTHER_MERCHANT);
    assert_eq!(
        call(&router, Some(&b), "POST", initiate, Some(&shared_b))
            .await
            .status,
        200
    );
    let reply = call(
        &router,
        Some(&a),
        "POST",
        initiate,
        Some(&initiate_body("SHARED", "TOPUP")),
    )
    .await;
    assert_eq!(reply.status, 200);
    let my_shared = reply.data()["transactionId"]
        .as_str()
        .expect("id")
        .to_owned();
    let before = state.store.all().len();

    let mut answers = Vec::new();
    // Create for B: refused, nothing stored, even with a fresh reference.
    for reference in ["A-FOR-B", "B-ONLY"] {
        let mut body = initiate_body(reference, "TOPUP");
        body["merchantId"] = json!(OTHER_MERCHANT);
        let reply = call(&router, Some(&a), "POST", initiate, Some(&body)).await;
        assert_eq!((reply.status.as_u16(), reply.code()), (403, "FORBIDDEN"));
        answers.push(reply);
    }
    // A's own reference space is its own: B's reference is free for A, and
    // the answer is not B's DUPLICATE naming B's transaction.
    let reply = call(
        &router,
        Some(&a),
        "POST",
        initiate,
        Some(&initiate_body("B-ONLY", "TOPUP")),
    )
    .await;
    assert_eq!(reply.status, 200);
    assert_ne!(reply.data()["transactionId"], their_id.as_str());
    let after_own = state.store.all().len();
    assert_eq!(after_own, before + 1);

    // Read B's transaction by id and by reference, with and without scope.
    let paths = [
        format!("/api/payments/{their_id}/status"),
        format!("/api/payments/{}/status", their_id.to_uppercase()),
        "/api/payments/reference/B-ONLY/status".to_owned(),
        format!("/api/payments/reference/B-ONLY/status?merchantId={OTHER_MERCHANT}"),
        format!(
            "/api/payments/reference/B-ONLY/status?merchantId={}",
            OTHER_MERCHANT.to_uppercase()
        ),
        format!("/api/payments/reference/B-ONLY/status?merchantId={MERCHANT}"),
    ];
    for path in &paths {
        let reply = call(&router, Some(&a), "GET", path, None).await;
        if reply.status == 200 {
            // Only A's own B-ONLY may answer.
            assert_ne!(reply.data()["transactionId"], their_id.as_str(), "{path}");
        } else {
            assert_eq!(
                (reply.status.as_u16(), reply.code()),
                (404, "TRANSACTION_NOT_FOUND"),
                "{path}"
            );
        }
        answers.push(reply);
    }
    // A reference both hold: A's, never ambiguous, whatever the query says.
    for query in ["", &format!("?merchantId={OTHER_MERCHANT}")] {
        let path = format!("/api/payments/reference/SHARED/status{query}");
        let reply = call(&router, Some(&a), "GET", &path, None).await;
        assert_eq!(reply.status, 200, "{path}");
        assert_eq!(reply.data()["transactionId"], my_shared.as_str(), "{path}");
    }
    // An empty merchantId is not a UUID, bound key or not (CONTRACT section 5).
    for query in ["?merchantId=", "?merchantId=x"] {
        let path = format!("/api/payments/reference/SHARED/status{query}");
        let reply = call(&router, Some(&a), "GET", &path, None).await;
        assert_eq!(
            (reply.status.as_u16(), reply.code()),
            (400, "VALIDATION_ERROR"),
            "{path}"
        );
    }

    // Confirm B's transaction: unknown to A, and it stays unconfirmed.
    for reference in ["B-ONLY", "SHARED"] {
        let body = json!({ "transactionId": their_id, "referenceNo": reference });
        let reply = call(
            &router,
            Some(&a),
            "POST",
            "/api/payments/confirm",
            Some(&body),
        )
        .await;
        assert_eq!(
            (reply.status.as_u16(), reply.code()),
            (400, "TRANSACTION_NOT_FOUND")
        );
        answers.push(reply);
    }
    let stored = state.store.all();
    let theirs_now = stored
        .iter()
        .find(|r| r.id.to_string() == their_id)
        .expect("stored");
    assert!(
        theirs_now.confirmation.is_none(),
        "A confirmed B's transaction"
    );

    // What A learns about B's transaction is exactly what it learns about
    // one that never existed (the answers only echo what A sent).
    let never = "0197a0a0-0000-7000-8000-00000000abcd";
    for (path, body) in [
        (format!("/api/payments/{their_id}/status"), None),
        (
            "/api/payments/confirm".to_owned(),
            Some(json!({ "transactionId": their_id, "referenceNo": "B-ONLY" })),
        ),
    ] {
        let method = if body.is_some() { "POST" } else { "GET" };
        let theirs = call(&router, Some(&a), method, &path, body.as_ref()).await;
        let path_never = path.replace(&their_id, never);
        let body_never = body.map(|b| {
            serde_json::from_str::<Value>(&b.to_string().replace(&their_id, never)).expect("json")
        });
        let none = call(&router, Some(&a), method, &path_never, body_never.as_ref()).await;
        assert_eq!(theirs.status, none.status, "{path}");
        assert_eq!(
            String::from_utf8_lossy(&theirs.raw).replace(&their_id, never),
            String::from_utf8_lossy(&none.raw),
            "{path}"
        );
    }
    for reply in &answers {
        let text = String::from_utf8_lossy(&reply.raw);
        assert!(
            !text.contains(OTHER_MERCHANT) || reply.code() == "FORBIDDEN",
            "{text}"
        );
    }
    // B still sees its own, unchanged.
    let reply = call(
        &router,
        Some(&b),
        "GET",
        &format!("/api/payments/{their_id}/status"),
        None,
    )
    .await;
    assert_eq!(reply.data()["status"], "INITIATED");
}

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
    seen.push(format!("{:?}", server.requests()));
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

/// Runs the binary with a key and trace logging, drives it, stops it, and
/// returns its stderr.
async fn binary_stderr(log_format: &str) -> String {
    let mut child = Command::new(BIN)
        .args(["--port", "0", "--log-format", log_format])
        .args([
            "--api-key",
            &format!("{KEY_A}={MERCHANT}"),
            "--api-key",
            KEY_OPEN,
        ])
        .env("RUST_LOG", "trace")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("banner");
    let base = line
        .trim_end()
        .strip_prefix("listening on ")
        .expect("banner")
        .to_owned();
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
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    let output = child.wait_with_output().expect("exit");
    assert!(output.status.success(), "{:?}", output.status);
    String::from_utf8_lossy(&output.stderr).into_owned()
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
