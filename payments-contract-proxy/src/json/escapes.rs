//! The one thing about a string's escapes that serde_json leaves to its
//! reader when it reads a value raw or skips it: a lone surrogate.

use serde::de::IgnoredAny;

/// Whether `text` would be JSON but for a lone surrogate escape: why a
/// body was not, for the findings.
pub(crate) fn json_but_lone_surrogate(text: &str) -> bool {
    serde_json::from_str::<IgnoredAny>(text).is_ok() && lone_surrogate(text)
}

/// Whether JSON text that serde_json has read holds a `\u` escape of a
/// lone surrogate: a high one (`\ud800` to `\udbff`) not followed by
/// the escape of a low one, or a low one (`\udc00` to `\udfff`) alone.
/// Such a string is no Unicode text: `serde_json::Value` and every typed
/// read (this project's client's) refuse it, but a value read raw or
/// skipped is not checked, so the bodies' readers check here. Read text
/// has a `\` only inside a string, each starting an escape.
pub(crate) fn lone_surrogate(text: &str) -> bool {
    let bytes = text.as_bytes();
    // The code unit of a `\uXXXX` escape at `at`.
    let unit = |at: usize| match bytes.get(at..at + 6) {
        Some([b'\\', b'u', hex @ ..]) => std::str::from_utf8(hex)
            .ok()
            .and_then(|hex| u16::from_str_radix(hex, 16).ok()),
        _ => None,
    };
    let mut at = 0;
    while let Some(found) = bytes
        .get(at..)
        .and_then(|rest| rest.iter().position(|&b| b == b'\\'))
    {
        let escape = at + found;
        at = match unit(escape) {
            Some(0xD800..=0xDBFF) => match unit(escape + 6) {
                Some(0xDC00..=0xDFFF) => escape + 12,
                _ => return true,
            },
            Some(0xDC00..=0xDFFF) => return true,
            Some(_) => escape + 6,
            // `\"`, `\\` and the other one-letter escapes.
            None => escape + 2,
        };
    }
    false
}
