//! [`ValidationErrors`]: the rules a request breaks, found before it is
//! sent (what the interface document states and what the client needs,
//! not the mock's limits), each a [`FieldError`].

use std::fmt;

use super::Error;

/// One broken rule found before sending.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct FieldError {
    /// The JSON name of the field (`referenceNo`).
    pub field: &'static str,
    /// What is wrong, starting with the field name like the service's own
    /// messages (`referenceNo must not be empty`).
    pub message: String,
}

/// Every rule a request breaks, in the order of the fields in the
/// service's request table.
// CONTRACT section 1.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ValidationErrors(Vec<FieldError>);

impl ValidationErrors {
    pub(crate) fn push(&mut self, field: &'static str, message: impl Into<String>) {
        self.0.push(FieldError {
            field,
            message: message.into(),
        });
    }

    /// Each broken rule.
    pub fn errors(&self) -> &[FieldError] {
        &self.0
    }

    /// Whether `field` (its JSON name) broke a rule.
    pub fn has(&self, field: &str) -> bool {
        self.0.iter().any(|e| e.field == field)
    }

    /// Whether nothing is wrong.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub(crate) fn into_result(self) -> Result<(), Error> {
        if self.is_empty() {
            Ok(())
        } else {
            Err(Error::InvalidInput(self))
        }
    }
}

impl fmt::Display for ValidationErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            f.write_str(&e.message)?;
        }
        Ok(())
    }
}

impl std::error::Error for ValidationErrors {}
