//! How the admin side's refusals are answered, and the [`Viewer`] a
//! handler takes as an extractor (the middleware puts it on the request).

use axum::http::StatusCode;
use axum::response::{IntoResponse as _, Response};
use payments_serve::admin::bearer_challenge;
use payments_serve::{ApiError, ErrorCode};

use crate::domain::access::{Refusal, Viewer};

/// The envelope for a refusal (a 401 carries `WWW-Authenticate: Bearer`).
pub(crate) fn refusal_response(refusal: Refusal) -> Response {
    let error = match refusal {
        Refusal::Unauthenticated => ApiError::new(
            StatusCode::UNAUTHORIZED,
            ErrorCode::Unauthorized,
            "missing or invalid admin key: send Authorization: Bearer <key>",
        ),
        Refusal::Unbound => ApiError::new(
            StatusCode::FORBIDDEN,
            ErrorCode::Forbidden,
            "this API key is bound to no merchant: the admin side takes an admin key, or a key bound to a merchant for reading that merchant's part",
        ),
        Refusal::ReadOnly => ApiError::new(
            StatusCode::FORBIDDEN,
            ErrorCode::Forbidden,
            "a merchant's key reads its own transactions and requests here and changes nothing: this needs an admin key",
        ),
    };
    // A 401 names its scheme; the 403s need none.
    bearer_challenge(error.into_response())
}

/// The refusal of an open admin side's request whose `Host` names the mock
/// otherwise than by an address, as `localhost` or by its `--public-url`
/// host: a web page elsewhere may be reaching it through DNS rebinding.
pub(crate) fn foreign_host(headers: &axum::http::HeaderMap) -> Response {
    payments_serve::admin::foreign_host(
        headers,
        "mock",
        "its admin side answers",
        "an IP address, localhost, or its --public-url host",
        "or start the mock with --public-url naming this host, or with --admin-key",
    )
    .into_response()
}

/// The viewer the middleware let through; a route reached without one
/// (never: every request outside `/api/` passes the middleware) is 401.
impl<S: Send + Sync> axum::extract::FromRequestParts<S> for Viewer {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _: &S,
    ) -> Result<Self, Self::Rejection> {
        parts
            .extensions
            .get::<Self>()
            .copied()
            .ok_or_else(|| refusal_response(Refusal::Unauthenticated))
    }
}

/// The viewer, when the middleware found one: an open route
/// (`/_mock/health`) is reached without one by an anonymous caller.
impl<S: Send + Sync> axum::extract::OptionalFromRequestParts<S> for Viewer {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _: &S,
    ) -> Result<Option<Self>, Self::Rejection> {
        Ok(parts.extensions.get::<Self>().copied())
    }
}
