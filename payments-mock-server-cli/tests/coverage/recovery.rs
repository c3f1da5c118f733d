//! A fault that commits (`commit-then-error`, `commit-then-reset`,
//! `answer-other`) is recovered when the application comes back for its
//! transaction: a status read of it answered 200, by id or by reference,
//! or a retried initiate answered 400 `DUPLICATE_REFERENCE_NO` for the same
//! merchant and reference. Over real connections (a reset closes one).

use payments_mock_server::{Fault, MockServer};
use serde_json::{Value, json};

use crate::common::{MERCHANT, OTHER_MERCHANT, initiate_body};

/// The application under test, as far as these tests need one.
struct App {
    http: reqwest::Client,
    base: String,
}

impl App {
    fn of(server: &MockServer) -> Self {
        Self {
            http: reqwest::Client::new(),
            base: server.base_url(),
        }
    }

    /// Sends a request; `None` when the connection closed without an
    /// answer.
    async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
        fault: Option<&str>,
    ) -> Option<(u16, Value)> {
        let mut request = self.http.request(method, format!("{}{path}", self.base));
        if let Some(body) = body {
            request = request.json(body);
        }
        if let Some(fault) = fault {
            request = request.header("x-mock-fault", fault);
        }
        let response = request.send().await.ok()?;
        let status = response.status().as_u16();
        let body = response.json().await.unwrap_or(Value::Null);
        Some((status, body))
    }

    async fn initiate(&self, reference: &str, fault: Option<&str>) -> Option<(u16, Value)> {
        let body = initiate_body(reference, "TOPUP");
        self.send(
            reqwest::Method::POST,
            "/api/payments/initiate",
            Some(&body),
            fault,
        )
        .await
    }

    async fn read(&self, path: &str) -> u16 {
        self.send(reqwest::Method::GET, path, None, None)
            .await
            .expect("an answer")
            .0
    }
}

async fn recovered(server: &MockServer, cell: &str) -> u64 {
    server
        .coverage()
        .await
        .count(&format!("{cell} recovered"))
        .expect("a cell")
}

#[tokio::test]
async fn a_retried_initiate_answered_as_a_duplicate_recovers_a_commit_then_error() {
    let server = MockServer::start().await;
    let app = App::of(&server);
    let (status, _) = app
        .initiate("DUP-1", Some("commit-then-error"))
        .await
        .expect("an answer");
    assert_eq!(status, 500);
    assert_eq!(recovered(&server, "initiate commit-then-error").await, 0);
    let (status, body) = app.initiate("DUP-1", None).await.expect("an answer");
    assert_eq!(
        (status, body["errorCode"].as_str()),
        (400, Some("DUPLICATE_REFERENCE_NO"))
    );
    let coverage = server.coverage().await;
    coverage.assert_covered([
        "initiate commit-then-error",
        "initiate commit-then-error recovered",
        "initiate 400 DUPLICATE_REFERENCE_NO",
    ]);
    assert_eq!(
        coverage.count("initiate commit-then-error recovered"),
        Some(1)
    );
    server.shutdown().await;
}

#[tokio::test]
async fn a_status_read_recovers_a_commit_then_error_by_reference_and_by_id() {
    let server = MockServer::start().await;
    let app = App::of(&server);
    app.initiate("READ-1", Some("commit-then-error")).await;
    app.initiate("READ-2", Some("commit-then-error")).await;
    assert_eq!(app.read("/api/payments/reference/READ-1/status").await, 200);
    assert_eq!(recovered(&server, "initiate commit-then-error").await, 1);
    // The application found its transaction by id (its own records, say).
    let id = server
        .transactions()
        .await
        .into_iter()
        .find(|t| t.reference_no == "READ-2")
        .expect("stored")
        .transaction_id;
    assert_eq!(app.read(&format!("/api/payments/{id}/status")).await, 200);
    assert_eq!(recovered(&server, "initiate commit-then-error").await, 2);
    // Coming back again recovers nothing more.
    app.read("/api/payments/reference/READ-1/status").await;
    assert_eq!(recovered(&server, "initiate commit-then-error").await, 2);
    server.shutdown().await;
}

