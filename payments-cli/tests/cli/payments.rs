//! `initiate` and `confirm` against the mock server.

use payments_mock_server::MockServer;
use predicates::str::contains;

use crate::common::{MERCHANT, Sandbox, initiate_cmd, run, snapshot_settings, stderr, stdout};

/// `payments --base-url <base_url> confirm <id> --reference-no <reference>`.
fn confirm_cmd(
    sandbox: &Sandbox,
    base_url: &str,
    id: &str,
    reference: &str,
) -> assert_cmd::Command {
    let mut cmd = sandbox.payments();
    cmd.args(["--base-url", base_url, "confirm", id])
        .args(["--reference-no", reference]);
    cmd
}

#[tokio::test(flavor = "multi_thread")]
async fn initiate_converts_major_units_and_prints_a_table() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let mut cmd = initiate_cmd(&sandbox, &server.base_url(), "INV-1", "TOPUP");
    cmd.args(["-o", "table", "--description", "Airtime", "--country", "MY"])
        .args([
            "--device-id",
            "POS-7",
            "--return-url",
            "https://shop.example/back",
        ])
        .args(["--extra", r#"{"channel":"pos"}"#]);
    let assert = run(cmd).await.success();

    let stored = server.transactions().await;
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].amount_minor, 1050);
    assert_eq!(stored[0].currency_code, "MYR");
    assert_eq!(stored[0].merchant_id.to_string(), MERCHANT);

    snapshot_settings().bind(|| insta::assert_snapshot!("initiate_table", stdout(&assert)));
}

#[tokio::test(flavor = "multi_thread")]
async fn initiate_in_another_currency_uses_its_exponent() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let mut cmd = sandbox.payments();
    cmd.args([
        "--base-url",
        &server.base_url(),
        "--merchant-id",
        MERCHANT,
        "-o",
        "table",
    ])
    .args([
        "initiate",
        "--reference-no",
        "K-1",
        "--amount",
        "1.5",
        "--currency",
        "kwd",
    ])
    .args(["--product", "DECLINED", "--store-id", "S1"]);
    let assert = run(cmd).await.success();
    assert!(stdout(&assert).contains("1.500 KWD"), "{}", stdout(&assert));
    assert_eq!(server.transactions().await[0].amount_minor, 1500);
}

