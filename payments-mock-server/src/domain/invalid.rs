//! [`Invalid`]: a request the rules refuse, in the domain's own words.
//! `http/` answers it 400 `VALIDATION_ERROR` (CONTRACT section 2); the
//! console shows it on a page. The bottom of the domain: it imports
//! nothing.

use std::fmt;

/// Why a request is refused before anything is changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invalid {
    /// Rules the request breaks, every one named, each starting with the
    /// field's JSON name, joined by `; ` in the document's field order.
    Rules(String),
    /// The body is not a JSON object: the parser's detail.
    NotJson(String),
}

impl Invalid {
    /// Broken rules, already joined.
    pub fn rules(message: impl Into<String>) -> Self {
        Self::Rules(message.into())
    }

    /// A body that is not a JSON object, and why.
    pub fn not_json(detail: impl fmt::Display) -> Self {
        Self::NotJson(detail.to_string())
    }
}

/// The message an answer carries: the rules as joined, or `request body
/// is not valid JSON: <detail>`.
impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Rules(message) => f.write_str(message),
            Self::NotJson(detail) => write!(f, "request body is not valid JSON: {detail}"),
        }
    }
}