#[tokio::test]
async fn a_commit_then_error_never_followed_up_is_not_recovered() {
    let server = MockServer::start().await;
    let app = App::of(&server);
    app.initiate("LOST-1", Some("commit-then-error")).await;
    // Everything but a look at LOST-1 of MERCHANT: other references, the
    // same reference of another merchant, a read that is itself faulted,
    // a duplicate of another reference.
    app.initiate("OTHER-1", None).await;
    app.initiate("OTHER-1", None).await;
    let mut elsewhere = initiate_body("LOST-1", "TOPUP");
    elsewhere["merchantId"] = json!(OTHER_MERCHANT);
    app.send(
        reqwest::Method::POST,
        "/api/payments/initiate",
        Some(&elsewhere),
        None,
    )
    .await;
    app.read(&format!(
        "/api/payments/reference/LOST-1/status?merchantId={OTHER_MERCHANT}"
    ))
    .await;
    app.read("/api/payments/reference/OTHER-1/status").await;
    let faulted = app
        .send(
            reqwest::Method::GET,
            &format!("/api/payments/reference/LOST-1/status?merchantId={MERCHANT}"),
            None,
            Some("internal-error"),
        )
        .await;
    assert_eq!(faulted.map(|(s, _)| s), Some(500));
    let coverage = server.coverage().await;
    assert_eq!(coverage.count("initiate commit-then-error"), Some(1));
    assert_eq!(
        coverage.count("initiate commit-then-error recovered"),
        Some(0)
    );
    let panic = std::panic::catch_unwind(|| {
        coverage.assert_covered(["initiate commit-then-error recovered"]);
    })
    .expect_err("not covered");
    let message = panic.downcast_ref::<String>().expect("a message");
    assert!(
        message.contains("initiate commit-then-error recovered"),
        "{message}"
    );
    server.shutdown().await;
}

/// A committing fault on an initiate whose true answer stored nothing
/// (refused as invalid) leaves nothing to come back for: a later payment of
/// that reference, by another merchant or the same, read back, is no
/// recovery. And a read that itself met a fault (a delay) is no look at
/// the transaction; a plain one after it is.
#[tokio::test]
async fn a_fault_that_stored_nothing_or_a_faulted_read_recovers_nothing() {
    let server = MockServer::start().await;
    let app = App::of(&server);
    let mut nameless = initiate_body("VOID-1", "TOPUP");
    nameless
        .as_object_mut()
        .expect("an object")
        .remove("merchantId");
    let mut zero = initiate_body("VOID-2", "TOPUP");
    zero["amount"] = json!(0);
    for body in [&nameless, &zero] {
        let answer = app
            .send(
                reqwest::Method::POST,
                "/api/payments/initiate",
                Some(body),
                Some("commit-then-error"),
            )
            .await;
        assert_eq!(answer.map(|(s, _)| s), Some(500));
    }
    let mut other = initiate_body("VOID-1", "TOPUP");
    other["merchantId"] = json!(OTHER_MERCHANT);
    let stored = app
        .send(
            reqwest::Method::POST,
            "/api/payments/initiate",
            Some(&other),
            None,
        )
        .await;
    assert_eq!(stored.map(|(s, _)| s), Some(200));
    app.initiate("VOID-2", None).await;
    assert_eq!(app.read("/api/payments/reference/VOID-1/status").await, 200);
    assert_eq!(
        app.read(&format!(
            "/api/payments/reference/VOID-2/status?merchantId={MERCHANT}"
        ))
        .await,
        200
    );
    assert_eq!(recovered(&server, "initiate commit-then-error").await, 0);

    app.initiate("SLOW-1", Some("commit-then-error")).await;
    let delayed = app
        .send(
            reqwest::Method::GET,
            "/api/payments/reference/SLOW-1/status",
            None,
            Some("delay=5"),
        )
        .await;
    assert_eq!(delayed.map(|(s, _)| s), Some(200));
    assert_eq!(recovered(&server, "initiate commit-then-error").await, 0);
    assert_eq!(app.read("/api/payments/reference/SLOW-1/status").await, 200);
    assert_eq!(recovered(&server, "initiate commit-then-error").await, 1);
    server.shutdown().await;
}

