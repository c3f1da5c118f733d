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
    /// As sent, still percent-encoded; a parameter whose name says it
    /// carries a credential has the value `[redacted]`.
    query: Option<String>,
    /// Header names (lower-case) and values; `Authorization` is
    /// `[redacted]`, and so is any other header whose name says it carries
    /// a credential and the console's session in a `Cookie` header. A
    /// header sent more than once has all its values, joined in the order
    /// received by `, ` (RFC 9110 section 5.3), `Cookie` by `; ` (RFC 6265
    /// section 5.4); `headerLines` has each line as sent. Only some of
    /// them when `headersLength` is set.
    headers: BTreeMap<String, String>,
    /// Each header line as sent, in order: `[name, value]`, redacted as
    /// `headers` is. Only some of them when `headersLength` is set.
    #[cfg_attr(feature = "openapi", schema(schema_with = header_lines))]
    header_lines: Vec<(String, String)>,
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

/// The schema of [`JournalItem`]'s `headerLines`: pairs of strings.
#[cfg(feature = "openapi")]
fn header_lines() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
    let schema = serde_json::json!({
        "type": "array",
        "description": "Each header line as sent, in order: [name, value], redacted as headers is",
        "items": {
            "type": "array",
            "items": { "type": "string" },
            "minItems": 2,
            "maxItems": 2
        }
    });
    serde_json::from_value(schema).unwrap_or_else(|_| utoipa::openapi::RefOr::T(Default::default()))
}

/// An entry's header lines as one object: the names, each with all its
/// values joined in the order received, by `; ` for `Cookie` (RFC 6265
/// section 5.4), by `, ` for any other (RFC 9110 section 5.3), so that a
/// repeated header loses none of its values.
fn combined(lines: &[(String, String)]) -> BTreeMap<String, String> {
    let mut headers: BTreeMap<String, String> = BTreeMap::new();
    for (name, value) in lines {
        let name = name.to_ascii_lowercase();
        let separator = if name == "cookie" { "; " } else { ", " };
        match headers.entry(name) {
            std::collections::btree_map::Entry::Vacant(slot) => {
                slot.insert(value.clone());
            }
            std::collections::btree_map::Entry::Occupied(mut slot) => {
                let joined = slot.get_mut();
                joined.push_str(separator);
                joined.push_str(value);
            }
        }
    }
    headers
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

/// What `GET /_mock/requests` asks the store for.
#[derive(Debug, PartialEq, Eq)]
enum JournalRead {
    /// The oldest `limit` above `after`: a page after `after` that
    /// filters none out (no `path`, no merchant's scope).
    Oldest { after: u64, limit: usize },
    /// The newest this many above `after`: only the `limit` it answers
    /// with when it takes the newest and filters none out; all it keeps
    /// when a filter may drop any.
    Newest { after: u64, count: usize },
}

fn journal_read(
    after: Option<u64>,
    path: Option<&str>,
    scope: Option<uuid::Uuid>,
    limit: usize,
) -> JournalRead {
    match after {
        _ if path.is_some() || scope.is_some() => JournalRead::Newest {
            after: after.unwrap_or(0),
            count: JOURNAL,
        },
        Some(after) => JournalRead::Oldest { after, limit },
        None => JournalRead::Newest {
            after: 0,
            count: limit,
        },
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
    let entries = match journal_read(after, path, scope, limit) {
        JournalRead::Oldest { after, limit } => state.store.requests_after(after, limit).await?,
        JournalRead::Newest { after, count } => state.store.requests_since(after, count).await?,
    };
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
                headers: combined(&headers),
                header_lines: headers,
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
        let newest = |count| JournalRead::Newest { after: 0, count };
        assert_eq!(journal_read(None, None, None, 1), newest(1));
        assert_eq!(journal_read(None, None, None, 250), newest(250));
        // A filter may drop any: all the journal keeps.
        assert_eq!(journal_read(None, Some("/api/x"), None, 1), newest(JOURNAL));
        let scope = Some(uuid::Uuid::nil());
        assert_eq!(journal_read(None, None, scope, 1), newest(JOURNAL));
        assert_eq!(
            journal_read(Some(5), Some("/api/x"), None, 1),
            JournalRead::Newest {
                after: 5,
                count: JOURNAL
            }
        );
    }

    #[tokio::test]
    async fn a_page_after_a_position_expands_only_itself() {
        use tower::ServiceExt as _;
        let state = crate::state::AppState::new(crate::config::Config::default());
        for n in 0..1_010 {
            state
                .store
                .record_request(crate::domain::journal::Capture::new(
                    &axum::http::Method::GET,
                    &format!("/api/{n}").parse().expect("a URI"),
                    &axum::http::HeaderMap::new(),
                    "r",
                    chrono::DateTime::<chrono::Utc>::UNIX_EPOCH,
                ));
        }
        let expanded = || crate::store::journal::EXPANDED.with(|n| n.replace(0));
        expanded();
        let request = axum::http::Request::get("/_mock/requests?after=5&limit=2")
            .body(axum::body::Body::empty())
            .expect("a request");
        let response = crate::http::app(state)
            .oneshot(request)
            .await
            .expect("infallible");
        assert_eq!(response.status(), 200);
        assert_eq!(expanded(), 2, "the page, not the journal above 5");
        let body = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .expect("a body");
        let page: serde_json::Value = serde_json::from_slice(&body).expect("JSON");
        let seqs: Vec<_> = page["data"]["items"]
            .as_array()
            .expect("items")
            .iter()
            .map(|item| item["seq"].as_u64())
            .collect();
        assert_eq!(seqs, [Some(11), Some(12)], "the oldest two above 5");
    }

    #[test]
    fn a_page_after_a_position_is_all_the_store_expands() {
        // `?after=5&limit=2` expanded the whole journal above 5, then kept
        // its oldest two.
        assert_eq!(
            journal_read(Some(5), None, None, 2),
            JournalRead::Oldest { after: 5, limit: 2 }
        );
        assert_eq!(
            journal_read(Some(0), None, None, JOURNAL),
            JournalRead::Oldest {
                after: 0,
                limit: JOURNAL
            }
        );
    }
}
