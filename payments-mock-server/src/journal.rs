//! The request journal (CONTRACT section 10, `GET /_mock/requests`): the
//! last 1,000 `/api/` requests, newest last, with `Authorization` redacted.

use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError};

use chrono::{DateTime, Utc};

/// How many entries are kept.
pub const CAPACITY: usize = 1000;

/// One `/api/` request and what became of it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct JournalEntry {
    /// HTTP method.
    pub method: String,
    /// Path as sent (still percent-encoded).
    pub path: String,
    /// Query string, if any.
    pub query: Option<String>,
    /// Request headers in order; `Authorization` is `[redacted]`.
    pub headers: Vec<(String, String)>,
    /// The body (lossy UTF-8).
    pub body: String,
    /// Response status; `None` when the connection was reset on purpose.
    pub status: Option<u16>,
    /// `errorCode` of the response.
    pub error_code: Option<String>,
    /// The request id.
    pub request_id: String,
    /// Faults applied, as `X-Mock-Fault` tokens joined by `,`.
    pub fault: Option<String>,
    /// Virtual time at arrival.
    pub at: DateTime<Utc>,
}

/// The bounded journal.
#[derive(Debug, Default)]
pub struct Journal {
    entries: Mutex<VecDeque<JournalEntry>>,
}

impl Journal {
    /// Appends, dropping the oldest beyond [`CAPACITY`].
    pub fn record(&self, entry: JournalEntry) {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        if entries.len() == CAPACITY {
            entries.pop_front();
        }
        entries.push_back(entry);
    }

    /// Every entry, oldest first.
    pub fn entries(&self) -> Vec<JournalEntry> {
        self.entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .cloned()
            .collect()
    }

    /// Forgets everything.
    pub fn clear(&self) {
        self.entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }
}
