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
use crate::domain::port::{StoreError, StoreErrorKind};

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

/// 404 `SANDBOX_NOT_FOUND`: what every route under an unknown, malformed,
/// removed or expired sandbox id answers (and under another merchant's).
pub(crate) fn sandbox_not_found() -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        ErrorCode::SandboxNotFound,
        "no live sandbox has this id (unknown, malformed, removed or expired)",
    )
}

/// A store failure as an answer: 503 `STORE_UNAVAILABLE`, saying what
/// failed, never with a password; a sandbox removed while the request ran
/// is 404 `SANDBOX_NOT_FOUND`, as any later request in it.
impl From<StoreError> for ApiError {
    fn from(error: StoreError) -> Self {
        match error.kind() {
            StoreErrorKind::SandboxGone => sandbox_not_found(),
            // A lasting fault of the data, not an outage: no retry mends it.
            StoreErrorKind::Unreadable => Self::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                ErrorCode::InternalError,
                error.to_string(),
            ),
            // Its message says to restart the mock; a retry does not help.
            StoreErrorKind::Lost => Self::new(
                StatusCode::SERVICE_UNAVAILABLE,
                ErrorCode::StoreUnavailable,
                error.to_string(),
            ),
            _ => Self::new(
                StatusCode::SERVICE_UNAVAILABLE,
                ErrorCode::StoreUnavailable,
                format!("{error}; retry later"),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sandbox removed while its request ran (a foreign key the
    /// database refused) is answered as any request in a removed sandbox;
    /// only a real failure of the store is 503.
    #[test]
    fn a_removed_sandbox_is_404_and_a_failed_store_503() {
        let gone = ApiError::from(StoreError::sandbox_gone()).into_response();
        assert_eq!(gone.status(), StatusCode::NOT_FOUND);
        let failed = ApiError::from(StoreError::new("connection refused")).into_response();
        assert_eq!(failed.status(), StatusCode::SERVICE_UNAVAILABLE);
    }

    /// Only an outage says "retry later": a row the store cannot read is
    /// 500 `INTERNAL_ERROR`, a store file removed is 503 saying to restart.
    #[test]
    fn lasting_store_faults_never_say_retry_later() {
        let answer = |error: StoreError| {
            let api = ApiError::from(error);
            (api.status, api.code, api.message)
        };
        let (status, code, message) = answer(StoreError::new("connection refused"));
        assert_eq!(
            (status, code),
            (StatusCode::SERVICE_UNAVAILABLE, ErrorCode::StoreUnavailable)
        );
        assert!(message.ends_with("; retry later"), "{message}");
        let (status, code, message) = answer(StoreError::unreadable("row 7: expected 16 bytes"));
        assert_eq!(
            (status, code),
            (StatusCode::INTERNAL_SERVER_ERROR, ErrorCode::InternalError)
        );
        assert!(!message.contains("retry"), "{message}");
        let (status, code, message) = answer(StoreError::lost("mock.db was removed"));
        assert_eq!(
            (status, code),
            (StatusCode::SERVICE_UNAVAILABLE, ErrorCode::StoreUnavailable)
        );
        assert!(!message.contains("retry"), "{message}");
    }
}
