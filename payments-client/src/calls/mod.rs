//! One file per call: its request type, the few checks made before
//! sending (what the interface document states and what the client needs;
//! not the mock's limits of CONTRACT section 1) and how it maps onto HTTP
//! ([`Call`]). Sending is `transport.rs`'s job.

pub mod confirm;
pub mod initiate;
pub mod status;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

use crate::error::ValidationErrors;

/// HTTP method of a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Method {
    Get,
    Post,
}

impl Method {
    /// As HTTP spells it.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Get => "GET",
            Self::Post => "POST",
        }
    }
}

/// A description of one call: everything but how to send it.
#[derive(Debug, Clone)]
pub(crate) struct Call {
    /// Short name for logs (`initiate`).
    pub name: &'static str,
    pub method: Method,
    /// The interface's path template (`url.template` of its spans).
    pub template: &'static str,
    /// Already percent-encoded path, starting with `/api/`.
    pub path: String,
    pub query: Vec<(&'static str, String)>,
    /// JSON body; shared, so that a retry does not copy it.
    pub body: Option<bytes::Bytes>,
}

/// Everything but RFC 3986 unreserved characters is encoded, so a value is
/// always exactly one path segment (`INV/2026/0001` → `INV%2F2026%2F0001`).
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// Percent-encodes `value` as a single path segment.
///
/// # Examples
///
/// ```
/// use payments_client::wire::encode_path_segment;
/// assert_eq!(encode_path_segment("INV/2026/0001"), "INV%2F2026%2F0001");
/// assert_eq!(encode_path_segment("a b?#%ü"), "a%20b%3F%23%25%C3%BC");
/// ```
pub fn encode_path_segment(value: &str) -> String {
    utf8_percent_encode(value, SEGMENT).to_string()
}

/// The mock's limit on `extraProperties` as compact JSON, in bytes
/// (CONTRACT section 1), for tools that test against the mock. The client
/// does not enforce it: the interface document gives no size limit, so a
/// larger object is sent and the service decides.
pub const MAX_EXTRA_PROPERTIES: usize = 16 * 1024;

// What a builder checks before sending is only what the interface document
// states, or what the client needs to do its own job. Lengths, formats and
// value sets that CONTRACT section 1 gives as the mock's limits are left to
// the service: a real one may fill the document's gaps differently (lower
// case product codes, longer descriptions), and it answers
// VALIDATION_ERROR for what it does not take.

/// A required string field (the document's "Required: yes") that is empty:
/// an empty string carries no value, so the field is as good as missing.
pub(crate) fn check_required(errors: &mut ValidationErrors, field: &'static str, value: &str) {
    if value.is_empty() {
        errors.push(field, format!("{field} must not be empty"));
    }
}

/// A value the client itself puts in a URL path: `referenceNo` (status by
/// reference, and the read-back that settles an ambiguous initiate) and
/// `transactionId` (status by id, and the read-back after a confirm).
/// Required, and not a dot segment; every other character is
/// percent-encoded ([`encode_path_segment`]), so any other text the
/// service accepts can be looked up.
pub(crate) fn check_path_value(errors: &mut ValidationErrors, field: &'static str, value: &str) {
    check_required(errors, field, value);
    check_not_dot_segment(errors, field, value);
}

/// `.` and `..` cannot be sent as a path segment: URL parsers (and
/// proxies) remove them as dot segments, in their `%2E` forms too, so the
/// request would reach another path. They are rejected before sending.
fn check_not_dot_segment(errors: &mut ValidationErrors, field: &'static str, value: &str) {
    if value == "." || value == ".." {
        errors.push(
            field,
            format!("{field} must not be \".\" or \"..\" (it cannot be sent in a URL path)"),
        );
    }
}

/// `extraProperties` as a builder gathers it: a whole JSON object
/// ([`set`](Self::set), [`set_json`](Self::set_json)) and single properties
/// ([`insert`](Self::insert)), any problem kept for `build()` to report with
/// the others.
#[derive(Debug, Clone, Default)]
pub(crate) struct ExtraProperties {
    value: Option<serde_json::Value>,
    problems: Vec<String>,
}

impl ExtraProperties {
    /// Replaces everything set so far with `value`.
    pub(crate) fn set(&mut self, value: serde_json::Value) {
        self.value = Some(value);
    }

    /// Replaces everything set so far with the JSON object in `text`.
    pub(crate) fn set_json(&mut self, text: &str) {
        match serde_json::from_str(text) {
            Ok(value) => self.value = Some(value),
            Err(e) => self
                .problems
                .push(format!("extraProperties is not valid JSON: {e}")),
        }
    }

    /// Adds (or replaces) one property.
    pub(crate) fn insert(&mut self, key: String, value: impl serde::Serialize) {
        let value = match serde_json::to_value(value) {
            Ok(value) => value,
            Err(e) => {
                self.problems.push(format!(
                    "extraProperties: {key:?} cannot be written as JSON: {e}"
                ));
                return;
            }
        };
        // Into anything but an object nothing is added: `check` reports it.
        if let serde_json::Value::Object(map) = self
            .value
            .get_or_insert_with(|| serde_json::Value::Object(serde_json::Map::new()))
        {
            map.insert(key, value);
        }
    }

    /// `extraProperties` is sent as the compact JSON string the document
    /// types it as ("string (JSON)"), so it must be JSON; and an object,
    /// since the document calls it properties and the builders add to it
    /// key by key. Its size is the service's to limit (the mock's 16 KiB,
    /// [`MAX_EXTRA_PROPERTIES`], is not checked here).
    pub(crate) fn check(&self, errors: &mut ValidationErrors) -> Option<String> {
        for problem in &self.problems {
            errors.push("extraProperties", problem.clone());
        }
        let value = self.value.as_ref()?;
        if !value.is_object() {
            errors.push("extraProperties", "extraProperties must be a JSON object");
            return None;
        }
        Some(value.to_string())
    }
}
