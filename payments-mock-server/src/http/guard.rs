//! The `/api/` guard: authentication (section 9), rate limit and faults
//! (section 10) and the request journal, in that order, around the routes
//! ([`route`]). `/_mock/`, the pages and `/openapi.json` never come here:
//! never faulted, limited or keyed.

use std::panic::AssertUnwindSafe;

use axum::body::{Bytes, HttpBody};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Request, header};
use axum::response::{IntoResponse, Response};
use futures_util::FutureExt as _;
use http_body_util::{BodyExt as _, LengthLimitError, Limited};
use payments_interface::Endpoint;
use uuid::Uuid;

use crate::domain::journal::Capture;
use crate::domain::port::Store as _;
use crate::faults::{Fault, Plan, parse_header};
use crate::http::answers::panic_response;
use crate::http::extract::BODY_LIMIT;
use crate::http::recovery;
use crate::http::route::route;
use crate::state::AppState;
use draw::fault_key;
use payments_serve::ConnectionAbort;
use payments_serve::{ApiError, ErrorCodeTag};

mod answer_other;
mod draw;
pub(crate) mod unread;

/// The header that injects faults per request.
pub const FAULT_HEADER: &str = "x-mock-fault";

/// The id of the fault rule that faulted an answer, on the answer for the
/// request's log line (`fault_rule`).
#[derive(Debug, Clone)]
pub(crate) struct InjectedByRule(pub(crate) String);

/// What the guard ends with: a response, closing the connection, or
/// holding it without an answer (then closing it).
enum Ending {
    Respond(Response),
    Reset,
    Hang,
}

/// Whether a body error comes from a length limit (ours or tower-http's).
fn is_length_limit(err: &(dyn std::error::Error + 'static)) -> bool {
    let mut current = Some(err);
    while let Some(e) = current {
        if e.is::<LengthLimitError>() || e.to_string().contains("length limit exceeded") {
            return true;
        }
        current = e.source();
    }
    false
}

/// What is read of a refused body before the refusal, at most.
const DRAIN_MAX: usize = 4 * 1024 * 1024;
/// How long reading it may take, at most.
const DRAIN_TIME: std::time::Duration = std::time::Duration::from_secs(2);
/// How long the client may pause in it: one that sends nothing (it waits
/// for an answer first) is answered after this.
const DRAIN_IDLE: std::time::Duration = std::time::Duration::from_millis(100);

/// Reads and drops what is left of a body refused as too large (up to
/// [`DRAIN_MAX`] bytes and [`DRAIN_TIME`]) before the 413 goes out, as
/// servers linger: a connection closed on unread data is reset, and a
/// client (a proxy) still sending the body could lose the answer and see
/// the connection fail instead (one in ten did, through the contract
/// proxy, with 16 at once). A client that asked to be told first
/// (`Expect: 100-continue`) is told at once, its body never asked for, and
/// one that pauses for [`DRAIN_IDLE`] is answered then. Whether the body
/// was read to its end.
async fn drain<B: HttpBody<Data = Bytes>>(parts: &Parts, mut body: std::pin::Pin<&mut B>) -> bool {
    if parts.headers.contains_key(header::EXPECT) {
        return body.is_end_stream();
    }
    let read = async {
        let mut left = DRAIN_MAX;
        while left > 0 {
            match tokio::time::timeout(DRAIN_IDLE, body.frame()).await {
                Ok(Some(Ok(frame))) => {
                    left = left.saturating_sub(frame.data_ref().map_or(0, Bytes::len));
                }
                Ok(None) => return true,
                _ => break,
            }
        }
        false
    };
    tokio::time::timeout(DRAIN_TIME, read)
        .await
        .unwrap_or(false)
}

/// An answer made before the request's body was read to its end (`read`:
/// whether it was): says `Connection: close`, as the connection then
/// closes (RFC 9110 section 10.1.1: a server answering before the content
/// says whether it will close). Without it a client pipelining its next
/// request, or sending the body after an `Expect: 100-continue`, met the
/// connection closed without a word.
/// `X-Mock-Fault`, all its lines as one list: a field sent on several
/// lines is those lines joined with commas (RFC 9110, section 5.3), so
/// `delay=100` on one line and `internal-error` on the next is both, and
/// the delays' total counts every line. `None` without the header.
fn fault_header(headers: &HeaderMap) -> Option<std::borrow::Cow<'_, [u8]>> {
    let mut lines = headers.get_all(FAULT_HEADER).iter();
    let first = lines.next()?.as_bytes();
    let mut rest = lines.peekable();
    if rest.peek().is_none() {
        return Some(std::borrow::Cow::Borrowed(first));
    }
    let mut joined = first.to_vec();
    for line in rest {
        joined.push(b',');
        joined.extend_from_slice(line.as_bytes());
    }
    Some(std::borrow::Cow::Owned(joined))
}

