//! `POST /api/payments/confirm`.

use std::fmt;

use serde::Serialize;

use crate::calls::{Call, ExtraProperties, Method, check_path_value, check_required};
use crate::error::{Error, ValidationErrors};
use crate::model::ids::TransactionId;

/// A validated confirm request (interface document section 2.4).
///
/// Its `Debug` shows the confirmation code as `[REDACTED]`: an OTP never
/// reaches a log through it.
///
/// ```
/// use payments_client::ConfirmRequest;
/// let req = ConfirmRequest::builder("0192f7c4-2d1e-7a10-9c55-5d3a8f7b1e01", "INV-1")
///     .confirmation_code("493817")
///     .build()?;
/// assert!(!format!("{req:?}").contains("493817"));
/// # Ok::<(), payments_client::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfirmRequest {
    transaction_id: TransactionId,
    reference_no: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    confirmation_code: Option<Code>,
    /// Sent as a string holding compact JSON, as the document types it.
    #[serde(skip_serializing_if = "Option::is_none")]
    extra_properties: Option<String>,
}

impl ConfirmRequest {
    /// Starts a request with both required fields.
    ///
    /// # Examples
    ///
    /// ```
    /// use payments_client::ConfirmRequest;
    /// let req = ConfirmRequest::builder("0192f7c4-2d1e-7a10-9c55-5d3a8f7b1e01", "INV-1")
    ///     .confirmation_code("123456")
    ///     .build()?;
    /// assert_eq!(req.reference_no(), "INV-1");
    /// # Ok::<(), payments_client::Error>(())
    /// ```
    pub fn builder(
        transaction_id: impl Into<TransactionId>,
        reference_no: impl Into<String>,
    ) -> ConfirmRequestBuilder {
        ConfirmRequestBuilder {
            transaction_id: transaction_id.into(),
            reference_no: reference_no.into(),
            confirmation_code: None,
            extra_properties: ExtraProperties::default(),
        }
    }

    /// The transaction to confirm.
    pub fn transaction_id(&self) -> &TransactionId {
        &self.transaction_id
    }

    /// The merchant's reference of that transaction.
    pub fn reference_no(&self) -> &str {
        &self.reference_no
    }

    /// The OTP or other code, if any.
    pub fn confirmation_code(&self) -> Option<&str> {
        self.confirmation_code.as_ref().map(|code| code.0.as_str())
    }

    /// The compact JSON string sent as `extraProperties`.
    pub fn extra_properties(&self) -> Option<&str> {
        self.extra_properties.as_deref()
    }

    pub(crate) fn call(&self) -> Result<Call, Error> {
        let body = serde_json::to_vec(self)
            .map_err(|e| Error::config(format!("cannot serialise the request: {e}")))?;
        Ok(Call {
            name: "confirm",
            method: Method::Post,
            template: "/api/payments/confirm",
            path: "/api/payments/confirm".to_owned(),
            query: Vec::new(),
            body: Some(body.into()),
        })
    }
}

/// Builder of a [`ConfirmRequest`]; see [`ConfirmRequest::builder`]. Its
/// `Debug` shows the confirmation code as `[REDACTED]`.
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until build() is called"]
pub struct ConfirmRequestBuilder {
    transaction_id: TransactionId,
    reference_no: String,
    confirmation_code: Option<Code>,
    extra_properties: ExtraProperties,
}

/// A confirmation code (an OTP): sent as it is, shown by `Debug` as
/// `[REDACTED]`.
#[derive(Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
struct Code(String);

impl fmt::Debug for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[REDACTED]")
    }
}

impl ConfirmRequestBuilder {
    /// OTP or other verification code (the mock takes 1–32 characters).
    pub fn confirmation_code(mut self, v: impl Into<String>) -> Self {
        self.confirmation_code = Some(Code(v.into()));
        self
    }

    /// Additional confirmation data: a JSON object, sent as a JSON string.
    /// Replaces any set before; [`extra_property`](Self::extra_property)
    /// adds to it.
    pub fn extra_properties(mut self, v: serde_json::Value) -> Self {
        self.extra_properties.set(v);
        self
    }

    /// One property of additional confirmation data: a string, number,
    /// boolean, list or any `Serialize` value of your own. Repeat for more;
    /// no `serde_json` needed.
    ///
    /// # Examples
    ///
    /// ```
    /// use payments_client::ConfirmRequest;
    /// let req = ConfirmRequest::builder("0192f7c4-2d1e-7a10-9c55-5d3a8f7b1e01", "INV-1")
    ///     .confirmation_code("123456")
    ///     .extra_property("otpChannel", "sms")
    ///     .build()?;
    /// assert_eq!(req.extra_properties(), Some(r#"{"otpChannel":"sms"}"#));
    /// # Ok::<(), payments_client::Error>(())
    /// ```
    pub fn extra_property(mut self, key: impl Into<String>, value: impl serde::Serialize) -> Self {
        self.extra_properties.insert(key.into(), value);
        self
    }

    /// Additional confirmation data from the text of a JSON object.
    /// Replaces any set before; text that is not JSON is reported by
    /// [`build`](Self::build).
    pub fn extra_properties_json(mut self, text: &str) -> Self {
        self.extra_properties.set_json(text);
        self
    }

    /// Checks, before anything is sent, only what the interface document
    /// states and what the client needs, and reports every problem at
    /// once: `transactionId` and `referenceNo` (required) are not empty,
    /// `transactionId` is not `.` or `..` (the read-back after an
    /// ambiguous attempt puts it in a URL path), and `extraProperties` is
    /// a JSON object. The confirmation code's length and form are the
    /// service's to decide (the mock takes 1–32 characters).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidInput`] listing each problem.
    pub fn build(self) -> Result<ConfirmRequest, Error> {
        let mut errors = ValidationErrors::default();
        check_path_value(&mut errors, "transactionId", self.transaction_id.as_str());
        check_required(&mut errors, "referenceNo", &self.reference_no);
        let extra = self.extra_properties.check(&mut errors);
        errors.into_result()?;
        Ok(ConfirmRequest {
            transaction_id: self.transaction_id,
            reference_no: self.reference_no,
            confirmation_code: self.confirmation_code,
            extra_properties: extra,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::ConfirmRequest;

    #[test]
    fn debug_never_shows_the_confirmation_code() {
        let builder = ConfirmRequest::builder("0192f7c4-2d1e-7a10-9c55-5d3a8f7b1e01", "INV-1")
            .confirmation_code("493817");
        let shown = format!("{builder:?}");
        assert!(!shown.contains("493817"), "{shown}");
        assert!(
            shown.contains("[REDACTED]") && shown.contains("INV-1"),
            "{shown}"
        );
        let request = builder.build().expect("valid");
        let shown = format!("{request:?} {request:#?}");
        assert!(!shown.contains("493817"), "{shown}");
        assert!(shown.contains("[REDACTED]"), "{shown}");
        let without = ConfirmRequest::builder("0192f7c4-2d1e-7a10-9c55-5d3a8f7b1e01", "INV-1")
            .build()
            .expect("valid");
        assert!(format!("{without:?}").contains("confirmation_code: None"));
    }
}
