//! The document's request rules are the validator's (issue 19): for bodies
//! mutated from valid ones, the served document's JSON Schema accepts a
//! body exactly when the validator does. Checked with the `jsonschema`
//! crate, so the patterns run in a JSON Schema engine, not in the mock's
//! own regex code.

use payments_mock_server::domain::validate::{
    confirm as validate_confirm, initiate as validate_initiate,
};
use payments_mock_server::http::app;
use payments_mock_server::state::AppState;
use payments_mock_server::{Catalog, Config};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

/// The served document of a default server.
fn served_document() -> Value {
    let state = AppState::new(Config::default());
    let _router = app(state.clone());
    serde_json::from_slice(&state.openapi_json()).expect("a document")
}

/// A validator for `schema`, whose `$ref`s point into `doc`'s components.
fn validator_in(doc: &Value, schema: &Value) -> jsonschema::Validator {
    let root = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "components": doc["components"],
        "allOf": [schema],
    });
    jsonschema::options()
        .should_validate_formats(true)
        .with_format("json-object", |s: &str| {
            serde_json::from_str::<Map<String, Value>>(s).is_ok()
        })
        .build(&root)
        .expect("the schema compiles")
}

/// The served document and a validator for one of its components.
fn schema_of(component: &str) -> jsonschema::Validator {
    let reference = json!({ "$ref": format!("#/components/schemas/{component}") });
    validator_in(&served_document(), &reference)
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        ".{0,3}",
        "[ \t\u{a0}\u{85}\u{2028}]?[A-Za-z0-9/ ?#%.]{0,70}[ \t\u{a0}\u{3000}]?",
        "\\PC{0,70}",
        "[\u{0}-\u{1f}\u{7f}-\u{9f}]{1,3}",
        Just(".".to_owned()),
        Just("..".to_owned()),
        Just(String::new()),
        "x{60,70}",
        "é{60,70}",
    ]
}

fn string_or_other() -> impl Strategy<Value = Value> {
    prop_oneof![
        8 => text().prop_map(Value::String),
        1 => Just(Value::Null),
        1 => any::<i64>().prop_map(Value::from),
        1 => Just(json!(true)),
        1 => Just(json!(["a"])),
    ]
}

fn uuidish() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!("6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60")),
        Just(json!("6F1C0D3E-1B7A-4C1E-9A55-1C2B3D4E5F60")),
        Just(json!("{6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60}")),
        Just(json!("6f1c0d3e1b7a4c1e9a551c2b3d4e5f60")),
        Just(json!("urn:uuid:6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60")),
        string_or_other(),
    ]
}

fn amount() -> impl Strategy<Value = Value> {
    prop_oneof![
        (1u64..=9_007_199_254_740_991).prop_map(Value::from),
        Just(json!(9_007_199_254_740_992u64)),
        Just(json!(0)),
        Just(json!(-1)),
        Just(json!(1.5)),
        Just(json!("100")),
        Just(Value::Null),
    ]
}

fn code(valid: &'static [&'static str]) -> impl Strategy<Value = Value> {
    prop_oneof![
        prop::sample::select(valid).prop_map(Value::from),
        "[A-Za-z]{0,4}".prop_map(Value::from),
        Just(Value::Null),
        Just(json!(7)),
    ]
}

fn url() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!("https://shop.example/back?order=17#top")),
        Just(json!("http://127.0.0.1:44417/r")),
        Just(json!("javascript:alert(1)")),
        Just(json!("//shop.example/x")),
        Just(json!("https://shop_example.com/")),
        Just(json!("https://1.2.3.4.5/")),
        Just(json!("HTTPS://shop.example/")),
        Just(json!("https://shop.example:70000/")),
        "https://[a-z]{1,8}\\.example(:[0-9]{1,5})?/[a-zé0-9/?#%&= ]{0,20}".prop_map(Value::from),
        string_or_other(),
    ]
}

/// (Not `1.0`: see `integer_literals_are_the_one_rule_json_schema_cannot_say`.)
fn small_int() -> impl Strategy<Value = Value> {
    prop_oneof![
        (-2i64..1003).prop_map(Value::from),
        Just(json!(1.5)),
        Just(json!("3")),
        Just(Value::Null),
    ]
}

