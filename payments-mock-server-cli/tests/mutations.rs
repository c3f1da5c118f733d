//! Structured near-valid bodies (issue #8, item 2): a valid initiate body is
//! always accepted, and the same body with one field broken (wrong type,
//! length or value, or removed) is always a 400 envelope whose every rule
//! names that field — through the whole router, never a panic.

use axum::body::Body;
use axum::http::Request;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

use crate::common::{Reply, send, service};

/// A valid initiate body for one of the default products.
fn valid_body() -> impl Strategy<Value = Map<String, Value>> {
    let product =
        prop::sample::select(&["TOPUP", "BILLPAY", "GIFTCARD", "EWALLET", "DECLINED"][..]);
    (
        any::<u128>(),
        any::<bool>(),
        "[A-Za-z0-9]([A-Za-z0-9 /?#%é_.-]{0,62}[A-Za-z0-9])?",
        1..=9_007_199_254_740_991u64,
        prop::option::of(prop::sample::select(
            &["MYR", "JPY", "KWD", "USD", "EUR"][..],
        )),
        product,
        prop::option::of(1..=10u32),
        prop::option::of(prop::sample::select(&["MY", "SG", "US", "JP"][..])),
        "[A-Za-z0-9]{1,64}",
        prop::option::of("[A-Za-z0-9]{1,64}"),
        "[0-9]{1,128}",
        (
            prop::option::of(".{0,40}"),
            prop::option::of("[a-z]{1,20}"),
            prop::option::of(0..3u8),
        ),
    )
        .prop_map(
            |(
                merchant,
                upper,
                reference,
                amount,
                currency,
                product,
                quantity,
                country,
                store,
                device,
                payer,
                (description, path, extra),
            )| {
                let mut merchant = uuid::Uuid::from_u128(merchant).to_string();
                if upper {
                    merchant = merchant.to_uppercase();
                }
                let mut body = json!({
                    "merchantId": merchant,
                    "referenceNo": reference,
                    "amount": amount,
                    "productCode": product,
                    "storeId": store,
                    "payerId": payer,
                });
                let map = body.as_object_mut().expect("object");
                let optional = [
                    ("currencyCode", currency.map(Value::from)),
                    ("quantity", quantity.map(Value::from)),
                    ("countryCode", country.map(Value::from)),
                    ("deviceId", device.map(Value::from)),
                    ("description", description.map(Value::from)),
                    (
                        "returnUrl",
                        path.map(|p| Value::from(format!("https://shop.example/{p}?x=1"))),
                    ),
                    (
                        "extraProperties",
                        extra.map(|kind| match kind {
                            0 => json!({"note": "n", "n": [1, 2]}),
                            1 => json!("{\"note\":\"n\"}"),
                            _ => Value::Null,
                        }),
                    ),
                ];
                for (name, value) in optional {
                    if let Some(value) = value {
                        map.insert(name.to_owned(), value);
                    }
                }
                map.clone()
            },
        )
}

/// One field and a way to break it.
#[derive(Debug, Clone)]
struct Mutation {
    field: &'static str,
    value: Option<Value>,
}

fn break_one() -> impl Strategy<Value = Mutation> {
    let m = |field: &'static str, value: Value| Mutation {
        field,
        value: Some(value),
    };
    let gone = |field: &'static str| Mutation { field, value: None };
    let long = |n: usize| Value::from("x".repeat(n));
    let wrong_type = prop::sample::select(vec![
        json!(17),
        json!(1.5),
        json!(true),
        json!([]),
        json!(["x"]),
        json!({}),
        json!({"a": 1}),
    ]);
    let string_fields = prop::sample::select(
        &[
            "merchantId",
            "referenceNo",
            "description",
            "currencyCode",
            "productCode",
            "countryCode",
            "storeId",
            "deviceId",
            "payerId",
            "returnUrl",
        ][..],
    );
    prop_oneof![
        // A string field holding another JSON type.
        (string_fields, wrong_type).prop_map(move |(f, v)| m(f, v)),
        // An integer field holding a string, a fraction, an exponent, a bool...
        (
            prop::sample::select(&["amount", "quantity"][..]),
            prop::sample::select(vec![
                json!("100"),
                serde_json::from_str::<Value>("1.5").expect("number"),
                serde_json::from_str::<Value>("1e2").expect("number"),
                serde_json::from_str::<Value>("1.0").expect("number"),
                json!(true),
                json!([1]),
                json!({"v": 1}),
            ])
        )
            .prop_map(move |(f, v)| m(f, v)),
        // Required fields missing or null.
        (
            prop::sample::select(
                &[
                    "merchantId",
                    "referenceNo",
                    "amount",
                    "productCode",
                    "storeId"
                ][..]
            ),
            any::<bool>(),
        )
            .prop_map(move |(f, null)| if null { m(f, Value::Null) } else { gone(f) }),
        // Values out of range or of the wrong form.
        prop::sample::select(vec![
            m("merchantId", json!("not-a-uuid")),
            m("merchantId", json!("6f1c0d3e1b7a4c1e9a551c2b3d4e5f6")),
            m("merchantId", json!("")),
            m("referenceNo", json!("")),
            m("referenceNo", long(65)),
            m("referenceNo", json!(" R-1")),
            m("referenceNo", json!("R-1\t")),
            m("referenceNo", json!("R\u{0}1")),
            m("referenceNo", json!("R\u{7f}1")),
            m("description", long(256)),
            m("amount", json!(0)),
            m("amount", json!(-1)),
            m("amount", json!(9_007_199_254_740_992u64)),
            m(
                "amount",
                serde_json::from_str::<Value>("123456789012345678901234567890").expect("big")
            ),
            m(
                "amount",
                serde_json::from_str::<Value>("-123456789012345678901234567890").expect("big")
            ),
            m("currencyCode", json!("myr")),
            m("currencyCode", json!("ABC")),
            m("currencyCode", json!("XXX")),
            m("currencyCode", json!("DEM")),
            m("currencyCode", json!("")),
            m("productCode", json!("topup")),
            m("productCode", json!("NOPE")),
            m("productCode", json!("")),
            m("productCode", long(33)),
            m("quantity", json!(0)),
            m("quantity", json!(1001)),
            m("quantity", json!(-5)),
            m("countryCode", json!("my")),
            m("countryCode", json!("XX")),
            m("countryCode", json!("MYS")),
            m("countryCode", json!("")),
            m("storeId", json!("")),
            m("storeId", long(65)),
            m("deviceId", json!("")),
            m("deviceId", long(65)),
            m("payerId", json!("")),
            m("payerId", long(129)),
            m("returnUrl", json!("/relative")),
            m("returnUrl", json!("ftp://shop.example/r")),
            m("returnUrl", json!("https://")),
            m(
                "returnUrl",
                Value::from(format!("https://shop.example/{}", "x".repeat(2040)))
            ),
            m("extraProperties", json!([1])),
            m("extraProperties", json!(5)),
            m("extraProperties", json!(true)),
            m("extraProperties", json!("not json")),
            m("extraProperties", json!("[1,2]")),
            m("extraProperties", json!({"big": "x".repeat(17 * 1024)})),
        ]),
    ]
}

