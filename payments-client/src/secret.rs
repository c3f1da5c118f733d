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
fn not_in_a_key(c: char) -> Option<&'static str> {
    if c.is_ascii_graphic() {
        None
    } else if c.is_whitespace() {
        Some("a space")
    } else if c.is_control() {
        Some("a control character")
    } else {
        Some("a character outside ASCII")
    }
}

impl fmt::Debug for Credential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Credential({}: [REDACTED])", self.header)
    }
}
