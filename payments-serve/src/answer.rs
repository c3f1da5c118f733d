//! [`ApiError`]: the one place a failure becomes an HTTP status and the
//! response envelope, for both servers; and [`success`], the envelope of
//! a success.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use payments_interface::{Envelope, ErrorCode};
use serde::Serialize;

/// A failed request: the HTTP status, the wire code and the message.
///
/// Its [`IntoResponse`] is the only place a failure turns into a response,
/// so every failure is the same envelope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// HTTP status.
    pub status: StatusCode,
    /// `errorCode` of the envelope.
    pub code: ErrorCode,
    /// `message` of the envelope.
    pub message: String,
}

/// Marks a response with the error code it carries, so the request journal
/// and the log can read it without parsing the body.
#[derive(Debug, Clone, Copy)]
pub struct ErrorCodeTag(pub ErrorCode);

impl ApiError {
    /// A failure with any status and code.
    pub fn new(status: StatusCode, code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
        }
    }

    /// 400 `VALIDATION_ERROR`.
    pub fn validation(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, ErrorCode::ValidationError, message)
    }

    /// 400 `VALIDATION_ERROR` for a body that cannot be parsed.
    pub fn bad_json(detail: impl std::fmt::Display) -> Self {
        Self::validation(format!("request body is not valid JSON: {detail}"))
    }

    /// 500 `INTERNAL_ERROR` with a message that reveals nothing.
    pub fn internal() -> Self {
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            ErrorCode::InternalError,
            "internal server error",
        )
    }

    /// 404 `NOT_FOUND` for an unknown route.
    pub fn not_found() -> Self {
        Self::new(StatusCode::NOT_FOUND, ErrorCode::NotFound, "no such route")
    }

    /// 405 `METHOD_NOT_ALLOWED`.
    pub fn method_not_allowed() -> Self {
        Self::new(
            StatusCode::METHOD_NOT_ALLOWED,
            ErrorCode::MethodNotAllowed,
            "method not allowed for this route",
        )
    }

    /// 413 `PAYLOAD_TOO_LARGE`: a body over
    /// [`payments_interface::rules::BODY_LIMIT`].
    pub fn payload_too_large() -> Self {
        Self::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            ErrorCode::PayloadTooLarge,
            format!(
                "request body is larger than {} bytes",
                payments_interface::rules::BODY_LIMIT
            ),
        )
    }

    /// 401 `UNAUTHORIZED`.
    pub fn unauthorized() -> Self {
        Self::new(
            StatusCode::UNAUTHORIZED,
            ErrorCode::Unauthorized,
            "missing or invalid API key: send Authorization: Bearer <key>",
        )
    }

    /// 429 `RATE_LIMITED`.
    pub fn rate_limited() -> Self {
        Self::new(
            StatusCode::TOO_MANY_REQUESTS,
            ErrorCode::RateLimited,
            "rate limit exceeded; retry after the time in Retry-After",
        )
    }

    /// The status a generic (non-envelope) response of `status` maps to.
    pub fn for_status(status: StatusCode) -> Self {
        match status.as_u16() {
            404 => Self::not_found(),
            405 => Self::method_not_allowed(),
            413 => Self::payload_too_large(),
            415 => Self::new(
                status,
                ErrorCode::UnsupportedMediaType,
                "Content-Type must be application/json",
            ),
            429 => Self::rate_limited(),
            401 => Self::unauthorized(),
            400..=499 => Self::validation(format!(
                "request rejected: {}",
                status.canonical_reason().unwrap_or("bad request")
            )),
            _ => Self::internal(),
        }
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {}: {}",
            self.status.as_u16(),
            self.code,
            self.message
        )
    }
}

impl std::error::Error for ApiError {}

impl ApiError {
    /// The body [`IntoResponse`] answers with, as bytes.
    pub fn body_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(&Envelope::failure(self.code, &self.message)).unwrap_or_default()
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = Envelope::failure(self.code, &self.message);
        let mut response = (self.status, Json(body)).into_response();
        response.extensions_mut().insert(ErrorCodeTag(self.code));
        response
    }
}

/// A success envelope: `isSuccess` true, `errorCode` null, optional message.
pub fn success(data: impl Serialize, message: Option<&str>) -> Response {
    Json(Envelope::success(data, message)).into_response()
}
