//! The envelope every answer is (document section 2.1), fields in the
//! document's order.

use serde::Serialize;

use crate::code::ErrorCode;

/// An answer's body: `isSuccess`, `errorCode`, `message`, `data`.
///
/// ```
/// use payments_interface::{Envelope, ErrorCode};
///
/// let failure = Envelope::failure(ErrorCode::NotFound, "no such route");
/// assert_eq!(
///     serde_json::to_string(&failure).unwrap(),
///     r#"{"isSuccess":false,"errorCode":"NOT_FOUND","message":"no such route","data":null}"#
/// );
/// ```
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Envelope<'a, T> {
    /// `true` on success.
    pub is_success: bool,
    /// `null` on success; the code on failure.
    pub error_code: Option<&'a str>,
    /// Optional on success; the description on failure.
    pub message: Option<&'a str>,
    /// The payload on success; `null` on failure.
    pub data: T,
}

impl<'a, T> Envelope<'a, T> {
    /// A success carrying `data`.
    pub fn success(data: T, message: Option<&'a str>) -> Self {
        Self {
            is_success: true,
            error_code: None,
            message,
            data,
        }
    }
}

impl<'a> Envelope<'a, ()> {
    /// A failure: `data` null.
    pub fn failure(code: ErrorCode, message: &'a str) -> Self {
        Self {
            is_success: false,
            error_code: Some(code.as_str()),
            message: Some(message),
            data: (),
        }
    }
}

/// The envelope's field names, in order.
pub const ENVELOPE_FIELDS: [&str; 4] = ["isSuccess", "errorCode", "message", "data"];
