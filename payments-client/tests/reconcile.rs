//! CONTRACT section 12: a retry rejected as a repeat is turned back into the
//! original outcome, and never into a false success.

mod common;

use common::*;
use payments_client::{
    ConfirmRequest, Currency, Error, ErrorCode, InitiateRequest, Initiated, MinorAmount, Outcome,
    Reply, TransactionStatus,
};
use wiremock::matchers::{method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn initiate_request(minor: u64) -> InitiateRequest {
    InitiateRequest::builder(
        merchant(),
        "INV-1",
        MinorAmount::new(minor).unwrap(),
        "TOPUP",
        "S1",
    )
    .currency(Currency::MYR)
    .payer_id("60123456789")
    .build()
    .unwrap()
}

async fn initiate_500_then_duplicate(server: &MockServer) {
    Mock::given(method("POST"))
        .and(path("/api/payments/initiate"))
        .respond_with(json(
            500,
            err_envelope("INTERNAL_ERROR", "committed, then failed"),
        ))
        .up_to_n_times(1)
        .expect(1)
        .mount(server)
        .await;
    Mock::given(method("POST"))
        .and(path("/api/payments/initiate"))
        .respond_with(json(
            400,
            err_envelope("DUPLICATE_REFERENCE_NO", "referenceNo INV-1 is used"),
        ))
        .expect(1)
        .mount(server)
        .await;
}

/// The read-back's answer: an `INITIATED` transaction of `amount` and `product`.
fn stored(amount: &str, product: &str) -> ResponseTemplate {
    status_answer("INITIATED", amount, product)
}

/// Sends `request` to a server whose first attempt fails with a 500, whose
/// retry meets a duplicate, and whose status read is `read_back`.
async fn initiate_after_a_duplicate(
    request: InitiateRequest,
    read_back: Mock,
) -> (MockServer, Result<Reply<Initiated>, Error>) {
    let server = MockServer::start().await;
    initiate_500_then_duplicate(&server).await;
    read_back.mount(&server).await;
    let result = client(&server).initiate(request).await;
    (server, result)
}

fn confirm_request() -> ConfirmRequest {
    ConfirmRequest::builder(TX_ID, "INV-1").build().unwrap()
}

#[tokio::test]
async fn initiate_retry_meeting_duplicate_reference_is_reconciled() {
    let read_back = Mock::given(method("GET"))
        .and(path("/api/payments/reference/INV-1/status"))
        .and(query_param("merchantId", MERCHANT))
        .respond_with(stored("150.00", "TOPUP"))
        .expect(1);
    let (server, reply) = initiate_after_a_duplicate(initiate_request(15000), read_back).await;
    let reply = reply.unwrap();
    assert!(reply.is_reconciled());
    assert_eq!(reply.attempts(), 2);
    let d = reply.data();
    assert_eq!(d.transaction_id, TX_ID);
    assert_eq!(d.amount.get(), 15000);
    assert_eq!(d.currency_code, Currency::MYR);
    assert_eq!(d.status, TransactionStatus::Initiated);
    let ids = request_ids(&server).await;
    assert_eq!(ids.len(), 3);
    assert!(ids.iter().all(|id| id == reply.request_id()));
}

#[tokio::test]
async fn initiate_retry_finding_another_amount_is_an_error() {
    let read_back = Mock::given(method("GET"))
        .and(path("/api/payments/reference/INV-1/status"))
        .respond_with(stored("99.99", "TOPUP"));
    let (_server, reply) = initiate_after_a_duplicate(initiate_request(15000), read_back).await;
    let err = reply.unwrap_err();
    let Error::Reconciliation { found, .. } = &err else {
        panic!("expected Reconciliation, got {err:?}")
    };
    assert_eq!(
        found.as_ref().map(|f| f.amount.to_string()),
        Some("99.99".into())
    );
    assert_eq!(err.outcome(), Outcome::NotCarriedOut);
    assert!(err.request_id().is_some());
}

#[tokio::test]
async fn initiate_retry_finding_another_product_is_an_error() {
    let read_back = Mock::given(method("GET")).respond_with(stored("150.00", "BILLPAY"));
    let (_server, reply) = initiate_after_a_duplicate(initiate_request(15000), read_back).await;
    let err = reply.unwrap_err();
    assert!(matches!(err, Error::Reconciliation { .. }), "{err:?}");
}

#[tokio::test]
async fn initiate_reconciliation_compares_in_minor_units_of_the_request_currency() {
    // 150 with no fraction digits is the same amount as 15000 MYR cents.
    let read_back = Mock::given(method("GET")).respond_with(stored("150", "TOPUP"));
    let (_server, reply) = initiate_after_a_duplicate(initiate_request(15000), read_back).await;
    let reply = reply.unwrap();
    assert!(reply.is_reconciled());
}

#[tokio::test]
async fn a_failed_lookup_during_reconciliation_is_reported_with_its_cause() {
    let read_back = Mock::given(method("GET"))
        .respond_with(json(404, err_envelope("TRANSACTION_NOT_FOUND", "gone")));
    let (_server, reply) = initiate_after_a_duplicate(initiate_request(15000), read_back).await;
    let err = reply.unwrap_err();
    let Error::Reconciliation {
        found: None,
        source: Some(cause),
        ..
    } = &err
    else {
        panic!("expected Reconciliation with a cause, got {err:?}")
    };
    assert_eq!(cause.error_code(), Some(&ErrorCode::TransactionNotFound));
    assert_eq!(err.outcome(), Outcome::Unknown);
}

#[tokio::test]
async fn duplicate_reference_on_the_first_attempt_is_a_plain_api_error() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(json(400, err_envelope("DUPLICATE_REFERENCE_NO", "used")))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .respond_with(json(200, ok_envelope(&status_data())))
        .expect(0)
        .mount(&server)
        .await;
    let err = client(&server)
        .initiate(initiate_request(15000))
        .await
        .unwrap_err();
    assert_eq!(err.error_code(), Some(&ErrorCode::DuplicateReferenceNo));
}

