//! The request journal (CONTRACT section 10, `GET /_mock/requests`): the
//! last 1,000 `/api/` requests, newest last, with `Authorization` and the
//! console's session cookie redacted.

use std::borrow::Cow;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use http::Method;

/// How many entries are kept.
pub const CAPACITY: usize = 1000;

/// The bytes of request bodies a journal keeps whole: its newest entries
/// keep their bodies whole while their bodies add up to at most this
/// (however large one is, up to the 64 KiB a request may send, the newest
/// entry's stays whole); older entries' bodies longer than [`BODY_CUT`]
/// keep their first [`BODY_CUT`] bytes only, and say so
/// ([`JournalEntry::body_length`]). A journal of ordinary requests (a few
/// hundred bytes of body each) is never cut; one of 1,000 bodies of 64 KiB
/// holds about 1.5 MiB of them, not 64 MiB.
pub const BODY_BUDGET: usize = 512 * 1024;

/// What an older entry keeps of a body once the journal's bodies exceed
/// [`BODY_BUDGET`]: its first bytes, up to this many (fewer when this
/// would split a character).
pub const BODY_CUT: usize = 1024;

/// The name of the last pair of [`JournalEntry::headers`] when the journal
/// cut them: its value is the bytes of the names and values the request
/// sent, in decimal. Parentheses are not allowed in a header's name, so no
/// request sends it.
pub const HEADERS_CUT: &str = "(cut)";

/// What a journal tells at the moment a reset forgets its entries, under
/// the lock that admits entries: the coverage's counts (`coverage.rs`),
/// which count a request when its entry is admitted, start over at that
/// same moment, so a request counts exactly when its entry outlives the
/// reset.
pub(crate) trait Fence: Send + Sync + std::fmt::Debug {
    /// Every entry admitted so far is forgotten.
    fn fenced(&self);
}

/// One `/api/` request and what became of it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct JournalEntry {
    /// Its place in the journal: 1 for the first request the server
    /// journaled, counting on across resets, so a reader that saw up to `n`
    /// asks for what came after `n`.
    pub seq: u64,
    /// HTTP method.
    pub method: String,
    /// Path as sent (still percent-encoded).
    pub path: String,
    /// Query string, if any.
    pub query: Option<String>,
    /// Request headers in order; `Authorization` is `[redacted]`, and so is
    /// the console's session in a `Cookie` header. Bounded: each value at
    /// most 1 KiB (a longer one cut, ended with `…[cut]`), at most 8 KiB of
    /// names and values in all (the headers past it left out). A cut
    /// entry's last pair is named [`HEADERS_CUT`] (a name no request can
    /// send); [`JournalEntry::headers_length`] reads it, and
    /// [`JournalEntry::request_headers`] leaves it out.
    pub headers: Vec<(String, String)>,
    /// The body (lossy UTF-8); only its first bytes when `body_length` is
    /// set.
    pub body: String,
    /// When the journal keeps only the first bytes of the body (its newest
    /// bodies are kept whole up to 512 KiB in all, an older one longer
    /// than 1 KiB keeps its first KiB): the whole body's length in bytes
    /// (of its lossy UTF-8 text). `None`: `body` is whole.
    pub body_length: Option<usize>,
    /// Response status; `None` when the connection was reset on purpose.
    pub status: Option<u16>,
    /// `errorCode` of the response.
    pub error_code: Option<String>,
    /// The request id.
    pub request_id: String,
    /// Faults applied, as `X-Mock-Fault` tokens joined by `,` (a fault
    /// rule's kind, like `commit-then-hang`, the same way).
    pub fault: Option<String>,
    /// The id of the fault rule that faulted it (`POST /_mock/faults`).
    pub fault_rule: Option<String>,
    /// Virtual time at arrival.
    pub at: DateTime<Utc>,
    /// The replica that served it (`--replica-name`, by default
    /// `HOST:PORT`): replicas on one database share one journal.
    pub replica: String,
    /// The merchant the request's API key is bound to (`--api-key
    /// KEY=MERCHANT`); `None` in open mode, for an admin or unbound key,
    /// a request refused before its key was accepted, and an entry
    /// written before stores kept it. Decides which merchant's view the
    /// entry belongs to (a merchant key's view of the journal); never shown
    /// in the journal's JSON.
    pub caller: Option<uuid::Uuid>,
}

