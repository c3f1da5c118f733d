//! How the console reads a posted form (the clock's, reset's, sign-in's,
//! sign-out's): below the pages that post them, so none of them imports
//! another for it.

use axum::body::Body;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use payments_serve::admin::{FormRefusal, read_form_at};

use super::viewed_error;
use crate::domain::access::Viewer;
use crate::forms::{CONSOLE_FORM_LIMIT as FORM_LIMIT, Fields};
use crate::state::AppState;

/// Reads a console form: same origin (the request's `Host`, or the public
/// URL's origin), a form, at most [`FORM_LIMIT`],
/// only `fields`, each at most once and within its length; a refusal is
/// the console's error page saying why, as `viewer` (when known) sees it.
pub(super) async fn read(
    state: &AppState,
    viewer: Option<Viewer>,
    headers: &HeaderMap,
    body: Body,
    path: &str,
    fields: Fields,
) -> Result<Vec<(String, String)>, Response> {
    // Behind a proxy that rewrites `Host`, the public URL's origin is ours.
    let public = Some(state.public_url.as_str());
    let pairs = read_form_at(headers, body, FORM_LIMIT, public).await.map_err(|refusal| {
        let (title, detail) = match refusal {
            FormRefusal::CrossSite => (
                "Not from the console",
                "This form was posted from another site's page; open the console and use it there.",
            ),
            FormRefusal::NotAForm => (
                "Form not accepted",
                "Submit the console's form (application/x-www-form-urlencoded).",
            ),
            FormRefusal::TooLarge => (
                "Request too large",
                "The submitted form is larger than a console form can be.",
            ),
        };
        viewed_error(state, viewer, refusal.status(), title, detail, path)
    })?;
    match crate::forms::unexpected_field(&pairs, fields) {
        None => Ok(pairs),
        Some(detail) => Err(viewed_error(
            state,
            viewer,
            StatusCode::BAD_REQUEST,
            "Form not accepted",
            &detail,
            path,
        )),
    }
}
