//! The request and response field tables of the interface document
//! (sections 2.2 to 2.6), in the document's order: names, what each
//! holds, and whether it is required (a request field) or may be null
//! (a `data` field). Lengths and formats are in `rules`; timestamps are
//! read by [`timestamp`].

pub mod timestamp;

/// What a field holds on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Kind {
    /// A string.
    Text,
    /// A string holding a UUID.
    Uuid,
    /// A JSON integer (minor units, a quantity).
    Integer,
    /// A JSON decimal number (major units, e.g. `150.00`).
    Decimal,
    /// An ISO 8601 timestamp (the mock writes RFC 3339 UTC with
    /// milliseconds), read by [`timestamp`].
    Timestamp,
    /// A string holding JSON (`extraProperties`); a request may also send
    /// the JSON object itself.
    Json,
}

/// One field of a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// The JSON name.
    pub name: &'static str,
    /// What it holds.
    pub kind: Kind,
    /// In a request: required. In a response `data`: never null.
    pub required: bool,
}

const fn field(name: &'static str, kind: Kind, required: bool) -> Field {
    Field {
        name,
        kind,
        required,
    }
}

/// The initiate request (2.2).
pub const INITIATE_REQUEST: &[Field] = &[
    field("merchantId", Kind::Uuid, true),
    field("referenceNo", Kind::Text, true),
    field("description", Kind::Text, false),
    field("amount", Kind::Integer, true),
    field("currencyCode", Kind::Text, false),
    field("productCode", Kind::Text, true),
    field("quantity", Kind::Integer, false),
    field("countryCode", Kind::Text, false),
    field("storeId", Kind::Text, true),
    field("deviceId", Kind::Text, false),
    field("payerId", Kind::Text, false),
    field("returnUrl", Kind::Text, false),
    field("extraProperties", Kind::Json, false),
];

/// The confirm request (2.4).
pub const CONFIRM_REQUEST: &[Field] = &[
    field("transactionId", Kind::Text, true),
    field("referenceNo", Kind::Text, true),
    field("confirmationCode", Kind::Text, false),
    field("extraProperties", Kind::Json, false),
];

/// The initiate answer's `data` (2.3).
pub const INITIATE_DATA: &[Field] = &[
    field("transactionId", Kind::Text, true),
    field("referenceNo", Kind::Text, true),
    field("status", Kind::Text, true),
    field("amount", Kind::Integer, true),
    field("currencyCode", Kind::Text, true),
    field("productCode", Kind::Text, true),
    field("createdAt", Kind::Timestamp, true),
    field("extraProperties", Kind::Json, false),
];

/// The confirm answer's `data` (2.5).
pub const CONFIRM_DATA: &[Field] = &[
    field("transactionId", Kind::Text, true),
    field("referenceNo", Kind::Text, true),
    field("status", Kind::Text, true),
    field("amount", Kind::Decimal, true),
    field("providerReference", Kind::Text, false),
    field("confirmedAt", Kind::Timestamp, true),
    field("errorMessage", Kind::Text, false),
    field("extraProperties", Kind::Json, false),
];

/// Both status answers' `data` (2.6). It carries no `currencyCode`.
pub const STATUS_DATA: &[Field] = &[
    field("transactionId", Kind::Text, true),
    field("referenceNo", Kind::Text, true),
    field("status", Kind::Text, true),
    field("amount", Kind::Decimal, true),
    field("productCode", Kind::Text, true),
    field("createdAt", Kind::Timestamp, true),
    field("lastModifiedAt", Kind::Timestamp, false),
    field("providerReference", Kind::Text, false),
    field("message", Kind::Text, false),
    field("extraProperties", Kind::Json, false),
];

/// The names of the required fields of `table`, in order.
pub fn required(table: &'static [Field]) -> impl Iterator<Item = &'static str> {
    table.iter().filter(|f| f.required).map(|f| f.name)
}

/// The field of `table` named `name`.
pub fn named(table: &'static [Field], name: &str) -> Option<&'static Field> {
    table.iter().find(|f| f.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_required_request_fields_are_the_documents() {
        assert_eq!(
            required(INITIATE_REQUEST).collect::<Vec<_>>(),
            [
                "merchantId",
                "referenceNo",
                "amount",
                "productCode",
                "storeId"
            ]
        );
        assert_eq!(
            required(CONFIRM_REQUEST).collect::<Vec<_>>(),
            ["transactionId", "referenceNo"]
        );
    }

    #[test]
    fn the_status_data_has_no_currency_and_amounts_differ_in_kind() {
        assert!(named(STATUS_DATA, "currencyCode").is_none());
        assert_eq!(
            named(INITIATE_DATA, "amount").map(|f| f.kind),
            Some(Kind::Integer)
        );
        assert_eq!(
            named(CONFIRM_DATA, "amount").map(|f| f.kind),
            Some(Kind::Decimal)
        );
    }
}
