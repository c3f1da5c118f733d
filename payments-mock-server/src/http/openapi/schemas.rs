//! The component schemas that are rules rather than Rust types: request
//! bodies and forms (from `rules.rs` and the catalogue), the envelopes, and
//! the helpers the response types' `#[schema(schema_with = ...)]` name.
//!
//! Request bodies are read by the validator from JSON (`validate.rs`), not
//! deserialized into types; their schemas are written here from the same
//! constants and patterns the validator checks, and the schemathesis run
//! and `tests/props.rs` hold the two together.

use serde_json::{Value, json};

use crate::domain::catalog::Catalog;
use crate::domain::rules;
use crate::domain::transaction::PayerAction;
use crate::http::handlers::admin::STATUSES;
use payments_serve::ErrorCode;

/// Every wire error code the mock answers (CONTRACT section 8): the
/// interface's, without the contract proxy's own.
pub(crate) fn error_codes() -> impl Iterator<Item = ErrorCode> {
    ErrorCode::ALL
        .iter()
        .copied()
        .filter(|c| c.whose() != payments_interface::Whose::Proxy)
}

/// Optional fields take `null` for "absent" (CONTRACT section 2).
fn nullable(mut s: Value) -> Value {
    if let Some(t) = s.get("type").cloned() {
        s["type"] = json!([t, "null"]);
    }
    if let Some(Value::Array(values)) = s.get_mut("enum") {
        values.push(Value::Null);
    }
    s
}

fn text(min: usize, max: usize) -> Value {
    json!({ "type": "string", "minLength": min, "maxLength": max })
}

/// `extraProperties` of a request: a JSON object, or a string holding one
/// (the interface document's form). "Holds a JSON object" is the format
/// `json-object` (JSON Schema has no keyword for it; the schemathesis
/// hooks and the tests register it).
fn extra_properties() -> Value {
    json!({
        "description": format!(
            "Product-specific properties: a JSON object, or a string holding a JSON object (the interface document's form); at most {} bytes as compact JSON. Stored as the compact JSON text.",
            rules::MAX_EXTRA_BYTES
        ),
        "anyOf": [
            { "type": "object" },
            {
                "type": "string",
                "format": "json-object",
                "contentMediaType": "application/json",
                "contentSchema": { "type": "object" },
            },
            { "type": "null" },
        ],
    })
}

/// `POST /api/payments/initiate` (CONTRACT section 1), with the catalogue's
/// product codes and each product's own rules.
fn initiate_request(catalog: &Catalog) -> Value {
    let products: Vec<&str> = catalog.products().map(|p| p.code.as_str()).collect();
    let mut per_product = Vec::new();
    for p in catalog.products() {
        let when = json!({
            "if": { "properties": { "productCode": { "const": p.code } }, "required": ["productCode"] },
        });
        let mut required = Vec::new();
        let mut properties = serde_json::Map::new();
        if p.payer_id_required {
            required.push("payerId");
            properties.insert("payerId".to_owned(), text(1, rules::PAYER_ID_MAX));
        }
        if p.requires_return_url() {
            required.push("returnUrl");
            properties.insert(
                "returnUrl".to_owned(),
                json!({
                    "type": "string",
                    "maxLength": rules::RETURN_URL_MAX,
                    "pattern": *rules::RETURN_URL,
                }),
            );
        }
        let mut then = json!({ "required": required, "properties": properties });
        if let Some(max) = p.max_quantity {
            then["properties"]["quantity"] =
                nullable(json!({ "type": "integer", "minimum": 1, "maximum": max }));
        }
        if then["required"].as_array().is_some_and(Vec::is_empty)
            && then["properties"]
                .as_object()
                .is_some_and(serde_json::Map::is_empty)
        {
            continue;
        }
        let mut rule = when;
        rule["then"] = then;
        per_product.push(rule);
    }
    json!({
        "type": "object",
        "description": "Every failed rule is reported at once, in this order, joined by '; '. Unknown fields are ignored; null is absent.",
        "required": ["merchantId", "referenceNo", "amount", "productCode", "storeId"],
        "properties": {
            "merchantId": { "type": "string", "pattern": rules::UUID, "description": "A UUID, hyphenated, any version and letter case" },
            "referenceNo": {
                "type": "string",
                "minLength": 1,
                "maxLength": rules::REFERENCE_MAX,
                "pattern": *rules::REFERENCE_NO,
                "not": { "enum": [".", ".."] },
                "description": "Unique per merchant. No control characters, no white space at either end; any other Unicode, / ? # % included. Not . or .. (URL parsers drop those path segments)."
            },
            "description": nullable(json!({ "type": "string", "maxLength": rules::DESCRIPTION_MAX })),
            "amount": { "type": "integer", "minimum": 1, "maximum": rules::MAX_AMOUNT, "description": "Minor units of the currency, written as an integer literal: 1.0 and 1e2 are type errors (JSON Schema's integer cannot say that)" },
            "currencyCode": nullable(json!({ "type": "string", "enum": rules::currency_codes(), "description": "Active ISO 4217 code with a minor unit; absent or null is MYR" })),
            "productCode": { "type": "string", "enum": products, "description": "A product of the catalogue this server was started with" },
            "quantity": nullable(json!({ "type": "integer", "minimum": 1, "maximum": rules::QUANTITY_MAX, "description": "An integer literal (1.0 is a type error); a product may allow fewer" })),
            "countryCode": nullable(json!({ "type": "string", "enum": rules::country_codes(), "description": "Assigned ISO 3166-1 alpha-2 code" })),
            "storeId": text(1, rules::STORE_ID_MAX),
            "deviceId": nullable(text(1, rules::STORE_ID_MAX)),
            "payerId": nullable(text(1, rules::PAYER_ID_MAX)),
            "returnUrl": nullable(json!({
                "type": "string",
                "maxLength": rules::RETURN_URL_MAX,
                "pattern": *rules::RETURN_URL,
                "description": "Absolute http(s) URL: a host name or IPv4 address, optional port, path, query and fragment"
            })),
            "extraProperties": extra_properties(),
        },
        "allOf": per_product,
    })
}

