//! The OpenAPI schemas of the interface's own values, which the response
//! types name in `#[cfg_attr(feature = "openapi", schema(schema_with = ...))]` (feature `openapi`): a
//! status, an amount in major units, a timestamp, an error code.

use serde_json::{Value, json};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::Schema;

/// A JSON value as a utoipa schema (for `schema_with`).
fn schema(value: Value) -> RefOr<Schema> {
    serde_json::from_value(value).unwrap_or_else(|_| RefOr::T(Schema::default()))
}

/// A transaction status (CONTRACT section 6).
pub(crate) fn transaction_status() -> RefOr<Schema> {
    schema(json!({ "$ref": "#/components/schemas/TransactionStatus" }))
}

/// An amount in major units: a JSON number with exactly the currency's
/// fraction digits (`150.00`, `1500`, `1.500`), exact.
///
/// `format: decimal` (the OpenAPI format registry's: a fixed-point decimal)
/// tells a generator to read it into a decimal type (openapi-generator's
/// `BigDecimal`, `Decimal`), never a binary float: a double keeps only 15
/// to 17 significant digits, and an amount of 10^15 minor units or more
/// would change on the way in. The wire stays a JSON number.
pub(crate) fn major_amount() -> RefOr<Schema> {
    schema(json!({
        "type": "number",
        "format": "decimal",
        "exclusiveMinimum": 0,
        "description": "Major units, exact, with exactly the currency's ISO 4217 fraction digits (150.00, 1500, 1.500). Read it exactly: as the decimal text of the JSON number (a decimal type, or the digits as sent), never into a binary float, which keeps at most 15-17 significant digits (90071992547409.91 would read as 90071992547409.9). The same amount as an integer in minor units: the initiate's answer's `amount`, and `amountMinor` on /_mock/transactions."
    }))
}

/// RFC 3339 in UTC with `Z` and milliseconds.
pub(crate) fn timestamp() -> RefOr<Schema> {
    schema(json!({
        "type": "string",
        "format": "date-time",
        "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z$",
        "examples": ["2026-11-22T08:15:30.123Z"]
    }))
}

/// [`timestamp`], or null.
pub(crate) fn optional_timestamp() -> RefOr<Schema> {
    schema(json!({ "anyOf": [{ "type": "null" }, timestamp_value()] }))
}

fn timestamp_value() -> Value {
    serde_json::to_value(timestamp()).unwrap_or_default()
}

/// An `errorCode`, or null.
pub(crate) fn optional_error_code() -> RefOr<Schema> {
    schema(json!({ "anyOf": [{ "type": "null" }, { "$ref": "#/components/schemas/ErrorCode" }] }))
}
