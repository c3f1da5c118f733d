//! The client's types agree with the mock's OpenAPI document (issue 19):
//! the requests send exactly the documented fields and pass the documented
//! schema; the responses read exactly the documented fields, need only the
//! documented required ones; the status and error-code enums are the
//! document's. The document is the one a real mock serves.

use payments_client::{
    ConfirmRequest, Confirmation, Currency, ErrorCode, InitiateRequest, Initiated, MinorAmount,
    PaymentStatus, TransactionStatus, Uuid,
};
use payments_mock_server::MockServer;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use std::collections::BTreeSet;

async fn document() -> Value {
    let server = MockServer::start().await;
    let bytes = reqwest::get(format!("{}/openapi.json", server.base_url()))
        .await
        .expect("the mock answers")
        .bytes()
        .await
        .expect("a body");
    let doc = serde_json::from_slice(&bytes).expect("JSON");
    server.shutdown().await;
    doc
}

fn keys(value: &Value) -> BTreeSet<String> {
    value
        .as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default()
}

fn validator(doc: &Value, component: &str) -> jsonschema::Validator {
    let root = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "components": doc["components"],
        "$ref": format!("#/components/schemas/{component}"),
    });
    jsonschema::options()
        .should_validate_formats(true)
        .with_format("json-object", |s: &str| {
            serde_json::from_str::<Map<String, Value>>(s).is_ok()
        })
        .build(&root)
        .expect("the component compiles")
}

fn merchant() -> Uuid {
    Uuid::parse_str("4f9a1a8e-2c36-4d7e-9b1a-0c2a8f3d5e61").expect("literal uuid")
}

#[tokio::test]
async fn requests_send_exactly_the_documented_fields_and_pass_the_schema() {
    let doc = document().await;
    let schemas = &doc["components"]["schemas"];
    let amount = MinorAmount::new(1050).expect("positive");
    let full = InitiateRequest::builder(merchant(), "INV/2026/17", amount, "GIFTCARD", "S1")
        .description("two cards")
        .currency(Currency::MYR)
        .quantity(2)
        .country_code("MY")
        .device_id("POS-7")
        .payer_id("60123456789")
        .return_url("https://shop.example/back?order=17")
        .extra_properties(json!({ "channel": "pos" }))
        .build()
        .expect("valid");
    let minimal = InitiateRequest::builder(merchant(), "INV-1", amount, "DECLINED", "S1")
        .build()
        .expect("valid");
    let confirm_full = ConfirmRequest::builder("0192f7c4-2d1e-7a10-9c55-5d3a8f7b1e01", "INV-1")
        .confirmation_code("123456")
        .extra_properties(json!({ "device": "x" }))
        .build()
        .expect("valid");
    let confirm_minimal = ConfirmRequest::builder("0192f7c4-2d1e-7a10-9c55-5d3a8f7b1e01", "INV-1")
        .build()
        .expect("valid");
    for (component, full, minimal) in [
        (
            "InitiateRequest",
            serde_json::to_value(&full).expect("serializes"),
            serde_json::to_value(&minimal).expect("serializes"),
        ),
        (
            "ConfirmRequest",
            serde_json::to_value(&confirm_full).expect("serializes"),
            serde_json::to_value(&confirm_minimal).expect("serializes"),
        ),
    ] {
        let schema = &schemas[component];
        assert_eq!(
            keys(&full),
            keys(&schema["properties"]),
            "{component}: the fields the client can send"
        );
        let required: BTreeSet<String> = schema["required"]
            .as_array()
            .expect("required")
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect();
        assert_eq!(
            keys(&minimal),
            required,
            "{component}: the fields the client always sends"
        );
        let validator = validator(&doc, component);
        for body in [&full, &minimal] {
            let errors: Vec<String> = validator.iter_errors(body).map(|e| e.to_string()).collect();
            assert!(errors.is_empty(), "{component} {body}: {errors:?}");
        }
    }
}

