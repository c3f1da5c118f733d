//! One test per validation rule (CONTRACT sections 1 and 2): the exact
//! envelope is pinned by an insta snapshot.

use serde_json::{Value, json};

use crate::common::{MERCHANT, initiate, initiate_body, post, redact, service};

/// Applies `edit` to a valid TOPUP body, initiates, expects 400
/// `VALIDATION_ERROR`, and snapshots the envelope.
macro_rules! initiate_rule {
    ($name:ident, |$b:ident| $edit:expr) => {
        #[tokio::test]
        async fn $name() {
            let (_, router) = service();
            let mut $b: Value = initiate_body("REF-1", "TOPUP");
            $edit;
            let reply = initiate(&router, &$b).await;
            assert_eq!(reply.status, 400, "{}", reply.body);
            assert_eq!(reply.code(), "VALIDATION_ERROR");
            insta::assert_snapshot!(crate::common::pretty(&redact(&reply.body)));
        }
    };
}

initiate_rule!(
    initiate_without_merchant_id_says_required,
    |b| b["merchantId"] = Value::Null
);
initiate_rule!(
    initiate_with_non_uuid_merchant_id_says_uuid,
    |b| b["merchantId"] = json!("m-1")
);
initiate_rule!(
    initiate_with_numeric_merchant_id_says_uuid,
    |b| b["merchantId"] = json!(5)
);
initiate_rule!(initiate_without_reference_says_required, |b| b
    .as_object_mut()
    .map(|o| o.remove("referenceNo")));
initiate_rule!(
    initiate_with_empty_reference_says_length,
    |b| b["referenceNo"] = json!("")
);
initiate_rule!(
    initiate_with_long_reference_says_length,
    |b| b["referenceNo"] = json!("R".repeat(65))
);
initiate_rule!(
    initiate_with_padded_reference_says_whitespace,
    |b| b["referenceNo"] = json!(" R1 ")
);
initiate_rule!(
    initiate_with_control_in_reference_says_control,
    |b| b["referenceNo"] = json!("R\u{7}1")
);
initiate_rule!(initiate_with_dot_reference_says_not_a_dot_segment, |b| b
    ["referenceNo"] =
    json!("."));
initiate_rule!(
    initiate_with_dot_dot_reference_says_not_a_dot_segment,
    |b| b["referenceNo"] = json!("..")
);
initiate_rule!(
    initiate_with_long_description_says_255,
    |b| b["description"] = json!("d".repeat(256))
);
initiate_rule!(initiate_without_amount_says_required, |b| b["amount"] =
    Value::Null);
initiate_rule!(
    initiate_with_zero_amount_says_greater_than_zero,
    |b| b["amount"] = json!(0)
);
initiate_rule!(initiate_with_negative_amount_says_greater_than_zero, |b| {
    b["amount"] = json!(-5)
});
initiate_rule!(
    initiate_with_fractional_amount_says_integer,
    |b| b["amount"] = serde_json::from_str::<Value>("1.5").expect("number")
);
initiate_rule!(
    initiate_with_exponent_amount_says_integer,
    |b| b["amount"] = serde_json::from_str::<Value>("1e2").expect("number")
);
initiate_rule!(initiate_with_string_amount_says_integer, |b| b["amount"] =
    json!("100"));
initiate_rule!(initiate_with_boolean_amount_says_integer, |b| b["amount"] =
    json!(true));
initiate_rule!(
    initiate_with_amount_over_2_pow_53_says_at_most,
    |b| b["amount"] = json!(9_007_199_254_740_992_u64)
);
initiate_rule!(
    initiate_with_lower_case_currency_is_rejected,
    |b| b["currencyCode"] = json!("myr")
);
initiate_rule!(
    initiate_with_unknown_currency_is_rejected,
    |b| b["currencyCode"] = json!("ABC")
);
initiate_rule!(
    initiate_with_superseded_currency_is_rejected,
    |b| b["currencyCode"] = json!("HRK")
);
initiate_rule!(
    initiate_without_product_says_required,
    |b| b["productCode"] = Value::Null
);
initiate_rule!(
    initiate_with_malformed_product_says_format,
    |b| b["productCode"] = json!("top up")
);
initiate_rule!(
    initiate_with_unknown_product_says_not_offered,
    |b| b["productCode"] = json!("NOPE")
);
initiate_rule!(initiate_with_zero_quantity_says_range, |b| b["quantity"] =
    json!(0));
