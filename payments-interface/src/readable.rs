//! A request's target (path and query) decoded for reading, as the mock's
//! console and `payments tail` show it.
//!
//! A client percent-encodes what is not ASCII: a reference `請求書` is
//! sent as `/api/payments/reference/%E8%AB%8B%E6%B1%82%E6%9B%B8/status`,
//! and reads as `/api/payments/reference/請求書/status`, the way RFC 3987
//! (section 3.2) turns a URI into an IRI: an escape of a byte beyond ASCII
//! is decoded where the escapes form UTF-8, and so is one of an unreserved
//! ASCII character but the dot (`A-Z a-z 0-9 - _ ~`, the same whichever way
//! it is written). Every other escape stays as sent: `%2F` is not the `/`
//! between segments, `%3F` not the start of a query, `%23` not a fragment,
//! `%25` not the start of an escape, `%2E` not a `.` segment, `%20` a space
//! that would not be seen; a control character or a byte that is not UTF-8
//! keeps its escape. So no two targets read alike. What a tool shows of
//! the decoded text (escaping controls, bidi and format characters) is
//! its own.

use std::borrow::Cow;

/// The value of an ASCII hexadecimal digit.
fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// The byte the escape at the start of `bytes` (`%XY`) stands for.
fn escaped(bytes: &[u8]) -> Option<u8> {
    match bytes {
        [b'%', hi, lo, ..] => Some(hex(*hi)? << 4 | hex(*lo)?),
        _ => None,
    }
}

/// `target` (a request's path and query, as sent) with the escapes decoded
/// that RFC 3987 decodes (the module's text); borrowed when there are none.
///
/// ```
/// use payments_interface::readable::readable_target;
///
/// assert_eq!(
///     readable_target("/api/payments/reference/%E8%AB%8B%E6%B1%82%2F1/status"),
///     "/api/payments/reference/請求%2F1/status"
/// );
/// ```
pub fn readable_target(target: &str) -> Cow<'_, str> {
    let bytes = target.as_bytes();
    if !bytes.contains(&b'%') {
        return Cow::Borrowed(target);
    }
    let mut out = String::with_capacity(target.len());
    let mut changed = false;
    // `target[copied..at]` is still to be copied as it is.
    let (mut copied, mut at) = (0, 0);
    while at < bytes.len() {
        let Some(b) = escaped(&bytes[at..]) else {
            at += 1;
            continue;
        };
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'~') {
            out.push_str(&target[copied..at]);
            out.push(char::from(b));
            changed = true;
            at += 3;
            copied = at;
            continue;
        }
        if b.is_ascii() {
            at += 3;
            continue;
        }
        // A run of escapes of bytes beyond ASCII: each valid UTF-8
        // sequence in it decoded, every other byte's escape kept.
        let start = at;
        let mut run = Vec::new();
        while let Some(b) = escaped(&bytes[at..]).filter(|b| !b.is_ascii()) {
            run.push(b);
            at += 3;
        }
        out.push_str(&target[copied..start]);
        let mut escapes = start;
        for chunk in run.utf8_chunks() {
            if !chunk.valid().is_empty() {
                out.push_str(chunk.valid());
                changed = true;
            }
            escapes += 3 * chunk.valid().len();
            let kept = 3 * chunk.invalid().len();
            out.push_str(&target[escapes..escapes + kept]);
            escapes += kept;
        }
        copied = at;
    }
    if !changed {
        return Cow::Borrowed(target);
    }
    out.push_str(&target[copied..]);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_of_text_beyond_ascii_are_readable_target() {
        assert_eq!(
            readable_target("/api/payments/reference/%E8%AB%8B%E6%B1%82%E6%9B%B8/status"),
            "/api/payments/reference/請求書/status"
        );
        // Lower-case hex digits, and an emoji of four bytes.
        assert_eq!(readable_target("/r/%f0%9f%98%80-1"), "/r/😀-1");
        // Unreserved ASCII, however it was written.
        assert_eq!(readable_target("/r/%41%7e%2D%5F"), "/r/A~-_");
        // A combining accent stays with its letter.
        assert_eq!(readable_target("/r/cafe%CC%81"), "/r/cafe\u{301}");
    }

    #[test]
    fn escapes_that_would_read_as_something_else_stay() {
        // A `/`, `?`, `#`, `%`, a space, a control character: as sent.
        for target in [
            "/api/payments/reference/a%2Fb/status",
            "/r/a%3Fb%23c%25d%20e%1B",
            "/api/payments/reference/%2E%2e/status",
            "/r/plain",
            "/api/payments?referenceNo=a%26b%3Dc",
            // Not an escape at all.
            "/r/%",
            "/r/%E",
            "/r/%zz",
        ] {
            assert!(
                matches!(readable_target(target), Cow::Borrowed(_)),
                "{target}"
            );
        }
    }

    #[test]
    fn bytes_that_are_not_utf8_keep_their_escapes() {
        // A lone continuation byte, a cut sequence, Latin-1 é.
        assert!(matches!(readable_target("/r/%80%E8%AB"), Cow::Borrowed(_)));
        assert_eq!(readable_target("/r/%E9t%C3%A9"), "/r/%E9té");
        assert_eq!(readable_target("/r/%FF%E8%AB%8B%E8%AB"), "/r/%FF請%E8%AB");
        // Mixed with the other kinds.
        assert_eq!(readable_target("/r/%2F%E8%AB%8B%41"), "/r/%2F請A");
    }
}