/// A value for `schema` (what the mock would write there).
fn sample(doc: &Value, schema: &Value) -> Value {
    if let Some(reference) = schema["$ref"].as_str() {
        let name = reference.rsplit('/').next().unwrap_or_default();
        return sample(doc, &doc["components"]["schemas"][name]);
    }
    if let Some(values) = schema["enum"].as_array() {
        return values
            .iter()
            .find(|v| !v.is_null())
            .cloned()
            .unwrap_or(Value::Null);
    }
    if let Some(options) = schema["anyOf"].as_array().or(schema["oneOf"].as_array()) {
        return options
            .iter()
            .map(|o| sample(doc, o))
            .find(|v| !v.is_null())
            .unwrap_or(Value::Null);
    }
    let types: Vec<&str> = match &schema["type"] {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
        _ => vec![],
    };
    let first = types
        .iter()
        .copied()
        .find(|t| *t != "null")
        .unwrap_or("null");
    match (first, schema["format"].as_str()) {
        ("string", Some("uuid")) => json!("0192f7c4-2d1e-7a10-9c55-5d3a8f7b1e01"),
        ("string", Some("date-time")) => json!("2026-11-22T08:15:30.123Z"),
        ("string", _) => json!("text"),
        ("integer", _) => json!(1050),
        ("number", _) => serde_json::from_str("10.50").expect("a number"),
        ("boolean", _) => json!(true),
        ("object", _) => json!({}),
        _ => Value::Null,
    }
}

/// `T` reads a document-shaped `data`, writes back exactly the documented
/// fields, and needs none the document leaves optional.
fn agrees<T: DeserializeOwned + serde::Serialize>(doc: &Value, component: &str) {
    let schema = &doc["components"]["schemas"][component];
    let properties = schema["properties"].as_object().expect("properties");
    let full: Map<String, Value> = properties
        .iter()
        .map(|(k, s)| (k.clone(), sample(doc, s)))
        .collect();
    let parsed: T = serde_json::from_value(Value::Object(full.clone()))
        .unwrap_or_else(|e| panic!("{component}: the client cannot read {full:?}: {e}"));
    let back = serde_json::to_value(&parsed).expect("serializes");
    assert_eq!(
        keys(&back),
        keys(&Value::Object(properties.clone())),
        "{component}: field names"
    );
    let required: BTreeSet<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for name in properties.keys() {
        let mut without = full.clone();
        without.remove(name);
        let reads = serde_json::from_value::<T>(Value::Object(without)).is_ok();
        if !required.contains(name.as_str()) {
            assert!(
                reads,
                "{component}: the client needs {name}, which the document makes optional"
            );
        }
    }
}

#[tokio::test]
async fn responses_read_exactly_the_documented_fields() {
    let doc = document().await;
    agrees::<Initiated>(&doc, "InitiateData");
    agrees::<Confirmation>(&doc, "ConfirmData");
    agrees::<PaymentStatus>(&doc, "StatusData");
}

#[tokio::test]
async fn the_enums_are_the_documents() {
    let doc = document().await;
    let listed = |name: &str| -> BTreeSet<String> {
        doc["components"]["schemas"][name]["enum"]
            .as_array()
            .expect("an enum")
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect()
    };
    let statuses: BTreeSet<String> = TransactionStatus::KNOWN
        .iter()
        .map(|s| s.as_str().to_owned())
        .collect();
    assert_eq!(statuses, listed("TransactionStatus"));
    let codes: BTreeSet<String> = ErrorCode::KNOWN
        .iter()
        .map(|c| c.as_str().to_owned())
        .collect();
    // The contract proxy's own answers are the proxy's, not the mock's: its
    // document leaves them out, the client knows them too.
    let proxys = ["UPSTREAM_UNAVAILABLE", "CONTRACT_VIOLATION"].map(str::to_owned);
    let mut documented = listed("ErrorCode");
    assert!(proxys.iter().all(|c| !documented.contains(c)));
    documented.extend(proxys);
    assert_eq!(codes, documented);
}
