//! Redirect-based payments from the command line (CONTRACT section 13): the
//! payment page on its own line after `confirm`, `verify-return` with its
//! exit codes, and `status --wait` waiting through `CONFIRMED`.

use std::time::Duration;

use payments_mock_server::{MockServer, PayerAction};
use predicates::str::contains;

use crate::common::{MERCHANT, Sandbox, run, snapshot_settings, stderr, stdout};

/// Initiates ONLINEBANKING through the CLI; the transaction id.
async fn initiate_online_banking(sandbox: &Sandbox, base: &str, reference: &str) -> String {
    let mut cmd = sandbox.payments();
    cmd.args(["--base-url", base, "--merchant-id", MERCHANT, "-o", "json"])
        .args(["initiate", "--reference-no", reference, "--amount", "49.90"])
        .args(["--product", "ONLINEBANKING", "--store-id", "S1"])
        .args(["--return-url", "https://shop.example/back?order=17"]);
    let assert = run(cmd).await.success();
    let envelope: serde_json::Value =
        serde_json::from_str(stdout(&assert).trim()).expect("one envelope");
    envelope["data"]["transactionId"]
        .as_str()
        .expect("an id")
        .to_owned()
}

fn confirm_cmd(sandbox: &Sandbox, base: &str, id: &str, reference: &str) -> assert_cmd::Command {
    let mut cmd = sandbox.payments();
    cmd.args([
        "--base-url",
        base,
        "confirm",
        id,
        "--reference-no",
        reference,
    ]);
    cmd
}

fn verify_cmd(sandbox: &Sandbox, base: &str, url: &str) -> assert_cmd::Command {
    let mut cmd = sandbox.payments();
    cmd.args(["--base-url", base, "verify-return", url]);
    cmd
}

fn settings() -> insta::Settings {
    let mut settings = snapshot_settings();
    settings.add_filter(r"PRV-[0-9A-F]{32}", "PRV-[PROVIDER-REF]");
    settings.add_filter(r"/pay/[A-Za-z0-9]{32}", "/pay/[TOKEN]");
    settings
}

#[tokio::test(flavor = "multi_thread")]
async fn confirm_shows_the_payment_url_on_its_own_line() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let base = server.base_url();
    let id = initiate_online_banking(&sandbox, &base, "ORDER-17").await;
    let mut cmd = confirm_cmd(&sandbox, &base, &id, "ORDER-17");
    cmd.args(["-o", "table"]);
    let assert = run(cmd).await.success();
    let out = stdout(&assert);
    let page = server.payment_url(&id).await.expect("a payment page");
    let line = out
        .lines()
        .find(|l| l.starts_with("Payment URL"))
        .expect("a Payment URL line");
    assert_eq!(line.split_whitespace().last(), Some(page.as_str()), "{out}");
    settings().bind(|| insta::assert_snapshot!("confirm_redirect_table", out));
    // Other products have no such line.
    let topup = crate::common::initiate(&sandbox, &base, "T-1", "TOPUP").await;
    let mut cmd = confirm_cmd(&sandbox, &base, &topup, "T-1");
    cmd.args(["-o", "table"]);
    let out = stdout(&run(cmd).await.success());
    assert!(!out.contains("Payment URL"), "{out}");
}

/// A confirmed ONLINEBANKING transaction with the payer's decision made;
/// the id and the return address.
async fn decided(server: &MockServer, sandbox: &Sandbox, action: PayerAction) -> (String, String) {
    let base = server.base_url();
    let id = initiate_online_banking(sandbox, &base, "INV/2026/17").await;
    run(confirm_cmd(sandbox, &base, &id, "INV/2026/17"))
        .await
        .success();
    let outcome = server.payer(&id, action).await.expect("the payer decides");
    (id, outcome.redirect_to)
}

#[tokio::test(flavor = "multi_thread")]
async fn verify_return_prints_the_services_status_and_exits_0_when_it_agrees() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let (id, address) = decided(&server, &sandbox, PayerAction::Pay).await;
    let mut cmd = verify_cmd(&sandbox, &server.base_url(), &address);
    cmd.args(["-o", "table"]);
    let assert = run(cmd).await.success();
    let out = stdout(&assert);
    assert!(out.contains(&id) && out.contains("SUCCESSFUL"), "{out}");
    settings().bind(|| insta::assert_snapshot!("verify_return_table", out));
    // json: the service's envelope as received.
    let mut cmd = verify_cmd(&sandbox, &server.base_url(), &address);
    cmd.args(["-o", "json"]);
    let out = stdout(&run(cmd).await.success());
    let envelope: serde_json::Value = serde_json::from_str(out.trim()).expect("one envelope");
    assert_eq!(envelope["data"]["status"], "SUCCESSFUL");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_forged_status_exits_1_and_prints_the_services() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let (_, address) = decided(&server, &sandbox, PayerAction::Decline).await;
    let forged = address.replace("status=FAILED", "status=SUCCESSFUL");
    let assert = run(verify_cmd(&sandbox, &server.base_url(), &forged))
        .await
        .code(1);
    let envelope: serde_json::Value =
        serde_json::from_str(stdout(&assert).trim()).expect("the service's envelope");
    assert_eq!(envelope["data"]["status"], "FAILED");
    assert_eq!(envelope["data"]["message"], "declined by bank");
    let err = stderr(&assert);
    assert!(
        err.contains("says status SUCCESSFUL, but the service says FAILED"),
        "{err}"
    );
    settings().bind(|| insta::assert_snapshot!("verify_return_forged_status_stderr", err));
}