fn early(read: bool, response: Response) -> Ending {
    Ending::Respond(if read { response } else { closing(response) })
}

fn closing(mut response: Response) -> Response {
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// The whole of `body`'s data. A body that comes in one frame, as nearly
/// every request's does, is that frame's bytes, not copied; more frames
/// are joined. `collect` gathered even one frame into a queue first
/// (~0.4k instructions a request more).
async fn read_body<B: HttpBody<Data = Bytes>>(body: B) -> Result<Bytes, B::Error> {
    let mut body = std::pin::pin!(body);
    let mut first: Option<Bytes> = None;
    let mut joined: Vec<u8> = Vec::new();
    while let Some(frame) = body.frame().await {
        let Ok(data) = frame?.into_data() else {
            // Trailers carry no data.
            continue;
        };
        match first.take() {
            None if joined.is_empty() => first = Some(data),
            None => joined.extend_from_slice(&data),
            Some(earlier) => {
                joined.reserve(earlier.len() + data.len());
                joined.extend_from_slice(&earlier);
                joined.extend_from_slice(&data);
            }
        }
    }
    Ok(first.unwrap_or_else(|| Bytes::from(joined)))
}

fn declared_length(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .parse()
        .ok()
}

/// Answers an `/api/` request (`request_id`: the id it is answered with):
/// the guard, then the route ([`route`]). `abort` closes the request's
/// connection; without it, the one in the request's extensions (a router
/// around the service), else none (in-process).
///
/// `endpoint` is what `payments_interface::route` found for the request's
/// path: the caller routes it once, for the route and for the metrics.
pub(crate) async fn api_guard<B>(
    state: &AppState,
    req: Request<B>,
    endpoint: Option<payments_interface::Endpoint>,
    request_id: &HeaderValue,
    abort: Option<&ConnectionAbort>,
) -> Response
where
    B: HttpBody<Data = Bytes>,
    B::Error: Into<axum::BoxError>,
{
    let mut entry = Capture::new(
        req.method(),
        req.uri(),
        req.headers(),
        request_id.to_str().unwrap_or(""),
        state.store.now_hint(),
    );
    let abort = abort
        .or_else(|| req.extensions().get::<ConnectionAbort>())
        .cloned();
    // Where a reset or a hang names its fault for the request's span
    // (only there when spans are exported).
    #[cfg(feature = "otlp")]
    let unanswered = req
        .extensions()
        .get::<payments_serve::trace::UnansweredFault>()
        .cloned();
    // What it counts of the coverage waits in its tally, counted as its
    // entry is admitted to the journal (`coverage/tally.rs`).
    let (ending, mut tally) = {
        let mut tallied = std::pin::pin!(crate::coverage::tallying(guarded(
            state, req, endpoint, &mut entry
        )));
        let ending = tallied.as_mut().await;
        (ending, crate::coverage::tally_of(tallied))
    };
    match ending {
        Ending::Respond(mut response) => {
            // Named on the request's span (`payments.fault`), when spans
            // are exported; only a faulted answer carries it.
            // The request's log line names them too, and the rule.
            if let (Some(tokens), rule) =
                crate::domain::journal::split_fault(entry.fault.as_deref())
            {
                response
                    .extensions_mut()
                    .insert(payments_serve::trace::InjectedFault(tokens.to_owned()));
                if let Some(rule) = rule {
                    response
                        .extensions_mut()
                        .insert(InjectedByRule(rule.to_owned()));
                }
            }
            let (status, tag) = (
                response.status().as_u16(),
                response.extensions().get::<ErrorCodeTag>().map(|t| t.0),
            );
            (entry.status, entry.error_code) = (Some(status), tag.map(|t| t.as_str()));
            if let Some(endpoint) = endpoint {
                tally.answered(endpoint, status, tag);
            }
            let coverage = &state.coverage;
            state.store.record_admitted(entry, || coverage.admit(tally));
            state.count_answered();
            response
        }
        Ending::Reset | Ending::Hang => {
            let hang = matches!(ending, Ending::Hang);
            #[cfg(feature = "otlp")]
            if let (Some(slot), (Some(tokens), _)) = (
                &unanswered,
                crate::domain::journal::split_fault(entry.fault.as_deref()),
            ) {
                slot.name(tokens);
            }
            // The whole path asked, a sandbox's prefix included, as an
            // answered request's line shows it.
            let mut id_text = [0u8; uuid::fmt::Hyphenated::LENGTH];
            let sandbox = state
                .sandbox
                .map(|s| &*s.id.hyphenated().encode_lower(&mut id_text));
            tracing::info!(
                target: "payments_mock_server::request",
                method = %entry.method(),
                path = %crate::http::log_path::shown_path(sandbox, entry.path()),
                request_id = %entry.request_id(),
                "{}",
                if hang {
                    "no answer (injected hang)"
                } else {
                    "connection reset (injected fault)"
                }
            );
            // In-process it is answered 500 (below).
            if let (Some(endpoint), None) = (endpoint, &abort) {
                tally.answered(
                    endpoint,
                    500,
                    Some(payments_serve::ErrorCode::InternalError),
                );
            }
            let coverage = &state.coverage;
            state.store.record_admitted(entry, || coverage.admit(tally));
            state.count_answered();
            if hang {
                // Until the limit, the server's shutdown, or the client
                // leaving (it closed or reset the connection: its task
                // then drops the connection, and this future with it; a
                // client that only shut its sending side is taken as gone
                // too, it is owed no answer).
                if let Some(abort) = &abort {
                    abort.close_when_client_leaves();
                }
                // Boxed: only a hanging request pays for its timer in its
                // future; every other request's future stays as small.
                Box::pin(state.faults.hold(crate::faults::HANG_LIMIT)).await;
            }
            match abort {
                Some(abort) => {
                    abort.trigger();
                    // The connection task drops the connection (and this
                    // future with it) without writing a byte.
                    std::future::pending::<Response>().await
                }
                // In-process (`oneshot`) there is no connection to close.
                None => ApiError::new(
                    axum::http::StatusCode::INTERNAL_SERVER_ERROR,
                    payments_serve::ErrorCode::InternalError,
                    "injected reset: no connection to close in-process",
                )
                .into_response(),
            }
        }
    }
}

async fn guarded<B>(
    state: &AppState,
    req: Request<B>,
    endpoint: Option<payments_interface::Endpoint>,
    entry: &mut Capture,
) -> Ending
where
    B: HttpBody<Data = Bytes>,
    B::Error: Into<axum::BoxError>,
{
    let (parts, body) = req.into_parts();
    let mut body = std::pin::pin!(body);
    // A GET has no body: nothing to read, and nothing left unread by an
    // early answer ([`early`]).
    let ended = body.is_end_stream();
    // A declared body over the limit is refused before anything else,
    // authentication included (docs/mock-server.md, "Limits").
    if declared_length(&parts.headers).is_some_and(|n| n > BODY_LIMIT as u64) {
        let read = drain(&parts, body.as_mut()).await;
        return early(read, ApiError::payload_too_large().into_response());
    }
    // The header is read only when keys are configured: the open mock's
    // hot path never looks.
    let token = if state.auth.is_enabled() {
        parts
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|v| payments_serve::admin::bearer_token(v.as_bytes()))
    } else {
        None
    };
    let caller = match state.auth.authenticate(token) {
        Ok(caller) => caller,
        Err(crate::domain::access::Unauthorized) => {
            return early(
                ended,
                (
                    [(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"))],
                    ApiError::unauthorized(),
                )
                    .into_response(),
            );
        }
    };
    // Whose view of the journal it is in (`state.rs`, visible_requests).
    entry.caller = caller.merchant;
    if let Err(seconds) = state.faults.admit() {
        return early(ended, rate_limited(seconds));
    }
    let header_faults = match fault_header(&parts.headers) {
        Some(v) => match parse_header(&v) {
            Ok(f) => f,
            Err(e) => return early(ended, e.into_response()),
        },
        None => Vec::new(),
    };
    let mut plan = state.faults.plan(header_faults);
    note_faults(&plan, None, entry);

    let bytes: Bytes = if ended {
        Bytes::new()
    } else {
        let within = state.body_timeout;
        let Ok(read) = crate::http::extract::read_within(
            within,
            read_body(Limited::new(body.as_mut(), BODY_LIMIT)),
        )
        .await
        else {
            return early(
                false,
                crate::http::extract::late_body(within).into_response(),
            );
        };
        match read {
            // Read to its end (`read_body` ends only there).
            Ok(bytes) => bytes,
            Err(e) if is_length_limit(e.as_ref()) => {
                let read = drain(&parts, body.as_mut()).await;
                return early(read, ApiError::payload_too_large().into_response());
            }
            Err(_) => {
                return early(
                    false,
                    ApiError::validation("request body could not be read").into_response(),
                );
            }
        }
    };
    entry.set_body(&bytes);
    // Scripted faults (`fault_rules.rs`): only when no header or queued
    // fault came first; without rules, one relaxed load.
    let mut rule = None;
    if plan.applied.is_empty() && state.fault_rules.any() {
        let hit = match crate::http::rule_facts::meet(state, &parts, caller, endpoint, &bytes) {
            Ok(hit) => hit,
            // Boxed: only a request whose rules need its stored transaction
            // pays for the store's future.
            Err(facts) => {
                Box::pin(crate::http::rule_facts::meet_after_lookup(
                    state, caller, facts,
                ))
                .await
            }
        };
        if let Some(hit) = hit {
            plan.add(hit.fault);
            rule = Some(hit.rule);
            note_faults(&plan, rule, entry);
        }
    }
    if state.faults.draws() {
        state
            .faults
            // Boxed: only drawn faults need it, and its future would
            // otherwise make every request's future larger to move.
            .draw(
                Box::pin(fault_key(state, &parts, caller, &bytes)).await,
                &mut plan,
            );
        note_faults(&plan, rule, entry);
    }
    // An `answer-other` is met only once it has another transaction to
    // show (below): counted then, or nowhere.
    for fault in plan.applied.iter().filter(|f| **f != Fault::AnswerOther) {
        met(state, endpoint, fault);
    }
    if !plan.delay.is_zero() {
        // `delay=` and `--latency` end at the server's shutdown too, and
        // at their sandbox's removal: then answered as every request in a
        // removed sandbox is (its rows may not be gone from the store yet).
        Box::pin(state.faults.hold(plan.delay)).await;
        if state.faults.is_removed() {
            return Ending::Respond(crate::http::answers::sandbox_not_found().into_response());
        }
    }
    let action = plan.action.take();
    match action {
        Some(Fault::InternalError) => Ending::Respond(injected_error()),
        Some(Fault::RateLimit) => Ending::Respond(rate_limited(1)),
        Some(Fault::Reset) => Ending::Reset,
        Some(Fault::Hang) => Ending::Hang,
        Some(Fault::Gateway(status)) => {
            Ending::Respond(crate::http::delivery::gateway_page(status))
        }
        mut action => {
            // A panic in a handler is answered 500 and journaled like any
            // other answer.
            let routed =
                AssertUnwindSafe(route(state, caller, &parts, endpoint, &bytes)).catch_unwind();
            let mut response = routed.await.unwrap_or_else(panic_response);
            // The other transaction's answer, for `answer-other`. With none
            // to show, the request met no fault: the true answer, no fault
            // journaled or counted, and what asked for it (a rule, the
            // queue) still waits for a request it can misroute.
            let mut misrouted = None;
            if action == Some(Fault::AnswerOther) {
                let (truth, other) =
                    Box::pin(answer_other::answer_other(state, caller, &parts, response)).await;
                response = truth;
                if other.is_some() {
                    met(state, endpoint, &Fault::AnswerOther);
                    misrouted = other;
                } else {
                    action = None;
                    plan.applied.retain(|f| *f != Fault::AnswerOther);
                    if let Some(rule) = rule.take() {
                        state.fault_rules.unmeet(rule);
                    }
                    if plan.queued {
                        state.faults.requeue(Fault::AnswerOther);
                    }
                    note_faults(&plan, rule, entry);
                }
            }
            // The coverage's recovered cells (`http/recovery.rs`): what a
            // committed fault was about, and whether this request comes
            // back for one. Boxed: only those requests pay for the futures.
            match (endpoint, &action) {
                (Some(endpoint), Some(fault)) if fault.commits() => {
                    response = Box::pin(recovery::committed(
                        state,
                        caller,
                        &parts,
                        endpoint,
                        fault.kind(),
                        &bytes,
                        response,
                    ))
                    .await;
                }
                // A read that met a fault itself (a delay, a trickled
                // body) is no look at the transaction.
                (Some(endpoint), _) if plan.applied.is_empty() && state.coverage.awaits() => {
                    let answered = (
                        response.status(),
                        response.extensions().get::<ErrorCodeTag>().map(|t| t.0),
                    );
                    Box::pin(recovery::follow_up(
                        state, caller, &parts, endpoint, &bytes, answered,
                    ))
                    .await;
                }
                _ => {}
            }
            match action {
                Some(Fault::CommitThenError) => Ending::Respond(injected_error()),
                Some(Fault::CommitThenReset) => Ending::Reset,
                Some(Fault::AnswerOther) => Ending::Respond(misrouted.unwrap_or(response)),
                Some(Fault::CommitThenHang) => Ending::Hang,
                Some(Fault::Truncate) => {
                    Ending::Respond(Box::pin(crate::http::delivery::truncated(response)).await)
                }
                Some(Fault::SlowBody(rate)) => Ending::Respond(
                    Box::pin(crate::http::delivery::trickled(state, response, rate)).await,
                ),
                _ => Ending::Respond(response),
            }
        }
    }
}

/// Names the faults applied (and the rule that chose them) in the
/// request's journal entry; none when none is.
fn note_faults(plan: &Plan, rule: Option<Uuid>, entry: &mut Capture) {
    entry.fault = (!plan.applied.is_empty()).then(|| {
        let tokens: Vec<String> = plan.applied.iter().map(Fault::token).collect();
        let rule = rule.map(|r| r.hyphenated().to_string());
        crate::domain::journal::join_fault(&tokens.join(","), rule.as_deref())
    });
}

/// Counts a fault the request met: in the metrics, and in the coverage
/// of its endpoint.
fn met(state: &AppState, endpoint: Option<Endpoint>, fault: &Fault) {
    state.metrics.fault(fault.kind());
    if let Some(endpoint) = endpoint {
        state.coverage.fault(endpoint, fault.kind());
    }
}

fn injected_error() -> Response {
    ApiError::internal().into_response()
}

fn rate_limited(seconds: u64) -> Response {
    (
        [(header::RETRY_AFTER, HeaderValue::from(seconds))],
        ApiError::rate_limited(),
    )
        .into_response()
}

#[cfg(test)]
mod tests;
