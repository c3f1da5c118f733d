//! The API key and how it is attached to requests.
//!
//! The key lives in a [`SecretString`]: `Debug` shows it redacted, it is
//! never logged, and the header value built from it is marked sensitive so
//! HTTP-level logging skips it too.

use std::fmt;

use reqwest::header::{HeaderName, HeaderValue};
use secrecy::{ExposeSecret, SecretString};

use crate::error::Error;

/// A validated credential: the header to send and its (secret) value.
#[derive(Clone)]
pub(crate) struct Credential {
    header: HeaderName,
    value: HeaderValue,
}

impl Credential {
    /// `Authorization: Bearer KEY`, or `NAME: KEY` for a custom header.
    pub(crate) fn new(key: &SecretString, custom_header: Option<&str>) -> Result<Self, Error> {
        let raw = key.expose_secret();
        if raw.is_empty() {
            return Err(Error::config("the API key is empty"));
        }
        // What HTTP would carry is not enough: a header value may hold
        // spaces and bytes past ASCII, which a service compares as raw
        // bytes (a pasted no-break space or `sk_lïve` is a 401 at the
        // first call). A key is visible ASCII, as the mock requires; the
        // message says what is wrong, never the key.
        if let Some(kind) = raw.chars().find_map(not_in_a_key) {
            return Err(Error::config(format!(
                "the API key must be visible ASCII without spaces, but it holds {kind} (the key is not shown)"
            )));
        }
        let (header, text) = match custom_header {
            None => (reqwest::header::AUTHORIZATION, format!("Bearer {raw}")),
            Some(name) => {
                let header = HeaderName::from_bytes(name.as_bytes())
                    .map_err(|_| Error::config(format!("invalid auth header name {name:?}")))?;
                (header, raw.to_owned())
            }
        };
        // The error must not echo the key.
        let mut value = HeaderValue::from_str(&text)
            .map_err(|_| Error::config("the API key is not a valid header value"))?;
        value.set_sensitive(true);
        Ok(Self { header, value })
    }

    pub(crate) fn header(&self) -> &HeaderName {
        &self.header
    }

    pub(crate) fn value(&self) -> &HeaderValue {
        &self.value
    }
}

/// What `c` is, when a key may not hold it: a space (any Unicode blank,
/// a no-break space included), a control character, or a character
/// outside ASCII.
///
/// Control characters are told first: a tab or a line break is also
/// whitespace, and "a space" hid the usual cause, a key read from a file
/// with Windows line endings (`key\r`).
fn not_in_a_key(c: char) -> Option<&'static str> {
    if c.is_ascii_graphic() {
        None
    } else if c == '\r' {
        Some("a control character (a carriage return: a file with Windows line endings?)")
    } else if c == '\n' {
        Some("a control character (a line break)")
    } else if c == '\t' {
        Some("a control character (a tab)")
    } else if c.is_control() {
        Some("a control character")
    } else if c.is_whitespace() {
        Some("a space")
    } else {
        Some("a character outside ASCII")
    }
}

impl fmt::Debug for Credential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Credential({}: [REDACTED])", self.header)
    }
}

#[cfg(test)]
mod tests {
    use super::Credential;
    use secrecy::SecretString;

    fn refusal(key: &str) -> String {
        Credential::new(&SecretString::from(key.to_owned()), None)
            .expect_err("refused")
            .to_string()
    }

    #[test]
    fn a_carriage_return_is_a_control_character_not_a_space() {
        let said = refusal("sk_test_abc\r");
        assert!(
            said.contains("it holds a control character (a carriage return: a file with Windows line endings?)"),
            "{said}"
        );
        assert!(!said.contains("sk_test_abc"), "{said}");
        assert!(refusal("a\nb").contains("a control character (a line break)"));
        assert!(refusal("a\tb").contains("a control character (a tab)"));
        assert!(refusal("a\u{1}b").contains("holds a control character (the key"));
        assert!(refusal("a b").contains("holds a space"));
        assert!(refusal("a\u{a0}b").contains("holds a space"));
        assert!(refusal("sk_l\u{ef}ve").contains("outside ASCII"));
    }
}
