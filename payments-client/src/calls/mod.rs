//! One file per call: its request type, local validation (CONTRACT
//! section 1) and how it maps onto HTTP ([`Call`]). Sending is
//! `transport.rs`'s job.

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

/// Maximum size of `extraProperties` as compact JSON, in bytes.
// CONTRACT section 1.
pub const MAX_EXTRA_PROPERTIES: usize = 16 * 1024;

pub(crate) fn check_len(
    errors: &mut ValidationErrors,
    field: &'static str,
    value: &str,
    min: usize,
    max: usize,
) {
    let n = value.chars().count();
    if n < min {
        if min == 1 {
            errors.push(field, format!("{field} must not be empty"));
        } else {
            errors.push(field, format!("{field} must be at least {min} characters"));
        }
    } else if n > max {
        errors.push(field, format!("{field} must be at most {max} characters"));
    }
}

/// referenceNo: 1–64 characters, no leading or trailing whitespace, no
/// control characters.
pub(crate) fn check_reference_no(errors: &mut ValidationErrors, value: &str) {
    let field = "referenceNo";
    check_len(errors, field, value, 1, 64);
    if value.trim() != value {
        errors.push(field, "referenceNo must not start or end with whitespace");
    }
    if value.chars().any(char::is_control) {
        errors.push(field, "referenceNo must not contain control characters");
    }
}

/// `.` and `..` cannot be sent as a path segment: URL parsers (and
/// proxies) remove them as dot segments, in their `%2E` forms too, so the
/// request would reach another path. They are rejected before sending.
pub(crate) fn check_not_dot_segment(
    errors: &mut ValidationErrors,
    field: &'static str,
    value: &str,
) {
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

    /// `extraProperties` must be a JSON object of at most 16 KiB; it is
    /// sent as the compact JSON string the document describes.
    pub(crate) fn check(&self, errors: &mut ValidationErrors) -> Option<String> {
        for problem in &self.problems {
            errors.push("extraProperties", problem.clone());
        }
        let value = self.value.as_ref()?;
        if !value.is_object() {
            errors.push("extraProperties", "extraProperties must be a JSON object");
            return None;
        }
        let text = value.to_string();
        if text.len() > MAX_EXTRA_PROPERTIES {
            errors.push(
                "extraProperties",
                format!("extraProperties must be at most {MAX_EXTRA_PROPERTIES} bytes"),
            );
        }
        Some(text)
    }
}