#[tokio::test]
async fn confirm_retry_meeting_already_confirmed_is_read_from_status() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/api/payments/confirm"))
        .respond_with(json(502, "<html>bad gateway</html>"))
        .up_to_n_times(1)
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/api/payments/confirm"))
        .respond_with(json(
            400,
            err_envelope("TRANSACTION_ALREADY_CONFIRMED", "already confirmed"),
        ))
        .expect(1)
        .mount(&server)
        .await;
    let data = status_data_with("SUCCESSFUL", "150.00", "TOPUP").replace(
        r#""providerReference":null"#,
        r#""providerReference":"PRV-9""#,
    );
    Mock::given(method("GET"))
        .and(path(format!("/api/payments/{TX_ID}/status")))
        .respond_with(json(200, ok_envelope(&data)))
        .expect(1)
        .mount(&server)
        .await;
    let reply = client(&server).confirm(confirm_request()).await.unwrap();
    assert!(reply.is_reconciled());
    let d = reply.data();
    assert_eq!(d.status, TransactionStatus::Successful);
    assert_eq!(d.amount.to_string(), "150.00");
    assert_eq!(d.provider_reference.as_deref(), Some("PRV-9"));
    assert_eq!(d.confirmed_at, None);
}

#[tokio::test]
async fn confirm_reconciliation_of_a_failed_payment_carries_its_message() {
    let server = MockServer::start().await;
    post_fails_once_then(
        &server,
        json(
            400,
            err_envelope("TRANSACTION_ALREADY_CONFIRMED", "already"),
        ),
    )
    .await;
    let data = status_data_with("FAILED", "150.00", "DECLINED")
        .replace(r#""message":null"#, r#""message":"declined by provider""#);
    Mock::given(method("GET"))
        .respond_with(json(200, ok_envelope(&data)))
        .mount(&server)
        .await;
    let reply = client(&server).confirm(confirm_request()).await.unwrap();
    assert_eq!(reply.data().status, TransactionStatus::Failed);
    assert_eq!(
        reply.data().error_message.as_deref(),
        Some("declined by provider")
    );
}

#[tokio::test]
async fn already_confirmed_on_the_first_attempt_is_a_plain_api_error() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(json(
            400,
            err_envelope("TRANSACTION_ALREADY_CONFIRMED", "already"),
        ))
        .expect(1)
        .mount(&server)
        .await;
    let err = client(&server)
        .confirm(confirm_request())
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Api(_)));
    assert_eq!(
        err.error_code(),
        Some(&ErrorCode::TransactionAlreadyConfirmed)
    );
}

/// What the read-back can and cannot tell of the currency (a status read
/// carries none; README, "Retries and reconciliation"): for a JPY 1000
/// request, a transaction of 1000.00 is taken as the result (it may be a
/// MYR 1000.00 payment under the same reference: the limit that makes a
/// referenceNo one order's for good), while 1000.50, which no JPY amount
/// can be, is never a success.
#[tokio::test]
async fn a_read_back_is_compared_in_the_requests_currency() {
    let jpy = || {
        InitiateRequest::builder(
            merchant(),
            "INV-1",
            MinorAmount::new(1000).unwrap(),
            "TOPUP",
            "S1",
        )
        .currency(Currency::JPY)
        .payer_id("60123456789")
        .build()
        .unwrap()
    };
    let read_back_says = |amount: &'static str| async move {
        let read_back = Mock::given(method("GET"))
            .and(path("/api/payments/reference/INV-1/status"))
            .respond_with(stored(amount, "TOPUP"));
        initiate_after_a_duplicate(jpy(), read_back).await.1
    };
    let same_digits = read_back_says("1000.00").await.expect("indistinguishable");
    assert!(same_digits.is_reconciled());
    assert_eq!(same_digits.data().currency_code, Currency::JPY);
    assert_eq!(same_digits.data().amount.get(), 1000);
    let err = read_back_says("1000.50").await.unwrap_err();
    assert!(
        matches!(&err, Error::Reconciliation { found: Some(_), .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("cannot be compared"), "{err}");
    assert_eq!(err.outcome(), Outcome::Unknown);
}