fn confirm_request() -> Value {
    json!({
        "type": "object",
        "required": ["transactionId", "referenceNo"],
        "properties": {
            "transactionId": { "type": "string", "pattern": *rules::NOT_BLANK, "description": "From the initiate response" },
            "referenceNo": { "type": "string", "minLength": 1, "description": "Must be the transaction's" },
            "confirmationCode": nullable(text(1, rules::CONFIRMATION_CODE_MAX)),
            "extraProperties": extra_properties(),
        },
    })
}

fn actions() -> Value {
    json!(PayerAction::ALL.map(PayerAction::as_str))
}

/// The component schemas of the document that no Rust type derives.
pub(crate) fn components(catalog: &Catalog) -> Vec<(&'static str, Value)> {
    let codes: Vec<&str> = error_codes().map(ErrorCode::as_str).collect();
    vec![
        (
            "TransactionStatus",
            json!({ "type": "string", "enum": STATUSES.map(|s| s.as_str()) }),
        ),
        ("ErrorCode", json!({ "type": "string", "enum": codes })),
        (
            "ErrorEnvelope",
            json!({
                "type": "object",
                "required": ["isSuccess", "errorCode", "message", "data"],
                "properties": {
                    "isSuccess": { "const": false },
                    "errorCode": { "$ref": "#/components/schemas/ErrorCode" },
                    "message": { "type": "string" },
                    "data": { "type": "null" },
                },
            }),
        ),
        ("InitiateRequest", initiate_request(catalog)),
        ("ConfirmRequest", confirm_request()),
        (
            "ClockAdvance",
            json!({
                "type": "object",
                "required": ["seconds"],
                "properties": {
                    "seconds": { "type": "number", "minimum": 0, "maximum": rules::MAX_ADVANCE_SECONDS, "description": "May be fractional; cut at the nanosecond" },
                },
            }),
        ),
        ("FaultRuleRequest", fault_rule(false)),
        ("FaultRule", fault_rule(true)),
        (
            "FaultRuleList",
            json!({
                "type": "object",
                "required": ["items"],
                "properties": { "items": { "type": "array", "items": { "$ref": "#/components/schemas/FaultRule" } } },
            }),
        ),
        (
            "SandboxRequest",
            json!({
                "type": "object",
                "additionalProperties": false,
                "description": "Optional: an empty body makes a sandbox with the server's time to live",
                "properties": {
                    "ttlSeconds": { "type": ["integer", "null"], "minimum": 1, "maximum": crate::sandboxes::MAX_SANDBOX_TTL.as_secs(), "description": "How long it lives unused (each request renews it); default --sandbox-ttl" },
                    "label": { "type": ["string", "null"], "maxLength": crate::sandboxes::MAX_LABEL_CHARS, "pattern": "^[^\\u0000-\\u001f\\u007f-\\u009f]*$", "description": "A name for people (no control characters)" },
                },
            }),
        ),
        (
            "Sandbox",
            json!({
                "type": "object",
                "required": ["id", "label", "baseUrl", "owner", "createdAt", "expiresAt", "ttlSeconds"],
                "properties": {
                    "id": { "type": "string", "format": "uuid" },
                    "label": { "type": ["string", "null"] },
                    "baseUrl": { "type": "string", "description": "The server's base URL followed by /sandboxes/{id}: the service URL for the application under test" },
                    "owner": { "type": ["string", "null"], "format": "uuid", "description": "The merchant whose key made it; null: the admin's" },
                    "createdAt": { "type": "string", "format": "date-time" },
                    "expiresAt": { "type": "string", "format": "date-time" },
                    "ttlSeconds": { "type": "integer", "minimum": 1 },
                    "transactions": { "type": "integer", "minimum": 0, "description": "In a list: how many transactions it holds" },
                },
            }),
        ),
        (
            "SandboxList",
            json!({
                "type": "object",
                "required": ["items"],
                "properties": { "items": { "type": "array", "items": { "$ref": "#/components/schemas/Sandbox" } } },
            }),
        ),
        (
            "Removed",
            json!({
                "type": "object",
                "required": ["removed"],
                "properties": { "removed": { "type": "integer", "minimum": 0 } },
            }),
        ),
        (
            "PayerRequest",
            json!({
                "type": "object",
                "required": ["action"],
                "properties": { "action": { "type": "string", "enum": actions() } },
            }),
        ),
        (
            "PaymentPageForm",
            json!({
                "type": "object",
                "required": ["action"],
                "properties": { "action": { "type": "string", "enum": actions(), "description": "The button pressed" } },
                "additionalProperties": false,
                "description": form_bound(crate::forms::PAY_FORM_LIMIT),
            }),
        ),
        (
            "ConsoleClockForm",
            json!({
                "type": "object",
                "required": ["seconds"],
                "properties": { "seconds": { "type": "integer", "minimum": 0, "maximum": rules::MAX_ADVANCE_SECONDS, "description": "Whole seconds to move forward" } },
                "additionalProperties": false,
                "description": console_form_bound(),
            }),
        ),
        (
            "ConsoleResetForm",
            json!({ "type": "object", "additionalProperties": false, "description": console_form_bound() }),
        ),
        (
            "ConsoleSignInForm",
            json!({
                "type": "object",
                "required": ["key"],
                "properties": {
                    "key": { "type": "string", "maxLength": sign_in_most("key"), "description": "An admin key, or an API key bound to a merchant; never shown back" },
                    "next": { "type": "string", "maxLength": sign_in_most("next"), "description": "Where to go after signing in (`_mock/ui/…`)" },
                },
                "additionalProperties": false,
                "description": console_form_bound(),
            }),
        ),
        (
            "ConsoleSignOutForm",
            json!({ "type": "object", "additionalProperties": false, "description": console_form_bound() }),
        ),
    ]
}

