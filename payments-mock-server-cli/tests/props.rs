//! Property tests: validation and path decoding never panic.

use payments_mock_server::Catalog;
use payments_mock_server::domain::validate::{
    confirm as validate_confirm, initiate as validate_initiate, parse_object,
};
use payments_mock_server::http::decode_segment;
use proptest::prelude::*;
use serde_json::{Map, Value};

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        "[0-9]{1,25}(\\.[0-9]{1,5})?(e[0-9]{1,3})?"
            .prop_map(|t| serde_json::from_str(&t).unwrap_or(Value::Null)),
        ".{0,80}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::hash_map(".{0,10}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

const FIELDS: [&str; 17] = [
    "merchantId",
    "referenceNo",
    "description",
    "amount",
    "currencyCode",
    "productCode",
    "quantity",
    "countryCode",
    "storeId",
    "deviceId",
    "payerId",
    "returnUrl",
    "extraProperties",
    "transactionId",
    "confirmationCode",
    "seconds",
    "other",
];

fn request_body() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::vec((prop::sample::select(&FIELDS[..]), json_value()), 0..14)
        .prop_map(|pairs| pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn validation_never_panics_on_arbitrary_json(body in request_body()) {
        let catalog = Catalog::default();
        let _ = validate_initiate(&body, &catalog);
        let _ = validate_confirm(&body);
    }

    #[test]
    fn validation_errors_always_start_with_a_field_name(body in request_body()) {
        if let Err(e) = validate_initiate(&body, &Catalog::default()) {
            for rule in e.to_string().split("; ") {
                prop_assert!(FIELDS.iter().any(|f| rule.starts_with(f)), "{rule}");
            }
        }
    }

    #[test]
    fn body_parsing_never_panics_on_bytes(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = parse_object(&bytes);
    }

    #[test]
    fn path_segment_decoding_never_panics(raw in "(%[0-9A-Fa-f]{2}|%|[ -~]|\\PC){0,40}") {
        if let Some(decoded) = decode_segment(&raw) {
            prop_assert!(decoded.len() <= raw.len());
        }
    }

    #[test]
    fn encoding_then_decoding_a_reference_round_trips(reference in "\\PC{1,64}") {
        let encoded = percent_encoding::utf8_percent_encode(&reference, percent_encoding::NON_ALPHANUMERIC).to_string();
        prop_assert_eq!(decode_segment(&encoded), Some(reference));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn the_router_answers_an_envelope_to_any_body(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let runtime = tokio::runtime::Builder::new_current_thread().build().expect("runtime");
        runtime.block_on(async {
            let (_, router) = crate::common::service();
            for path in ["/api/payments/initiate", "/api/payments/confirm"] {
                let req = axum::http::Request::post(path)
                    .body(axum::body::Body::from(bytes.clone()))
                    .expect("request");
                let reply = crate::common::send(&router, req).await;
                assert!(reply.body["isSuccess"].is_boolean());
            }
        });
    }
}
