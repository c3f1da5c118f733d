//! Request bodies (pinned with insta), the checks made before sending
//! (what the interface document states and what the client needs; the
//! mock's limits are in `service_limits.rs`), and the builders' ways to set
//! extraProperties.

mod common;

use common::*;
use payments_client::{ConfirmRequest, Currency, Error, InitiateRequest, MinorAmount};
use serde_json::json;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer};

fn amount(n: u64) -> MinorAmount {
    MinorAmount::new(n).unwrap()
}

fn full_initiate() -> InitiateRequest {
    InitiateRequest::builder(
        merchant(),
        "INV/2026/0001",
        amount(15000),
        "GIFTCARD",
        "STORE-1",
    )
    .description("Gift card for Ana")
    .currency(Currency::MYR)
    .quantity(2)
    .country_code("MY")
    .device_id("POS-7")
    .payer_id("60123456789")
    .return_url("https://shop.example/return?order=1")
    .extra_properties(
        // Parsed from text: `json!` would turn 75.00 into an f64.
        serde_json::from_str(r#"{"denomination": 75.00, "recipient": {"name": "Ana"}}"#).unwrap(),
    )
    .build()
    .unwrap()
}

fn invalid(err: Error) -> payments_client::error::ValidationErrors {
    match err {
        Error::InvalidInput(v) => v,
        other => panic!("expected InvalidInput, got {other:?}"),
    }
}

#[test]
fn initiate_body_with_every_field() {
    insta::assert_json_snapshot!(full_initiate());
}

#[test]
fn initiate_body_with_required_fields_only() {
    let req = InitiateRequest::builder(merchant(), "INV-1", amount(1), "TOPUP", "S1")
        .build()
        .unwrap();
    insta::assert_json_snapshot!(req);
}

#[test]
fn confirm_body_with_every_field() {
    let req = ConfirmRequest::builder(TX_ID, "INV-1")
        .confirmation_code("123456")
        .extra_properties(json!({"otpChannel": "sms"}))
        .build()
        .unwrap();
    insta::assert_json_snapshot!(req);
}

#[test]
fn confirm_body_with_required_fields_only() {
    let req = ConfirmRequest::builder(TX_ID, "INV-1").build().unwrap();
    insta::assert_json_snapshot!(req);
}

#[tokio::test]
async fn the_wire_body_is_the_serialised_request() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(json_response())
        .mount(&server)
        .await;
    let req = full_initiate();
    let expected = serde_json::to_string(&req).unwrap();
    client(&server).initiate(req).await.unwrap();
    let received = &server.received_requests().await.unwrap()[0];
    assert_eq!(String::from_utf8_lossy(&received.body), expected);
    // The amount is a JSON integer and extraProperties a string of JSON.
    assert!(expected.contains(r#""amount":15000"#), "{expected}");
    assert!(
        expected.contains(r#""extraProperties":"{\"denomination\":75.00,"#),
        "{expected}"
    );
}

/// The answer to [`full_initiate`]: its echo, as the client checks it.
fn json_response() -> wiremock::ResponseTemplate {
    let data = initiate_data()
        .replace(
            r#""referenceNo":"INV-1""#,
            r#""referenceNo":"INV/2026/0001""#,
        )
        .replace(r#""productCode":"TOPUP""#, r#""productCode":"GIFTCARD""#);
    common::json(200, ok_envelope(&data))
}

#[test]
fn every_initiate_problem_is_reported_at_once_in_document_order() {
    let err = InitiateRequest::builder(merchant(), "", amount(9_007_199_254_740_992), "", "")
        .currency(Currency::from_wire("ZZZ"))
        .country_code("XX")
        .return_url("/return")
        .extra_properties(json!([1, 2]))
        .build()
        .unwrap_err();
    let v = invalid(err);
    let fields: Vec<&str> = v.errors().iter().map(|e| e.field).collect();
    assert_eq!(
        fields,
        [
            "referenceNo",
            "amount",
            "currencyCode",
            "productCode",
            "countryCode",
            "storeId",
            "returnUrl",
            "extraProperties"
        ]
    );
    insta::assert_snapshot!(v.to_string());
}

#[test]
fn reference_rules_are_checked() {
    // Empty, or a dot segment status by reference could not send.
    for bad in ["", ".", ".."] {
        let err = InitiateRequest::builder(merchant(), bad, amount(1), "TOPUP", "S1")
            .build()
            .unwrap_err();
        assert!(invalid(err).has("referenceNo"), "{bad:?}");
    }
    // Length, whitespace and control characters are the service's to
    // judge (the mock's 1-64 rule is its own).
    for good in [
        " INV",
        "INV ",
        " ",
        "IN\u{7}V",
        &"r".repeat(65),
        "INV/2026/0001",
        "a b",
        "100%",
        "#1",
        "?x",
        "ü",
        &"r".repeat(64),
    ] {
        InitiateRequest::builder(merchant(), good, amount(1), "TOPUP", "S1")
            .build()
            .unwrap();
    }
}

#[test]
fn extra_properties_must_be_an_object_of_any_size() {
    // Over the mock's 16 KiB: its size is the service's to limit.
    let big = json!({ "blob": "x".repeat(16 * 1024) });
    let req = InitiateRequest::builder(merchant(), "R", amount(1), "TOPUP", "S1")
        .extra_properties(big)
        .build()
        .unwrap();
    assert!(req.extra_properties().unwrap().len() > 16 * 1024);
    let err = ConfirmRequest::builder(TX_ID, "R")
        .extra_properties(json!("text"))
        .build()
        .unwrap_err();
    assert!(invalid(err).has("extraProperties"));
}

#[test]
fn extra_properties_can_be_set_one_by_one_without_serde_json() {
    let req = InitiateRequest::builder(merchant(), "R", amount(1), "GIFTCARD", "S1")
        .extra_property("count", 2)
        .extra_property("denomination", "75.00")
        .extra_property("recipient", ["Ana", "Ben"])
        .build()
        .unwrap();
    let sent: serde_json::Value = serde_json::from_str(req.extra_properties().unwrap()).unwrap();
    assert_eq!(
        sent,
        json!({"count": 2, "denomination": "75.00", "recipient": ["Ana", "Ben"]})
    );
    // A property after a whole object adds to it; a whole object replaces.
    let req = ConfirmRequest::builder(TX_ID, "R")
        .extra_properties_json(r#"{"a": 1}"#)
        .extra_property("b", true)
        .build()
        .unwrap();
    assert_eq!(req.extra_properties(), Some(r#"{"a":1,"b":true}"#));
    let req = ConfirmRequest::builder(TX_ID, "R")
        .extra_property("b", true)
        .extra_properties_json(r#"{"a": 1}"#)
        .build()
        .unwrap();
    assert_eq!(req.extra_properties(), Some(r#"{"a":1}"#));
}

#[test]
fn extra_properties_that_are_not_a_json_object_are_reported_by_build() {
    let not_json = InitiateRequest::builder(merchant(), "R", amount(1), "TOPUP", "S1")
        .extra_properties_json("{oops")
        .build()
        .unwrap_err();
    assert!(
        not_json
            .to_string()
            .contains("extraProperties is not valid JSON"),
        "{not_json}"
    );
    let array = ConfirmRequest::builder(TX_ID, "R")
        .extra_properties_json("[1, 2]")
        .extra_property("ignored", 1)
        .build()
        .unwrap_err();
    assert_eq!(
        array.to_string(),
        "invalid request: extraProperties must be a JSON object"
    );
    // A map with keys JSON cannot hold.
    let keys = std::collections::BTreeMap::from([((1, 2), "x")]);
    let unwritable = ConfirmRequest::builder(TX_ID, "R")
        .extra_property("odd", keys)
        .build()
        .unwrap_err();
    assert!(
        invalid(unwritable).has("extraProperties"),
        "a value that cannot be JSON is a validation problem"
    );
}

#[test]
fn confirm_problems_are_reported_at_once() {
    let err = ConfirmRequest::builder("", "")
        .extra_properties(json!(1))
        .build()
        .unwrap_err();
    let v = invalid(err);
    let fields: Vec<&str> = v.errors().iter().map(|e| e.field).collect();
    assert_eq!(fields, ["transactionId", "referenceNo", "extraProperties"]);
    // The read-back after an ambiguous confirm puts the id in a URL path.
    for id in [".", ".."] {
        let err = ConfirmRequest::builder(id, "R").build().unwrap_err();
        assert!(invalid(err).has("transactionId"), "{id}");
    }
}

#[test]
fn the_largest_amount_is_accepted() {
    InitiateRequest::builder(
        merchant(),
        "R",
        amount(9_007_199_254_740_991),
        "TOPUP",
        "S1",
    )
    .build()
    .unwrap();
}
