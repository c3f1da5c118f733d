//! The payer's payment page (CONTRACT section 13): `GET /pay/{token}` shows
//! it, `POST /pay/{token}` decides once and sends the browser (303) to the
//! merchant's return address. Also the same decision for tests without a
//! browser ([`play_payer`], behind `POST /_mock/transactions/{id}/payer`
//! and [`crate::Controls::payer`]).
//!
//! No API key (the payer has none), never faulted, delayed or limited: the
//! `/api/` guard does not see these paths.

use std::borrow::Cow;

use askama::Template;
use axum::body::{Body, to_bytes};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::Response;
use chrono::{DateTime, Utc};
use payments_serve::pages::visible;

use crate::domain::clock::format_time;
use crate::domain::lifecycle;
use crate::domain::port::{PaymentPageKey, Store as _, StoreError};
use crate::domain::redirect::return_address;
use crate::domain::transaction::{PayerAction, PaymentPage, Record, Status};
use crate::state::{AppState, Here};
use crate::web::html::{error_page, page_root, render};
use payments_interface::money::major_text;
use payments_serve::admin::is_form;

use crate::forms::PAY_FORM_LIMIT as FORM_LIMIT;

#[derive(Template)]
#[template(path = "pay.html")]
struct PayPage<'a> {
    root: String,
    open: bool,
    product: &'a str,
    headline: &'static str,
    outcome_class: &'static str,
    status: &'static str,
    message: Option<&'a str>,
    amount: String,
    currency: &'a str,
    /// The merchant's text, made visible: a bidirectional control would
    /// reorder what the payer reads (`INV-<U+202E>9999-VNI` shown as
    /// `INV-INV-9999`, a description claiming another amount).
    reference: Cow<'a, str>,
    description: Option<Cow<'a, str>>,
    deadline_iso: String,
    deadline_text: String,
    return_address: Option<String>,
}

/// The page while the store's database cannot be reached (CONTRACT
/// section 15): a 503 page, nothing decided. `root`: [`page_root`].
pub(crate) fn store_down(error: &StoreError, root: &str) -> Response {
    if error.is_sandbox_gone() {
        // Removed while the request ran: the 404 page every page under a
        // sandbox that is not live gets.
        return not_found(root);
    }
    tracing::warn!(error = %error, "payment page: the store is unavailable");
    error_page(
        StatusCode::SERVICE_UNAVAILABLE,
        "Payment service unavailable",
        "The payment service cannot reach its database right now. Nothing was decided: try again in a moment.",
        root,
    )
}

fn not_found(root: &str) -> Response {
    error_page(
        StatusCode::NOT_FOUND,
        "No such payment page",
        "There is no payment page at this address. Check the link the merchant gave you.",
        root,
    )
}

/// The token segment of `/pay/{token}`, as sent (a token is plain
/// alphanumerics, so a percent-encoded segment is simply no token).
fn token_of(uri: &Uri) -> &str {
    uri.path().strip_prefix("/pay/").unwrap_or_default()
}

/// The payer's payment page (ext, CONTRACT section 13).
///
/// Reference, description, amount and the Pay, Decline and Cancel buttons
/// while the payer may decide; afterwards the outcome with a link back to
/// the merchant. No API key; never faulted.
#[cfg_attr(
    feature = "openapi",
    utoipa::path(
        get,
        path = "/pay/{token}",
        operation_id = "paymentPage",
        tag = "payment page"
    )
)]
pub async fn show(Here(state): Here, uri: Uri) -> Response {
    let root = &page_root(&state, uri.path());
    let now = match state.store.now().await {
        Ok(now) => now,
        Err(e) => return store_down(&e, root),
    };
    let catalog = &state.catalog;
    let shown = state
        .store
        .with_payment_page(PaymentPageKey::Token(token_of(&uri)), |record, page| {
            state.coverage.observe(record, now);
            let product = catalog
                .product(&record.fields.product_code)
                .map_or("", |p| p.description.as_str());
            render(
                StatusCode::OK,
                &page_of(record, page, product, now, root.clone()),
            )
        })
        .await;
    match shown {
        Ok(Some(page)) => page,
        Ok(None) => missing(&state, root).await,
        Err(e) => store_down(&e, root),
    }
}

