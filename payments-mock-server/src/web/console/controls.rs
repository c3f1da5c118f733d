//! The console's controls: the virtual clock (see it, move it), the
//! catalogue (which product does what), and reset (after a confirmation).
//! The forms post back here and are answered 303 (post, redirect, get), so
//! a reload never repeats them.

use std::time::Duration;

use askama::Template;
use axum::body::Body;
use axum::extract::RawQuery;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::Response;
use serde_json::{Map, Number, Value};

use payments_serve::admin::see_other;
use payments_serve::pages::visible;

use super::{Chrome, console_page, form, param, query_pairs, store_down};
use crate::domain::access::Viewer;
use crate::domain::catalog::{Flow, Outcome, Product};
use crate::domain::invalid::Invalid;
use crate::domain::port::Store as _;
use crate::state::{AppState, Here};
use crate::web::html::render;

use crate::forms::{CLOCK_FIELDS, NO_FIELDS};

/// Quick steps of the clock page.
const STEPS: [(u64, &str); 5] = [
    (60, "1 minute"),
    (10 * 60, "10 minutes"),
    (16 * 60, "16 minutes (past expiry)"),
    (60 * 60, "1 hour"),
    (24 * 60 * 60, "1 day"),
];

#[derive(Template)]
#[template(path = "console/clock.html")]
struct ClockPage<'a> {
    chrome: Chrome,
    offset: String,
    steps: [(u64, &'static str); 5],
    advanced: Option<String>,
    problem: Option<String>,
    typed: &'a str,
}

/// How far the clock is ahead, as the clock page says it: days as the
/// largest unit (humantime's months of 30.44 days and years of 365.25 put
/// an advance of 365 days at "11months 30days 3h 50m 24s"), then hours,
/// minutes, seconds and milliseconds, the units that are 0 left out; and
/// the whole seconds.
fn offset_text(nanos: i64) -> String {
    let offset = Duration::from_nanos(u64::try_from(nanos).unwrap_or(0));
    if offset.is_zero() {
        return "none: real time".to_owned();
    }
    let secs = offset.as_secs();
    let days = secs / 86_400;
    let mut parts = Vec::new();
    match days {
        0 => {}
        1 => parts.push("1 day".to_owned()),
        n => parts.push(format!("{n} days")),
    }
    for (n, unit) in [
        (secs % 86_400 / 3600, "h"),
        (secs % 3600 / 60, "m"),
        (secs % 60, "s"),
        (u64::from(offset.subsec_millis()), "ms"),
    ] {
        if n != 0 {
            parts.push(format!("{n}{unit}"));
        }
    }
    if parts.is_empty() {
        // Under a millisecond ahead.
        parts.push("0ms".to_owned());
    }
    format!("{} ({secs} s)", parts.join(" "))
}

async fn clock_page(
    state: &AppState,
    viewer: Viewer,
    path: &str,
    query: Option<&str>,
    problem: Option<String>,
    typed: &str,
) -> Response {
    let offset_nanos = match state.store.clock().await {
        Ok(reading) => reading.offset_nanos,
        Err(e) => return store_down(state, viewer, &e, path),
    };
    let pairs = query_pairs(query);
    let status = if problem.is_some() {
        StatusCode::BAD_REQUEST
    } else {
        StatusCode::OK
    };
    console_page(render(
        status,
        &ClockPage {
            chrome: Chrome::new(state, path, "clock").seen_by(viewer),
            offset: offset_text(offset_nanos),
            steps: STEPS,
            // Shown only when it can be true: a whole number of seconds no
            // greater than the clock's offset (a link cannot claim a move
            // the clock never made, nor show arbitrary text).
            advanced: param(&pairs, "advanced")
                .filter(|a| {
                    a.parse::<u64>()
                        .is_ok_and(|n| i128::from(n) * 1_000_000_000 <= i128::from(offset_nanos))
                })
                .map(str::to_owned),
            problem,
            typed,
        },
    ))
}

/// `GET /_mock/ui/clock`.
#[cfg_attr(
    feature = "openapi",
    utoipa::path(
        get,
        path = "/_mock/ui/clock",
        operation_id = "consoleClock",
        tag = "console"
    )
)]
pub(crate) async fn clock(
    Here(state): Here,
    viewer: Viewer,
    uri: Uri,
    RawQuery(query): RawQuery,
) -> Response {
    clock_page(&state, viewer, uri.path(), query.as_deref(), None, "").await
}

