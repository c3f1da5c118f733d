//! What a journal entry keeps of a request's headers. hyper takes a head
//! of up to 64 KiB (`payments_serve::HEADER_LIMIT`, up to 100 headers) and
//! a journal keeps 1,000 entries, in each sandbox and the root: whole, that
//! is 64 MB a journal. An entry keeps each header value up to
//! [`HEADER_CUT`] bytes and its headers up to [`HEADER_BUDGET`] bytes in
//! all, bounded before any store keeps it (the memory and SQLite journals
//! record it so, PostgreSQL writes it so): every store keeps the same.
//!
//! An entry whose headers were cut says so in its headers themselves, so
//! that every store keeps it as it keeps any header, with no column of its
//! own: a last pair named [`CUT_NAME`], which no request can send (a
//! header's name is a token, and parentheses are not token characters),
//! whose value is the bytes of the header names and values before the cut.
//! `GET /_mock/requests` answers it as `headersLength` and the console
//! says it in words ([`split_cut`]).

use crate::domain::journal::Capture;

/// The most bytes of one header value an entry keeps: a longer one keeps
/// its first bytes up to this (no character split), then [`CUT_MARK`].
pub const HEADER_CUT: usize = 1024;

/// The most bytes of header names and values an entry keeps: the headers,
/// in order, while they fit (values cut to [`HEADER_CUT`] first); one
/// that does not fit, or whose name is longer than [`HEADER_CUT`], is left
/// out. `Authorization` (`[redacted]`) is never left out.
pub const HEADER_BUDGET: usize = 8 * 1024;

/// What ends a value the journal cut.
pub const CUT_MARK: &str = "…[cut]";

/// The name of the pair that says an entry's headers were cut (its value:
/// the bytes of names and values before the cut, in decimal).
pub(crate) const CUT_NAME: &str = crate::domain::journal::HEADERS_CUT;

/// Bounds `headers` (in order, as an entry keeps them: secrets already
/// redacted, so a cut can only take text away, never show a secret):
/// returns whether it cut any, having then added the [`CUT_NAME`] pair.
/// Headers within the bounds stay whole and as they are.
pub(crate) fn bound(headers: &mut Vec<(String, String)>) -> bool {
    if headers.last().is_some_and(|(name, _)| name == CUT_NAME) {
        return false;
    }
    let whole: usize = headers.iter().map(|(n, v)| n.len() + v.len()).sum();
    let long = |(n, v): &(String, String)| n.len() > HEADER_CUT || v.len() > HEADER_CUT;
    if whole <= HEADER_BUDGET && !headers.iter().any(long) {
        return false;
    }
    let mut kept = 0usize;
    headers.retain_mut(|(name, value)| {
        if name.eq_ignore_ascii_case("authorization") {
            // Always `[redacted]`: an entry shows that a key was sent.
            kept += name.len() + value.len();
            return true;
        }
        if name.len() > HEADER_CUT {
            return false;
        }
        if value.len() > HEADER_CUT {
            let mut end = HEADER_CUT;
            while !value.is_char_boundary(end) {
                end -= 1;
            }
            value.truncate(end);
            value.push_str(CUT_MARK);
            value.shrink_to_fit();
        }
        let size = name.len() + value.len();
        if kept + size > HEADER_BUDGET {
            return false;
        }
        kept += size;
        true
    });
    headers.push((CUT_NAME.to_owned(), whole.to_string()));
    true
}

/// `capture` with its headers bounded ([`bound`]): itself when they are
/// within the bounds, which the text before its body shows at once for
/// an ordinary request (path, query, request id and headers in under
/// [`HEADER_CUT`] bytes).
pub(crate) fn bounded(capture: Capture) -> Capture {
    if capture.body_at <= HEADER_CUT {
        return capture;
    }
    let mut entry = capture.entry();
    if !bound(&mut entry.headers) {
        return capture;
    }
    let mut cut = Capture::from_entry(&entry);
    // `from_entry` names the entry's replica: a capture without one is
    // its journal's own.
    cut.replica = capture.replica;
    cut
}

/// An entry's headers as a reader shows them, and when the journal cut
/// them, the bytes of names and values before the cut (the [`CUT_NAME`]
/// pair, taken off).
pub(crate) fn split_cut(
    mut headers: Vec<(String, String)>,
) -> (Vec<(String, String)>, Option<usize>) {
    if headers.last().is_some_and(|(name, _)| name == CUT_NAME) {
        let length = headers.pop().and_then(|(_, value)| value.parse().ok());
        return (headers, length);
    }
    (headers, None)
}