/// An `/api/` request as the guard captures it, cheaply: the path, query,
/// header names and values and the body go into one text buffer, and
/// become a [`JournalEntry`] only when `/_mock/requests` reads the journal
/// (it used to be two `String`s per header on every request). Made from a
/// request by `http/journal.rs`, from a kept entry by the SQLite store.
#[derive(Debug)]
pub struct Capture {
    /// Set when recorded.
    pub(crate) seq: u64,
    pub(crate) method: Method,
    /// Path, query, request id, each header's name and value, each ended
    /// by [`END`], then the body: one allocation for all the text of a
    /// request, its layout included (a journal far out of the cache frees
    /// it with one miss, not one per part).
    pub(crate) text: String,
    /// Where the body starts in `text`, after the last [`END`].
    pub(crate) body_at: usize,
    pub(crate) has_query: bool,
    pub(crate) at: DateTime<Utc>,
    /// Response status; `None` when the connection was reset on purpose.
    pub(crate) status: Option<u16>,
    /// `errorCode` of the response.
    pub(crate) error_code: Option<&'static str>,
    /// Faults applied, as `X-Mock-Fault` tokens joined by `,`.
    pub(crate) fault: Option<String>,
    /// The replica that served it, when a store kept it from another run
    /// or replica; `None`: the journal's own.
    pub(crate) replica: Option<Arc<str>>,
    /// When the body in `text` is cut: the whole body's length in bytes.
    pub(crate) body_length: Option<usize>,
    /// The merchant of the key that sent it ([`JournalEntry::caller`]).
    pub(crate) caller: Option<uuid::Uuid>,
}

impl Capture {
    /// A capture of a request's method, path, query, request id and
    /// headers (as they are to be kept: secrets already redacted), laid
    /// out as `text` says: the one place that knows the layout,
    /// for a request (`http/journal.rs`) and for an entry a store kept.
    /// `capacity`: of `text`, made once: [`room`] of its parts and of the
    /// body still to come.
    /// `parts` says whether they may hold the separator ([`Parts`]).
    pub(crate) fn assemble<'a>(
        method: Method,
        (path, query): (&str, Option<&str>),
        request_id: &str,
        headers: impl Iterator<Item = (&'a str, Cow<'a, str>)>,
        capacity: usize,
        at: DateTime<Utc>,
        parts: Parts,
    ) -> Self {
        let push = match parts {
            Parts::Clean => push_clean,
            Parts::Unchecked => push_part,
        };
        let mut text = String::with_capacity(capacity);
        for part in [path, query.unwrap_or(""), request_id] {
            push(&mut text, part);
        }
        for (name, value) in headers {
            push(&mut text, name);
            push(&mut text, &value);
        }
        Self {
            seq: 0,
            method,
            body_at: text.len(),
            text,
            has_query: query.is_some(),
            at,
            status: None,
            error_code: None,
            fault: None,
            replica: None,
            body_length: None,
            caller: None,
        }
    }

    /// The request body (lossy UTF-8).
    pub fn set_body(&mut self, body: &[u8]) {
        self.body_length = None;
        self.text.truncate(self.body_at);
        match std::str::from_utf8(body) {
            Ok(text) => self.text.push_str(text),
            Err(_) => self.text.push_str(&String::from_utf8_lossy(body)),
        }
    }

    /// The length in bytes of the body as kept.
    pub(crate) fn kept_body_len(&self) -> usize {
        self.text.len() - self.body_at
    }

    /// Keeps the first [`BODY_CUT`] bytes of the body (no character
    /// split), and its whole length, when it is longer; gives back the
    /// room it took.
    pub(crate) fn cut_body(&mut self) {
        let len = self.kept_body_len();
        if len <= BODY_CUT {
            return;
        }
        let end = self.body_at + cut_at(&self.text[self.body_at..], BODY_CUT);
        self.body_length.get_or_insert(len);
        self.text.truncate(end);
        self.text.shrink_to_fit();
    }

    /// The request method.
    pub(crate) fn method(&self) -> &Method {
        &self.method
    }

    /// The path as sent.
    pub(crate) fn path(&self) -> &str {
        self.parts().next().unwrap_or_default()
    }

    /// The request id.
    pub(crate) fn request_id(&self) -> &str {
        self.parts().nth(REQUEST_ID).unwrap_or_default()
    }

    /// The parts of `text` before the body: path, query, request id, the
    /// header names and values in turn.
    fn parts(&self) -> std::str::SplitTerminator<'_, char> {
        self.text[..self.body_at].split_terminator(END)
    }

    /// The entry, expanded.
    pub(crate) fn entry(&self) -> JournalEntry {
        let mut parts = self.parts().map(str::to_owned);
        let path = parts.next().unwrap_or_default();
        let query = parts.next().filter(|_| self.has_query);
        let request_id = parts.next().unwrap_or_default();
        let mut headers = Vec::new();
        while let (Some(name), Some(value)) = (parts.next(), parts.next()) {
            headers.push((name, value));
        }
        let (fault, rule) = split_fault(self.fault.as_deref());
        JournalEntry {
            seq: self.seq,
            method: self.method.to_string(),
            path,
            query,
            headers,
            body: self.text[self.body_at..].to_owned(),
            body_length: self.body_length,
            status: self.status,
            error_code: self.error_code.map(str::to_owned),
            request_id,
            fault: fault.map(str::to_owned),
            fault_rule: rule.map(str::to_owned),
            at: self.at,
            replica: self.replica.as_deref().unwrap_or("").to_owned(),
            caller: self.caller,
        }
    }
}

