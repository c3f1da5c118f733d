//! CONTRACT section 11: everything the client must tolerate, one test each.

mod common;

use std::sync::atomic::Ordering;

use common::*;
use payments_client::error::TransportKind;
use payments_client::{Error, ErrorCode, Outcome, PaymentStatus, TransactionStatus};
use rust_decimal::Decimal;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer};

async fn status_with_data(data: &str) -> Result<PaymentStatus, Error> {
    status_of_with_data(TX_ID, data).await
}

/// A status read of `id` answered with `data` (whose transactionId must be
/// `id`: the client checks it).
async fn status_of_with_data(id: &str, data: &str) -> Result<PaymentStatus, Error> {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(json(200, ok_envelope(data)))
        .mount(&server)
        .await;
    client(&server).status(id).await.map(|r| r.into_data())
}

/// A server whose initiate answers `data`, and a MYR 150.00 request for it.
async fn initiate_answered_with(data: &str) -> (MockServer, payments_client::InitiateRequest) {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(json(200, ok_envelope(data)))
        .mount(&server)
        .await;
    let req = plain_initiate_request();
    (server, req)
}

#[tokio::test]
async fn an_unknown_status_is_kept_as_other() {
    let st = status_with_data(&status_data_with("ON_HOLD", "1.00", "TOPUP"))
        .await
        .unwrap();
    assert_eq!(st.status, TransactionStatus::Other("ON_HOLD".into()));
    assert_eq!(st.status.to_string(), "ON_HOLD");
    assert!(!st.status.is_final());
}

#[tokio::test]
async fn an_unknown_error_code_is_kept_as_other() {
    let err = status_error_from(json(409, err_envelope("CARD_MELTED", "try another card"))).await;
    assert_eq!(
        err.error_code(),
        Some(&ErrorCode::Other("CARD_MELTED".into()))
    );
}

#[tokio::test]
async fn an_amount_as_a_number_is_exact_and_keeps_its_scale() {
    let st = status_with_data(&status_data_with("INITIATED", "90071992547409.91", "TOPUP"))
        .await
        .unwrap();
    assert_eq!(st.amount.to_string(), "90071992547409.91");
    let st = status_with_data(&status_data_with("INITIATED", "150.00", "TOPUP"))
        .await
        .unwrap();
    assert_eq!(st.amount.to_string(), "150.00");
    assert_eq!(st.amount.scale(), 2);
}

