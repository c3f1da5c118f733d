//! `GET /_mock/requests`: the request journal (CONTRACT section 10).

use std::collections::BTreeMap;

use axum::extract::RawQuery;
use axum::response::Response;
use serde::Serialize;

use super::{JOURNAL, limit, param};
use crate::domain::access::Viewer;
use crate::domain::clock::format_time;
use crate::domain::port::Store as _;
use crate::state::Here;
use payments_serve::admin::query_pairs;
use payments_serve::{ApiError, success};

/// One request of the journal.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub(crate) struct JournalItem {
    /// Its number: only grows, across replicas and resets; `after` pages
    /// by it.
    seq: u64,
    method: String,
    /// As sent, still percent-encoded.
    path: String,
    query: Option<String>,
    /// Header names and values; `Authorization` is `[redacted]`, and so is
    /// the console's session in a `Cookie` header. Only some of them when
    /// `headersLength` is set.
    headers: BTreeMap<String, String>,
    /// Set when the journal cut the headers (it keeps each value up to
    /// 1 KiB, a longer one cut and ended by `…[cut]`, and up to 8 KiB of
    /// names and values in all, leaving out the headers past it,
    /// `Authorization` excepted): the bytes of all the names and values
    /// before the cut. Absent: `headers` are whole.
    #[serde(skip_serializing_if = "Option::is_none")]
    headers_length: Option<usize>,
    /// The body, lossy UTF-8; only its first bytes when `bodyLength` is
    /// set.
    body: String,
    /// Set when the journal kept only the first bytes of the body (its
    /// newest bodies are kept whole up to 512 KiB in all, older ones cut
    /// to 1 KiB): the whole body's length in bytes. Absent: `body` is
    /// whole.
    #[serde(skip_serializing_if = "Option::is_none")]
    body_length: Option<usize>,
    /// Null when the connection was reset on purpose.
    status: Option<u16>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::optional_error_code))]
    error_code: Option<String>,
    request_id: String,
    /// Faults applied, as `X-Mock-Fault` tokens joined by `,` (a fault
    /// rule's kind the same way).
    fault: Option<String>,
    /// The id of the fault rule that faulted it, if a rule did.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = Uuid))]
    fault_rule: Option<String>,
    /// The caller's W3C trace id, from its `traceparent` (32 hex digits),
    /// when it sent one well-formed header.
    #[cfg_attr(feature = "openapi", schema(pattern = "^[0-9a-f]{32}$"))]
    trace_id: Option<String>,
    /// The id of the caller's span that sent the request (16 hex digits),
    /// likewise.
    #[cfg_attr(feature = "openapi", schema(pattern = "^[0-9a-f]{16}$"))]
    span_id: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::timestamp))]
    at: String,
    /// The replica that served it (`--replica-name`).
    replica: String,
}

/// `data` of `GET /_mock/requests`.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub(crate) struct JournalPage {
    items: Vec<JournalItem>,
}

/// The largest `after` of `GET /_mock/requests` (PostgreSQL numbers
/// entries with a `BIGINT`).
pub(crate) const SEQ_MAX: u64 = i64::MAX as u64;

/// `after` of `GET /_mock/requests`: a whole number from 0 to [`SEQ_MAX`],
/// digits only (no sign, no space, no fraction).
fn seq_after(text: &str) -> Option<u64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse::<u64>().ok().filter(|n| *n <= SEQ_MAX)
}

/// How many of the newest entries `GET /_mock/requests` asks the store
/// for: only the `limit` it answers with when it takes the newest and
/// filters none out (no `after`, no `path`, no merchant's scope); all it
/// keeps otherwise (`after` takes the oldest above it; a filter may drop
/// any).
fn journal_read(
    after: Option<u64>,
    path: Option<&str>,
    scope: Option<uuid::Uuid>,
    limit: usize,
) -> usize {
    if after.is_none() && path.is_none() && scope.is_none() {
        limit
    } else {
        JOURNAL
    }
}

/// The journal of recent `/api/` requests, newest last.
///
/// Without `after`, the newest `limit`; with it, the oldest `limit` of
/// those numbered above it, so that asking again with the last `seq` seen
/// pages through the journal, on any replica.
#[cfg_attr(
    feature = "openapi",
    utoipa::path(
        get,
        path = "/_mock/requests",
        operation_id = "mockRequests",
        tag = "mock"
    )
)]
pub async fn requests(
    Here(state): Here,
    viewer: Viewer,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let pairs = query_pairs(query.as_deref());
    let mut problems = Vec::new();
    let limit = limit(&pairs, JOURNAL, JOURNAL, &mut problems);
    let after = param(&pairs, "after").and_then(|text| {
        let after = seq_after(text);
        if after.is_none() {
            problems.push(format!(
                "after must be a whole number from 0 to {SEQ_MAX}: the seq of the last entry seen"
            ));
        }
        after
    });
    if !problems.is_empty() {
        return Err(ApiError::validation(problems.join("; ")));
    }
    let path = param(&pairs, "path");
    let scope = viewer.role.scope();
    let entries = state
        .store
        .requests_since(after.unwrap_or(0), journal_read(after, path, scope, limit))
        .await?;
    // A merchant's key sees its own merchant's requests only.
    let entries: Vec<_> = state
        .visible_requests(scope, entries)
        .await?
        .into_iter()
        .filter(|e| path.is_none_or(|p| e.path == p))
        .collect();
    // A page after `after` starts at its oldest; the newest otherwise.
    let skip = match after {
        Some(_) => 0,
        None => entries.len().saturating_sub(limit),
    };
    let mut entries: Vec<_> = entries.into_iter().skip(skip).take(limit).collect();
    // As bounded as a journal in memory, whichever store kept it.
    crate::domain::journal::bound_bodies(&mut entries);
    let items = entries
        .into_iter()
        .map(|e| {
            let trace = payments_serve::trace::TraceParent::from_pairs(
                e.headers.iter().map(|(k, v)| (k.as_str(), v.as_str())),
            );
            let (headers, headers_length) = crate::store::journal::headers::split_cut(e.headers);
            JournalItem {
                seq: e.seq,
                method: e.method,
                path: e.path,
                query: e.query,
                headers: headers.into_iter().collect(),
                headers_length,
                body: e.body,
                body_length: e.body_length,
                status: e.status,
                error_code: e.error_code,
                request_id: e.request_id,
                fault: e.fault,
                fault_rule: e.fault_rule,
                trace_id: trace.map(|t| t.trace_id()),
                span_id: trace.map(|t| t.span_id()),
                at: format_time(e.at),
                replica: e.replica,
            }
        })
        .collect();
    Ok(success(JournalPage { items }, None))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_few_are_all_the_store_expands() {
        // `?limit=1` expanded the whole journal, then kept one.
        assert_eq!(journal_read(None, None, None, 1), 1);
        assert_eq!(journal_read(None, None, None, 250), 250);
        // A page after `after` is its oldest; a filter may drop any.
        assert_eq!(journal_read(Some(5), None, None, 1), JOURNAL);
        assert_eq!(journal_read(None, Some("/api/x"), None, 1), JOURNAL);
        assert_eq!(
            journal_read(None, None, Some(uuid::Uuid::nil()), 1),
            JOURNAL
        );
    }
}
