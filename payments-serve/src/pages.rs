//! HTML responses of the pages a person sees (the payer's payment page,
//! CONTRACT section 13): templates with auto-escaping (askama, `templates/`),
//! the one stylesheet compiled into the binary, the headers every page
//! carries, and error pages.
//!
//! Every text that came from outside (reference, description, a form value)
//! reaches a page through a template variable, which askama HTML-escapes;
//! no template uses `|safe`.

use askama::Template;
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// The stylesheet of every page.
pub const STYLESHEET: &str = include_str!("../../assets/mock.css");

/// Headers of every page: no script, styles and images only from the mock
/// itself, never framed, never cached, and no `Referer` (the page's address
/// holds its token; the payer's next stop is the merchant's site).
///
/// There is no `form-action`: browsers apply it to the redirect after a
/// submit too, and the payment page's form ends at the merchant's return
/// address.
const PAGE_HEADERS: [(HeaderName, &str); 5] = [
    (
        header::CONTENT_SECURITY_POLICY,
        "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; frame-ancestors 'none'",
    ),
    (header::REFERRER_POLICY, "no-referrer"),
    (header::CACHE_CONTROL, "no-store"),
    (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
    (header::X_FRAME_OPTIONS, "DENY"),
];

/// Whether a response is one of our pages (so the envelope guarantee of
/// the JSON API leaves it alone).
pub(crate) fn is_html(response: &Response) -> bool {
    response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/html"))
}

/// Whether a path is served as pages rather than JSON: its errors (an
/// unknown route, a wrong method, a body over the limit) are pages too.
pub(crate) fn is_page_path(path: &str) -> bool {
    path == "/pay"
        || path.starts_with("/pay/")
        || path == "/_mock/ui"
        || path.starts_with("/_mock/ui/")
}

/// The relative prefix from `path` back to the server's root (`../` per
/// directory level), so links work under a `--public-url` with a path
/// prefix as well as at `/`.
pub(crate) fn root_of(path: &str) -> String {
    let depth = path.matches('/').count().saturating_sub(1);
    "../".repeat(depth)
}

/// [`root_of`] for a fragment of rows served at `path` and inserted into
/// the page one level up (`/_mock/ui/transactions/rows` into `/_mock/ui/`,
/// `/_mock/ui/requests/feed` into `/_mock/ui/requests`): its links are
/// followed from that page, so they are relative to it.
pub(crate) fn fragment_root_of(path: &str) -> String {
    root_of(path.rsplit_once('/').map_or(path, |(page, _)| page))
}

/// `body` as a page with `status` and the page headers.
pub(crate) fn page(status: StatusCode, body: String) -> Response {
    let mut response = (status, body).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    for (name, value) in PAGE_HEADERS {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}

/// Renders `template` as a page, or a plain 500 page if rendering fails
/// (it cannot for these templates: every value is a string or a number).
pub(crate) fn render(status: StatusCode, template: &impl Template) -> Response {
    match template.render() {
        Ok(body) => page(status, body),
        Err(e) => {
            tracing::error!(error = %e, "a page template failed to render");
            page(
                StatusCode::INTERNAL_SERVER_ERROR,
                "<!doctype html><title>Internal error</title><h1>Internal error</h1>".to_owned(),
            )
        }
    }
}

#[derive(Template)]
#[template(path = "error.html")]
struct ErrorPage<'a> {
    root: String,
    status: u16,
    title: &'a str,
    detail: &'a str,
}

/// An error page at `path`: the title, one sentence of detail (escaped like
/// everything else) and the status.
pub(crate) fn error_page(status: StatusCode, title: &str, detail: &str, path: &str) -> Response {
    render(
        status,
        &ErrorPage {
            root: root_of(path),
            status: status.as_u16(),
            title,
            detail,
        },
    )
}

/// The page for a failure that happened before our handlers (axum's or
/// tower-http's own rejections) on a page path: unknown route, wrong
/// method, body too large.
pub(crate) fn error_page_for_status(status: StatusCode, path: &str) -> Response {
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
    error_page(status, title, detail, path)
}

/// The pages' stylesheet, from the binary.
#[utoipa::path(
    get,
    path = "/pay/static/mock.css",
    operation_id = "pageStylesheet",
    tag = "payment page"
)]
pub async fn stylesheet() -> Response {
    let mut response = STYLESHEET.into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/css; charset=utf-8"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_is_relative_to_the_page() {
        assert_eq!(root_of("/pay/abc"), "../");
        assert_eq!(root_of("/pay/a/b"), "../../");
        assert_eq!(root_of("/"), "");
    }

    #[tokio::test]
    async fn error_pages_escape_their_text() {
        let response = error_page(
            StatusCode::BAD_REQUEST,
            "<b>x</b>",
            "\"quoted\" & <script>alert(1)</script>",
            "/pay/x",
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