impl JournalEntry {
    /// The headers as the request sent them, as far as the journal kept
    /// them (without the [`HEADERS_CUT`] pair).
    pub fn request_headers(&self) -> &[(String, String)] {
        match self.headers.split_last() {
            Some(((name, _), rest)) if name == HEADERS_CUT => rest,
            _ => &self.headers,
        }
    }

    /// When the journal cut the headers: the bytes of the names and values
    /// the request sent. `None`: the headers are whole.
    pub fn headers_length(&self) -> Option<usize> {
        match self.headers.last() {
            Some((name, value)) if name == HEADERS_CUT => value.parse().ok(),
            _ => None,
        }
    }

    /// Keeps the first [`BODY_CUT`] bytes of the body (no character split),
    /// and its whole length, when it is longer.
    fn cut_body(&mut self) {
        let len = self.body.len();
        if len > BODY_CUT {
            let end = cut_at(&self.body, BODY_CUT);
            self.body_length.get_or_insert(len);
            self.body.truncate(end);
            self.body.shrink_to_fit();
        }
    }
}

/// Bounds the bodies of `entries` (oldest first) as a journal bounds its
/// own ([`BODY_BUDGET`]): the newest keep their bodies whole while those
/// add up to at most the budget (the newest always), every older one
/// keeps at most [`BODY_CUT`] bytes. For a page of entries a store kept
/// whole (PostgreSQL's table), so that a listing is as bounded as a
/// journal in memory; an entry already cut keeps the length it had.
pub fn bound_bodies(entries: &mut [JournalEntry]) {
    let mut whole = 0usize;
    for (n, entry) in entries.iter_mut().rev().enumerate() {
        whole = whole.saturating_add(entry.body.len());
        if n > 0 && whole > BODY_BUDGET {
            entry.cut_body();
        }
    }
}

/// The largest index up to `at` (and within `text`) that starts a
/// character: where a text cut to `at` bytes ends.
fn cut_at(text: &str, at: usize) -> usize {
    let mut end = at.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    end
}

/// The part of a capture's text that is the request id (after the path and
/// the query).
const REQUEST_ID: usize = 2;

/// What ends each part of a capture's text before the body. No part of a
/// request holds it: a URI, a header's name or value never does (HTTP
/// refuses control characters in them), and a request id is a header's
/// value or the mock's own. One read back from a store that does hold it
/// has it replaced (U+FFFD, as invalid UTF-8 is), so the layout holds.
const END: char = '\n';

/// The room a capture's text takes: each part before the body (the
/// lengths of path, query, request id, each header's name and value) with
/// its [`END`], then `body` bytes.
pub(crate) fn room(parts: impl Iterator<Item = usize>, body: usize) -> usize {
    parts.map(|len| len + END.len_utf8()).sum::<usize>() + body
}