initiate_rule!(
    initiate_with_fractional_quantity_says_integer,
    |b| b["quantity"] = serde_json::from_str::<Value>("2.0").expect("number")
);
initiate_rule!(
    initiate_with_quantity_over_product_limit_names_product,
    |b| {
        b["productCode"] = json!("GIFTCARD");
        b["quantity"] = json!(11);
    }
);
initiate_rule!(
    initiate_with_lower_case_country_is_rejected,
    |b| b["countryCode"] = json!("my")
);
initiate_rule!(
    initiate_with_unassigned_country_is_rejected,
    |b| b["countryCode"] = json!("XX")
);
initiate_rule!(initiate_without_store_says_required, |b| b["storeId"] =
    Value::Null);
initiate_rule!(initiate_with_long_store_says_length, |b| b["storeId"] =
    json!("s".repeat(65)));
initiate_rule!(initiate_with_empty_device_says_length, |b| b["deviceId"] =
    json!(""));
initiate_rule!(
    initiate_topup_without_payer_says_required_for_product,
    |b| b["payerId"] = Value::Null
);
initiate_rule!(initiate_with_long_payer_says_length, |b| b["payerId"] =
    json!("p".repeat(129)));
initiate_rule!(
    initiate_with_relative_return_url_is_rejected,
    |b| b["returnUrl"] = json!("/done")
);
initiate_rule!(
    initiate_with_ftp_return_url_is_rejected,
    |b| b["returnUrl"] = json!("ftp://example.com/x")
);
initiate_rule!(
    initiate_with_return_url_of_2049_characters_is_rejected,
    |b| b["returnUrl"] = json!(format!("https://shop.example/{}", "é".repeat(2049 - 21)))
);
initiate_rule!(
    initiate_with_array_extra_properties_is_rejected,
    |b| b["extraProperties"] = json!([1])
);
initiate_rule!(
    initiate_with_non_json_extra_string_is_rejected,
    |b| b["extraProperties"] = json!("not json")
);
initiate_rule!(initiate_with_oversized_extra_properties_is_rejected, |b| {
    b["extraProperties"] = json!({ "x": "y".repeat(17 * 1024) })
});

#[tokio::test]
async fn every_failed_rule_is_listed_in_table_order() {
    let (_, router) = service();
    let body = json!({
        "extraProperties": 5,
        "amount": 0,
        "merchantId": "nope",
        "countryCode": "zz",
    });
    let reply = initiate(&router, &body).await;
    assert_eq!(
        reply.message(),
        "merchantId must be a UUID; referenceNo is required; amount must be greater than 0; \
         productCode is required; countryCode must be an assigned ISO 3166-1 alpha-2 code in \
         upper case; storeId is required; extraProperties must be a JSON object or a string \
         holding one"
    );
    insta::assert_snapshot!(crate::common::pretty(&redact(&reply.body)));
}

#[tokio::test]
async fn null_optional_fields_mean_absent() {
    let (_, router) = service();
    let mut body = initiate_body("REF-NULLS", "TOPUP");
    for field in [
        "description",
        "currencyCode",
        "quantity",
        "countryCode",
        "deviceId",
        "returnUrl",
        "extraProperties",
    ] {
        body[field] = Value::Null;
    }
    let reply = initiate(&router, &body).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.data()["currencyCode"], "MYR");
}

#[tokio::test]
async fn extra_properties_as_object_or_string_are_accepted_and_unknown_fields_ignored() {
    let (_, router) = service();
    let mut body = initiate_body("REF-X1", "TOPUP");
    body["extraProperties"] = json!({ "a": 1 });
    body["somethingElse"] = json!([1, 2]);
    assert_eq!(initiate(&router, &body).await.status, 200);
    let mut body = initiate_body("REF-X2", "TOPUP");
    body["extraProperties"] = json!("{\"a\":1}");
    body["countryCode"] = json!("MY");
    body["returnUrl"] = json!("https://shop.example/done");
    body["description"] = json!("airtime");
    body["deviceId"] = json!("T1");
    assert_eq!(initiate(&router, &body).await.status, 200);
}

