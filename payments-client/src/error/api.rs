//! [`ApiError`]: the service's refusal, and how an application makes
//! one for its own tests.

use std::fmt;
use std::time::Duration;

use super::Error;
use crate::model::status::ErrorCode;

/// The service said no: an envelope with `isSuccess` false.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ApiError {
    /// HTTP status (the envelope decides failure, so this may be 200).
    pub status: u16,
    /// `errorCode`; `Other("")` if the service sent none.
    pub code: ErrorCode,
    /// `message`, empty if the service sent none.
    pub message: String,
    /// The `X-Request-Id` of the call.
    pub request_id: String,
    /// The response body exactly as received.
    pub raw_envelope: String,
    /// `Retry-After`, when the response carried one.
    pub retry_after: Option<Duration>,
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "service answered {} {}", self.status, self.code)?;
        // The service's text, without a trailing period (STYLE: Display).
        let message = self.message.trim_end().trim_end_matches('.');
        if !message.is_empty() {
            write!(f, ": {message}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ApiError {}

impl ApiError {
    /// The service's refusal as the client would report it: for an
    /// application's own tests of how it handles one (the fields are
    /// `#[non_exhaustive]`, so this is the way to make one outside the
    /// crate). `raw_envelope` is the envelope the service would have sent
    /// (`isSuccess` false, this `errorCode` and `message`, `data` null);
    /// `request_id` is empty and `retry_after` `None` until set.
    ///
    /// What the client concludes follows from the status and code as for
    /// a real answer: a 5xx or `INTERNAL_ERROR` leaves the outcome
    /// unknown, a 429 is retryable.
    ///
    /// ```
    /// use payments_client::{ApiError, Error, ErrorCode, Outcome};
    /// use std::time::Duration;
    ///
    /// let declined: Error = ApiError::new(400, ErrorCode::TransactionExpired, "Payment window closed")
    ///     .with_request_id("req-123")
    ///     .into();
    /// assert_eq!(declined.outcome(), Outcome::NotCarriedOut);
    /// assert!(!declined.is_retryable());
    ///
    /// let busy: Error = ApiError::new(429, ErrorCode::RateLimited, "Slow down")
    ///     .with_retry_after(Duration::from_secs(2))
    ///     .into();
    /// assert!(busy.is_retryable());
    ///
    /// let failed: Error = ApiError::new(500, ErrorCode::InternalError, "").into();
    /// assert_eq!(failed.outcome(), Outcome::Unknown);
    /// ```
    pub fn new(status: u16, code: ErrorCode, message: impl Into<String>) -> Self {
        let message = message.into();
        // In the interface document's order of fields, as the service
        // writes it (a `json!` map would sort them).
        let text = |s: &str| serde_json::Value::from(s).to_string();
        let raw_envelope = format!(
            r#"{{"isSuccess":false,"errorCode":{},"message":{},"data":null}}"#,
            text(code.as_str()),
            text(&message)
        );
        ApiError {
            status,
            code,
            message,
            request_id: String::new(),
            raw_envelope,
            retry_after: None,
        }
    }

    /// The same, with the `X-Request-Id` the service would have sent.
    #[must_use]
    pub fn with_request_id(mut self, request_id: impl Into<String>) -> Self {
        self.request_id = request_id.into();
        self
    }

    /// The same, with a `Retry-After`.
    #[must_use]
    pub fn with_retry_after(mut self, after: Duration) -> Self {
        self.retry_after = Some(after);
        self
    }
}

impl From<ApiError> for Error {
    /// [`Error::Api`], boxed.
    fn from(error: ApiError) -> Self {
        Error::Api(Box::new(error))
    }
}

impl ApiError {
    /// `INTERNAL_ERROR` is the service's own "unexpected server error; the
    /// caller may retry" (interface document, error codes): a 500 in what
    /// it means, whatever HTTP status carried it (CONTRACT section 11: on
    /// a 200 the envelope is the truth).
    pub(super) fn says_internal_error(&self) -> bool {
        self.code == ErrorCode::InternalError
    }
}
