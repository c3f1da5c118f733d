//! What the mock shows a person (feature `pages`): the payer's payment
//! page and the web console, server-rendered HTML (askama templates in
//! `templates/`). It calls the domain; the HTTP layer routes to it
//! ([`routes`]) and never the other way round.

use axum::routing::{MethodRouter, get};

use crate::state::AppState;

pub mod console;
pub mod html;
pub mod pay;

/// The pages' operations, for the OpenAPI document (the console's too).
#[cfg(feature = "openapi")]
pub(crate) fn operations() -> utoipa::openapi::OpenApi {
    #[derive(utoipa::OpenApi)]
    #[openapi(paths(pay::show, pay::submit, html::stylesheet))]
    struct Pages;
    let mut operations = <Pages as utoipa::OpenApi>::openapi();
    operations.merge(<console::Operations as utoipa::OpenApi>::openapi());
    operations
}

/// Adds the pages' routes to a route table through `route` (the table's
/// own `route`: path, methods, handler).
pub(crate) fn routes<T>(
    table: T,
    route: impl Fn(T, &'static str, &[&'static str], MethodRouter<AppState>) -> T,
) -> T {
    let table = route(
        table,
        "/pay/{token}",
        &["get", "post"],
        get(pay::show).post(pay::submit),
    );
    let table = route(
        table,
        "/pay/static/mock.css",
        &["get"],
        get(html::stylesheet),
    );
    console::routes(table, route)
}