/// Whether the parts of a capture may hold its separator, [`END`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Parts {
    /// They cannot: a request's own URI and headers, whose types refuse
    /// control characters. Copied as they are: a search per part was ~700
    /// of a status read's ~18.4k instructions (callgrind).
    Clean,
    /// They may (a store's file): each is searched, a separator replaced.
    #[cfg_attr(not(any(test, feature = "sqlite")), allow(dead_code))]
    Unchecked,
}

/// Appends `part`, known to hold no [`END`], and its [`END`].
fn push_clean(text: &mut String, part: &str) {
    debug_assert!(!part.contains(END), "a clean part holds the separator");
    text.push_str(part);
    text.push(END);
}

/// Appends `part`, any [`END`] in it replaced, and its [`END`] to a
/// capture's text.
fn push_part(text: &mut String, part: &str) {
    if part.contains(END) {
        text.push_str(&part.replace(END, "\u{fffd}"));
    } else {
        text.push_str(part);
    }
    text.push(END);
}

/// What separates a capture's fault tokens from the rule that chose them:
/// a capture keeps both in its one `fault` text (the stores' column), as
/// `commit-then-hang rule=ID`.
const RULE_MARK: &str = " rule=";

/// A capture's fault text for `tokens` chosen by `rule`.
pub(crate) fn join_fault(tokens: &str, rule: Option<&str>) -> String {
    match rule {
        Some(rule) => format!("{tokens}{RULE_MARK}{rule}"),
        None => tokens.to_owned(),
    }
}