#[cfg(test)]
mod tests {
    use axum::http::{HeaderMap, HeaderValue, Method, header};
    use chrono::{DateTime, Utc};

    use super::*;

    fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
            .collect()
    }

    #[test]
    fn headers_within_the_bounds_stay_whole() {
        let mut headers = pairs(&[
            ("host", "127.0.0.1:1"),
            ("authorization", "[redacted]"),
            ("cookie", &"c".repeat(HEADER_CUT)),
        ]);
        let before = headers.clone();
        assert!(!bound(&mut headers));
        assert_eq!(headers, before);
    }

    #[test]
    fn a_long_value_keeps_its_first_kib_marked() {
        // Two bytes a character: the cut never splits one.
        let long = "é".repeat(30 * 1024);
        let mut headers = pairs(&[("x-long", &long), ("x-short", "1")]);
        assert!(bound(&mut headers));
        let (headers, length) = split_cut(headers);
        assert_eq!(
            length,
            Some("x-long".len() + long.len() + "x-short".len() + 1)
        );
        assert_eq!(
            headers[0].1,
            format!("{}{CUT_MARK}", "é".repeat(HEADER_CUT / 2))
        );
        assert_eq!(headers[1], ("x-short".to_owned(), "1".to_owned()));
        let mut odd = pairs(&[("x-odd", &format!("a{}", "é".repeat(HEADER_CUT)))]);
        bound(&mut odd);
        assert_eq!(odd[0].1.len(), HEADER_CUT - 1 + CUT_MARK.len());
    }

    #[test]
    fn many_headers_keep_the_budget_and_the_key_stays_redacted() {
        let value = "v".repeat(600);
        let mut headers: Vec<(String, String)> = (0..98)
            .map(|n| (format!("x-h{n}"), value.clone()))
            .collect();
        headers.push(("authorization".to_owned(), "[redacted]".to_owned()));
        headers.push(("x-name".repeat(HEADER_CUT), "1".to_owned()));
        assert!(bound(&mut headers));
        let (headers, length) = split_cut(headers);
        assert!(length.is_some_and(|n| n > 60 * 1024), "{length:?}");
        let kept: usize = headers.iter().map(|(n, v)| n.len() + v.len()).sum();
        assert!(kept <= HEADER_BUDGET, "{kept}");
        // In order while they fit (10 of 604 bytes and 3 of 605: 7,855), the key.
        let names: Vec<&str> = headers.iter().map(|(n, _)| n.as_str()).collect();
        let fit: Vec<String> = (0..13).map(|n| format!("x-h{n}")).collect();
        let mut expected: Vec<&str> = fit.iter().map(String::as_str).collect();
        expected.push("authorization");
        assert_eq!(names, expected);
        assert!(headers.contains(&("authorization".to_owned(), "[redacted]".to_owned())));
        // Bounded once: again, nothing changes.
        let mut again = headers.clone();
        again.push((CUT_NAME.to_owned(), "1".to_owned()));
        let before = again.clone();
        assert!(!bound(&mut again));
        assert_eq!(again, before);
    }

    #[test]
    fn a_capture_is_bounded_before_it_is_kept_and_its_secrets_stay_hidden() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("Bearer sk_secret"),
        );
        let long = format!("{}sk_secret", "a".repeat(60 * 1024));
        headers.insert("x-long", HeaderValue::from_str(&long).expect("value"));
        let at = DateTime::<Utc>::UNIX_EPOCH;
        let uri = "/api/payments/x/status?a=1".parse().expect("uri");
        let mut capture = Capture::new(&Method::POST, &uri, &headers, "rid", at);
        capture.set_body(b"{\"a\":1}");
        capture.status = Some(404);
        capture.fault = Some("delay=5".to_owned());
        let whole = capture.entry();
        let cut = bounded(capture).entry();
        assert_eq!(
            cut.headers[0],
            ("authorization".to_owned(), "[redacted]".to_owned())
        );
        assert_eq!(
            cut.headers[1].1,
            format!("{}{CUT_MARK}", "a".repeat(HEADER_CUT))
        );
        assert_eq!(cut.headers[2].0, CUT_NAME);
        assert!(!format!("{cut:?}").contains("sk_secret"));
        // Everything else as it was.
        let mut same = cut.clone();
        same.headers = whole.headers.clone();
        assert_eq!(same, whole);

        let plain = Capture::new(&Method::GET, &uri, &HeaderMap::new(), "rid", at);
        let text = plain.text.as_ptr();
        assert_eq!(
            bounded(plain).text.as_ptr(),
            text,
            "an ordinary one as it is"
        );
    }
}
