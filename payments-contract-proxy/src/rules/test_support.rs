//! Exchanges for the rules' tests: a request and an answer in a line, and
//! what one rule finds in the last of a sequence.

use serde_json::Value;

use super::{Finding, judge, remember};
use crate::exchange::{Exchange, Message, Parsed};
use crate::memory::Memory;

/// An exchange of `method path` with these bodies and status.
pub fn exchange(
    method: &str,
    path: &str,
    request: Value,
    status: u16,
    response: Value,
) -> Exchange {
    let body = |v: &Value| match v {
        Value::Null => None,
        Value::String(raw) => Some(raw.clone()),
        other => Some(other.to_string()),
    };
    let request_body = body(&request);
    let response_body = body(&response);
    Exchange {
        seq: 1,
        time: chrono::DateTime::UNIX_EPOCH,
        request: Message {
            method: method.to_owned(),
            path: path.to_owned(),
            body_bytes: request_body.as_ref().map_or(0, |b| b.len() as u64),
            body: request_body,
            ..Message::default()
        },
        response: Message {
            status,
            body_bytes: response_body.as_ref().map_or(0, |b| b.len() as u64),
            body: response_body,
            headers: vec![("content-type".to_owned(), "application/json".to_owned())],
            ..Message::default()
        },
        duration_ms: 1.0,
        proxy_answer: false,
        judged: true,
        trace_id: None,
        span_id: None,
    }
}

/// The findings of rule `id` in the last exchange, after the earlier ones
/// passed through one after the other (a second apart, unless an exchange
/// has a time of its own).
pub fn found(id: &str, exchanges: &[Exchange]) -> Vec<Finding> {
    let mut memory = Memory::default();
    let mut last = Vec::new();
    for (n, exchange) in exchanges.iter().enumerate() {
        let mut exchange = exchange.clone();
        exchange.seq = n as u64 + 1;
        if exchange.time == chrono::DateTime::UNIX_EPOCH {
            exchange.time += chrono::Duration::seconds(n as i64);
        }
        let parsed = Parsed::of(&exchange);
        last = judge(&parsed, &memory);
        remember(&parsed, &mut memory);
    }
    last.into_iter().filter(|f| f.rule == id).collect()
}

/// A success envelope around `data`.
pub fn ok(data: Value) -> Value {
    serde_json::json!({ "isSuccess": true, "errorCode": null, "message": null, "data": data })
}

/// A failure envelope.
pub fn failure(code: &str) -> Value {
    serde_json::json!({ "isSuccess": false, "errorCode": code, "message": "no", "data": null })
}

pub(crate) const MERCHANT: &str = "6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60";

/// A valid initiate body.
pub fn initiate_body(reference: &str, amount: u64) -> Value {
    serde_json::json!({
        "merchantId": MERCHANT, "referenceNo": reference, "amount": amount,
        "productCode": "TOPUP", "storeId": "S1",
    })
}

/// The initiate `data` the document shows for it.
pub fn initiate_data(id: &str, reference: &str, amount: u64) -> Value {
    serde_json::json!({
        "transactionId": id, "referenceNo": reference, "status": "INITIATED",
        "amount": amount, "currencyCode": "MYR", "productCode": "TOPUP",
        "createdAt": "2026-11-22T08:15:30.123Z", "extraProperties": null,
    })
}

/// A status `data`.
pub fn status_data(id: &str, reference: &str, status: &str, amount: &str) -> Value {
    serde_json::json!({
        "transactionId": id, "referenceNo": reference, "status": status,
        "amount": serde_json::from_str::<Value>(amount).unwrap_or(Value::Null),
        "productCode": "TOPUP", "createdAt": "2026-11-22T08:15:30.123Z",
        "lastModifiedAt": null, "providerReference": null, "message": null,
        "extraProperties": null,
    })
}

/// A confirm `data`.
pub fn confirm_data(id: &str, reference: &str, status: &str, amount: &str) -> Value {
    serde_json::json!({
        "transactionId": id, "referenceNo": reference, "status": status,
        "amount": serde_json::from_str::<Value>(amount).unwrap_or(Value::Null),
        "providerReference": "PRV-1", "confirmedAt": "2026-11-22T08:15:31.000Z",
        "errorMessage": null, "extraProperties": null,
    })
}

/// An initiate of `reference` by `merchant`, answered 200 with `id`.
pub fn initiate_of(merchant: &str, reference: &str, id: &str) -> Exchange {
    let mut body = initiate_body(reference, 1050);
    body["merchantId"] = serde_json::json!(merchant);
    exchange(
        "POST",
        "/api/payments/initiate",
        body,
        200,
        ok(initiate_data(id, reference, 1050)),
    )
}
