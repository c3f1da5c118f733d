//! Routes and layers, nothing else.

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::middleware::{from_fn, from_fn_with_state};
use axum::routing::{get, post};
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::limit::RequestBodyLimitLayer;

use crate::error::ApiError;
use crate::extract::BODY_LIMIT;
use crate::guard::api_guard;
use crate::handlers::{admin, confirm, initiate, status};
use crate::middleware::{panic_response, request_context};
use crate::state::AppState;

/// The whole service as a router: drive it with
/// `tower::ServiceExt::oneshot` in tests, or serve it with [`crate::server::run`].
///
/// Layers, outermost first: request id + log + envelope guarantee, body
/// size limit, panic → 500, the `/api/` guard (auth, rate limit, faults,
/// journal), then the routes.
pub fn app(state: AppState) -> Router {
    Router::new()
        .route("/api/payments/initiate", post(initiate::handle))
        .route("/api/payments/confirm", post(confirm::handle))
        .route("/api/payments/{*rest}", get(status::handle))
        .route("/_mock/health", get(admin::health))
        .route("/_mock/transactions", get(admin::transactions))
        .route("/_mock/reset", post(admin::reset))
        .route("/_mock/clock", get(admin::clock))
        .route("/_mock/clock/advance", post(admin::advance))
        .route("/_mock/requests", get(admin::requests))
        .route("/openapi.json", get(admin::openapi))
        .fallback(|| async { ApiError::not_found() })
        .method_not_allowed_fallback(|| async { ApiError::method_not_allowed() })
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .layer(from_fn_with_state(state.clone(), api_guard))
        .layer(CatchPanicLayer::custom(panic_response))
        .layer(RequestBodyLimitLayer::new(BODY_LIMIT))
        .layer(from_fn(request_context))
        .with_state(state)
}
