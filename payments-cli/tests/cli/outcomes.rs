//! Answers that leave a call's outcome open, and what the CLI says of them:
//! exit 4 or the reconciled success, never exit 1 ("rejected") for a call
//! the service may have carried out; a read-only look-up is never
//! "ambiguous"; the notes and errors say what happened.

use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer as Stub, ResponseTemplate};

use crate::common::{MERCHANT, Sandbox, run, stderr, stdout};

const TX: &str = "01937e1c-0000-7000-8000-0000000000d1";

fn json(status: u16, body: impl Into<String>) -> ResponseTemplate {
    ResponseTemplate::new(status).set_body_raw(body.into(), "application/json")
}

fn failure(code: &str, message: &str) -> String {
    format!(r#"{{"isSuccess":false,"errorCode":"{code}","message":"{message}","data":null}}"#)
}

fn stored(reference: &str, status: &str) -> String {
    format!(
        r#"{{"isSuccess":true,"errorCode":null,"message":null,"data":{{"transactionId":"{TX}","referenceNo":"{reference}","status":"{status}","amount":10.50,"productCode":"TOPUP","createdAt":"2026-11-29T08:00:00.000Z","lastModifiedAt":null,"providerReference":null,"message":null,"extraProperties":null}}}}"#
    )
}

/// The first POST to `endpoint` answered `first`, every later one `then`.
async fn post_answers(
    stub: &Stub,
    endpoint: &str,
    first: ResponseTemplate,
    then: ResponseTemplate,
) {
    Mock::given(method("POST"))
        .and(path(format!("/api/payments/{endpoint}")))
        .respond_with(first)
        .up_to_n_times(1)
        .mount(stub)
        .await;
    Mock::given(method("POST"))
        .and(path(format!("/api/payments/{endpoint}")))
        .respond_with(then)
        .mount(stub)
        .await;
}

fn initiate(sandbox: &Sandbox, base_url: &str, extra: &[&str]) -> assert_cmd::Command {
    let mut cmd = sandbox.payments();
    cmd.args([
        "--base-url",
        base_url,
        "--merchant-id",
        MERCHANT,
        "-o",
        "json",
    ])
    .args(extra)
    .args(["initiate", "--reference-no", "RC-1", "--amount", "10.50"])
    .args(["--product", "TOPUP", "--store-id", "S1", "--payer-id", "P1"]);
    cmd
}

async fn posts(stub: &Stub, endpoint: &str) -> usize {
    let wanted = format!("/api/payments/{endpoint}");
    stub.received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .filter(|request| request.url.path() == wanted)
        .count()
}

/// `INTERNAL_ERROR` on HTTP 200 is the service's "unexpected server error;
/// the caller may retry" (CONTRACT section 11: the envelope is the truth):
/// retried and reconciled like a 500. It exited 1 ("the service rejected
/// a call") after one attempt, while the service held the payment.
#[tokio::test(flavor = "multi_thread")]
async fn an_internal_error_on_http_200_is_retried_and_reconciled_not_rejected() {
    let stub = Stub::start().await;
    let internal = json(200, failure("INTERNAL_ERROR", "oops"));
    let duplicate = json(
        400,
        failure("DUPLICATE_REFERENCE_NO", "referenceNo RC-1 is used"),
    );
    post_answers(&stub, "initiate", internal, duplicate).await;
    Mock::given(method("GET"))
        .and(path("/api/payments/reference/RC-1/status"))
        .respond_with(json(200, stored("RC-1", "INITIATED")))
        .mount(&stub)
        .await;
    let sandbox = Sandbox::new();
    let assert = run(initiate(&sandbox, &stub.uri(), &[])).await.success();
    let line: serde_json::Value = serde_json::from_str(stdout(&assert).trim()).expect("json");
    assert_eq!(line["reconciled"], true, "{line}");
    assert_eq!(line["data"]["transactionId"], TX, "{line}");
    assert_eq!(posts(&stub, "initiate").await, 2, "one retry, no third");

    // With no retry left, the outcome stays open: exit 4 and the advice to
    // look before trying again, never 1.
    let stub = Stub::start().await;
    Mock::given(method("POST"))
        .and(path("/api/payments/confirm"))
        .respond_with(json(200, failure("INTERNAL_ERROR", "oops")))
        .mount(&stub)
        .await;
    let mut cmd = sandbox.payments();
    cmd.args(["--base-url", &stub.uri(), "--retries", "0", "-o", "json"])
        .args(["confirm", TX, "--reference-no", "RC-1"]);
    let assert = run(cmd).await.code(4);
    let err = stderr(&assert);
    assert!(err.contains("may have carried this out"), "{err}");
}

/// A gateway's 408 (or 499) says it gave up waiting, whatever its body: with
/// an envelope it exited 1 with no advice, with a page 4 with the advice.
#[tokio::test(flavor = "multi_thread")]
async fn a_gateways_408_with_an_envelope_exits_4_like_one_with_a_page() {
    let sandbox = Sandbox::new();
    for answer in [
        json(408, failure("REQUEST_TIMEOUT", "upstream timed out")),
        ResponseTemplate::new(408).set_body_raw("<html>timeout</html>", "text/html"),
        json(499, failure("CLIENT_CLOSED_REQUEST", "gave up")),
    ] {
        let stub = Stub::start().await;
        Mock::given(method("POST"))
            .and(path("/api/payments/initiate"))
            .respond_with(answer)
            .mount(&stub)
            .await;
        let assert = run(initiate(&sandbox, &stub.uri(), &[])).await.code(4);
        let err = stderr(&assert);
        assert!(err.contains("may have carried this out"), "{err}");
        assert_eq!(posts(&stub, "initiate").await, 1, "not retried blindly");
    }
}

/// A look-up changes nothing, so an earlier failed attempt never makes its
/// last answer "ambiguous": a 503 then a 400 `AMBIGUOUS_REFERENCE_NO` is
/// that 400, exit 1 with the `--merchant-id` advice, as on a first attempt.
/// It was exit 4, "an earlier attempt may have been carried out", and no
/// advice.
#[tokio::test(flavor = "multi_thread")]
async fn a_look_up_retried_after_a_503_reports_its_last_answer_with_its_advice() {
    let stub = Stub::start().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(503))
        .up_to_n_times(1)
        .mount(&stub)
        .await;
    let ambiguous = failure("AMBIGUOUS_REFERENCE_NO", "several merchants use it");
    Mock::given(method("GET"))
        .respond_with(json(400, ambiguous))
        .mount(&stub)
        .await;
    let sandbox = Sandbox::new();
    let mut cmd = sandbox.payments();
    cmd.args(["--base-url", &stub.uri(), "-o", "json"])
        .args(["status", "--reference-no", "R1"]);
    let assert = run(cmd).await.code(1);
    let err = stderr(&assert);
    assert!(err.contains("--merchant-id"), "{err}");
    assert!(!err.contains("earlier attempt"), "{err}");
    let requests = stub.received_requests().await.unwrap_or_default();
    assert_eq!(requests.len(), 2, "the 503 was retried");
}

