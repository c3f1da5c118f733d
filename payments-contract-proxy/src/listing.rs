//! `GET /_proxy/exchanges?after=SEQ&limit=N` (issue 44): the most recent
//! judged exchanges, one short item each (what `payments tail --proxy`
//! prints), oldest first. Bounded: the last [`KEEPS`] exchanges in a
//! ring, each text cut at [`TEXT`] bytes and no body kept, so the listing
//! stays under a megabyte whatever passes through.
//!
//! Exchanges are judged in the order they end, not the order of their
//! `seq` (a slow exchange is judged after a quick later one), so `after`
//! pages by the order they were judged in: `after=SEQ` gives what was
//! judged after exchange `SEQ`. A reader that asks again with the `seq` of
//! the last item it got never misses a slow exchange. When exchange `SEQ`
//! is no longer kept (or never was), it gives those numbered above `SEQ`.
//!
//! Each exchange judged also has its place in that order, from 1: a page
//! says the place of its first item (`firstJudged`, the others follow it
//! one by one), of the oldest kept (`oldestJudged`) and how many were
//! judged (`judged`). `afterJudged=N` pages by place (what was judged
//! after the `N`th, from the oldest kept when that is later), whether or
//! not the exchange there is still kept, so a reader that remembers the
//! place of the last item it got knows how many it lost
//! (`oldestJudged` above it plus one) and never skips a slow exchange.

use std::borrow::Cow;
use std::collections::VecDeque;

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::exchange::{Endpoint, Exchange, Parsed};
use crate::memory::Memory;
use crate::rules::{Finding, Level, Verdict};

/// Exchanges kept, and the largest (and default) `limit`.
pub const KEEPS: usize = 1000;
/// The most bytes of a path, query, reference, id or code kept.
pub const TEXT: usize = 256;
/// The largest `after` (as the mock's journal: a `BIGINT`).
const SEQ_MAX: u64 = i64::MAX as u64;

/// What a request for a page asks: `after`, `afterJudged` and `limit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Page {
    after: Option<u64>,
    /// `afterJudged`: a place in the order judged (it has the last word
    /// over `after`).
    after_judged: Option<u64>,
    limit: usize,
}

impl Page {
    /// Reads `after`, `afterJudged` and `limit` from a query (other
    /// parameters are ignored; the first of a repeated one counts).
    ///
    /// # Errors
    ///
    /// What is wrong with them, each said once, for a 400
    /// `VALIDATION_ERROR`: an `after` or `afterJudged` that is not a whole
    /// number from 0 to 9223372036854775807, a `limit` that is not one
    /// from 1 to [`KEEPS`], any given empty.
    pub(crate) fn parse(query: Option<&str>) -> Result<Self, String> {
        let pairs: Vec<(Cow<'_, str>, Cow<'_, str>)> = query
            .map(|q| url::form_urlencoded::parse(q.as_bytes()).collect())
            .unwrap_or_default();
        let first = |name: &str| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v);
        let mut problems = Vec::new();
        let after = first("after").and_then(|text| {
            let after = whole(text).filter(|n| *n <= SEQ_MAX);
            if after.is_none() {
                problems.push(format!(
                    "after must be a whole number from 0 to {SEQ_MAX}: the seq of the last \
                     exchange seen"
                ));
            }
            after
        });
        let after_judged = first("afterJudged").and_then(|text| {
            let after = whole(text).filter(|n| *n <= SEQ_MAX);
            if after.is_none() {
                problems.push(format!(
                    "afterJudged must be a whole number from 0 to {SEQ_MAX}: the place in \
                     the order judged of the last exchange seen"
                ));
            }
            after
        });
        let limit = match first("limit") {
            None => KEEPS,
            Some(text) => match whole(text)
                .and_then(|n| usize::try_from(n).ok())
                .filter(|n| (1..=KEEPS).contains(n))
            {
                Some(limit) => limit,
                None => {
                    problems.push(format!("limit must be a whole number from 1 to {KEEPS}"));
                    KEEPS
                }
            },
        };
        if problems.is_empty() {
            Ok(Self {
                after,
                after_judged,
                limit,
            })
        } else {
            Err(problems.join("; "))
        }
    }
}

/// Digits only (no sign, space or fraction), as a number.
fn whole(text: &str) -> Option<u64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// One finding, without its message (the console and the report have it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) struct Brief {
    rule: &'static str,
    level: Level,
}

