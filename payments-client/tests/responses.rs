//! A wiremock stub for every response shape: successes, each error code, and
//! bodies that are not the envelope.

mod common;

use common::*;
use payments_client::{
    ConfirmRequest, Currency, Error, ErrorCode, InitiateRequest, MinorAmount, Outcome,
    TransactionStatus,
};
use rust_decimal::Decimal;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn initiate_request() -> InitiateRequest {
    InitiateRequest::builder(
        merchant(),
        "INV-1",
        MinorAmount::new(15000).unwrap(),
        "TOPUP",
        "S1",
    )
    .payer_id("60123456789")
    .build()
    .unwrap()
}

#[tokio::test]
async fn initiate_success_decodes_every_field() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/api/payments/initiate"))
        .respond_with(json(200, ok_envelope(&initiate_data())))
        .expect(1)
        .mount(&server)
        .await;
    let reply = client(&server).initiate(initiate_request()).await.unwrap();
    let d = reply.data();
    assert_eq!(d.transaction_id, TX_ID);
    assert_eq!(d.reference_no, "INV-1");
    assert_eq!(d.status, TransactionStatus::Initiated);
    assert_eq!(d.amount.get(), 15000);
    assert_eq!(d.currency_code, Currency::MYR);
    assert_eq!(d.product_code, "TOPUP");
    assert_eq!(d.created_at.to_rfc3339(), "2026-11-22T08:15:30.123+00:00");
    assert_eq!(d.extra_properties, None);
    assert_eq!(reply.attempts(), 1);
    assert!(!reply.is_reconciled());
    assert_eq!(reply.http_status(), 200);
    assert_eq!(reply.raw_envelope(), ok_envelope(&initiate_data()));
    assert!(!reply.request_id().is_empty());
}

#[tokio::test]
async fn confirm_success_keeps_the_amount_scale() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/api/payments/confirm"))
        .respond_with(json(200, ok_envelope(&confirm_data())))
        .mount(&server)
        .await;
    let req = ConfirmRequest::builder(TX_ID, "INV-1").build().unwrap();
    let reply = client(&server).confirm(req).await.unwrap();
    let d = reply.data();
    assert_eq!(d.status, TransactionStatus::Successful);
    assert_eq!(d.amount.to_string(), "150.00");
    assert_eq!(d.provider_reference.as_deref(), Some("PRV-1"));
    assert!(d.confirmed_at.is_some());
    assert_eq!(d.error_message, None);
}