/// The success envelope around `data` (a `$ref`, or null).
pub(crate) fn success_envelope(data: Value) -> Value {
    json!({
        "type": "object",
        "required": ["isSuccess", "errorCode", "message", "data"],
        "properties": {
            "isSuccess": { "const": true },
            "errorCode": { "type": "null" },
            "message": { "type": ["string", "null"] },
            "data": data,
        },
    })
}

/// The error envelope narrowed to `codes`, with one example per code (a
/// generated client, and the schema tests, read which codes a status
/// carries from them).
pub(crate) fn error_envelope(codes: &[ErrorCode]) -> (Value, Value) {
    let names: Vec<&str> = codes.iter().map(|c| c.as_str()).collect();
    let schema = json!({
        "allOf": [
            { "$ref": "#/components/schemas/ErrorEnvelope" },
            { "properties": { "errorCode": { "enum": names } } },
        ],
    });
    let examples: serde_json::Map<String, Value> = names
        .iter()
        .map(|code| {
            (
                (*code).to_owned(),
                json!({ "value": { "isSuccess": false, "errorCode": code, "message": "…", "data": null } }),
            )
        })
        .collect();
    (schema, Value::Object(examples))
}

/// A merchant for the examples.
const EXAMPLE_MERCHANT: &str = "6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60";
/// A transactionId as the mock issues them (UUID v7).
const EXAMPLE_TRANSACTION: &str = "019aba4e-7c1d-7e3a-9f4e-2b6d8e1f0a47";
/// A referenceNo. Without a `/`: a tool that puts the example into the
/// path of status by reference as it is (Postman's importer does) would
/// send three path segments, a route the mock does not have (any character
/// may be in a reference, percent-encoded: the parameter says so).
const EXAMPLE_REFERENCE: &str = "INV-2026-0001";