/// No such page: 404, unless its sandbox was removed meanwhile (its pages
/// went with it).
async fn missing(state: &AppState, root: &str) -> Response {
    match state.store.still_here().await {
        Ok(()) => not_found(root),
        Err(e) => store_down(&e, root),
    }
}

fn page_of<'a>(
    record: &'a Record,
    page: &PaymentPage,
    product: &'a str,
    now: DateTime<Utc>,
    root: String,
) -> PayPage<'a> {
    let view = record.view(now);
    let (headline, outcome_class) = match (view.status, page.decision.map(|d| d.action)) {
        (Status::Successful, _) => ("Payment successful", "successful"),
        (_, Some(PayerAction::Decline)) => ("Payment declined by the bank", "failed"),
        (_, Some(PayerAction::Cancel)) => ("Payment cancelled", "failed"),
        (Status::Failed, _) => ("Payment not completed in time", "failed"),
        _ => ("Awaiting your decision", "waiting"),
    };
    let fields = &record.fields;
    PayPage {
        root,
        open: page.is_open(now),
        product,
        headline,
        outcome_class,
        status: view.status.as_str(),
        message: view.message,
        amount: major_text(fields.amount_minor, fields.currency_exponent),
        currency: &fields.currency_code,
        reference: visible(&fields.reference_no),
        description: fields
            .rare
            .as_ref()
            .and_then(|r| r.description.as_deref())
            .map(visible),
        deadline_iso: format_time(page.deadline),
        deadline_text: page.deadline.format("%Y-%m-%d %H:%M:%S UTC").to_string(),
        return_address: return_address(record, view.status.as_str()),
    }
}

/// Why a submitted form names no action. The form has that one field:
/// any other is refused, so that every form the OpenAPI document calls
/// valid fits [`FORM_LIMIT`] (issue 40).
fn action_of(form: &[u8]) -> Result<PayerAction, String> {
    if let Some((name, _)) = form_urlencoded::parse(form).find(|(key, _)| key != "action") {
        // Shown as symbols: a bidi override posted by another site's page
        // would otherwise turn the page's text around.
        let shown: String = name.chars().take(64).collect();
        let shown = visible(&shown);
        return Err(format!(
            "This form has no field \u{201c}{shown}\u{201d}: it carries one action, pay, decline or cancel."
        ));
    }
    let mut actions = form_urlencoded::parse(form)
        .filter(|(key, _)| key == "action")
        .map(|(_, value)| value);
    let (Some(value), None) = (actions.next(), actions.next()) else {
        return Err("The form must carry exactly one action: pay, decline or cancel.".to_owned());
    };
    PayerAction::parse(&value).ok_or_else(|| {
        let shown: String = value.chars().take(64).collect();
        let shown = visible(&shown);
        format!(
            "\u{201c}{shown}\u{201d} is not an action of this page: use pay, decline or cancel."
        )
    })
}