/// `POST /_mock/ui/clock` with `seconds=N`: the rules of
/// `POST /_mock/clock/advance`, read from a form.
#[cfg_attr(
    feature = "openapi",
    utoipa::path(
        post,
        path = "/_mock/ui/clock",
        operation_id = "consoleClockAdvance",
        tag = "console"
    )
)]
pub(crate) async fn advance(
    Here(state): Here,
    viewer: Viewer,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let path = uri.path();
    let pairs = match form::read(&state, Some(viewer), &headers, body, path, CLOCK_FIELDS).await {
        Ok(pairs) => pairs,
        Err(page) => return page,
    };
    let typed = param(&pairs, "seconds").unwrap_or_default();
    // Whole seconds, digits only (the form's rule in the document); the
    // range is the JSON control's.
    let whole = !typed.is_empty() && typed.bytes().all(|b| b.is_ascii_digit());
    let seconds = match serde_json::from_str::<Number>(typed) {
        _ if typed.is_empty() => Value::Null,
        Ok(n) if whole => Value::Number(n),
        _ => Value::String(typed.to_owned()),
    };
    let body: Map<String, Value> = [("seconds".to_owned(), seconds)].into_iter().collect();
    let advanced = match crate::domain::clock::advance_seconds(&body) {
        Err(Invalid::Rules(message)) if message == "seconds must be a number" => Err(
            Invalid::rules("seconds must be a whole number of seconds, digits only"),
        ),
        other => other,
    };
    // As the JSON control: not past the clock's end, checked and added
    // in one step of the store.
    let advanced = match advanced {
        Ok(by) => match state.store.advance_clock_within(by).await {
            Ok(moved) => moved.map_err(Invalid::from),
            Err(e) => return store_down(&state, viewer, &e, path),
        },
        Err(e) => Err(e),
    };
    match advanced {
        Ok(_) => {
            let mut q = form_urlencoded::Serializer::new(String::new());
            q.append_pair("advanced", typed);
            see_other(
                &crate::web::html::root_of(path),
                &format!("_mock/ui/clock?{}", q.finish()),
            )
        }
        Err(e) => {
            let typed: String = typed.chars().take(64).collect();
            clock_page(
                &state,
                viewer,
                path,
                None,
                Some(labelled(&e.to_string())),
                &typed,
            )
            .await
        }
    }
}

/// A refusal of the clock's form as the page says it: naming the field
/// by its label, as the reader sees it, not by its name (`seconds`).
fn labelled(message: &str) -> String {
    message.strip_prefix("seconds ").map_or_else(
        || message.to_owned(),
        |rest| format!("Whole seconds to move forward {rest}"),
    )
}

/// One product as the catalogue page shows it.
#[derive(Debug)]
struct ProductRow {
    code: String,
    description: String,
    flow: String,
    initial: &'static str,
    outcome: String,
    rules: Vec<String>,
}

fn product_row(p: &Product) -> ProductRow {
    let outcome = match (&p.flow, &p.outcome) {
        (Flow::Redirect { .. }, _) => "CONFIRMED with a payment page; the payer decides: Pay → SUCCESSFUL, Decline → FAILED (declined by bank), Cancel → FAILED (cancelled by payer), nothing → FAILED when the window ends".to_owned(),
        (_, Outcome::Success) => "SUCCESSFUL".to_owned(),
        (_, Outcome::Async { settle_after }) => format!(
            "CONFIRMED, then SUCCESSFUL {} later (virtual clock)",
            humantime::format_duration(*settle_after)
        ),
        (_, Outcome::Decline { message }) => format!("FAILED ({})", visible(message)),
    };
    // The code only lets the outcome happen: with the right one, the
    // product's outcome (a declining product still declines); with any
    // other, FAILED.
    let outcome = match (&p.flow, &p.confirmation_code) {
        (Flow::Direct, Some(code)) => format!(
            "with confirmationCode {}: {outcome}; any other code → FAILED (invalid confirmation code)",
            visible(code)
        ),
        _ => outcome,
    };
    let mut rules = Vec::new();
    if p.payer_id_required {
        rules.push("payerId required".to_owned());
    }
    if p.requires_return_url() {
        rules.push("returnUrl required".to_owned());
    }
    if p.confirmation_code.is_some() {
        rules.push("confirmationCode required at confirm".to_owned());
    }
    if let Some(max) = p.max_quantity {
        rules.push(format!("quantity 1–{max}"));
    }
    if p.pins {
        rules.push("confirm extraProperties holds one PIN per unit".to_owned());
    }
    ProductRow {
        code: p.code.clone(),
        description: visible(&p.description).into_owned(),
        flow: match p.flow {
            Flow::Direct => "direct".to_owned(),
            Flow::Redirect { payer_timeout } => format!(
                "redirect (payer window {})",
                humantime::format_duration(payer_timeout)
            ),
        },
        initial: p.initial.as_str(),
        outcome,
        rules,
    }
}