fn post_initiate(body: &Map<String, Value>) -> Reply {
    post_bytes(Value::Object(body.clone()).to_string().into_bytes())
}

fn post_bytes(bytes: Vec<u8>) -> Reply {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let (_, router) = service();
        let request = Request::post("/api/payments/initiate")
            .header("content-type", "application/json")
            .body(Body::from(bytes))
            .expect("request");
        send(&router, request).await
    })
}

fn assert_not_json(reply: &Reply) -> Result<(), TestCaseError> {
    prop_assert_eq!(reply.status.as_u16(), 400, "{}", reply.body);
    prop_assert_eq!(reply.code(), "VALIDATION_ERROR");
    prop_assert_eq!(&reply.body["data"], &Value::Null);
    prop_assert!(
        reply
            .message()
            .starts_with("request body is not valid JSON"),
        "{}",
        reply.message()
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn a_valid_initiate_body_is_always_accepted(body in valid_body()) {
        let reply = post_initiate(&body);
        prop_assert_eq!(reply.status.as_u16(), 200, "{}", reply.body);
        prop_assert_eq!(&reply.body["isSuccess"], true);
        prop_assert_eq!(&reply.data()["referenceNo"], &body["referenceNo"]);
        prop_assert_eq!(reply.data()["amount"].to_string(), body["amount"].to_string());
    }

    #[test]
    fn one_broken_field_is_a_400_naming_only_that_field(body in valid_body(), mutation in break_one()) {
        let mut body = body;
        // A payer who is not needed may be removed; here it is always kept
        // unless it is the broken field, so it cannot add a rule of its own.
        match &mutation.value {
            Some(value) => body.insert(mutation.field.to_owned(), value.clone()),
            None => body.remove(mutation.field),
        };
        // GIFTCARD allows at most 10: a valid quantity elsewhere may break it.
        if mutation.field == "productCode" {
            body.remove("quantity");
        }
        let reply = post_initiate(&body);
        prop_assert_eq!(reply.status.as_u16(), 400, "{:?} -> {}", mutation, reply.body);
        prop_assert_eq!(reply.code(), "VALIDATION_ERROR");
        prop_assert_eq!(&reply.body["isSuccess"], false);
        prop_assert_eq!(&reply.body["data"], &Value::Null);
        prop_assert_eq!(
            reply.headers.get("content-type").map(|v| v.as_bytes()),
            Some(&b"application/json"[..])
        );
        let message = reply.message();
        prop_assert!(!message.is_empty());
        for rule in message.split("; ") {
            prop_assert!(
                rule.starts_with(mutation.field),
                "{:?}: the rule {:?} does not name {}", mutation, rule, mutation.field
            );
        }
    }

    #[test]
    fn arbitrary_bytes_are_a_400_saying_the_body_is_not_json(
        bytes in prop::collection::vec(any::<u8>(), 0..1024)
    ) {
        // The rare byte string that is a JSON object is validated instead.
        if payments_mock_server::domain::validate::parse_object(&bytes).is_err() {
            assert_not_json(&post_bytes(bytes))?;
        }
    }

    #[test]
    fn a_valid_body_cut_short_or_with_a_byte_changed_never_panics(
        body in valid_body(),
        cut in any::<prop::sample::Index>(),
        flip in any::<(prop::sample::Index, u8)>(),
    ) {
        let text = Value::Object(body).to_string().into_bytes();
        // Every proper prefix of an object's text is not JSON.
        let prefix = text[..cut.index(text.len())].to_vec();
        assert_not_json(&post_bytes(prefix))?;
        let mut changed = text;
        let at = flip.0.index(changed.len());
        changed[at] = flip.1;
        let reply = post_bytes(changed);
        prop_assert!(matches!(reply.status.as_u16(), 200 | 400), "{}", reply.body);
        prop_assert!(reply.body["isSuccess"].is_boolean(), "{}", reply.body);
    }
}