#[tokio::test]
async fn an_amount_as_a_numeric_string_is_exact() {
    let st = status_with_data(&status_data_with(
        "INITIATED",
        r#""90071992547409.91""#,
        "TOPUP",
    ))
    .await
    .unwrap();
    assert_eq!(
        st.amount,
        Decimal::from_str_exact("90071992547409.91").unwrap()
    );
    let st = status_with_data(&status_data_with("INITIATED", r#""1.500""#, "TOPUP"))
        .await
        .unwrap();
    assert_eq!(st.amount.to_string(), "1.500");
}

#[tokio::test]
async fn an_amount_that_is_not_a_number_is_a_decode_error() {
    let err = status_with_data(&status_data_with("INITIATED", r#""lots""#, "TOPUP"))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::Decode { path, .. } if path == "data.amount"),
        "{err:?}"
    );
}

/// Only JSON's number syntax is an amount, as a number or in a string:
/// `rust_decimal` also reads `_` separators and a leading `+`, so a status
/// `"2_0.00"` was 20.00 (a reconcile `match`) and an initiate `"1_050"`
/// passed the answer check as 1050.
#[test]
fn an_amount_only_rust_would_read_is_a_decode_error() {
    use payments_client::Initiated;
    use payments_client::wire::decode_response;
    for amount in [
        "2_0.00", "1_0.5", "+20.00", " 20.00", "20.00 ", "20.", ".5", "1e", "1.5e+", "0x10",
        "1,050.00", "NaN", "",
    ] {
        let quoted = serde_json::to_string(amount).unwrap();
        let body = ok_envelope(&status_data_with("SUCCESSFUL", &quoted, "TOPUP"));
        let err = decode_response::<PaymentStatus>(200, None, body.as_bytes()).unwrap_err();
        assert!(
            matches!(&err, Error::Decode { path, .. } if path == "data.amount"),
            "{amount:?}: {err:?}"
        );
        let body = ok_envelope(&initiate_data().replace("15000", &quoted));
        let err = decode_response::<Initiated>(200, None, body.as_bytes()).unwrap_err();
        assert!(
            matches!(&err, Error::Decode { path, .. } if path == "data.amount"),
            "{amount:?}: {err:?}"
        );
    }
    // What a JSON number may be, a numeric string may be too: exponents,
    // a minus, leading zeros.
    for (amount, read) in [("1.5e2", "150"), ("-1.25", "-1.25"), ("007.50", "7.50")] {
        let body = ok_envelope(&status_data_with(
            "SUCCESSFUL",
            &format!("{amount:?}"),
            "TOPUP",
        ));
        let reply = decode_response::<PaymentStatus>(200, None, body.as_bytes()).unwrap();
        assert_eq!(reply.data().amount.to_string(), read, "{amount}");
    }
    let body = ok_envelope(&status_data_with("SUCCESSFUL", "1.5E2", "TOPUP"));
    let reply = decode_response::<PaymentStatus>(200, None, body.as_bytes()).unwrap();
    assert_eq!(reply.data().amount.to_string(), "150");
}

#[test]
fn amounts_in_exponent_form_that_would_round_are_refused() {
    use payments_client::wire::decode_response;
    // 10.5000000000000000000000000001 is refused; so is the same number
    // with an exponent, as a JSON number or a string, rather than being
    // rounded to 10.50 and matching an initiated 10.50.
    for amount in [
        "10.5000000000000000000000000001",
        "10.5000000000000000000000000001e0",
        "1.05000000000000000000000000001e1",
        "\"1.05000000000000000000000000001e1\"",
    ] {
        let body = ok_envelope(&status_data_with("SUCCESSFUL", amount, "TOPUP"));
        let err = decode_response::<PaymentStatus>(200, None, body.as_bytes()).unwrap_err();
        assert!(
            matches!(&err, Error::Decode { path, .. } if path == "data.amount"),
            "{amount}: {err:?}"
        );
    }
}

async fn created_at(text: &str) -> String {
    let data = status_data().replace("2026-11-22T08:15:30.123Z", text);
    status_with_data(&data)
        .await
        .unwrap()
        .created_at
        .to_rfc3339_opts(chrono::SecondsFormat::Nanos, true)
}

#[tokio::test]
async fn timestamps_with_zero_to_nine_fraction_digits_parse() {
    assert_eq!(
        created_at("2026-11-22T08:15:30Z").await,
        "2026-11-22T08:15:30.000000000Z"
    );
    assert_eq!(
        created_at("2026-11-22T08:15:30.1Z").await,
        "2026-11-22T08:15:30.100000000Z"
    );
    assert_eq!(
        created_at("2026-11-22T08:15:30.123456Z").await,
        "2026-11-22T08:15:30.123456000Z"
    );
    assert_eq!(
        created_at("2026-11-22T08:15:30.123456789Z").await,
        "2026-11-22T08:15:30.123456789Z"
    );
}

#[tokio::test]
async fn timestamps_with_an_offset_are_converted_to_utc() {
    assert_eq!(
        created_at("2026-11-22T16:15:30.5+08:00").await,
        "2026-11-22T08:15:30.500000000Z"
    );
    assert_eq!(
        created_at("2026-11-22T03:15:30-05:00").await,
        "2026-11-22T08:15:30.000000000Z"
    );
    assert_eq!(
        created_at("2026-11-22T08:15:30+00:00").await,
        "2026-11-22T08:15:30.000000000Z"
    );
}

#[tokio::test]
async fn timestamps_without_an_offset_are_taken_as_utc() {
    assert_eq!(
        created_at("2026-11-22T08:15:30").await,
        "2026-11-22T08:15:30.000000000Z"
    );
    assert_eq!(
        created_at("2026-11-22T08:15:30.12").await,
        "2026-11-22T08:15:30.120000000Z"
    );
}

#[tokio::test]
async fn extra_properties_as_a_string_is_kept_verbatim() {
    let data = status_data().replace(
        r#""extraProperties":null"#,
        r#""extraProperties":"{\"pins\": [\"1\"]}""#,
    );
    let st = status_with_data(&data).await.unwrap();
    assert_eq!(st.extra_properties.as_deref(), Some(r#"{"pins": ["1"]}"#));
}

#[tokio::test]
async fn extra_properties_as_an_object_is_stored_as_a_json_string() {
    let data = status_data().replace(
        r#""extraProperties":null"#,
        r#""extraProperties":{"pins":["1","2"],"n":1.50}"#,
    );
    let st = status_with_data(&data).await.unwrap();
    assert_eq!(
        st.extra_properties.as_deref(),
        Some(r#"{"pins":["1","2"],"n":1.50}"#),
        "as sent, keys in their order, numbers as written"
    );
    // Compacted: the white space between tokens goes, a string's stays.
    let spaced = status_data().replace(
        r#""extraProperties":null"#,
        "\"extraProperties\": { \"note\" : \"a \\\" b\" ,\n \"n\": [ 1 , 2.0 ] }",
    );
    let st = status_with_data(&spaced).await.unwrap();
    assert_eq!(
        st.extra_properties.as_deref(),
        Some(r#"{"note":"a \" b","n":[1,2.0]}"#)
    );
}

#[tokio::test]
async fn extra_properties_null_is_none() {
    let st = status_with_data(&status_data()).await.unwrap();
    assert_eq!(st.extra_properties, None);
}

#[tokio::test]
async fn missing_optional_fields_are_none() {
    let data = format!(
        r#"{{"transactionId":"{TX_ID}","referenceNo":"INV-1","status":"PENDING","amount":1,"productCode":"EWALLET","createdAt":"2026-11-22T08:15:30Z"}}"#
    );
    let st = status_with_data(&data).await.unwrap();
    assert_eq!(st.last_modified_at, None);
    assert_eq!(st.provider_reference, None);
    assert_eq!(st.message, None);
    assert_eq!(st.extra_properties, None);
}

#[tokio::test]
async fn extra_fields_are_ignored() {
    let data = status_data().replacen(
        '{',
        r#"{"futureField":{"nested":[1,2.5]},"another":true,"#,
        1,
    );
    let body = ok_envelope(&data).replacen('{', r#"{"traceId":"abc","#, 1);
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(json(200, body))
        .mount(&server)
        .await;
    let reply = client(&server).status(TX_ID).await.unwrap();
    assert_eq!(reply.data().status, TransactionStatus::Initiated);
}

#[tokio::test]
async fn a_closed_connection_is_a_retried_transport_error_with_unknown_outcome() {
    let (url, connections) = dropping_server().await;
    let err = client_for(&url).status(TX_ID).await.unwrap_err();
    let Error::Transport {
        kind, request_id, ..
    } = &err
    else {
        panic!("expected Transport, got {err:?}")
    };
    assert_eq!(*kind, TransportKind::Connection);
    assert!(!request_id.is_empty());
    assert_eq!(err.outcome(), Outcome::Unknown);
    assert!(err.is_retryable());
    assert_eq!(
        connections.load(Ordering::SeqCst),
        3,
        "one attempt and two retries"
    );
}

#[tokio::test]
async fn a_refused_connection_was_not_carried_out() {
    let url = refused_url().await;
    let err = client_for(&url).status(TX_ID).await.unwrap_err();
    assert_eq!(
        transport_kind(&err),
        Some(TransportKind::Connect),
        "{err:?}"
    );
    assert_eq!(err.outcome(), Outcome::NotCarriedOut);
}

#[tokio::test]
async fn a_non_envelope_json_body_is_an_unexpected_response() {
    let err = status_error_from(json(200, r#"{"hello":"world"}"#)).await;
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
    assert_eq!(*status, 200);
    assert_eq!(body_prefix, r#"{"hello":"world"}"#);
    assert_eq!(content_type.as_deref(), Some("application/json"));
    assert!(!request_id.is_empty());
}

#[tokio::test]
async fn initiate_amount_as_an_integer_string_is_accepted() {
    let data = initiate_data().replace(r#""amount":15000"#, r#""amount":"15000""#);
    let (server, req) = initiate_answered_with(&data).await;
    let reply = client(&server).initiate(req).await.unwrap();
    assert_eq!(reply.data().amount.get(), 15000);
}

#[tokio::test]
async fn an_unknown_currency_code_still_decodes() {
    let data = initiate_data().replace(r#""currencyCode":"MYR""#, r#""currencyCode":"XBT""#);
    let (server, req) = initiate_answered_with(&data).await;
    // Decoding alone: with the check on, an XBT echo of a MYR request is
    // rightly an AnswerMismatch (tests/answer_guard.rs).
    let trusting = payments_client::Client::builder(server.uri())
        .check_answers(false)
        .build()
        .unwrap();
    let reply = trusting.initiate(req).await.unwrap();
    let c = &reply.data().currency_code;
    assert_eq!(c.code(), "XBT");
    assert!(!c.is_known());
    assert_eq!(c.exponent(), None);
}

#[tokio::test]
async fn a_null_currency_code_means_myr() {
    let data = initiate_data().replace(r#""currencyCode":"MYR""#, r#""currencyCode":null"#);
    let (server, req) = initiate_answered_with(&data).await;
    let reply = client(&server).initiate(req).await.unwrap();
    assert_eq!(reply.data().currency_code, payments_client::Currency::MYR);
}

#[tokio::test]
async fn a_numeric_transaction_id_is_kept_as_text() {
    let data = status_data().replace(
        &format!(r#""transactionId":"{TX_ID}""#),
        r#""transactionId":90071992547409911"#,
    );
    let st = status_of_with_data("90071992547409911", &data)
        .await
        .unwrap();
    assert_eq!(st.transaction_id.as_str(), "90071992547409911");
}

#[tokio::test]
async fn a_missing_required_field_is_a_decode_error_naming_it() {
    let data = status_data().replace(r#""productCode":"TOPUP","#, "");
    let err = status_with_data(&data).await.unwrap_err();
    assert!(
        matches!(&err, Error::Decode { path, .. } if path == "data.productCode"),
        "{err:?}"
    );
}