/// A capture's fault text as its tokens and its rule.
pub(crate) fn split_fault(text: Option<&str>) -> (Option<&str>, Option<&str>) {
    match text {
        Some(text) => match text.split_once(RULE_MARK) {
            Some((tokens, rule)) => (Some(tokens), Some(rule)),
            None => (Some(text), None),
        },
        None => (None, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fault_and_its_rule_share_one_text() {
        let text = join_fault("truncate", Some("6f1c0f0e-8d4b-4c47-9a4e-2f4f7f9d8a10"));
        assert_eq!(
            split_fault(Some(&text)),
            (
                Some("truncate"),
                Some("6f1c0f0e-8d4b-4c47-9a4e-2f4f7f9d8a10")
            )
        );
        assert_eq!(
            split_fault(Some("reset,delay=5")),
            (Some("reset,delay=5"), None)
        );
        assert_eq!(split_fault(None), (None, None));
    }
    // A capture is made from a request by `http/journal.rs`.
    use axum::http::{HeaderMap, HeaderValue, Uri, header};

    #[test]
    fn a_capture_reads_back_as_sent_with_the_key_redacted() {
        let uri: Uri = "/api/payments/x/status?merchantId=m&a=%20"
            .parse()
            .expect("uri");
        let mut headers = HeaderMap::new();
        headers.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("Bearer sk_secret"),
        );
        headers.insert("x-odd", HeaderValue::from_bytes(b"caf\xe9").expect("value"));
        headers.append("x-twice", HeaderValue::from_static("1"));
        headers.append("x-twice", HeaderValue::from_static("2"));
        let at = DateTime::<Utc>::UNIX_EPOCH;
        let mut capture = Capture::new(&Method::POST, &uri, &headers, "rid", at);
        capture.set_body(b"{\"a\":1}");
        capture.set_body(b"{\"b\":\xff}");
        capture.status = Some(404);
        capture.error_code = Some("TRANSACTION_NOT_FOUND");
        let entry = capture.entry();
        assert_eq!(entry.method, "POST");
        assert_eq!(entry.path, "/api/payments/x/status");
        assert_eq!(entry.query.as_deref(), Some("merchantId=m&a=%20"));
        let pairs = |v: &[(&str, &str)]| -> Vec<(String, String)> {
            v.iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect()
        };
        assert_eq!(
            entry.headers,
            pairs(&[
                ("authorization", "[redacted]"),
                ("x-odd", "caf\u{fffd}"),
                ("x-twice", "1"),
                ("x-twice", "2"),
            ])
        );
        assert_eq!(entry.body, "{\"b\":\u{fffd}}");
        assert_eq!(entry.request_id, "rid");
        assert_eq!(entry.status, Some(404));
        assert!(!format!("{capture:?}").contains("sk_secret"));

        let bare = Capture::new(
            &Method::GET,
            &"/api/payments/y/status".parse().expect("uri"),
            &HeaderMap::new(),
            "r2",
            at,
        )
        .entry();
        assert_eq!(
            (bare.query, bare.headers, bare.body),
            (None, vec![], String::new())
        );
    }

    #[test]
    fn an_entry_holds_the_room_it_needs() {
        // Kept for as long as the journal keeps it (with many sandboxes,
        // a thousand entries each): no room beyond the text itself.
        let uri: Uri = "/api/payments/initiate?x=1".parse().expect("uri");
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, HeaderValue::from_static("127.0.0.1:8080"));
        headers.insert(header::CONTENT_LENGTH, HeaderValue::from_static("10"));
        let at = DateTime::<Utc>::UNIX_EPOCH;
        let mut capture = Capture::new(&Method::POST, &uri, &headers, "rid-1", at);
        let room = capture.text.capacity();
        capture.set_body(b"{\"a\":\"bc\"}");
        assert_eq!(capture.text.len(), room, "{:?}", capture.text);
        assert_eq!(capture.text.capacity(), room, "the body did not move it");
        let get = Capture::new(&Method::GET, &uri, &HeaderMap::new(), "rid-1", at);
        assert_eq!(get.text.capacity(), get.text.len());
        // A Content-Length far beyond any body makes no large room.
        headers.insert(
            header::CONTENT_LENGTH,
            HeaderValue::from_static("999999999"),
        );
        let huge = Capture::new(&Method::POST, &uri, &headers, "rid-1", at);
        assert!(huge.text.capacity() < 5000, "{}", huge.text.capacity());
    }

    #[test]
    fn parts_that_hold_the_separator_keep_the_layout() {
        // Only a store's file could hand back such parts (HTTP refuses
        // control characters in a URI or a header): each is kept, the
        // separator replaced, and every other part stays where it was.
        let headers = [
            ("x-a", Cow::Borrowed("one\ntwo")),
            ("x-b\n", Cow::Borrowed("")),
            ("x-c", Cow::Borrowed("3")),
        ];
        let mut capture = Capture::assemble(
            Method::PUT,
            ("/api/\nx", Some("")),
            "rid\n",
            headers.into_iter(),
            0,
            DateTime::<Utc>::UNIX_EPOCH,
            Parts::Unchecked,
        );
        capture.set_body(b"line one\nline two\n");
        let entry = capture.entry();
        assert_eq!(entry.path, "/api/\u{fffd}x");
        assert_eq!(entry.query.as_deref(), Some(""));
        assert_eq!(entry.request_id, "rid\u{fffd}");
        let names: Vec<(&str, &str)> = entry
            .headers
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            names,
            [("x-a", "one\u{fffd}two"), ("x-b\u{fffd}", ""), ("x-c", "3")]
        );
        assert_eq!(entry.body, "line one\nline two\n", "the body as sent");
        assert_eq!(capture.path(), "/api/\u{fffd}x");
        assert_eq!(capture.request_id(), "rid\u{fffd}");
    }

    #[test]
    fn a_page_of_whole_entries_is_bounded_as_a_journal_is() {
        let at = DateTime::<Utc>::UNIX_EPOCH;
        let uri: Uri = "/api/payments/initiate".parse().expect("uri");
        let entry = |body: &str| {
            let mut capture = Capture::new(&Method::POST, &uri, &HeaderMap::new(), "r", at);
            capture.set_body(body.as_bytes());
            capture.entry()
        };
        let large = "\u{1}".repeat(64 * 1024);
        let mut page: Vec<JournalEntry> = (0..20).map(|_| entry(&large)).collect();
        page[0].body_length = None;
        page.push(entry("{}"));
        bound_bodies(&mut page);
        let whole: Vec<bool> = page.iter().map(|e| e.body_length.is_none()).collect();
        let kept = BODY_BUDGET / large.len() - 1;
        assert_eq!(whole.iter().filter(|w| **w).count(), kept + 1, "{whole:?}");
        assert!(whole[20] && whole[19] && !whole[0]);
        assert_eq!(page[0].body, "\u{1}".repeat(BODY_CUT));
        assert_eq!(page[0].body_length, Some(large.len()));
        // Bounded again: nothing changes, the length stays the whole one.
        let again = page.clone();
        bound_bodies(&mut page);
        assert_eq!(page, again);
    }
}