/// One named example per request body, by operationId: a generated client
/// or Postman shows them, and schemathesis's examples phase sends them.
/// Initiate has one per product of the catalogue, each valid for that
/// product (tests/doc_rules.rs checks every example against its schema and
/// the validator).
pub(crate) fn body_examples(operation: &str, catalog: &Catalog) -> Option<Value> {
    let examples: Vec<(String, Value)> = match operation {
        "initiate" => catalog
            .products()
            .map(|p| {
                let mut body = json!({
                    "merchantId": EXAMPLE_MERCHANT,
                    "referenceNo": EXAMPLE_REFERENCE,
                    "description": format!("{} example", p.code),
                    "amount": 15000,
                    "currencyCode": "MYR",
                    "productCode": p.code,
                    "countryCode": "MY",
                    "storeId": "S1",
                });
                if p.payer_id_required {
                    body["payerId"] = json!("60123456789");
                }
                if p.requires_return_url() {
                    body["returnUrl"] = json!("https://shop.example/payments/return?order=17");
                }
                if p.max_quantity.is_some() {
                    body["quantity"] = json!(1);
                }
                (p.code.clone(), body)
            })
            .collect(),
        "confirm" => vec![
            (
                "direct".to_owned(),
                json!({ "transactionId": EXAMPLE_TRANSACTION, "referenceNo": EXAMPLE_REFERENCE }),
            ),
            (
                "withCode".to_owned(),
                json!({
                    "transactionId": EXAMPLE_TRANSACTION,
                    "referenceNo": EXAMPLE_REFERENCE,
                    "confirmationCode": "123456",
                    "extraProperties": "{\"channel\":\"pos\"}",
                }),
            ),
        ],
        "mockFaultAdd" => vec![
            (
                "commitThenHangOnConfirm".to_owned(),
                json!({ "match": { "endpoint": "confirm", "referenceNo": EXAMPLE_REFERENCE }, "fault": "commit-then-hang" }),
            ),
            (
                "flakyGateway".to_owned(),
                json!({ "match": { "endpoint": "any" }, "fault": "gateway=502", "times": 0, "probability": 0.1 }),
            ),
        ],
        "mockSandboxAdd" => vec![
            (
                "labelled".to_owned(),
                json!({ "label": "checkout tests, job 7", "ttlSeconds": 600 }),
            ),
            ("serverDefaults".to_owned(), json!({})),
        ],
        "mockClockAdvance" => vec![
            ("pastExpiry".to_owned(), json!({ "seconds": 901 })),
            ("fraction".to_owned(), json!({ "seconds": 0.25 })),
        ],
        "mockPayer" | "paymentPageSubmit" => PayerAction::ALL
            .map(|a| (a.as_str().to_owned(), json!({ "action": a.as_str() })))
            .into_iter()
            .collect(),
        "consoleClockAdvance" => vec![("pastExpiry".to_owned(), json!({ "seconds": 901 }))],
        _ => return None,
    };
    Some(Value::Object(
        examples
            .into_iter()
            .map(|(name, value)| (name, json!({ "value": value })))
            .collect(),
    ))
}

/// An example of a path parameter, by its name.
pub(crate) fn path_example(name: &str) -> Option<&'static str> {
    match name {
        "transactionId" => Some(EXAMPLE_TRANSACTION),
        "ruleId" => Some("6f1c0f0e-8d4b-4c47-9a4e-2f4f7f9d8a10"),
        "sandboxId" => Some("0b6f3c2e-5d1a-4f7e-9c3b-8a2d4e6f1a90"),
        "referenceNo" => Some(EXAMPLE_REFERENCE),
        "token" => Some("Q3vX9kTq2LmN8pRw5ZyB7cDf4GhJ6sKa"),
        "seq" => Some("1"),
        _ => None,
    }
}