#[tokio::test]
async fn status_success_decodes_every_field() {
    let server = MockServer::start().await;
    let data = format!(
        r#"{{"transactionId":"{TX_ID}","referenceNo":"INV-1","status":"SUCCESSFUL","amount":150.00,"productCode":"TOPUP","createdAt":"2026-11-22T08:15:30.123Z","lastModifiedAt":"2026-11-22T08:16:00.000Z","providerReference":"PRV-1","message":"ok","extraProperties":"{{\"a\":1}}"}}"#
    );
    Mock::given(method("GET"))
        .and(path(format!("/api/payments/{TX_ID}/status")))
        .respond_with(json(200, ok_envelope(&data)))
        .mount(&server)
        .await;
    let reply = client(&server).status(TX_ID).await.unwrap();
    let d = reply.data();
    assert_eq!(d.status, TransactionStatus::Successful);
    assert!(d.status.is_final());
    assert_eq!(d.amount, Decimal::new(15000, 2));
    assert!(d.last_modified_at.is_some());
    assert_eq!(d.provider_reference.as_deref(), Some("PRV-1"));
    assert_eq!(d.message.as_deref(), Some("ok"));
    assert_eq!(d.extra_properties.as_deref(), Some(r#"{"a":1}"#));
}

#[tokio::test]
async fn status_by_reference_success() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/api/payments/reference/INV-1/status"))
        .respond_with(json(200, ok_envelope(&status_data())))
        .mount(&server)
        .await;
    let reply = client(&server)
        .status_by_reference("INV-1", None)
        .await
        .unwrap();
    assert_eq!(reply.data().reference_no, "INV-1");
}

#[tokio::test]
async fn success_message_is_kept() {
    let server = MockServer::start().await;
    let body = format!(
        r#"{{"isSuccess":true,"errorCode":null,"message":"created","data":{}}}"#,
        initiate_data()
    );
    Mock::given(method("POST"))
        .respond_with(json(200, body))
        .mount(&server)
        .await;
    let reply = client(&server).initiate(initiate_request()).await.unwrap();
    assert_eq!(reply.message(), Some("created"));
}

/// Every error code of CONTRACT section 8 with its HTTP status.
const ERROR_CASES: &[(u16, &str, ErrorCode)] = &[
    (400, "VALIDATION_ERROR", ErrorCode::ValidationError),
    (
        400,
        "INVALID_TRANSACTION_ID",
        ErrorCode::InvalidTransactionId,
    ),
    (400, "INVALID_REFERENCE_NO", ErrorCode::InvalidReferenceNo),
    (400, "TRANSACTION_NOT_FOUND", ErrorCode::TransactionNotFound),
    (
        400,
        "DUPLICATE_REFERENCE_NO",
        ErrorCode::DuplicateReferenceNo,
    ),
    (
        400,
        "TRANSACTION_ALREADY_CONFIRMED",
        ErrorCode::TransactionAlreadyConfirmed,
    ),
    (400, "TRANSACTION_EXPIRED", ErrorCode::TransactionExpired),
    (
        400,
        "AMBIGUOUS_REFERENCE_NO",
        ErrorCode::AmbiguousReferenceNo,
    ),
    (401, "UNAUTHORIZED", ErrorCode::Unauthorized),
    (403, "FORBIDDEN", ErrorCode::Forbidden),
    (404, "TRANSACTION_NOT_FOUND", ErrorCode::TransactionNotFound),
    (404, "NOT_FOUND", ErrorCode::NotFound),
    (405, "METHOD_NOT_ALLOWED", ErrorCode::MethodNotAllowed),
    (413, "PAYLOAD_TOO_LARGE", ErrorCode::PayloadTooLarge),
    (
        415,
        "UNSUPPORTED_MEDIA_TYPE",
        ErrorCode::UnsupportedMediaType,
    ),
    (429, "RATE_LIMITED", ErrorCode::RateLimited),
    (500, "INTERNAL_ERROR", ErrorCode::InternalError),
];

#[tokio::test]
async fn every_error_code_becomes_an_api_error() {
    for (status, wire, code) in ERROR_CASES {
        let server = MockServer::start().await;
        let body = err_envelope(wire, "it went wrong");
        Mock::given(method("GET"))
            .respond_with(json(*status, body.clone()))
            .mount(&server)
            .await;
        let client = payments_client::Client::builder(server.uri())
            .retry_policy(payments_client::RetryPolicy::none())
            .build()
            .unwrap();
        let err = client.status(TX_ID).await.unwrap_err();
        let Error::Api(api) = &err else {
            panic!("{wire}: expected Api, got {err:?}")
        };
        assert_eq!(api.status, *status, "{wire}");
        assert_eq!(&api.code, code, "{wire}");
        assert_eq!(api.message, "it went wrong");
        assert_eq!(api.raw_envelope, body);
        assert_eq!(err.error_code(), Some(code));
        assert_eq!(err.http_status(), Some(*status));
        assert_eq!(err.raw_envelope(), Some(body.as_str()));
        assert_eq!(err.request_id(), Some(api.request_id.as_str()));
        let expected_outcome = if *status >= 500 {
            Outcome::Unknown
        } else {
            Outcome::NotCarriedOut
        };
        assert_eq!(err.outcome(), expected_outcome, "{wire}");
        assert_eq!(err.is_retryable(), matches!(status, 429 | 500), "{wire}");
        assert_eq!(code.as_str(), *wire);
    }
}

#[tokio::test]
async fn html_502_is_an_unexpected_response() {
    let html = format!("<html><body>{}</body></html>", "Bad Gateway ".repeat(100));
    let err = status_error_with(
        Mock::given(method("GET"))
            .respond_with(
                ResponseTemplate::new(502).set_body_raw(html.clone().into_bytes(), "text/html"),
            )
            .expect(3),
    )
    .await;
    let Error::UnexpectedResponse {
        status,
        body_prefix,
        content_type,
        request_id,
        ..
    } = &err
    else {
        panic!("expected UnexpectedResponse, got {err:?}")
    };
    assert_eq!(*status, 502);
    assert_eq!(body_prefix.len(), 512);
    assert_eq!(body_prefix.as_str(), &html[..512]);
    assert_eq!(content_type.as_deref(), Some("text/html"));
    assert!(!request_id.is_empty());
    assert!(err.is_retryable());
    assert_eq!(err.outcome(), Outcome::Unknown);
}

#[tokio::test]
async fn empty_504_is_an_unexpected_response() {
    let err = status_error_from(ResponseTemplate::new(504)).await;
    let Error::UnexpectedResponse {
        status,
        body_prefix,
        ..
    } = &err
    else {
        panic!("expected UnexpectedResponse, got {err:?}")
    };
    assert_eq!(*status, 504);
    assert!(body_prefix.is_empty());
    assert!(err.request_id().is_some());
}

#[tokio::test]
async fn truncated_json_is_an_unexpected_response() {
    let full = ok_envelope(&status_data());
    let err = status_error_from(json(200, &full[..full.len() / 2])).await;
    assert!(
        matches!(err, Error::UnexpectedResponse { status: 200, .. }),
        "{err:?}"
    );
    assert_eq!(err.outcome(), Outcome::Unknown);
    assert!(!err.is_retryable());
}

#[tokio::test]
async fn success_with_null_data_is_a_typed_error() {
    let body = r#"{"isSuccess":true,"errorCode":null,"message":null,"data":null}"#;
    let err = status_error_from(json(200, body)).await;
    let Error::MissingData {
        status,
        raw_envelope,
        ..
    } = &err
    else {
        panic!("expected MissingData, got {err:?}")
    };
    assert_eq!(*status, 200);
    assert_eq!(raw_envelope, body);
}

#[tokio::test]
async fn failure_on_http_200_is_an_api_error() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(json(
            200,
            err_envelope("TRANSACTION_NOT_FOUND", "no such transaction"),
        ))
        .expect(1)
        .mount(&server)
        .await;
    let err = client(&server).status(TX_ID).await.unwrap_err();
    assert_eq!(err.error_code(), Some(&ErrorCode::TransactionNotFound));
    assert_eq!(err.http_status(), Some(200));
    assert_eq!(err.outcome(), Outcome::NotCarriedOut);
}

#[tokio::test]
async fn data_of_the_wrong_shape_is_a_decode_error_naming_the_path() {
    let data = status_data().replace(
        r#""createdAt":"2026-11-22T08:15:30.123Z""#,
        r#""createdAt":"yesterday""#,
    );
    let err = status_error_from(json(200, ok_envelope(&data))).await;
    let Error::Decode { path, .. } = &err else {
        panic!("expected Decode, got {err:?}")
    };
    assert_eq!(path, "data.createdAt");
    assert!(
        err.to_string()
            .starts_with("could not decode the response at data.createdAt")
    );
}

#[tokio::test]
async fn payloads_serialise_amounts_as_exact_json_numbers() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(json(200, ok_envelope(&confirm_data())))
        .mount(&server)
        .await;
    let req = ConfirmRequest::builder(TX_ID, "INV-1").build().unwrap();
    let reply = client(&server).confirm(req).await.unwrap();
    let text = serde_json::to_string(reply.data()).unwrap();
    assert!(text.contains(r#""amount":150.00"#), "{text}");
    assert!(
        text.contains(r#""confirmedAt":"2026-11-22T08:16:00Z""#),
        "{text}"
    );
}