/// The payer's decision: the payment page's form.
///
/// The first submit inside the payer window decides (pay: SUCCESSFUL;
/// decline: FAILED, declined by bank; cancel: FAILED, cancelled by payer);
/// every submit (a double click, the back button, one after the window) is
/// answered 303 to the return address with the status then. A bad form
/// changes nothing and gets a 400 page; an unknown token a 404 page.
#[cfg_attr(
    feature = "openapi",
    utoipa::path(
        post,
        path = "/pay/{token}",
        operation_id = "paymentPageSubmit",
        tag = "payment page"
    )
)]
pub async fn submit(Here(state): Here, uri: Uri, headers: HeaderMap, body: Body) -> Response {
    let root = &page_root(&state, uri.path());
    let token = token_of(&uri);
    match state
        .store
        .with_payment_page(PaymentPageKey::Token(token), |_, _| ())
        .await
    {
        Ok(Some(())) => {}
        Ok(None) => return missing(&state, root).await,
        Err(e) => return store_down(&e, root),
    }
    if !is_form(&headers) {
        return error_page(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Form not accepted",
            "Submit the page with its buttons (an application/x-www-form-urlencoded form).",
            root,
        );
    }
    let within = state.body_timeout;
    let form = match payments_serve::server::read_within(within, to_bytes(body, FORM_LIMIT)).await {
        Ok(Ok(form)) => form,
        Ok(Err(e)) if over_limit(&e) => {
            return error_page(
                StatusCode::PAYLOAD_TOO_LARGE,
                "Request too large",
                "The submitted form is larger than a payment page form can be.",
                root,
            );
        }
        // Late (`--header-read-timeout` after the head) or cut short (the
        // connection ended first): a slow or dropped link, not a big form.
        Ok(Err(_)) | Err(()) => return incomplete_form(root),
    };
    let action = match action_of(&form) {
        Ok(action) => action,
        Err(detail) => {
            return error_page(StatusCode::BAD_REQUEST, "Unknown action", &detail, root);
        }
    };
    match lifecycle::decide(&state.store, PaymentPageKey::Token(token), None, action).await {
        Err(e) => store_down(&e, root),
        Ok(Ok((decided, now))) => {
            if decided.decided_now {
                state
                    .coverage
                    .transition(Some(Status::Confirmed), decided.record.recorded_status());
            }
            state.coverage.observe(&decided.record, now);
            let status = decided.record.view(now).status;
            match return_address(&decided.record, status.as_str()) {
                Some(location) => see_other(&location, root),
                None => error_page(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "No return address",
                    "The transaction has no returnUrl to send you back to.",
                    root,
                ),
            }
        }
        Ok(Err(_)) => not_found(root),
    }
}

/// Whether reading a form failed on [`FORM_LIMIT`] (rather than on a
/// connection that ended first).
fn over_limit(error: &axum::Error) -> bool {
    let mut current: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = current {
        if e.is::<http_body_util::LengthLimitError>() {
            return true;
        }
        current = e.source();
    }
    false
}

/// A form that did not arrive whole: 400, nothing decided, and the payer
/// told to submit again (the API's answer to a late body is a 400 too).
fn incomplete_form(root: &str) -> Response {
    error_page(
        StatusCode::BAD_REQUEST,
        "Form not received",
        "The form did not arrive whole: the connection was too slow or was cut. Nothing was decided: go back and submit the page again.",
        root,
    )
}

/// 303 See Other to `location`, with a page linking there for clients that
/// do not follow redirects.
fn see_other(location: &str, root: &str) -> Response {
    #[derive(Template)]
    #[template(
        source = r#"{% extends "base.html" %}{% block title %}Back to the merchant{% endblock %}{% block content %}<h1>Back to the merchant</h1><p><a class="button primary" href="{{ location }}">Continue</a></p>{% endblock %}"#,
        ext = "html"
    )]
    struct SeeOther<'a> {
        root: &'a str,
        location: &'a str,
    }
    let mut response = render(StatusCode::SEE_OTHER, &SeeOther { root, location });
    match HeaderValue::from_str(location) {
        Ok(value) => {
            let headers = response.headers_mut();
            headers.insert(header::LOCATION, value);
            // The page as the browser keeps it in its back/forward cache
            // still shows the buttons. A cookie that changes evicts it
            // (Chromium drops no-store pages from that cache when the
            // site's cookies change), so the back button fetches the page
            // again and shows the outcome. The cookie says nothing and is
            // read by nobody; with no Path it stays under this page's
            // folder, behind a --public-url prefix too.
            headers.insert(
                header::SET_COOKIE,
                HeaderValue::from_static("payment-decided=1; Max-Age=600; HttpOnly; SameSite=Lax"),
            );
            response
        }
        // A URL the `url` crate serialized is visible ASCII; this is a bug.
        Err(_) => error_page(
            StatusCode::INTERNAL_SERVER_ERROR,
            "No return address",
            "The return address could not be sent.",
            root,
        ),
    }
}

#[cfg(test)]
mod tests;