#[tokio::test(flavor = "multi_thread")]
async fn another_reference_exits_1() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let (id, address) = decided(&server, &sandbox, PayerAction::Pay).await;
    let forged = address.replace("referenceNo=INV%2F2026%2F17", "referenceNo=INV-9");
    let mut cmd = verify_cmd(&sandbox, &server.base_url(), &forged);
    cmd.args(["-o", "table"]);
    let assert = run(cmd).await.code(1);
    assert!(stdout(&assert).contains(&id), "the service's row is shown");
    let err = stderr(&assert);
    assert!(
        err.contains("names referenceNo \"INV-9\"") && err.contains("\"INV/2026/17\""),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_address_without_its_parameters_is_a_usage_error() {
    let sandbox = Sandbox::new();
    let base = crate::common::closed_port_url();
    for (address, says) in [
        (
            "https://shop.example/back?order=17",
            "transactionId is missing",
        ),
        (
            "https://shop.example/back?transactionId=x&referenceNo=y",
            "status is missing",
        ),
        ("shop.example/back", "not an absolute URL"),
        ("", "not an absolute URL"),
    ] {
        run(verify_cmd(&sandbox, &base, address))
            .await
            .code(2)
            .stderr(contains(says));
    }
    let huge = format!("https://shop.example/back?pad={}", "x".repeat(33_000));
    run(verify_cmd(&sandbox, &base, &huge))
        .await
        .code(2)
        .stderr(contains("more than the 32768"));
    // Terminal control characters in the address are not replayed.
    let hostile = "https://shop.example/back?transactionId=\u{1b}[2J&referenceNo=&status=x";
    let assert = run(verify_cmd(&sandbox, &base, hostile)).await.code(2);
    assert!(!stderr(&assert).contains('\u{1b}'));
    // A well-formed address whose id holds them: the call's message shows
    // them escaped (a forged address reached the failure message raw).
    let hostile = "https://shop.example/back?transactionId=%1B%5B2Jabc&referenceNo=a&status=b";
    let assert = run(verify_cmd(&sandbox, &base, hostile)).await.code(4);
    let err = stderr(&assert);
    assert!(!err.contains('\u{1b}'), "{err:?}");
    assert!(err.contains("verify-return of \\u{1b}[2Jabc"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unknown_transaction_exits_3() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let address = "https://shop.example/back?transactionId=01930000-0000-7000-8000-000000000000&referenceNo=R&status=SUCCESSFUL";
    run(verify_cmd(&sandbox, &server.base_url(), address))
        .await
        .code(3)
        .stderr(contains("TRANSACTION_NOT_FOUND"));
}

#[tokio::test(flavor = "multi_thread")]
async fn wait_waits_through_confirmed_until_the_payer_decides() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let base = server.base_url();
    let id = initiate_online_banking(&sandbox, &base, "WAIT-1").await;
    run(confirm_cmd(&sandbox, &base, &id, "WAIT-1"))
        .await
        .success();
    let reads_before = server.answered();

    let mut cmd = sandbox.payments();
    cmd.args([
        "--base-url",
        &base,
        "status",
        &id,
        "--wait",
        "--wait-timeout",
        "60",
    ]);
    let mut waiting = tokio::spawn(run(cmd));
    // Once the command has read CONFIRMED (twice: its first read and a
    // poll), the payer pays. The command is another process, so there is
    // no clock to move: the test waits for the mock to have answered both
    // reads, or for a command that stopped early (which the assertion then
    // reports).
    tokio::select! {
        () = server.answered_reach(reads_before + 2) => {}
        _ = &mut waiting => {}
    }
    assert!(!waiting.is_finished(), "CONFIRMED is not final");
    server.payer(&id, PayerAction::Pay).await.expect("decided");
    let assert = waiting.await.expect("the command ran").success();
    let envelope: serde_json::Value =
        serde_json::from_str(stdout(&assert).trim()).expect("one envelope");
    assert_eq!(envelope["data"]["status"], "SUCCESSFUL");
}

#[tokio::test(flavor = "multi_thread")]
async fn wait_ends_failed_when_the_payer_window_passes() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let base = server.base_url();
    let id = initiate_online_banking(&sandbox, &base, "WAIT-2").await;
    run(confirm_cmd(&sandbox, &base, &id, "WAIT-2"))
        .await
        .success();
    let reads_before = server.answered();
    let mut waiting = {
        let mut cmd = sandbox.payments();
        cmd.args(["--base-url", &base, "-o", "table", "status", &id, "--wait"]);
        tokio::spawn(run(cmd))
    };
    // The window ends only after the command has read CONFIRMED, so the
    // test shows it waiting rather than reading FAILED at once.
    tokio::select! {
        () = server.answered_reach(reads_before + 1) => {}
        _ = &mut waiting => {}
    }
    assert!(!waiting.is_finished(), "CONFIRMED is not final");
    server.advance_clock(Duration::from_secs(600)).await;
    waiting
        .await
        .expect("the command ran")
        .success()
        .stdout(contains("FAILED"))
        .stdout(contains("payer did not complete the payment"));
}

/// `verify-return` and `confirm` against wiremock stubs: answers fixed to
/// the byte, so every exit code and message can be pinned.
mod stubbed {
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer as Stub, ResponseTemplate};

    use crate::common::{Sandbox, run, stderr, stdout};

    const PAID: &str = "01937e1c-0000-7000-8000-0000000000a1";
    const DECLINED: &str = "01937e1c-0000-7000-8000-0000000000a2";
    const UNKNOWN: &str = "01937e1c-0000-7000-8000-0000000000a3";
    const BROKEN: &str = "01937e1c-0000-7000-8000-0000000000a4";
    const PAGE: &str = "http://127.0.0.1:8080/pay/aZ09aZ09aZ09aZ09aZ09aZ09aZ09aZ09";

    fn status_envelope(id: &str, reference: &str, status: &str, message: &str) -> String {
        format!(
            r#"{{"isSuccess":true,"errorCode":null,"message":null,"data":{{"transactionId":"{id}","referenceNo":"{reference}","status":"{status}","amount":49.90,"productCode":"ONLINEBANKING","createdAt":"2026-11-22T08:15:30.123Z","lastModifiedAt":"2026-11-22T08:16:00.000Z","providerReference":"PRV-1","message":{message},"extraProperties":"{{\"paymentUrl\":\"{PAGE}\"}}"}}}}"#
        )
    }

    fn error_envelope(code: &str, message: &str) -> String {
        format!(r#"{{"isSuccess":false,"errorCode":"{code}","message":"{message}","data":null}}"#)
    }

    async fn answer(stub: &Stub, id: &str, status: u16, body: String) {
        Mock::given(method("GET"))
            .and(path(format!("/api/payments/{id}/status")))
            .respond_with(ResponseTemplate::new(status).set_body_raw(body, "application/json"))
            .mount(stub)
            .await;
    }

    /// One stub for every case: a paid and a declined payment, an id the
    /// service does not know, and one whose reads fail.
    async fn service() -> Stub {
        let stub = Stub::start().await;
        answer(
            &stub,
            PAID,
            200,
            status_envelope(PAID, "INV/17", "SUCCESSFUL", "null"),
        )
        .await;
        let declined = status_envelope(DECLINED, "INV/18", "FAILED", r#""declined by bank""#);
        answer(&stub, DECLINED, 200, declined).await;
        let unknown = error_envelope("TRANSACTION_NOT_FOUND", "no transaction");
        answer(&stub, UNKNOWN, 404, unknown).await;
        answer(&stub, BROKEN, 500, error_envelope("INTERNAL_ERROR", "boom")).await;
        stub
    }

    fn back(id: &str, reference: &str, status: &str) -> String {
        format!(
            "https://shop.example/back?order=17&transactionId={id}&referenceNo={reference}&status={status}#top"
        )
    }

    async fn verify(stub: &Stub, output: &str, address: &str) -> assert_cmd::assert::Assert {
        let mut cmd = Sandbox::new().payments();
        cmd.args(["--base-url", &stub.uri(), "--retries", "0", "-o", output])
            .args(["verify-return", address]);
        run(cmd).await
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn every_exit_code_of_verify_return_is_pinned() {
        let stub = service().await;
        let cases = [
            ("agrees", back(PAID, "INV%2F17", "SUCCESSFUL")),
            ("forged status", back(DECLINED, "INV%2F18", "SUCCESSFUL")),
            ("another reference", back(PAID, "INV-99", "SUCCESSFUL")),
            (
                "no parameters",
                "https://shop.example/back?order=17".to_owned(),
            ),
            ("unknown transaction", back(UNKNOWN, "R", "SUCCESSFUL")),
            ("service failing", back(BROKEN, "R", "SUCCESSFUL")),
        ];
        let mut transcript = String::new();
        for (case, address) in &cases {
            let assert = verify(&stub, "table", address).await;
            let code = assert.get_output().status.code().expect("exited");
            transcript.push_str(&format!(
                "## {case}: exit {code}\n--- stdout\n{}--- stderr\n{}\n",
                stdout(&assert),
                stderr(&assert)
            ));
        }
        let mut settings = insta::Settings::clone_current();
        settings.set_snapshot_path("../snapshots");
        settings.set_prepend_module_to_snapshot(false);
        settings.add_filter(
            r"request id [0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
            "request id [REQUEST-ID]",
        );
        settings.add_filter(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT");
        settings.bind(|| insta::assert_snapshot!("verify_return_exit_codes", transcript));
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn json_prints_the_services_envelope_as_received_whatever_the_verdict() {
        let stub = service().await;
        for (address, code) in [
            (back(PAID, "INV%2F17", "SUCCESSFUL"), 0),
            (back(DECLINED, "INV%2F18", "SUCCESSFUL"), 1),
            (back(PAID, "INV-99", "SUCCESSFUL"), 1),
        ] {
            let assert = verify(&stub, "json", &address).await.code(code);
            let id = if address.contains(PAID) {
                PAID
            } else {
                DECLINED
            };
            let expected = if id == PAID {
                status_envelope(PAID, "INV/17", "SUCCESSFUL", "null")
            } else {
                status_envelope(DECLINED, "INV/18", "FAILED", r#""declined by bank""#)
            };
            assert_eq!(stdout(&assert), format!("{expected}\n"), "{address}");
        }
        let assert = verify(&stub, "json", &back(UNKNOWN, "R", "FAILED"))
            .await
            .code(3);
        assert_eq!(
            stdout(&assert),
            format!(
                "{}\n",
                error_envelope("TRANSACTION_NOT_FOUND", "no transaction")
            )
        );
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_return_url_with_its_own_parameters_is_checked_by_the_appended_ones() {
        let stub = service().await;
        // The merchant's returnUrl had transactionId, status and referenceNo
        // of its own; the page appended the real three after them.
        let address = format!(
            "https://shop.example/back?transactionId=cart-5&status=new&referenceNo=mine\
             &transactionId={PAID}&referenceNo=INV%2F17&status=SUCCESSFUL#status=FAILED"
        );
        let assert = verify(&stub, "json", &address).await.code(0);
        assert_eq!(
            stdout(&assert),
            format!(
                "{}\n",
                status_envelope(PAID, "INV/17", "SUCCESSFUL", "null")
            )
        );
        let assert = verify(&stub, "table", &address).await.code(0);
        assert!(stdout(&assert).contains(PAID), "{}", stdout(&assert));
    }

    async fn confirmed(extra: &str, output: &str) -> String {
        let stub = Stub::start().await;
        let body = format!(
            r#"{{"isSuccess":true,"errorCode":null,"message":null,"data":{{"transactionId":"{PAID}","referenceNo":"INV/17","status":"CONFIRMED","amount":49.90,"providerReference":"PRV-1","confirmedAt":"2026-11-22T08:16:00.000Z","errorMessage":null,"extraProperties":{extra}}}}}"#
        );
        Mock::given(method("POST"))
            .and(path("/api/payments/confirm"))
            .respond_with(ResponseTemplate::new(200).set_body_raw(body.clone(), "application/json"))
            .mount(&stub)
            .await;
        let mut cmd = Sandbox::new().payments();
        cmd.args(["--base-url", &stub.uri(), "-o", output]).args([
            "confirm",
            PAID,
            "--reference-no",
            "INV/17",
        ]);
        let out = stdout(&run(cmd).await.success());
        if output == "json" {
            assert_eq!(out, format!("{body}\n"), "the envelope as received");
        }
        out
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn confirm_shows_a_payment_url_given_as_a_string_or_an_object_and_nothing_else() {
        let as_string = format!(r#""{{\"paymentUrl\":\"{PAGE}\"}}""#);
        let as_object = format!(r#"{{"paymentUrl":"{PAGE}"}}"#);
        for extra in [&as_string, &as_object] {
            let table = confirmed(extra, "table").await;
            let line = table
                .lines()
                .find(|l| l.starts_with("Payment URL"))
                .unwrap_or_else(|| panic!("a Payment URL line in:\n{table}"));
            assert_eq!(line, format!("Payment URL      {PAGE}"));
            confirmed(extra, "json").await;
        }
        for extra in [
            "null",
            r#""{\"paymentUrl\":\"javascript:alert(1)\"}""#,
            r#"{"paymentUrl":42}"#,
            r#""not json""#,
        ] {
            let table = confirmed(extra, "table").await;
            assert!(!table.contains("Payment URL"), "{extra}:\n{table}");
            confirmed(extra, "json").await;
        }
    }
}