/// The example of optional query parameter `name` of operation
/// `operation`, where one works: an importer that sends every parameter
/// (Postman's, by default) otherwise makes a value up from the schema, a
/// random merchant or seq the mock holds nothing for.
pub(crate) fn query_example(operation: &str, name: &str) -> Option<Value> {
    match (operation, name) {
        // The initiate examples' merchant: after one of them, the read
        // finds it.
        ("statusByReference" | "mockTransactions", "merchantId") => Some(json!(EXAMPLE_MERCHANT)),
        // Every entry, the oldest first.
        ("mockRequests", "after") => Some(json!(0)),
        ("mockRequests", "path") => Some(json!("/api/payments/initiate")),
        // No id works unless the mock holds it (else 404): the examples'
        // transaction, as in the paths, rather than a random one.
        ("mockTransactions", "after") => Some(json!(EXAMPLE_TRANSACTION)),
        _ => None,
    }
}

/// What a form's schema says of its size: the fields above and nothing
/// else, each within its bound, so that every form this schema calls
/// valid fits the server's limit; a larger body is 413.
fn form_bound(limit: usize) -> String {
    format!(
        "Only these fields, each at most once: a field the form does not have, a repeated field or a longer value is 400. A body over {} KiB (which no form valid here reaches) is 413.",
        limit / 1024
    )
}

fn console_form_bound() -> String {
    form_bound(crate::forms::CONSOLE_FORM_LIMIT)
}

/// The sign-in form's bound on `field` (the console enforces the same).
fn sign_in_most(field: &str) -> usize {
    crate::forms::most(crate::forms::SIGN_IN_FIELDS, field)
}

/// A scripted fault rule (CONTRACT section 19): as `POST /_mock/faults`
/// takes it, or (`installed`) as the server shows it, with its id and counts.
fn fault_rule(installed: bool) -> Value {
    use crate::fault_rules::{ENDPOINT_NAMES, FAULT_RULE_TOKEN, MAX_COUNT, UUID_PATTERN};
    let id = json!({ "type": "string", "format": "uuid", "pattern": UUID_PATTERN });
    let mut schema = json!({
        "type": "object",
        "required": ["fault"],
        "properties": {
            "match": {
                "type": "object",
                "properties": {
                    "endpoint": { "type": "string", "enum": ENDPOINT_NAMES },
                    "merchantId": id,
                    "referenceNo": { "type": "string", "pattern": crate::fault_rules::RULE_REFERENCE },
                    "transactionId": id,
                },
                "additionalProperties": false,
            },
            "after": { "type": "integer", "minimum": 0, "maximum": MAX_COUNT, "default": 0, "description": "Matching requests let through first" },
            "times": { "type": "integer", "minimum": 0, "maximum": MAX_COUNT, "default": 1, "description": "Requests faulted before the rule is spent; 0: until removed" },
            "probability": { "type": "number", "minimum": 0, "maximum": 1, "default": 1, "description": "Of faulting each request it may (drawn from --fault-seed)" },
            "fault": { "type": "string", "pattern": FAULT_RULE_TOKEN, "description": "internal-error, commit-then-error, reset, commit-then-reset, rate-limit, answer-other, delay=<ms>, hang, commit-then-hang, truncate, slow-body=<bytes per second>, gateway=502|503|504" },
        },
        "additionalProperties": false,
    });
    if installed {
        let props = &mut schema["properties"];
        props["id"] = id.clone();
        props["met"] =
            json!({ "type": "integer", "minimum": 0, "description": "Requests it met while live" });
        props["fired"] =
            json!({ "type": "integer", "minimum": 0, "description": "Requests it faulted" });
        props["remaining"] = json!({ "type": ["integer", "null"], "minimum": 0, "description": "Faults left; null for a rule without an end" });
        schema["required"] = json!([
            "id",
            "match",
            "after",
            "times",
            "probability",
            "fault",
            "met",
            "fired",
            "remaining"
        ]);
    }
    schema
}
