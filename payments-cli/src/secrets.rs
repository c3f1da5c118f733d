//! The secrets this run sends (the API key, a confirmation code), kept so
//! that text from the service shown on a terminal never repeats them: a
//! service (or a proxy) that echoes the key or the code in a message would
//! otherwise have it printed by `-v` and by error lines. `-o json` prints
//! the service's envelope exactly as received and is not touched.

use std::sync::Mutex;

/// What a hidden secret is shown as.
pub const SHOWN: &str = "[REDACTED]";

static KNOWN: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Remembers `secret` for [`hide`]. Values under 4 bytes are not
/// remembered: hiding them would blank ordinary words.
pub fn remember(secret: &str) {
    if secret.len() < 4 {
        return;
    }
    let mut known = KNOWN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if !known.iter().any(|k| k == secret) {
        known.push(secret.to_owned());
        // Longest first, so a secret inside another is not left half shown.
        known.sort_by_key(|k| std::cmp::Reverse(k.len()));
    }
}

/// `text` with every remembered secret, as written or percent-encoded (in
/// either letter case), replaced by [`SHOWN`].
#[must_use]
pub fn hide(text: &str) -> String {
    let known = KNOWN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut out = text.to_owned();
    for secret in known.iter() {
        for form in forms(secret) {
            if !form.is_empty() {
                out = replace_ignoring_ascii_case(&out, &form, secret);
            }
        }
    }
    out
}

/// The secret as written and percent-encoded: the bytes outside RFC 3986's
/// unreserved set (as most encoders write it), every byte but letters and
/// digits, and every byte.
fn forms(secret: &str) -> Vec<String> {
    let encoded = |keep: fn(u8) -> bool| -> String {
        secret
            .bytes()
            .map(|b| {
                if keep(b) {
                    char::from(b).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect()
    };
    vec![
        secret.to_owned(),
        encoded(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')),
        encoded(|b| b.is_ascii_alphanumeric()),
        encoded(|_| false),
    ]
}

/// `text` with `form` replaced: exactly when `form` is the secret itself,
/// in any ASCII letter case when it is an encoding (`%2f` is `%2F`).
fn replace_ignoring_ascii_case(text: &str, form: &str, secret: &str) -> String {
    if form == secret {
        return text.replace(form, SHOWN);
    }
    let lower_text = text.to_ascii_lowercase();
    let lower_form = form.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    while let Some(found) = lower_text[at..].find(&lower_form) {
        let start = at + found;
        out.push_str(&text[at..start]);
        out.push_str(SHOWN);
        at = start + lower_form.len();
    }
    out.push_str(&text[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remembered_secret_is_hidden_as_written_and_encoded() {
        remember("sk_CANARY/9+x=");
        remember("otp_CANARY_1");
        remember("ab");
        let text = "bad code otp_CANARY_1 for key Bearer sk_CANARY/9+x= \
                    (sk_CANARY%2f9%2bx%3d, sk_CANARY%2F9%2Bx%3D) ab";
        let shown = hide(text);
        assert!(!shown.contains("CANARY"), "{shown}");
        assert_eq!(shown.matches(SHOWN).count(), 4, "{shown}");
        assert!(
            shown.ends_with(" ab"),
            "short values are not hidden: {shown}"
        );
    }
}