#[derive(Template)]
#[template(path = "console/catalog.html")]
struct CatalogPage {
    chrome: Chrome,
    products: Vec<ProductRow>,
    expiry: String,
}

/// `GET /_mock/ui/catalog`.
#[cfg_attr(
    feature = "openapi",
    utoipa::path(
        get,
        path = "/_mock/ui/catalog",
        operation_id = "consoleCatalog",
        tag = "console"
    )
)]
pub(crate) async fn catalog(Here(state): Here, viewer: Viewer, uri: Uri) -> Response {
    console_page(render(
        StatusCode::OK,
        &CatalogPage {
            chrome: Chrome::new(&state, uri.path(), "catalog").seen_by(viewer),
            products: state.catalog.products().map(product_row).collect(),
            expiry: humantime::format_duration(state.expiry).to_string(),
        },
    ))
}

#[derive(Template)]
#[template(path = "console/reset.html")]
struct ResetPage {
    chrome: Chrome,
    transactions: usize,
    requests: usize,
}

/// `GET /_mock/ui/reset`: what a reset forgets, and the button.
#[cfg_attr(
    feature = "openapi",
    utoipa::path(
        get,
        path = "/_mock/ui/reset",
        operation_id = "consoleResetPage",
        tag = "console"
    )
)]
pub(crate) async fn reset_page(Here(state): Here, viewer: Viewer, uri: Uri) -> Response {
    if !viewer.role.may_change() {
        return super::sign_in::refused(
            &state,
            crate::domain::access::Refusal::ReadOnly,
            &uri,
            Some(viewer),
        );
    }
    let counts = match (state.store.count().await, state.store.journal_stats().await) {
        (Ok(transactions), Ok(journal)) => (transactions, journal.len),
        (Err(e), _) | (_, Err(e)) => return store_down(&state, viewer, &e, uri.path()),
    };
    console_page(render(
        StatusCode::OK,
        &ResetPage {
            chrome: Chrome::new(&state, uri.path(), "reset").seen_by(viewer),
            transactions: counts.0,
            requests: counts.1,
        },
    ))
}

/// `POST /_mock/ui/reset`: as `POST /_mock/reset`, then back to the list.
#[cfg_attr(
    feature = "openapi",
    utoipa::path(
        post,
        path = "/_mock/ui/reset",
        operation_id = "consoleReset",
        tag = "console"
    )
)]
pub(crate) async fn reset(
    Here(state): Here,
    viewer: Viewer,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let path = uri.path();
    if let Err(page) = form::read(&state, Some(viewer), &headers, body, path, NO_FIELDS).await {
        return page;
    }
    if let Err(e) = state.reset().await {
        return store_down(&state, viewer, &e, path);
    }
    see_other(&crate::web::html::root_of(path), "_mock/ui/?reset=done")
}

#[cfg(test)]
mod tests {
    use super::offset_text;

    /// Days are the largest unit (an advance of 365 days said "11months
    /// 30days 3h 50m 24s"), and the units that are 0 are left out.
    #[test]
    fn the_offset_is_said_in_days_hours_minutes_and_seconds() {
        let second = 1_000_000_000_i64;
        for (nanos, says) in [
            (0, "none: real time"),
            (1, "0ms (0 s)"),
            (1_500_000_000, "1s 500ms (1 s)"),
            (960 * second, "16m (960 s)"),
            (31_536_000 * second, "365 days (31536000 s)"),
            (86_400 * second, "1 day (86400 s)"),
            (
                (86_400 + 2 * 3600 + 3 * 60 + 4) * second,
                "1 day 2h 3m 4s (93784 s)",
            ),
            (i64::MAX, "106751 days 23h 47m 16s 854ms (9223372036 s)"),
        ] {
            assert_eq!(offset_text(nanos), says, "{nanos}");
        }
    }
}
