//! Major-unit amounts (CONTRACT section 1): exactly the currency exponent's
//! fraction digits, written as JSON numbers, exact up to 2^53 − 1.

use serde_json::json;

use crate::common::{confirm, initiate, initiate_body, service, status};

async fn amount_text(currency: &str, minor: u64) -> (String, String) {
    let (_, router) = service();
    let mut body = initiate_body("AMT-1", "TOPUP");
    body["currencyCode"] = json!(currency);
    body["amount"] = json!(minor);
    let reply = initiate(&router, &body).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let id = reply.data()["transactionId"]
        .as_str()
        .expect("id")
        .to_owned();
    let status_raw = String::from_utf8(status(&router, &id).await.raw).expect("utf-8");
    let confirm_raw =
        String::from_utf8(confirm(&router, &id, "AMT-1", None).await.raw).expect("utf-8");
    (status_raw, confirm_raw)
}

#[tokio::test]
async fn myr_has_two_fraction_digits() {
    let (s, c) = amount_text("MYR", 15000).await;
    assert!(s.contains("\"amount\":150.00,"), "{s}");
    assert!(c.contains("\"amount\":150.00,"), "{c}");
}

#[tokio::test]
async fn jpy_has_none() {
    let (s, c) = amount_text("JPY", 1500).await;
    assert!(s.contains("\"amount\":1500,"), "{s}");
    assert!(c.contains("\"amount\":1500,"), "{c}");
}

#[tokio::test]
async fn kwd_has_three() {
    let (s, _) = amount_text("KWD", 1500).await;
    assert!(s.contains("\"amount\":1.500,"), "{s}");
}

#[tokio::test]
async fn two_to_the_53_minus_one_is_exact() {
    let (s, c) = amount_text("MYR", 9_007_199_254_740_991).await;
    assert!(s.contains("\"amount\":90071992547409.91,"), "{s}");
    assert!(c.contains("\"amount\":90071992547409.91,"), "{c}");
}

#[tokio::test]
async fn one_cent_keeps_its_leading_zero() {
    let (s, _) = amount_text("MYR", 1).await;
    assert!(s.contains("\"amount\":0.01,"), "{s}");
}

#[test]
fn formatting_is_pure_integer_arithmetic() {
    use payments_interface::money::major_text;
    assert_eq!(major_text(15000, 2), "150.00");
    assert_eq!(major_text(1500, 0), "1500");
    assert_eq!(major_text(1500, 3), "1.500");
    assert_eq!(major_text(9_007_199_254_740_991, 2), "90071992547409.91");
    assert_eq!(major_text(7, 3), "0.007");
}
