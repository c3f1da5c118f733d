//! Errors: [`ApiError`], the one place a failure becomes an HTTP status and
//! the response envelope (CONTRACT sections 2 and 8), and [`Error`], what the
//! library and the binary report before any request is served.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;

/// Everything that can go wrong while configuring or starting the server.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The listener could not be bound or prepared.
    #[error("cannot listen on {addr}")]
    Bind {
        /// What was being bound.
        addr: String,
        /// The operating system's reason.
        #[source]
        source: std::io::Error,
    },
    /// The product catalogue is not valid; the message names the problem
    /// (and, for TOML syntax, the line).
    #[error("invalid catalogue: {0}")]
    Catalog(String),
    /// The catalogue file could not be read.
    #[error("cannot read catalogue file {path}")]
    CatalogFile {
        /// The file given.
        path: String,
        /// The operating system's reason.
        #[source]
        source: std::io::Error,
    },
    /// An option value is out of range or malformed.
    #[error("invalid option: {0}")]
    Config(String),
    /// `--store` names no store this mock knows (an unknown scheme, an
    /// empty path): a usage error.
    #[error("invalid --store: {0}")]
    StoreSpec(String),
    /// The store cannot be opened: not a SQLite database, a damaged file, a
    /// file another process holds, a database that cannot be reached,
    /// wrong credentials. `store` names it, without a password.
    #[error("cannot open store {store}: {reason}")]
    StoreOpen {
        /// The store, as the console shows it (password as `***`).
        store: String,
        /// Why, without secrets.
        reason: String,
    },
    /// The store was written by a newer version of the mock.
    #[error(
        "store {store} has schema version {found}, newer than this mock's {supported}: use a newer payments-mock-server"
    )]
    StoreSchemaNewer {
        /// The store.
        store: String,
        /// The version the store records.
        found: i64,
        /// The newest this build knows.
        supported: i64,
    },
    /// `--catalog` or `--expiry` differ from what the store holds
    /// (replicas never disagree on behaviour): a usage error.
    #[error(
        "store {store} holds other settings than this start gives: {difference}; start without --catalog/--expiry to use the store's, or with --fresh to replace them"
    )]
    SettingsDiffer {
        /// The store.
        store: String,
        /// What differs, item by item.
        difference: String,
    },
}

impl Error {
    /// The binary's exit code for this error (COMMANDS.md, CONTRACT
    /// section 15): 2 for what the command line got wrong, 1 otherwise.
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Catalog(_)
            | Self::CatalogFile { .. }
            | Self::Config(_)
            | Self::StoreSpec(_)
            | Self::SettingsDiffer { .. } => 2,
            Self::Bind { .. } | Self::StoreOpen { .. } | Self::StoreSchemaNewer { .. } => 1,
        }
    }
}

/// The wire error codes of CONTRACT section 8.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCode {
    /// Body, query or rule validation failed.
    ValidationError,
    /// Status by id: empty id.
    InvalidTransactionId,
    /// Status by reference: empty reference.
    InvalidReferenceNo,
    /// Unknown transaction (400 on confirm, 404 on status).
    TransactionNotFound,
    /// Initiate: the merchant already used this reference.
    DuplicateReferenceNo,
    /// Confirm: already processed.
    TransactionAlreadyConfirmed,
    /// Confirm: expired.
    TransactionExpired,
    /// Status by reference: several merchants hold it and no scope was given.
    AmbiguousReferenceNo,
    /// Authentication on, key missing or wrong.
    Unauthorized,
    /// Key bound to another merchant.
    Forbidden,
    /// No such route.
    NotFound,
    /// Route exists, method does not.
    MethodNotAllowed,
    /// Body over 64 KiB.
    PayloadTooLarge,
    /// Body not JSON by content type.
    UnsupportedMediaType,
    /// Rate limit exceeded (or injected).
    RateLimited,
    /// Unexpected error or injected fault.
    InternalError,
    /// The database behind `--store` cannot be reached (CONTRACT section 15).
    StoreUnavailable,
    /// The contract proxy's upstream could not be reached or did not
    /// answer in time (CONTRACT section 16).
    UpstreamUnavailable,
    /// The contract proxy with `--enforce`: the upstream's answer broke the
    /// interface document.
    ContractViolation,
}