/// `extraProperties`: objects, strings holding them, and what is neither.
fn extra() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!({ "channel": "pos" })),
        Just(json!({})),
        Just(json!("{\"channel\": \"pos\"}")),
        Just(json!(" {} ")),
        Just(json!("{")),
        Just(json!("[1]")),
        Just(json!("")),
        ".{0,6}".prop_map(Value::from),
        Just(Value::Null),
        Just(json!([1])),
        Just(json!(3)),
    ]
}

/// A valid body for each product of the default catalogue.
fn valid_initiate(product: &str) -> Map<String, Value> {
    let mut body = json!({
        "merchantId": "6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60",
        "referenceNo": "INV/2026 #17?",
        "amount": 4990,
        "productCode": product,
        "storeId": "S1",
        "payerId": "60123456789",
        "returnUrl": "https://shop.example/back",
    });
    if product == "GIFTCARD" {
        body["quantity"] = json!(3);
    }
    match body {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// One field and a value for it (`None`: remove the field).
fn mutation() -> impl Strategy<Value = (&'static str, Option<Value>)> {
    prop_oneof![
        uuidish().prop_map(|v| ("merchantId", Some(v))),
        string_or_other().prop_map(|v| ("referenceNo", Some(v))),
        string_or_other().prop_map(|v| ("description", Some(v))),
        amount().prop_map(|v| ("amount", Some(v))),
        code(&["MYR", "JPY", "KWD", "XXX", "myr", "AAA"]).prop_map(|v| ("currencyCode", Some(v))),
        code(&[
            "TOPUP",
            "BILLPAY",
            "GIFTCARD",
            "EWALLET",
            "DECLINED",
            "ONLINEBANKING",
            "NOPE"
        ])
        .prop_map(|v| ("productCode", Some(v))),
        small_int().prop_map(|v| ("quantity", Some(v))),
        code(&["MY", "SG", "AA", "my"]).prop_map(|v| ("countryCode", Some(v))),
        string_or_other().prop_map(|v| ("storeId", Some(v))),
        string_or_other().prop_map(|v| ("deviceId", Some(v))),
        string_or_other().prop_map(|v| ("payerId", Some(v))),
        url().prop_map(|v| ("returnUrl", Some(v))),
        extra().prop_map(|v| ("extraProperties", Some(v))),
        prop::sample::select(
            &[
                "merchantId",
                "referenceNo",
                "amount",
                "productCode",
                "storeId",
                "payerId",
                "returnUrl",
                "quantity"
            ][..]
        )
        .prop_map(|k| (k, None)),
    ]
}

/// A valid body with up to three fields changed or removed.
fn initiate_body() -> impl Strategy<Value = Map<String, Value>> {
    (
        prop::sample::select(
            &[
                "TOPUP",
                "BILLPAY",
                "GIFTCARD",
                "EWALLET",
                "DECLINED",
                "ONLINEBANKING",
            ][..],
        ),
        prop::collection::vec(mutation(), 0..=3),
    )
        .prop_map(|(product, mutations)| {
            let mut body = valid_initiate(product);
            for (field, value) in mutations {
                match value {
                    Some(v) => body.insert(field.to_owned(), v),
                    None => body.remove(field),
                };
            }
            body
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn an_initiate_body_is_valid_by_the_document_exactly_when_the_mock_accepts_it(body in initiate_body()) {
        // (About a quarter of the bodies are valid: no mutation, or a valid one.)
        thread_local! {
            static SCHEMA: jsonschema::Validator = schema_of("InitiateRequest");
        }
        let by_document = SCHEMA.with(|s| s.is_valid(&Value::Object(body.clone())));
        let by_mock = validate_initiate(&body, &Catalog::default());
        prop_assert_eq!(
            by_document,
            by_mock.is_ok(),
            "document {} / mock {:?} for {}",
            by_document,
            by_mock.err().map(|e| e.to_string()),
            Value::Object(body)
        );
    }

    #[test]
    fn a_confirm_body_is_valid_by_the_document_exactly_when_the_mock_accepts_it(
        id in string_or_other(),
        reference in string_or_other(),
        code in string_or_other(),
        x in extra(),
        present in prop::collection::vec(any::<bool>(), 4),
    ) {
        thread_local! {
            static SCHEMA: jsonschema::Validator = schema_of("ConfirmRequest");
        }
        let body: Map<String, Value> = [
            ("transactionId", id),
            ("referenceNo", reference),
            ("confirmationCode", code),
            ("extraProperties", x),
        ]
        .into_iter()
        .zip(present)
        .filter(|(_, keep)| *keep)
        .map(|((k, v), _)| (k.to_owned(), v))
        .collect();
        let by_document = SCHEMA.with(|s| s.is_valid(&Value::Object(body.clone())));
        let by_mock = validate_confirm(&body);
        prop_assert_eq!(
            by_document,
            by_mock.is_ok(),
            "document {} / mock {:?} for {}",
            by_document,
            by_mock.err().map(|e| e.to_string()),
            Value::Object(body)
        );
    }
}

#[test]
fn the_document_lists_exactly_the_products_of_the_servers_catalogue() {
    let catalog = Catalog::from_toml_str("[[product]]\ncode = \"ONLY\"\n").expect("a catalogue");
    let mut config = Config::default();
    config.catalog = catalog;
    let state = AppState::new(config);
    let _router = app(state.clone());
    let doc: Value = serde_json::from_slice(&state.openapi_json()).expect("a document");
    let codes =
        &doc["components"]["schemas"]["InitiateRequest"]["properties"]["productCode"]["enum"];
    assert_eq!(codes, &json!(["ONLY"]));
}

/// CONTRACT section 1 makes `1e2` and `1.0` type errors for an integer
/// field; JSON Schema's `integer` is a value with no fraction, so it admits
/// them. The one documented difference (said in the field's description);
/// generators produce plain integers, which both accept.
#[test]
fn integer_literals_are_the_one_rule_json_schema_cannot_say() {
    let schema = schema_of("InitiateRequest");
    for literal in ["1.0", "1e2", "100.00"] {
        let mut body = valid_initiate("TOPUP");
        body.insert(
            "amount".to_owned(),
            serde_json::from_str(literal).expect("a number"),
        );
        assert!(schema.is_valid(&Value::Object(body.clone())), "{literal}");
        let refused = validate_initiate(&body, &Catalog::default()).expect_err(literal);
        assert_eq!(refused.to_string(), "amount must be an integer");
    }
}

/// The examples a generator shows and schemathesis's examples phase sends
/// are valid by their own schemas, and each product's initiate example is
/// one the mock accepts.
#[test]
fn every_example_in_the_document_is_valid_by_its_schema() {
    let doc = served_document();
    let validator = |schema: &Value| validator_in(&doc, schema);
    let mut bodies = 0;
    let mut params = 0;
    let mut initiated = Vec::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, operation) in item.as_object().expect("an item") {
            let id = operation["operationId"].as_str().unwrap_or_default();
            for (content_type, media) in operation["requestBody"]["content"]
                .as_object()
                .into_iter()
                .flatten()
            {
                let schema = validator(&media["schema"]);
                for (name, example) in media["examples"].as_object().into_iter().flatten() {
                    let value = &example["value"];
                    assert!(
                        schema.is_valid(value),
                        "{method} {path} ({content_type}) example {name} is not valid: {value}"
                    );
                    bodies += 1;
                    if id == "initiate" {
                        let body = value.as_object().expect("an object").clone();
                        let accepted = validate_initiate(&body, &Catalog::default());
                        assert!(accepted.is_ok(), "{name}: {:?}", accepted.err());
                        initiated.push(body["productCode"].clone());
                    }
                }
            }
            for p in operation["parameters"].as_array().into_iter().flatten() {
                assert!(
                    p["in"] != "path" || p.get("example").is_some(),
                    "{method} {path}: the path parameter {} has no example",
                    p["name"]
                );
                if let Some(example) = p.get("example") {
                    assert!(
                        validator(&p["schema"]).is_valid(example),
                        "{method} {path}: the example of {} is not valid: {example}",
                        p["name"]
                    );
                    params += 1;
                }
            }
        }
    }
    let products: Vec<Value> = Catalog::default()
        .products()
        .map(|p| json!(p.code))
        .collect();
    assert_eq!(initiated, products, "one initiate example per product");
    assert!(bodies >= 15, "{bodies} body examples");
    assert!(params >= 7, "{params} parameter examples");
}