#[tokio::test]
async fn a_commit_then_reset_is_recovered_by_a_read_after_the_closed_connection() {
    let server = MockServer::start().await;
    let app = App::of(&server);
    assert_eq!(app.initiate("RST-1", Some("commit-then-reset")).await, None);
    let coverage = server.coverage().await;
    assert_eq!(coverage.count("initiate commit-then-reset"), Some(1));
    // No answer was sent: no answer cell counts it.
    assert_eq!(coverage.count("initiate 200"), Some(0));
    assert_eq!(coverage.count("initiate 500 INTERNAL_ERROR"), Some(0));
    assert_eq!(coverage.count("transition created -> INITIATED"), Some(1));
    assert_eq!(
        app.read(&format!(
            "/api/payments/reference/RST-1/status?merchantId={MERCHANT}"
        ))
        .await,
        200
    );
    assert_eq!(recovered(&server, "initiate commit-then-reset").await, 1);
    server.shutdown().await;
}

#[tokio::test]
async fn an_answer_other_confirm_is_recovered_by_a_read_of_its_transaction() {
    let server = MockServer::start().await;
    let app = App::of(&server);
    let first = app.initiate("AO-1", None).await.expect("an answer").1;
    let first = first["data"]["transactionId"]
        .as_str()
        .expect("an id")
        .to_owned();
    let confirm =
        |id: &str, reference: &str| json!({ "transactionId": id, "referenceNo": reference });
    app.send(
        reqwest::Method::POST,
        "/api/payments/confirm",
        Some(&confirm(&first, "AO-1")),
        None,
    )
    .await;
    let second = app.initiate("AO-2", None).await.expect("an answer").1;
    let second = second["data"]["transactionId"]
        .as_str()
        .expect("an id")
        .to_owned();
    let (status, answered) = app
        .send(
            reqwest::Method::POST,
            "/api/payments/confirm",
            Some(&confirm(&second, "AO-2")),
            Some("answer-other"),
        )
        .await
        .expect("an answer");
    assert_eq!(status, 200);
    assert_eq!(
        answered["data"]["transactionId"],
        first.as_str(),
        "about the other one"
    );
    assert_eq!(recovered(&server, "confirm answer-other").await, 0);
    // A read of the transaction that was answered is no look at AO-2.
    app.read(&format!("/api/payments/{first}/status")).await;
    assert_eq!(recovered(&server, "confirm answer-other").await, 0);
    app.read(&format!("/api/payments/{second}/status")).await;
    assert_eq!(recovered(&server, "confirm answer-other").await, 1);
    server.shutdown().await;
}

/// What payments-client does on an initiate (CONTRACT section 12), by
/// hand (the client is no dependency of this package; the example
/// `testing_with_the_mock` runs the real one): a 500 is retried; a
/// retry answered `DUPLICATE_REFERENCE_NO` is reconciled with a status
/// read by reference.
#[tokio::test]
async fn a_client_retrying_through_a_commit_then_error_shows_recovered() {
    let server = MockServer::start().await;
    server.inject_faults([Fault::CommitThenError]);
    let app = App::of(&server);
    let mut outcome = None;
    for attempt in 0..3 {
        let (status, body) = app.initiate("RETRY-1", None).await.expect("an answer");
        match (status, body["errorCode"].as_str()) {
            (200, _) => {
                outcome = Some(body["data"].clone());
                break;
            }
            (400, Some("DUPLICATE_REFERENCE_NO")) if attempt > 0 => {
                let (status, read) = app
                    .send(
                        reqwest::Method::GET,
                        &format!("/api/payments/reference/RETRY-1/status?merchantId={MERCHANT}"),
                        None,
                        None,
                    )
                    .await
                    .expect("an answer");
                assert_eq!(status, 200);
                assert_eq!(read["data"]["productCode"], "TOPUP");
                outcome = Some(read["data"].clone());
                break;
            }
            // The application retries at once: no wait, nothing to time.
            (500, _) => tokio::task::yield_now().await,
            other => panic!("unexpected {other:?}"),
        }
    }
    let outcome = outcome.expect("the payment is known");
    assert_eq!(outcome["status"], "INITIATED");
    assert_eq!(server.transactions().await.len(), 1, "initiated once");
    server.coverage().await.assert_covered([
        "initiate commit-then-error",
        "initiate commit-then-error recovered",
        "initiate 500 INTERNAL_ERROR",
        "initiate 400 DUPLICATE_REFERENCE_NO",
        "statusByReference 200",
    ]);
    server.shutdown().await;
}
