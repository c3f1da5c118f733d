//! Issue 34's messages, each pinned as the CLI now says it. What each said
//! before is in the comment above it.

use payments_mock_server::MockServer;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer as Stub, ResponseTemplate};

use crate::common::{MERCHANT, Sandbox, run, snapshot_settings, stderr, stdout};

fn initiate(sandbox: &Sandbox, base_url: &str, product: &str) -> assert_cmd::Command {
    let mut cmd = sandbox.payments();
    cmd.args(["--base-url", base_url, "--merchant-id", MERCHANT])
        .args(["initiate", "--reference-no", "R1", "--amount", "1"])
        .args(["--product", product, "--store-id", "S1", "--payer-id", "P"]);
    cmd
}

/// One section per message: exit code and stderr.
fn section(transcript: &mut String, name: &str, assert: &assert_cmd::assert::Assert) {
    let code = assert.get_output().status.code().unwrap_or(-1);
    transcript.push_str(&format!("## {name}: exit {code}\n{}\n", stderr(assert)));
}

fn settings(sandbox: &Sandbox) -> insta::Settings {
    let mut settings = snapshot_settings();
    settings.add_filter(r"request id [0-9a-f-]{36}", "request id [REQUEST-ID]");
    settings.add_filter(&sandbox.path().display().to_string(), "[SANDBOX]");
    settings
}

#[tokio::test(flavor = "multi_thread")]
async fn each_message_names_the_flag_and_says_what_to_do() {
    let server = MockServer::start().await;
    let base = server.base_url();
    let sandbox = Sandbox::new();
    let mut transcript = String::new();

    // Before: `error: invalid request: productCode must be 1-32 characters
    // of A-Z, 0-9, _ and -`, then (exit 2, nothing sent) `--product 'topup':
    // product codes are upper case, e.g. TOPUP`: the mock's rule, applied
    // to every service. Now the service decides: the mock refuses it
    // itself, and the CLI adds its products and the likely one.
    let mut cmd = initiate(&sandbox, &base, "topup");
    cmd.args(["-o", "table"]);
    let assert = run(cmd).await.code(1);
    section(
        &mut transcript,
        "--product topup (the mock's codes are upper case)",
        &assert,
    );

    // Before: `error: initiate failed: VALIDATION_ERROR (HTTP 400):
    // productCode NOPE is not offered (request id ...)`.
    let mut cmd = initiate(&sandbox, &base, "NOPE");
    cmd.args(["-o", "table"]);
    let assert = run(cmd).await.code(1);
    section(
        &mut transcript,
        "--product NOPE (the mock publishes its products)",
        &assert,
    );

    // Before: `error: invalid value 'nope' for '--merchant-id <UUID>':
    // invalid character: found `n` at 0`, then `For more information, try
    // '--help'.`
    let mut cmd = sandbox.payments();
    cmd.args(["--base-url", &base, "--merchant-id", "nope", "status", "x"]);
    let assert = run(cmd).await.code(2);
    section(&mut transcript, "--merchant-id nope", &assert);

    let mut cmd = sandbox.payments();
    cmd.env("PAYMENTS_MERCHANT_ID", "nope")
        .args(["--base-url", &base, "status", "x"]);
    let assert = run(cmd).await.code(2);
    section(&mut transcript, "PAYMENTS_MERCHANT_ID=nope", &assert);

    // Before: the 50 KB value whole on stderr (50,143 bytes).
    let extra = format!("{{{}", "a".repeat(50_000));
    let mut cmd = initiate(&sandbox, &base, "TOPUP");
    cmd.args(["--extra", &extra]);
    let assert = run(cmd).await.code(2);
    let err = stderr(&assert);
    assert!(err.len() < 400, "{} bytes on stderr", err.len());
    assert_eq!(err.lines().count(), 1, "{err}");
    section(&mut transcript, "a 50 KB --extra that is not JSON", &assert);

    // Before: `error: --reference-no needs a value: it must be one of `
    // (clap lists no valid values for a free-text flag).
    let mut cmd = sandbox.payments();
    cmd.args(["--base-url", &base, "status", "--reference-no"]);
    let assert = run(cmd).await.code(2);
    section(&mut transcript, "--reference-no without its value", &assert);

    settings(&sandbox).bind(|| insta::assert_snapshot!("messages_flags", transcript));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unknown_product_without_a_published_list_says_whom_to_ask() {
    let stub = Stub::start().await;
    Mock::given(method("POST"))
        .and(path("/api/payments/initiate"))
        .respond_with(ResponseTemplate::new(400).set_body_raw(
            r#"{"isSuccess":false,"errorCode":"VALIDATION_ERROR","message":"productCode NOPE is not offered","data":null}"#,
            "application/json",
        ))
        .mount(&stub)
        .await;
    let sandbox = Sandbox::new();
    let assert = run(initiate(&sandbox, &stub.uri(), "NOPE")).await.code(1);
    let err = stderr(&assert);
    assert!(
        err.contains(
            "--product 'NOPE': the service does not publish its products; ask your payment provider"
        ),
        "{err}"
    );
    assert!(
        stdout(&assert).contains("VALIDATION_ERROR"),
        "json still shows the envelope"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn unselected_profiles_are_named_with_how_to_pick_one() {
    let sandbox = Sandbox::new();
    let mut transcript = String::new();
    // Before: `error: no service URL: pass --base-url URL, set
    // PAYMENTS_BASE_URL, or add base_url to a profile in .../config.toml`,
    // although the file's one profile has a base_url.
    sandbox.write_config("[profiles.staging]\nbase_url = \"http://127.0.0.1:9\"\n");
    let assert = sandbox.payments().args(["status", "x"]).assert().code(2);
    section(&mut transcript, "one profile, not selected", &assert);

    sandbox.write_config(
        "[profiles.staging]\nbase_url = \"http://127.0.0.1:9\"\n\
         [profiles.prod]\nbase_url = \"http://127.0.0.1:9\"\n",
    );
    let assert = sandbox.payments().args(["status", "x"]).assert().code(2);
    section(&mut transcript, "two profiles, none selected", &assert);

    let assert = sandbox
        .payments()
        .args(["--base-url", "http://127.0.0.1:9"])
        .args([
            "initiate",
            "--reference-no",
            "R",
            "--amount",
            "1",
            "--product",
            "TOPUP",
        ])
        .args(["--store-id", "S1"])
        .assert()
        .code(2);
    section(
        &mut transcript,
        "no merchant, profiles not selected",
        &assert,
    );
    settings(&sandbox).bind(|| insta::assert_snapshot!("messages_profiles", transcript));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_503s_advice_is_said_once() {
    let stub = Stub::start().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(503).set_body_raw(
            r#"{"isSuccess":false,"errorCode":"STORE_UNAVAILABLE","message":"the store cannot reach its database (connection refused); retry later","data":null}"#,
            "application/json",
        ))
        .mount(&stub)
        .await;
    let sandbox = Sandbox::new();
    let mut cmd = sandbox.payments();
    cmd.args(["--base-url", &stub.uri(), "--retries", "0", "-o", "table"])
        .args(["status", "01937e1c-0000-7000-8000-000000000000"]);
    let assert = run(cmd).await.code(4);
    // Before: `...; retry later; the service may be having trouble; try
    // again later (request id ...)`.
    let err = stderr(&assert);
    assert_eq!(err.matches("later").count(), 1, "{err}");
    let mut settings = settings(&sandbox);
    settings.add_filter(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT");
    settings.bind(|| insta::assert_snapshot!("messages_503", err));
}
