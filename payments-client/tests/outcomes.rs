//! How each kind of answer maps to [`Outcome`], envelopes with oddly typed
//! fields, and the size of [`Error`] (review minor findings).

mod common;

use common::*;
use payments_client::{
    Client, Error, ErrorCode, Outcome, PaymentStatus, RetryPolicy, wire::decode_response,
};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

fn once(server: &MockServer) -> Client {
    Client::builder(server.uri())
        .retry_policy(RetryPolicy::none())
        .build()
        .unwrap()
}

async fn status_error(answer: ResponseTemplate) -> Error {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(answer)
        .mount(&server)
        .await;
    once(&server).status(TX_ID).await.unwrap_err()
}

#[tokio::test]
async fn a_proxy_timeout_408_or_499_without_an_envelope_is_unknown() {
    for status in [408, 499] {
        let err = status_error(ResponseTemplate::new(status).set_body_string("timeout")).await;
        assert!(matches!(err, Error::UnexpectedResponse { .. }), "{err:?}");
        assert_eq!(err.outcome(), Outcome::Unknown, "{status}");
    }
    // Other non-envelope 4xx still mean "refused".
    let err = status_error(ResponseTemplate::new(404).set_body_string("not found")).await;
    assert_eq!(err.outcome(), Outcome::NotCarriedOut);
}

/// A gateway that gave up waiting may answer with an envelope of its own:
/// the rule is the status's, not the body's (it was `NotCarriedOut`, so a
/// CLI said "rejected" of a payment the service had made).
#[tokio::test]
async fn a_proxy_timeout_408_or_499_with_an_envelope_is_unknown_too() {
    for status in [408, 499] {
        let page = status_error(ResponseTemplate::new(status).set_body_string("timeout")).await;
        let body = err_envelope("REQUEST_TIMEOUT", "upstream timed out");
        let err = status_error(json(status, body)).await;
        assert!(matches!(err, Error::Api(_)), "{err:?}");
        assert_eq!(err.outcome(), Outcome::Unknown, "{status}");
        // Retried (or not) exactly as the same status with a page.
        assert_eq!(err.is_retryable(), page.is_retryable(), "{status}");
    }
}

#[tokio::test]
async fn internal_error_is_unknown_on_any_status() {
    for status in [200, 400, 500] {
        let err = status_error(json(status, err_envelope("INTERNAL_ERROR", "boom"))).await;
        assert_eq!(err.error_code(), Some(&ErrorCode::InternalError));
        assert_eq!(err.outcome(), Outcome::Unknown, "{status}");
        // "The caller may retry", whatever HTTP status carried it.
        assert!(err.is_retryable(), "{status}");
    }
}

#[tokio::test]
async fn any_5xx_envelope_is_unknown_whatever_its_code() {
    let err = status_error(json(503, err_envelope("VALIDATION_ERROR", "odd"))).await;
    assert_eq!(err.outcome(), Outcome::Unknown);
    let err = status_error(json(400, err_envelope("VALIDATION_ERROR", "bad"))).await;
    assert_eq!(err.outcome(), Outcome::NotCarriedOut);
}

fn status_body(error_code: &str, message: &str) -> String {
    let mut body = ok_envelope(&status_data());
    body = body.replace(
        r#""errorCode":null"#,
        &format!(r#""errorCode":{error_code}"#),
    );
    body.replacen(r#""message":null"#, &format!(r#""message":{message}"#), 1)
}

#[test]
fn a_success_envelope_with_oddly_typed_error_code_or_message_still_decodes() {
    for (code, message) in [("0", r#"{"text":"ok"}"#), ("false", "42"), (r#""""#, "[1]")] {
        let body = status_body(code, message);
        let reply =
            decode_response::<PaymentStatus>(200, Some("application/json"), body.as_bytes())
                .unwrap_or_else(|e| panic!("{body}: {e:?}"));
        assert_eq!(reply.data().transaction_id, TX_ID);
        assert_eq!(reply.message(), Some(message), "kept as its JSON text");
    }
    let body = status_body("null", r#""fine""#);
    let reply = decode_response::<PaymentStatus>(200, None, body.as_bytes()).unwrap();
    assert_eq!(reply.message(), Some("fine"));
}

#[test]
fn a_failure_envelope_with_oddly_typed_fields_is_still_an_api_error() {
    let body = br#"{"isSuccess":false,"errorCode":42,"message":{"why":"x"},"data":null}"#;
    let err = decode_response::<PaymentStatus>(400, None, body).unwrap_err();
    let api = err.as_api().expect("an API error");
    assert_eq!(api.code, ErrorCode::Other("42".to_owned()));
    assert_eq!(api.message, r#"{"why":"x"}"#);
}

#[test]
fn error_stays_below_clippys_result_large_err_threshold() {
    assert!(
        std::mem::size_of::<Error>() < 128,
        "{}",
        std::mem::size_of::<Error>()
    );
}

/// What a user writes; `cargo clippy --all-targets -- -D warnings` on this
/// crate fails if `Error` grows past `result_large_err`'s threshold.
fn users_own_function(fail: bool) -> Result<(), Error> {
    if fail {
        return Err(decode_response::<PaymentStatus>(502, None, b"").unwrap_err());
    }
    Ok(())
}

#[test]
fn users_can_return_the_error_without_boxing_it() {
    assert!(users_own_function(false).is_ok());
    assert!(users_own_function(true).is_err());
}