/// One judged exchange, as `GET /_proxy/exchanges` lists it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Item {
    /// The exchange's number (as in the report, the recording and the
    /// console).
    seq: u64,
    /// When the request arrived.
    time: DateTime<Utc>,
    method: Box<str>,
    /// As sent (secrets replaced).
    path: Box<str>,
    query: Option<Box<str>>,
    /// The answer's status.
    status: u16,
    /// Request to answer, milliseconds.
    duration_ms: f64,
    verdict: Verdict,
    findings: Box<[Brief]>,
    /// The answer's `errorCode`, when it is an envelope with one.
    error_code: Option<Box<str>>,
    /// `X-Request-Id` of the request, or of the answer.
    request_id: Option<Box<str>>,
    /// The caller's W3C trace id and span id (its `traceparent`).
    #[serde(skip_serializing_if = "Option::is_none")]
    trace_id: Option<Box<str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    span_id: Option<Box<str>>,
    /// The transaction's reference, when the exchange names it or the
    /// proxy remembers it of the transaction.
    reference_no: Option<Box<str>>,
    /// The transaction's id, likewise.
    transaction_id: Option<Box<str>>,
}

/// What an exchange says (or the proxy remembers) of its transaction and
/// its answer: read while its bodies are parsed, before the exchange is
/// redacted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Facts {
    error_code: Option<String>,
    reference_no: Option<String>,
    transaction_id: Option<String>,
}

impl Facts {
    /// The answer's `errorCode`; the reference and the transaction the
    /// path or the request names, else the successful answer's, else what
    /// `memory` (after this exchange was remembered) has of the other.
    pub(crate) fn of(parsed: &Parsed<'_>, memory: &Memory) -> Self {
        let text = |value: Option<Cow<'_, str>>| value.map(Cow::into_owned);
        let answered = |field: &str| text(parsed.success_data().and_then(|d| d.text(field)));
        let asked_reference = match &parsed.endpoint {
            Endpoint::StatusByReference(reference) => Some(reference.clone()),
            _ => text(parsed.request_text("referenceNo")),
        };
        let asked_id = match &parsed.endpoint {
            Endpoint::StatusById(id) => Some(id.clone()),
            _ => text(parsed.request_text("transactionId")),
        };
        let (answered_reference, answered_id) =
            (answered("referenceNo"), answered("transactionId"));
        // An answer about another transaction or reference than the one
        // asked (answer.other) tells nothing of the one asked: its fields
        // are never paired with what the request named.
        let agrees = |asked: &Option<String>, answered: &Option<String>| {
            asked
                .as_ref()
                .zip(answered.as_ref())
                .is_none_or(|(asked, answered)| asked == answered)
        };
        let about_asked =
            agrees(&asked_id, &answered_id) && agrees(&asked_reference, &answered_reference);
        let mut reference_no =
            asked_reference.or_else(|| answered_reference.filter(|_| about_asked));
        let mut transaction_id = asked_id.or_else(|| answered_id.filter(|_| about_asked));
        if parsed.endpoint.operation().is_some() {
            if reference_no.is_none()
                && let Some(id) = &transaction_id
            {
                // As the initiate's own item showed it, secrets replaced.
                reference_no = memory.transaction(id).and_then(|seen| {
                    (seen.shown_reference.as_deref().map(str::to_owned))
                        .or_else(|| seen.reference_no.clone())
                });
            }
            if transaction_id.is_none()
                && let Some(reference) = &reference_no
            {
                transaction_id = memory
                    .transaction_of_reference(reference)
                    .map(str::to_owned);
            }
        }
        Self {
            error_code: text(parsed.envelope().and_then(|e| e.code())),
            reference_no: reference_no.filter(|r| !r.is_empty()),
            transaction_id: transaction_id.filter(|t| !t.is_empty()),
        }
    }

    /// Each value passed through `scrub` (secrets replaced).
    pub(crate) fn scrubbed(self, scrub: impl Fn(&str) -> String) -> Self {
        let each = |value: Option<String>| value.map(|v| scrub(&v));
        Self {
            error_code: each(self.error_code),
            reference_no: each(self.reference_no),
            transaction_id: each(self.transaction_id),
        }
    }
}