#[tokio::test(flavor = "multi_thread")]
async fn initiate_json_prints_the_envelope_as_received() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let mut cmd = initiate_cmd(&sandbox, &server.base_url(), "INV-2", "TOPUP");
    cmd.args(["-o", "json"])
        .args(["--amount-minor", "1"])
        .args(["--amount", "1"]);
    // --amount and --amount-minor together is a usage error...
    run(cmd).await.code(2);
    // ...and json is one line: the envelope.
    let mut cmd = sandbox.payments();
    cmd.args(["--base-url", &server.base_url(), "--merchant-id", MERCHANT])
        .args([
            "initiate",
            "--reference-no",
            "INV-2",
            "--amount-minor",
            "1050",
        ])
        .args(["--product", "TOPUP", "--store-id", "S1", "--payer-id", "P"]);
    let assert = run(cmd).await.success();
    let out = stdout(&assert);
    assert_eq!(out.lines().count(), 1, "{out}");
    let envelope: serde_json::Value = serde_json::from_str(&out).expect("stdout is JSON");
    assert_eq!(envelope["isSuccess"], true);
    assert_eq!(envelope["data"]["amount"], 1050);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_duplicate_reference_is_a_rejection() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    run(initiate_cmd(&sandbox, &server.base_url(), "DUP", "TOPUP"))
        .await
        .success();
    let mut cmd = initiate_cmd(&sandbox, &server.base_url(), "DUP", "TOPUP");
    cmd.args(["-o", "json"]);
    let assert = run(cmd).await.code(1);
    assert!(
        stdout(&assert).contains("DUPLICATE_REFERENCE_NO"),
        "json shows the envelope"
    );
    let err = stderr(&assert);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("DUPLICATE_REFERENCE_NO") && err.contains("request id"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rule_the_client_checks_is_a_usage_error_before_sending() {
    // Rules the interface document states (an ISO 3166-1 code, a URL); a
    // product code's form is the service's to judge (initiate_limits.rs).
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let mut cmd = initiate_cmd(&sandbox, &server.base_url(), "BAD", "TOPUP");
    cmd.args(["--country", "Malaysia", "--return-url", "/back"]);
    let assert = run(cmd).await.code(2);
    let err = stderr(&assert);
    assert!(
        err.contains("--country 'Malaysia': must be")
            && err.contains("--return-url '/back': must be"),
        "the flags are named: {err}"
    );
    assert!(!err.contains("countryCode"), "not the JSON field: {err}");
    assert!(server.transactions().await.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn confirm_prints_the_outcome() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let id = crate::common::initiate(&sandbox, &server.base_url(), "INV-3", "TOPUP").await;
    let mut cmd = sandbox.payments();
    cmd.args([
        "--base-url",
        &server.base_url(),
        "-o",
        "table",
        "confirm",
        &id,
    ])
    .args(["--reference-no", "INV-3", "--extra", r#"{"note":"ok"}"#]);
    let assert = run(cmd).await.success();
    assert!(stdout(&assert).contains("SUCCESSFUL"));
    let settings = {
        let mut settings = snapshot_settings();
        settings.add_filter(r"Provider ref\s+\S+", "Provider ref     [PROVIDER-REF]");
        settings
    };
    settings.bind(|| insta::assert_snapshot!("confirm_table", stdout(&assert)));
}

#[tokio::test(flavor = "multi_thread")]
async fn confirm_with_an_otp_and_a_declined_payment_still_exit_0() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let base = server.base_url();
    let wallet = crate::common::initiate(&sandbox, &base, "W-1", "EWALLET").await;
    let mut cmd = sandbox.payments();
    cmd.args(["--base-url", &base, "-o", "json", "confirm", &wallet])
        .args(["--reference-no", "W-1", "--code", "123456"]);
    run(cmd).await.success().stdout(contains("\"SUCCESSFUL\""));

    let declined = crate::common::initiate(&sandbox, &base, "D-1", "DECLINED").await;
    let mut cmd = sandbox.payments();
    cmd.args(["--base-url", &base, "-o", "table", "confirm", &declined])
        .args(["--reference-no", "D-1"]);
    run(cmd)
        .await
        .success()
        .stdout(contains("FAILED"))
        .stdout(contains("declined by provider"));
}

/// Issue 40: an e-wallet confirm without `--code` said only
/// `confirmationCode is required for product EWALLET`; it names the flag.
#[tokio::test(flavor = "multi_thread")]
async fn an_ewallet_confirm_without_a_code_names_the_code_flag() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let base = server.base_url();
    let wallet = crate::common::initiate(&sandbox, &base, "W-2", "EWALLET").await;
    let cmd = confirm_cmd(&sandbox, &base, &wallet, "W-2");
    let assert = run(cmd).await.code(1);
    let err = crate::common::stderr(&assert);
    assert!(
        err.contains(
            "confirmationCode is required for product EWALLET; give the payer's code (the OTP) with --code OTP"
        ),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn confirming_an_unknown_transaction_exits_3_despite_http_400() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let cmd = confirm_cmd(
        &sandbox,
        &server.base_url(),
        "01937e1c-0000-7000-8000-000000000000",
        "NOPE",
    );
    run(cmd)
        .await
        .code(3)
        .stderr(contains("TRANSACTION_NOT_FOUND"));
}

#[tokio::test(flavor = "multi_thread")]
async fn confirming_twice_is_a_rejection() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let base = server.base_url();
    let id = crate::common::initiate(&sandbox, &base, "TWICE", "TOPUP").await;
    crate::common::confirm(&sandbox, &base, &id, "TWICE").await;
    let cmd = confirm_cmd(&sandbox, &base, &id, "TWICE");
    run(cmd)
        .await
        .code(1)
        .stderr(contains("TRANSACTION_ALREADY_CONFIRMED"));
}

/// `-v` prints each call's trace id (CONTRACT section 21), and the client
/// sent it as the W3C `traceparent`: the mock's journal entry of the call
/// names the same trace. Without `-v`, no `traceparent` is sent.
#[tokio::test(flavor = "multi_thread")]
async fn verbose_prints_each_calls_trace_id_the_service_saw() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let mut cmd = initiate_cmd(&sandbox, &server.base_url(), "TRACE-V", "TOPUP");
    cmd.arg("-v");
    let assert = run(cmd).await.success();
    let err = stderr(&assert);
    let trace = err
        .lines()
        .find_map(|line| {
            line.strip_prefix("< HTTP 200")
                .and_then(|rest| rest.split(", trace ").nth(1))
        })
        .unwrap_or_else(|| panic!("a response line with its trace id: {err}"))
        .trim()
        .to_owned();
    assert_eq!(trace.len(), 32, "{trace}");
    assert!(trace.bytes().all(|b| b.is_ascii_hexdigit()), "{trace}");
    let journal = server.requests().await;
    let sent = journal
        .last()
        .and_then(|entry| {
            entry
                .headers
                .iter()
                .find(|(name, _)| name == "traceparent")
                .map(|(_, value)| value.clone())
        })
        .unwrap_or_else(|| panic!("the initiate carried a traceparent: {journal:?}"));
    assert_eq!(sent.split('-').nth(1), Some(trace.as_str()), "{sent}");

    // Without -v: no trace, no header.
    let assert = run(initiate_cmd(
        &sandbox,
        &server.base_url(),
        "TRACE-Q",
        "TOPUP",
    ))
    .await
    .success();
    assert!(!stderr(&assert).contains("trace"), "{}", stderr(&assert));
    let journal = server.requests().await;
    let last = journal.last().expect("the second initiate");
    assert!(
        !last.headers.iter().any(|(name, _)| name == "traceparent"),
        "{last:?}"
    );
}
