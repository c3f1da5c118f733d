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
//! that would not be seen; a byte that is not UTF-8 keeps its escape, and
//! so does a character that would not be seen as itself: a control
//! character (C0 and C1, `%C2%9B` too) and the line and paragraph
//! separators (U+2028, U+2029, which no tool here escapes). A `%` that
//! starts no escape stays too, and an escape of a hexadecimal digit right
//! after it is kept rather than decoded, so that the two never read as an
//! escape (`%6%41` is not `%6A`). So no two targets read alike, but for
//! the escapes of unreserved characters, which are the same whichever way
//! they are written. What a tool shows of the decoded text is its own:
//! `payments tail` and the console escape the bidirectional controls
//! (U+202E) and the other format characters (U+200B, U+FEFF) they meet.

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

/// Whether `out` ends with a `%` that starts no escape, alone or with one
/// hexadecimal digit after it: a decoded hexadecimal digit there would
/// make an escape of it. (An escape written out is always whole, so a `%`
/// this close to the end is a stray one.)
fn ends_in_stray_percent(out: &str) -> bool {
    match out.as_bytes() {
        [.., b'%'] => true,
        [.., b'%', digit] => digit.is_ascii_hexdigit(),
        _ => false,
    }
}

/// A character beyond ASCII that keeps its escape: one not seen as itself
/// (a C1 control, a line or paragraph separator).
fn unseen(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}')
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
            copied = at;
            at += 3;
            if !(b.is_ascii_hexdigit() && ends_in_stray_percent(&out)) {
                out.push(char::from(b));
                changed = true;
                copied = at;
            }
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
            for c in chunk.valid().chars() {
                let sent = 3 * c.len_utf8();
                if unseen(c) {
                    out.push_str(&target[escapes..escapes + sent]);
                } else {
                    out.push(c);
                    changed = true;
                }
                escapes += sent;
            }
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

    #[test]
    fn a_stray_percent_and_a_decoded_digit_never_read_as_an_escape() {
        // `%6` and `%41` (A) are not `%6A` (j); `%` and `%36%41` neither.
        assert_eq!(readable_target("/r/%6%41"), "/r/%6%41");
        assert_eq!(readable_target("/r/%%36%41"), "/r/%%36A");
        assert_eq!(readable_target("/r/%%41B"), "/r/%%41B");
        // After a stray `%`, only a digit that would complete an escape
        // keeps its escape: other unreserved characters are decoded.
        assert_eq!(readable_target("/r/%%5F%7E%67"), "/r/%_~g");
        assert_eq!(readable_target("/r/%6G%41"), "/r/%6GA");
        assert_eq!(readable_target("/r/%2F%41"), "/r/%2FA");
    }

    #[test]
    fn characters_not_seen_as_themselves_keep_their_escapes() {
        for target in [
            // C1 controls: CSI, NEL, the first and the last.
            "/r/%C2%9B",
            "/r/%c2%85",
            "/r/%C2%80%C2%9F",
            // Line and paragraph separators.
            "/r/%E2%80%A8%E2%80%A9",
        ] {
            assert!(
                matches!(readable_target(target), Cow::Borrowed(_)),
                "{target}"
            );
        }
        // Around decoded text, as sent.
        assert_eq!(
            readable_target("/r/%E8%AB%8B%C2%9Babc%E2%80%A8%C3%A9"),
            "/r/請%C2%9Babc%E2%80%A8é"
        );
        // A bidirectional control, a joiner, a zero-width space are
        // decoded: the tools escape them as they show them (`payments
        // tail` as `\u{202e}`, the console as `<U+202E>`).
        assert_eq!(
            readable_target("/r/%E2%80%AE%E2%80%8D%E2%80%8B%C2%A0"),
            "/r/\u{202e}\u{200d}\u{200b}\u{a0}"
        );
    }

    /// A target's parts as they read: a `%` and two hexadecimal digits
    /// are one escape (of an unreserved character, the character itself;
    /// else the byte, whichever case its digits are in); a character
    /// beyond ASCII is the escapes of its UTF-8 bytes, as a client sends
    /// it.
    fn parts(text: &str) -> Vec<(bool, u8)> {
        let mut uri = String::new();
        for c in text.chars() {
            if c.is_ascii() {
                uri.push(c);
            } else {
                for b in c.to_string().bytes() {
                    uri.push_str(&format!("%{b:02X}"));
                }
            }
        }
        let bytes = uri.as_bytes();
        let mut out = Vec::new();
        let mut at = 0;
        while at < bytes.len() {
            match escaped(&bytes[at..]) {
                Some(b) if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'~') => {
                    out.push((false, b));
                    at += 3;
                }
                Some(b) => {
                    out.push((true, b));
                    at += 3;
                }
                None => {
                    out.push((false, bytes[at]));
                    at += 1;
                }
            }
        }
        out
    }

    proptest::proptest! {
        /// Read again, the readable form means what the target meant:
        /// the same escapes and characters (no escape made of a stray
        /// `%` and what was decoded after it), and no character decoded
        /// that is not seen as itself.
        #[test]
        fn the_readable_form_reads_as_the_target(
            // Escapes (of hexadecimal digits most), `%` and `%X` that
            // start none, text beyond ASCII (a C1 control, a separator,
            // a bidi control, a zero-width space, a letter, a cut one).
            target in "(%[0-9A-Fa-f]{2}|%3[0-9]|%4[1-6]|%6[1-6]|%[0-9a-fA-F]|%|%C2%9B|\
                        %E2%80%A8|%E2%80%AE|%E2%80%8B|%E8%AB%8B|%C3|[0-9A-Fa-fgz/~.%-]){0,16}"
        ) {
            let readable = readable_target(&target);
            proptest::prop_assert_eq!(parts(&readable), parts(&target), "{}", readable);
            proptest::prop_assert!(!readable.chars().any(unseen), "{}", readable);
        }
    }
}
