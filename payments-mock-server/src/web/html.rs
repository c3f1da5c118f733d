//! The mock's own page bits: which paths are pages, its error pages (the
//! payer's wording), and the stylesheet route. The chrome they are drawn
//! with (rendering, headers, assets) is `payments_serve::pages`.

use askama::Template;
use axum::http::StatusCode;
use axum::response::Response;

use crate::state::AppState;
pub(crate) use payments_serve::pages::{fragment_root_of, is_html, render, root_of};

/// The relative prefix from a payer's page that `state` serves at `path`
/// back to the server's root, whose stylesheet (`pay/static/mock.css`)
/// the page links. Under a sandbox, `path` is what follows its prefix
/// `/sandboxes/{id}`: the root is two levels further up. Its pages link
/// the root's stylesheet, not the sandbox's own: with `--admin-key` a
/// payment page's token opens the sandbox to its payer, who has no key,
/// and every other path under its prefix, its stylesheet's too, answers
/// them as an unknown id does (CONTRACT section 19). Relative, so a
/// `--public-url` with a path prefix keeps working.
pub(crate) fn page_root(state: &AppState, path: &str) -> String {
    let mut root = root_of(path);
    if state.sandbox.is_some() {
        root.push_str("../../");
    }
    root
}

/// Whether a path is served as pages rather than JSON: its errors (an
/// unknown route, a wrong method, a body over the limit) are pages too.
pub(crate) fn is_page_path(path: &str) -> bool {
    path == "/pay"
        || path.starts_with("/pay/")
        || path == "/_mock/ui"
        || path.starts_with("/_mock/ui/")
}

/// Whether a path is a page path under `/sandboxes/{id}` (`/pay/…`,
/// `/_mock/ui/…` after the id): the root answers it when that sandbox is
/// not live, and answers it as a page too.
pub(crate) fn is_sandboxed_page_path(path: &str) -> bool {
    path.strip_prefix("/sandboxes/")
        .and_then(|rest| rest.find('/').map(|i| &rest[i..]))
        .is_some_and(is_page_path)
}

/// The 404 page at a page path whose sandbox is not live (unknown,
/// malformed, removed, expired, or another merchant's): the payer's
/// wording, drawn with nothing of any sandbox (no label, clock or store).
pub(crate) fn sandbox_not_found_page(path: &str) -> Response {
    let tail = path
        .strip_prefix("/sandboxes/")
        .and_then(|rest| rest.find('/').map(|i| &rest[i..]))
        .unwrap_or(path);
    let title = if tail.starts_with("/pay") {
        "No such payment page"
    } else {
        "No such page"
    };
    error_page(
        StatusCode::NOT_FOUND,
        title,
        "There is nothing at this address: the sandbox it belongs to was removed, has expired, or never existed. Check the link you were given.",
        &root_of(path),
    )
}

#[derive(Template)]
#[template(path = "error.html")]
struct ErrorPage<'a> {
    root: &'a str,
    status: u16,
    title: &'a str,
    detail: &'a str,
}

/// An error page: the title, one sentence of detail (escaped like
/// everything else) and the status, linked to the server's root by `root`
/// ([`page_root`], or [`root_of`] the whole path asked).
pub(crate) fn error_page(status: StatusCode, title: &str, detail: &str, root: &str) -> Response {
    render(
        status,
        &ErrorPage {
            root,
            status: status.as_u16(),
            title,
            detail,
        },
    )
}

/// The page for a failure that happened before our handlers (axum's or
/// tower-http's own rejections) on a page path that `state` serves:
/// unknown route, wrong method, body too large.
pub(crate) fn error_page_for_status(state: &AppState, status: StatusCode, path: &str) -> Response {
    let (title, detail) = match status {
        StatusCode::NOT_FOUND => (
            "No such page",
            "There is no payment page at this address. Check the link the merchant gave you.",
        ),
        StatusCode::METHOD_NOT_ALLOWED => (
            "Method not allowed",
            "This page can only be opened (GET) or submitted with its buttons (POST).",
        ),
        StatusCode::PAYLOAD_TOO_LARGE => (
            "Request too large",
            "The submitted form is larger than a payment page form can be.",
        ),
        _ => ("Request not accepted", "The request could not be handled."),
    };
    error_page(status, title, detail, &page_root(state, path))
}

/// The pages' stylesheet, from the binary.
#[cfg_attr(
    feature = "openapi",
    utoipa::path(
        get,
        path = "/pay/static/mock.css",
        operation_id = "pageStylesheet",
        tag = "payment page"
    )
)]
pub async fn stylesheet() -> Response {
    payments_serve::pages::static_asset(
        payments_serve::pages::STYLESHEET,
        "text/css; charset=utf-8",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn error_pages_escape_their_text() {
        let response = error_page(
            StatusCode::BAD_REQUEST,
            "<b>x</b>",
            "\"quoted\" & <script>alert(1)</script>",
            "../",
        );
        assert!(is_html(&response));
        let body = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .expect("a body");
        let text = String::from_utf8_lossy(&body);
        assert!(!text.contains("<script>"), "{text}");
        assert!(!text.contains("<b>x"), "{text}");
        assert!(text.contains("&#60;script&#62;"), "{text}");
    }
}
