//! Where the domain's refusals become answers: a request the rules refuse
//! ([`Invalid`]) is 400 `VALIDATION_ERROR`; a store that fails
//! ([`StoreError`]) is 503 `STORE_UNAVAILABLE` (CONTRACT sections 2 and
//! 15); a handler that panics is 500 (section 2). The domain knows no
//! status code; this is the one place that gives them one (the handlers
//! map their own calls' refusals beside them).

use axum::http::StatusCode;
use axum::response::{IntoResponse as _, Response};
use payments_serve::{ApiError, ErrorCode};

use crate::domain::invalid::Invalid;
use crate::domain::port::StoreError;

impl From<Invalid> for ApiError {
    fn from(invalid: Invalid) -> Self {
        match invalid {
            Invalid::Rules(message) => Self::validation(message),
            Invalid::NotJson(detail) => Self::bad_json(detail),
        }
    }
}

/// The response to a panic in a handler: 500, nothing revealed.
pub(crate) fn panic_response(_: Box<dyn std::any::Any + Send + 'static>) -> Response {
    tracing::error!(target: "payments_mock_server::request", "handler panicked");
    ApiError::internal().into_response()
}

/// A store failure as an answer: 503 `STORE_UNAVAILABLE`, saying what
/// failed, never with a password.
impl From<StoreError> for ApiError {
    fn from(error: StoreError) -> Self {
        Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            ErrorCode::StoreUnavailable,
            format!("{error}; retry later"),
        )
    }
}
