//! `GET /api/payments/{transactionId}/status` and
//! `GET /api/payments/reference/{referenceNo}/status`.

use uuid::Uuid;

use crate::calls::{Call, Method, check_path_value, encode_path_segment};
use crate::error::{Error, ValidationErrors};

/// Status by transaction id; the id is one percent-encoded path segment.
/// Only an empty id and a dot segment are refused before sending (a
/// blank one is sent: the document refuses only "missing or empty", and
/// the service answers `INVALID_TRANSACTION_ID` for what it takes as such).
pub(crate) fn by_id(transaction_id: &str) -> Result<Call, Error> {
    let mut errors = ValidationErrors::default();
    check_path_value(&mut errors, "transactionId", transaction_id);
    errors.into_result()?;
    Ok(Call {
        name: "status",
        method: Method::Get,
        template: "/api/payments/{transactionId}/status",
        path: format!(
            "/api/payments/{}/status",
            encode_path_segment(transaction_id)
        ),
        query: Vec::new(),
        body: None,
    })
}

/// Status by reference, optionally scoped to a merchant (`merchantId`
/// query parameter, CONTRACT section 5).
pub(crate) fn by_reference(reference_no: &str, merchant_id: Option<Uuid>) -> Result<Call, Error> {
    let mut errors = ValidationErrors::default();
    check_path_value(&mut errors, "referenceNo", reference_no);
    errors.into_result()?;
    Ok(Call {
        name: "status_by_reference",
        method: Method::Get,
        template: "/api/payments/reference/{referenceNo}/status",
        path: format!(
            "/api/payments/reference/{}/status",
            encode_path_segment(reference_no)
        ),
        query: merchant_id
            .map(|m| vec![("merchantId", m.to_string())])
            .unwrap_or_default(),
        body: None,
    })
}

/// What a status read asks for: the guard checks the answer against it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lookup<'a> {
    /// By transactionId.
    Id(&'a str),
    /// By referenceNo, optionally scoped to a merchant.
    Reference {
        reference_no: &'a str,
        merchant_id: Option<Uuid>,
    },
}

impl Lookup<'_> {
    pub(crate) fn call(&self) -> Result<Call, Error> {
        match *self {
            Lookup::Id(id) => by_id(id),
            Lookup::Reference {
                reference_no,
                merchant_id,
            } => by_reference(reference_no, merchant_id),
        }
    }
}