#[tokio::test]
async fn reference_may_hold_slashes_spaces_and_unicode() {
    let (_, router) = service();
    let body = initiate_body("INV/2026 #1?%ü", "TOPUP");
    assert_eq!(initiate(&router, &body).await.status, 200);
}

#[tokio::test]
async fn confirm_without_fields_lists_both() {
    let (_, router) = service();
    let reply = post(&router, "/api/payments/confirm", &json!({})).await;
    assert_eq!(reply.status, 400);
    insta::assert_snapshot!(crate::common::pretty(&redact(&reply.body)));
}

#[tokio::test]
async fn confirm_with_mistyped_fields_lists_each() {
    let (_, router) = service();
    let body = json!({
        "transactionId": 5,
        "referenceNo": "",
        "confirmationCode": "c".repeat(33),
        "extraProperties": "[]",
    });
    let reply = post(&router, "/api/payments/confirm", &body).await;
    assert_eq!(reply.status, 400);
    insta::assert_snapshot!(crate::common::pretty(&redact(&reply.body)));
}

#[tokio::test]
async fn status_by_reference_with_bad_merchant_query_is_validation_error() {
    let (_, router) = service();
    let reply = crate::common::get(
        &router,
        &format!("/api/payments/reference/R1/status?merchantId=x{MERCHANT}"),
    )
    .await;
    assert_eq!(reply.status, 400);
    insta::assert_snapshot!(crate::common::pretty(&redact(&reply.body)));
}

#[tokio::test]
async fn references_that_merely_contain_dots_are_accepted() {
    let (_, router) = service();
    for reference in ["...", ".a", "a.", "./x", "a..b", ". ."] {
        let reply = initiate(&router, &initiate_body(reference, "TOPUP")).await;
        assert_eq!(reply.status, 200, "{reference:?}: {}", reply.body);
    }
    let mut body = initiate_body("..", "TOPUP");
    body["amount"] = json!(0);
    let reply = initiate(&router, &body).await;
    assert_eq!(
        reply.message(),
        "referenceNo must not be . or ..; amount must be greater than 0"
    );
}

#[tokio::test]
async fn return_url_length_counts_characters_not_bytes() {
    let (_, router) = service();
    // 2048 characters, 4,075 bytes: two-byte `é` after an ASCII prefix.
    let prefix = "https://shop.example/";
    let url = format!("{prefix}{}", "é".repeat(2048 - prefix.len()));
    assert_eq!(url.chars().count(), 2048);
    assert!(url.len() > 2048);
    let mut body = initiate_body("URL-CHARS", "TOPUP");
    body["returnUrl"] = json!(url);
    let reply = initiate(&router, &body).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
}

#[tokio::test]
async fn status_by_reference_with_empty_merchant_query_is_validation_error() {
    let (_, router) = service();
    crate::common::initiated(&router, "R-EMPTY-Q", "TOPUP").await;
    // The hyphenated form only, as initiate's body: braces, a URN and 32
    // bare hex digits are no UUID of the document's.
    for query in [
        "merchantId=",
        "merchantId",
        "merchantId=&x=1",
        "merchantId=%7B6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60%7D",
        "merchantId=urn:uuid:6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60",
        "merchantId=6f1c0d3e1b7a4c1e9a551c2b3d4e5f60",
    ] {
        let reply = crate::common::get(
            &router,
            &format!("/api/payments/reference/R-EMPTY-Q/status?{query}"),
        )
        .await;
        assert_eq!(reply.status, 400, "{query}: {}", reply.body);
        assert_eq!(reply.code(), "VALIDATION_ERROR");
        assert_eq!(reply.message(), "merchantId must be a UUID");
    }
    let reply = crate::common::get(
        &router,
        "/api/payments/reference/R-EMPTY-Q/status?merchantId=",
    )
    .await;
    insta::assert_snapshot!(crate::common::pretty(&redact(&reply.body)));
    // Without the parameter the reference is found as before.
    let reply = crate::common::get(&router, "/api/payments/reference/R-EMPTY-Q/status").await;
    assert_eq!(reply.status, 200);
}
