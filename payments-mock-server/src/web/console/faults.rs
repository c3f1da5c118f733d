//! The console's Faults page (CONTRACT section 19): the scripted fault
//! rules, in the order requests meet them, with how often each met a
//! request and fired, as `GET /_mock/faults` gives them. An admin's page,
//! as the rules are the admin's.

use askama::Template;
use axum::http::{StatusCode, Uri};
use axum::response::Response;

use super::{Chrome, console_page};
use crate::domain::access::{Refusal, Viewer};
use crate::state::Here;
use crate::web::html::render;

/// One rule's row: every text is the rule's own (escaped by the template).
#[derive(Debug)]
struct Row {
    id: String,
    fault: String,
    matching: String,
    after: u64,
    times: String,
    probability: String,
    met: u64,
    fired: u64,
    remaining: String,
}

#[derive(Template)]
#[template(path = "console/faults.html")]
struct FaultsPage {
    chrome: Chrome,
    rows: Vec<Row>,
    seed: u64,
}

/// `GET /_mock/ui/faults`.
#[cfg_attr(
    feature = "openapi",
    utoipa::path(
        get,
        path = "/_mock/ui/faults",
        operation_id = "consoleFaults",
        tag = "console"
    )
)]
pub(crate) async fn page(Here(state): Here, viewer: Viewer, uri: Uri) -> Response {
    if !viewer.role.may_change() {
        return super::sign_in::refused(&state, Refusal::ReadOnly, &uri, Some(viewer));
    }
    let chrome = Chrome::new(&state, uri.path(), "faults").seen_by(viewer);
    let rows = state
        .fault_rules
        .list()
        .into_iter()
        .map(|view| {
            let text = |v: &serde_json::Value| v.as_str().map(str::to_owned);
            let matching = view.rule["match"]
                .as_object()
                .map(|m| {
                    m.iter()
                        .map(|(k, v)| format!("{k} {}", text(v).unwrap_or_else(|| v.to_string())))
                        .collect::<Vec<_>>()
                        .join(", ")
                })
                .unwrap_or_default();
            // A reference may hold a bidi override: shown, never obeyed.
            let matching = payments_serve::pages::visible(&matching).into_owned();
            let times = view.rule["times"].as_u64().unwrap_or(0);
            Row {
                id: view.id.clone(),
                fault: text(&view.rule["fault"]).unwrap_or_default(),
                matching,
                after: view.rule["after"].as_u64().unwrap_or(0),
                times: if times == 0 {
                    "until removed".to_owned()
                } else {
                    times.to_string()
                },
                probability: view.rule["probability"].to_string(),
                met: view.met,
                fired: view.fired,
                remaining: view
                    .remaining
                    .map_or_else(|| "no end".to_owned(), |r| r.to_string()),
            }
        })
        .collect();
    console_page(render(
        StatusCode::OK,
        &FaultsPage {
            chrome,
            rows,
            seed: state.faults.seed(),
        },
    ))
}