/// One confirm answered 200 with `data: null`, then read back by id: no
/// retry happened, and the note said "a retry found this transaction
/// already confirmed".
#[tokio::test(flavor = "multi_thread")]
async fn a_confirm_read_back_after_an_unreadable_answer_says_so_not_a_retry() {
    let stub = Stub::start().await;
    let unreadable = r#"{"isSuccess":true,"errorCode":null,"message":null,"data":null}"#;
    Mock::given(method("POST"))
        .and(path("/api/payments/confirm"))
        .respond_with(json(200, unreadable))
        .expect(2) // one confirm per run: no retry
        .mount(&stub)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("/api/payments/{TX}/status")))
        .respond_with(json(200, stored("RC-1", "SUCCESSFUL")))
        .mount(&stub)
        .await;
    let sandbox = Sandbox::new();
    for output in ["table", "json"] {
        let mut cmd = sandbox.payments();
        cmd.args(["--base-url", &stub.uri(), "-o", output]).args([
            "confirm",
            TX,
            "--reference-no",
            "RC-1",
        ]);
        let assert = run(cmd).await.success();
        let err = stderr(&assert);
        assert!(err.contains("could not be read"), "{err}");
        assert!(err.contains("it was confirmed once"), "{err}");
        assert!(!err.contains("retry"), "{err}");
        if output == "json" {
            let line = stdout(&assert);
            assert!(!line.contains("retry"), "{line}");
        }
    }
}

/// An initiate whose one answer was unreadable and whose read-back failed:
/// the error said "could not reconcile a retried call … and reading the
/// transaction back failed", neither the read-back's reason nor that no
/// retry happened. The reason is said, with the run's secrets hidden.
#[tokio::test(flavor = "multi_thread")]
async fn a_failed_read_back_says_why_and_claims_no_retry() {
    const KEY: &str = "sk_test_CANARY_4711";
    let stub = Stub::start().await;
    let unreadable = r#"{"isSuccess":true,"errorCode":null,"message":null,"data":null}"#;
    Mock::given(method("POST"))
        .and(path("/api/payments/initiate"))
        .respond_with(json(200, unreadable))
        .mount(&stub)
        .await;
    let not_yet = failure(
        "TRANSACTION_NOT_FOUND",
        &format!("not visible yet to {KEY}"),
    );
    Mock::given(method("GET"))
        .and(path("/api/payments/reference/RC-1/status"))
        .respond_with(json(404, not_yet))
        .mount(&stub)
        .await;
    let sandbox = Sandbox::new();
    let assert = run(initiate(&sandbox, &stub.uri(), &["--api-key", KEY]))
        .await
        .code(4);
    let err = stderr(&assert);
    assert!(
        err.contains("TRANSACTION_NOT_FOUND (HTTP 404): not visible yet"),
        "{err}"
    );
    assert!(!err.contains("retried"), "{err}");
    assert!(!err.contains(KEY) && err.contains("[REDACTED]"), "{err}");
    assert!(err.contains("may have carried this out"), "{err}");
    assert_eq!(stdout(&assert), "");
}
