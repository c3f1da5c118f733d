//! A request's target (path and query) as the console shows it: decoded
//! for reading, and as it was sent.
//!
//! A client percent-encodes what is not ASCII: a reference `請求書` is
//! sent as `/api/payments/reference/%E8%AB%8B%E6%B1%82%E6%9B%B8/status`.
//! The console shows it as `/api/payments/reference/請求書/status`, the
//! way RFC 3987 (section 3.2) turns a URI into an IRI: an escape of a
//! byte beyond ASCII is decoded where the escapes form UTF-8, and so is
//! one of an unreserved ASCII character but the dot (`A-Z a-z 0-9 - _ ~`,
//! the same whichever way it is written). Every other escape stays as
//! sent: `%2F` is not the `/` between segments, `%3F` not the start of a
//! query, `%25` not the start of an escape, `%2E` not a `.` segment, `%20`
//! a space that would not be seen at the end; so no two targets read
//! alike. The decoded text is then made
//! visible ([`visible`]: a bidirectional control reads `<U+202E>`).

use std::borrow::Cow;

use payments_interface::readable::readable_target as decoded;

use super::visible;

/// A target as a row and the request's page show it.
#[derive(Debug)]
pub(super) struct Shown {
    /// Decoded for reading, made visible.
    pub(super) read: String,
    /// As sent, made visible; empty when it reads the same as
    /// [`Shown::read`].
    pub(super) sent: String,
}

impl Shown {
    pub(super) fn of(target: &str) -> Self {
        let decoded = decoded(target);
        let read = visible(&decoded).into_owned();
        let sent = match decoded {
            Cow::Borrowed(_) => String::new(),
            Cow::Owned(_) => visible(target).into_owned(),
        };
        Self { read, sent }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_decoded_is_made_visible_and_the_sent_form_kept() {
        let shown = Shown::of("/r/%E2%80%AEfdp.exe%E2%80%8B");
        assert_eq!(shown.read, "/r/<U+202E>fdp.exe<U+200B>");
        assert_eq!(shown.sent, "/r/%E2%80%AEfdp.exe%E2%80%8B");
        let plain = Shown::of("/api/payments/reference/INV-1/status");
        assert_eq!(plain.read, "/api/payments/reference/INV-1/status");
        assert_eq!(plain.sent, "", "nothing more to show");
    }
}
