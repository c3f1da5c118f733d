//! The console's sandbox picker (CONTRACT section 19): the root's live
//! sandboxes the viewer may see (a merchant's key: its own), each with a
//! link to its own console under `/sandboxes/{id}/_mock/ui/`. Inside a
//! sandbox the page sends the viewer back to the root's list.

use askama::Template;
use axum::http::{StatusCode, Uri};
use axum::response::Response;

use super::{Chrome, console_page};
use crate::domain::access::Viewer;
use crate::domain::port::Store as _;
use crate::state::Here;
use crate::web::html::render;

/// One sandbox's row: every text is escaped by the template, and shown
/// with its bidi controls made visible.
#[derive(Debug)]
struct Row {
    id: String,
    label: String,
    owner: String,
    transactions: String,
    created: String,
    expires: String,
}

#[derive(Template)]
#[template(path = "console/sandboxes.html")]
struct SandboxesPage {
    chrome: Chrome,
    rows: Vec<Row>,
    in_sandbox: bool,
}

/// `GET /_mock/ui/sandboxes`.
#[cfg_attr(
    feature = "openapi",
    utoipa::path(
        get,
        path = "/_mock/ui/sandboxes",
        operation_id = "consoleSandboxes",
        tag = "console"
    )
)]
pub(crate) async fn page(Here(state): Here, viewer: Viewer, uri: Uri) -> Response {
    let chrome = Chrome::new(&state, uri.path(), "sandboxes").seen_by(viewer);
    let mut rows = Vec::new();
    if state.sandboxes.is_some() {
        let time =
            |t: chrono::DateTime<chrono::Utc>| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        for (info, sandbox) in state.live_sandboxes(viewer.role.scope()).await {
            let transactions = sandbox
                .store
                .count()
                .await
                .map_or_else(|_| "unknown".to_owned(), |n| n.to_string());
            rows.push(Row {
                id: info.id.to_string(),
                label: payments_serve::pages::visible(info.label.as_deref().unwrap_or(""))
                    .into_owned(),
                owner: info
                    .owner
                    .map_or_else(|| "admin".to_owned(), |m| format!("merchant {m}")),
                transactions,
                created: time(info.created_at),
                expires: time(info.expires_at),
            });
        }
    }
    console_page(render(
        StatusCode::OK,
        &SandboxesPage {
            in_sandbox: !state.is_root(),
            chrome,
            rows,
        },
    ))
}