impl ErrorCode {
    /// The wire string, e.g. `VALIDATION_ERROR`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ValidationError => "VALIDATION_ERROR",
            Self::InvalidTransactionId => "INVALID_TRANSACTION_ID",
            Self::InvalidReferenceNo => "INVALID_REFERENCE_NO",
            Self::TransactionNotFound => "TRANSACTION_NOT_FOUND",
            Self::DuplicateReferenceNo => "DUPLICATE_REFERENCE_NO",
            Self::TransactionAlreadyConfirmed => "TRANSACTION_ALREADY_CONFIRMED",
            Self::TransactionExpired => "TRANSACTION_EXPIRED",
            Self::AmbiguousReferenceNo => "AMBIGUOUS_REFERENCE_NO",
            Self::Unauthorized => "UNAUTHORIZED",
            Self::Forbidden => "FORBIDDEN",
            Self::NotFound => "NOT_FOUND",
            Self::MethodNotAllowed => "METHOD_NOT_ALLOWED",
            Self::PayloadTooLarge => "PAYLOAD_TOO_LARGE",
            Self::UnsupportedMediaType => "UNSUPPORTED_MEDIA_TYPE",
            Self::RateLimited => "RATE_LIMITED",
            Self::InternalError => "INTERNAL_ERROR",
            Self::StoreUnavailable => "STORE_UNAVAILABLE",
            Self::UpstreamUnavailable => "UPSTREAM_UNAVAILABLE",
            Self::ContractViolation => "CONTRACT_VIOLATION",
        }
    }

    /// The code a wire string names, if it is one of ours.
    pub fn parse(text: &str) -> Option<Self> {
        crate::openapi::ERROR_CODES
            .into_iter()
            .find(|c| c.as_str() == text)
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

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
pub(crate) struct ErrorCodeTag(pub(crate) ErrorCode);

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

    /// 413 `PAYLOAD_TOO_LARGE`.
    pub fn payload_too_large() -> Self {
        Self::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            ErrorCode::PayloadTooLarge,
            format!(
                "request body is larger than {} bytes",
                crate::http::extract::BODY_LIMIT
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

    /// 503 `STORE_UNAVAILABLE`: the database behind the store failed. The
    /// message says what failed, never with a password.
    pub fn store_unavailable(error: &crate::store::StoreError) -> Self {
        Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            ErrorCode::StoreUnavailable,
            format!("{error}; retry later"),
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
    pub(crate) fn for_status(status: StatusCode) -> Self {
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
    pub(crate) fn body_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(&Envelope {
            is_success: false,
            error_code: Some(self.code.as_str()),
            message: Some(&self.message),
            data: (),
        })
        .unwrap_or_default()
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = Envelope {
            is_success: false,
            error_code: Some(self.code.as_str()),
            message: Some(&self.message),
            data: (),
        };
        let mut response = (self.status, Json(body)).into_response();
        response.extensions_mut().insert(ErrorCodeTag(self.code));
        response
    }
}

/// The response envelope (interface section 2.1), fields in document order.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Envelope<'a, T> {
    is_success: bool,
    error_code: Option<&'a str>,
    message: Option<&'a str>,
    data: T,
}

/// A success envelope: `isSuccess` true, `errorCode` null, optional message.
pub(crate) fn success(data: impl Serialize, message: Option<&str>) -> Response {
    Json(Envelope {
        is_success: true,
        error_code: None,
        message,
        data,
    })
    .into_response()
}

impl From<crate::store::StoreError> for ApiError {
    fn from(error: crate::store::StoreError) -> Self {
        Self::store_unavailable(&error)
    }
}
