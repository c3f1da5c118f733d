//! Identifier newtypes.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The service's transaction id.
///
/// Opaque: the mock issues UUIDs, but a real service may use any string, so
/// the client never parses it.
///
/// Decoding also accepts a JSON number (kept as its literal text), in case a
/// service issues numeric ids.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct TransactionId(String);

impl<'de> Deserialize<'de> for TransactionId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        match serde_json::Value::deserialize(d)? {
            serde_json::Value::String(s) => Ok(Self(s)),
            serde_json::Value::Number(n) => Ok(Self(n.to_string())),
            _ => Err(D::Error::custom("expected a transaction id string")),
        }
    }
}

impl TransactionId {
    /// Wraps a transaction id as received from the service.
    pub fn new(id: impl Into<String>) -> Self {
        Self(id.into())
    }

    /// The id as sent on the wire.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The owned string.
    pub fn into_string(self) -> String {
        self.0
    }
}

impl fmt::Display for TransactionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for TransactionId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl From<String> for TransactionId {
    fn from(id: String) -> Self {
        Self(id)
    }
}

impl From<&str> for TransactionId {
    fn from(id: &str) -> Self {
        Self(id.to_owned())
    }
}

impl From<&String> for TransactionId {
    fn from(id: &String) -> Self {
        Self(id.clone())
    }
}

impl From<&TransactionId> for TransactionId {
    fn from(id: &TransactionId) -> Self {
        id.clone()
    }
}

impl std::str::FromStr for TransactionId {
    type Err = std::convert::Infallible;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(Self(s.to_owned()))
    }
}

impl PartialEq<str> for TransactionId {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for TransactionId {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}