/// `text` cut to at most [`TEXT`] bytes (at a character boundary), with
/// `…` when cut.
fn kept(text: &str) -> Box<str> {
    if text.len() <= TEXT {
        return text.into();
    }
    let mut end = TEXT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end]).into_boxed_str()
}

impl Item {
    /// The item of a judged exchange (already redacted).
    pub(crate) fn of(
        exchange: &Exchange,
        verdict: Verdict,
        findings: &[Finding],
        facts: Facts,
    ) -> Self {
        let request_id = exchange
            .request
            .header("x-request-id")
            .or_else(|| exchange.response.header("x-request-id"));
        Self {
            seq: exchange.seq,
            time: exchange.time,
            method: kept(&exchange.request.method),
            path: kept(&exchange.request.path),
            query: exchange.request.query.as_deref().map(kept),
            status: exchange.response.status,
            duration_ms: (exchange.duration_ms.max(0.0) * 1000.0).round() / 1000.0,
            verdict,
            findings: findings
                .iter()
                .map(|f| Brief {
                    rule: f.rule,
                    level: f.level,
                })
                .collect(),
            error_code: facts.error_code.as_deref().map(kept),
            request_id: request_id.map(kept),
            trace_id: exchange.trace_id.as_deref().map(kept),
            span_id: exchange.span_id.as_deref().map(kept),
            reference_no: facts.reference_no.as_deref().map(kept),
            transaction_id: facts.transaction_id.as_deref().map(kept),
        }
    }
}

/// `data` of `GET /_proxy/exchanges`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Shown {
    items: Vec<Item>,
    /// How many exchanges were judged (the newest's place).
    judged: u64,
    /// The place of the oldest kept, when any is.
    #[serde(skip_serializing_if = "Option::is_none")]
    oldest_judged: Option<u64>,
    /// The place of the first item, when the items follow one another in
    /// the order judged (not a page of those numbered above an `after` no
    /// longer kept).
    #[serde(skip_serializing_if = "Option::is_none")]
    first_judged: Option<u64>,
}

/// The last [`KEEPS`] judged exchanges, in the order they were judged,
/// each with its place in that order (from 1).
#[derive(Debug, Default)]
pub(crate) struct Listing {
    items: VecDeque<(u64, Item)>,
    /// How many were judged.
    judged: u64,
}

impl Listing {
    /// Keeps `item`, forgetting the oldest beyond [`KEEPS`].
    pub(crate) fn push(&mut self, item: Item) {
        if self.items.len() == KEEPS {
            self.items.pop_front();
        }
        self.judged += 1;
        self.items.push_back((self.judged, item));
    }

    /// A page, oldest first: without `after` or `afterJudged`, the newest
    /// `limit`; with `after`, the first `limit` judged after exchange
    /// `after`; with `afterJudged`, the first `limit` judged after the
    /// `afterJudged`th (see the module's documentation).
    pub(crate) fn page(&self, page: Page) -> Shown {
        let from = |at: usize| self.items.iter().skip(at).take(page.limit);
        let (items, contiguous): (Vec<&(u64, Item)>, bool) = match (page.after_judged, page.after) {
            (Some(place), _) => {
                let oldest = self.items.front().map_or(0, |(at, _)| *at);
                let at = place.saturating_add(1).saturating_sub(oldest);
                (
                    from(usize::try_from(at).unwrap_or(usize::MAX)).collect(),
                    true,
                )
            }
            (None, None) => {
                let skip = self.items.len().saturating_sub(page.limit);
                (from(skip).collect(), true)
            }
            (None, Some(after)) => {
                match self.items.iter().rposition(|(_, i)| i.seq == after) {
                    Some(at) => (from(at + 1).collect(), true),
                    None => {
                        let above: Vec<_> = self
                            .items
                            .iter()
                            .filter(|(_, i)| i.seq > after)
                            .take(page.limit)
                            .collect();
                        // They follow one another when none kept was
                        // left out between them.
                        let contiguous = above.windows(2).all(|w| w[1].0 == w[0].0 + 1);
                        (above, contiguous)
                    }
                }
            }
        };
        Shown {
            first_judged: items.first().filter(|_| contiguous).map(|(at, _)| *at),
            items: items.into_iter().map(|(_, item)| item.clone()).collect(),
            judged: self.judged,
            oldest_judged: self.items.front().map(|(at, _)| *at),
        }
    }

    /// How many are kept.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.items.len()
    }
}

#[cfg(test)]
mod tests;
