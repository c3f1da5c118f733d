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

impl fmt::Debug for Credential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Credential({}: [REDACTED])", self.header)
    }
}
