//! The error type: display conventions, classes, and that the API key never
//! shows up in Debug, Display or logs.

mod common;

use common::*;
use payments_client::{Client, Error, InitiateRequest, MinorAmount};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

const KEY: &str = "sk_live_TOP_SECRET_42";

fn assert_display_style(e: &Error) {
    let s = e.to_string();
    let first = s.chars().next().unwrap();
    assert!(!first.is_uppercase(), "starts upper case: {s}");
    assert!(!s.ends_with('.'), "ends with a period: {s}");
    assert!(!s.contains(KEY), "leaks the key: {s}");
    assert!(!format!("{e:?}").contains(KEY), "Debug leaks the key");
}

#[tokio::test]
async fn every_error_class_displays_lower_case_without_a_period() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(wiremock::matchers::path("/api/payments/api/status"))
        .respond_with(json(
            400,
            err_envelope("INVALID_TRANSACTION_ID", "transactionId is required"),
        ))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(wiremock::matchers::path("/api/payments/html/status"))
        .respond_with(ResponseTemplate::new(404).set_body_string("<html>Not here.</html>"))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(wiremock::matchers::path("/api/payments/null/status"))
        .respond_with(json(200, r#"{"isSuccess":true,"data":null}"#))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(wiremock::matchers::path("/api/payments/decode/status"))
        .respond_with(json(200, ok_envelope(r#"{"transactionId":true}"#)))
        .mount(&server)
        .await;
    let c = client_with_key(&server.uri(), KEY);
    let mut errors = Vec::new();
    for id in ["api", "html", "null", "decode", ""] {
        errors.push(c.status(id).await.unwrap_err());
    }
    errors.push(
        client_for(&refused_url().await)
            .status("x")
            .await
            .unwrap_err(),
    );
    errors.push(Client::builder("nope").build().unwrap_err());
    errors.push(
        InitiateRequest::builder(merchant(), "", MinorAmount::new(1).unwrap(), "P", "S")
            .build()
            .unwrap_err(),
    );
    errors.push(Error::from(payments_client::money::MoneyError::NotPositive));
    let expected = [
        "service answered 400 INVALID_TRANSACTION_ID: transactionId is required",
        "unexpected response (HTTP 404): not the response envelope",
        "the service reported success without data (HTTP 200)",
        "could not decode the response at data.transactionId",
        "invalid request: transactionId must not be empty",
        "could not connect to the service",
        "invalid client configuration: invalid base URL",
        "invalid request: referenceNo must not be empty",
        "amount must be greater than 0",
    ];
    for (e, prefix) in errors.iter().zip(expected) {
        assert_display_style(e);
        assert!(
            e.to_string().starts_with(prefix),
            "{e} does not start with {prefix}"
        );
    }
}

#[test]
fn debug_of_builder_and_client_redacts_the_key() {
    let builder = Client::builder("http://127.0.0.1:1").api_key(KEY);
    assert!(!format!("{builder:?}").contains(KEY));
    let client = builder.build().unwrap();
    let dbg = format!("{client:?}");
    assert!(!dbg.contains(KEY), "{dbg}");
    assert!(dbg.contains("REDACTED"), "{dbg}");
}

#[test]
fn a_key_that_is_not_a_header_value_is_rejected_without_echoing_it() {
    let err = Client::builder("http://127.0.0.1:1")
        .api_key("bad\nkey")
        .build()
        .unwrap_err();
    assert!(!err.to_string().contains("bad\nkey"));
    assert!(matches!(err, Error::Config { .. }));
}

/// A key with a space or a character outside visible ASCII (a pasted
/// no-break space, `sk_lïve_clé`) would be sent as raw bytes and refused
/// by the service at the first call: it is refused at build, by what it
/// holds, never shown; with a custom header too.
#[test]
fn a_key_that_is_not_visible_ascii_is_refused_at_build_without_showing_it() {
    let cases = [
        ("sk_lïve_clé", "a character outside ASCII"),
        ("sk_live\u{a0}SECRET", "a space"),
        ("sk_live SECRET", "a space"),
        ("sk_live_SECRET\t", "a control character (a tab)"),
        ("sk_live_SECRET\r", "a control character (a carriage return"),
        ("sk_live_SECRET\u{7f}", "a control character"),
        ("sk_live_\u{200b}SECRET", "a character outside ASCII"),
    ];
    for (key, holds) in cases {
        for header in [None, Some("X-Api-Key")] {
            let mut builder = Client::builder("http://127.0.0.1:1").api_key(key);
            if let Some(header) = header {
                builder = builder.auth_header(header);
            }
            let err = builder.build().unwrap_err();
            assert!(matches!(err, Error::Config { .. }), "{key:?}: {err:?}");
            let text = err.to_string();
            assert!(text.contains("visible ASCII without spaces"), "{text}");
            assert!(text.contains(holds), "{key:?}: {text}");
            assert!(!text.contains("SECRET") && !text.contains("lïve"), "{text}");
            assert!(!format!("{err:?}").contains("SECRET"), "{err:?}");
        }
    }
    // Every visible ASCII character is a key's.
    let all: String = (0x21u8..=0x7e).map(char::from).collect();
    Client::builder("http://127.0.0.1:1")
        .api_key(all)
        .build()
        .expect("a visible ASCII key");
}

#[test]
fn the_public_types_are_send_sync_and_clients_are_cheap_clones() {
    fn assert_send_sync<T: Send + Sync + 'static>() {}
    assert_send_sync::<Client>();
    assert_send_sync::<Error>();
    assert_send_sync::<payments_client::Reply<payments_client::PaymentStatus>>();
    assert_send_sync::<payments_client::InitiateRequest>();
    let a = Client::builder("http://127.0.0.1:1").build().unwrap();
    let b = a.clone();
    assert_eq!(a.base_url(), b.base_url());
}

#[test]
fn errors_stay_small_enough_to_return_by_value() {
    assert!(
        std::mem::size_of::<Error>() <= 128,
        "{}",
        std::mem::size_of::<Error>()
    );
}

#[tokio::test]
async fn a_redirect_is_not_followed() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(302).insert_header("location", "/elsewhere"))
        .expect(1)
        .mount(&server)
        .await;
    let req = payments_client::ConfirmRequest::builder(TX_ID, "INV-1")
        .build()
        .unwrap();
    let err = client(&server).confirm(req).await.unwrap_err();
    assert_eq!(err.http_status(), Some(302));
    assert!(matches!(err, Error::UnexpectedResponse { .. }));
}

/// An application's tests make the refusals they handle with
/// `ApiError::new`: the one made is the one the client reports for the
/// same answer (the envelope byte for byte), and the client's verdicts on
/// it are a real answer's.
#[tokio::test]
async fn a_made_api_error_is_the_one_the_client_reports_for_that_answer() {
    use payments_client::{ApiError, ErrorCode, Outcome};
    use std::time::Duration;

    let cases = [
        (
            400,
            ErrorCode::TransactionExpired,
            "Payment window \"closed\"",
        ),
        (500, ErrorCode::InternalError, ""),
        (
            403,
            ErrorCode::Other("SHOP_BLOCKED".to_owned()),
            "Ask \u{1F6AB}",
        ),
    ];
    for (status, code, message) in cases {
        let made = ApiError::new(status, code.clone(), message);
        let server = MockServer::start().await;
        Mock::given(method("GET"))
            .respond_with(json(status, made.raw_envelope.clone()))
            .mount(&server)
            .await;
        let got = client_for(&server.uri()).status("T1").await.unwrap_err();
        let Error::Api(api) = &got else {
            panic!("not an API error: {got:?}")
        };
        let made = made.with_request_id(api.request_id.clone());
        assert_eq!(**api, made, "{status} {code}");
        let made: Error = made.into();
        assert_eq!(made.outcome(), got.outcome());
        assert_eq!(made.is_retryable(), got.is_retryable());
        assert_eq!(made.to_string(), got.to_string());
    }
    // The envelope the service sends, in the document's order of fields.
    assert_eq!(
        ApiError::new(400, ErrorCode::TransactionExpired, "Payment window closed").raw_envelope,
        err_envelope("TRANSACTION_EXPIRED", "Payment window closed")
    );
    let unknown: Error = ApiError::new(500, ErrorCode::InternalError, "").into();
    assert_eq!(unknown.outcome(), Outcome::Unknown);
    let later =
        ApiError::new(429, ErrorCode::RateLimited, "").with_retry_after(Duration::from_secs(3));
    assert_eq!(later.retry_after, Some(Duration::from_secs(3)));
}
