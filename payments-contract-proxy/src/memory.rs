//! What the proxy remembers of the exchanges that passed through, for the
//! rules that span requests (the amount's units across initiate and
//! status, a second confirm, a status that goes backwards, a reference
//! answered twice, an id answered for two references), and the status
//! each transaction was last seen in (interface coverage's transitions).
//!
//! Bounded: at most [`CAPACITY`] transactions and [`CAPACITY`] references,
//! the least recently seen forgotten first, so a day-long run stays within
//! a few tens of megabytes. A rule about a forgotten transaction simply
//! finds nothing to compare with: it never reports what it cannot know.

use std::num::NonZeroUsize;

use chrono::{DateTime, Utc};
use lru::LruCache;

use crate::json::{Json, Object};

/// Transactions (and references) remembered at most.
pub const CAPACITY: usize = 100_000;

/// The fields of a status read that both status endpoints must agree on,
/// in this order.
const AGREED: [&str; 5] = [
    "transactionId",
    "referenceNo",
    "amount",
    "productCode",
    "createdAt",
];

/// A status read's fields that both status endpoints must agree on, as
/// the answer gave them (their JSON text, one allocation for all five).
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// The five values' texts, one after the other.
    text: String,
    /// Where each value's text ends in `text`.
    ends: [usize; 5],
}

impl Snapshot {
    /// The five fields of a status `data` (`null` for one it lacks).
    pub fn of(data: &Object<'_>) -> Self {
        let fields = Self::fields_of(data);
        let mut text = String::with_capacity(fields.iter().map(|(_, v)| v.text().len()).sum());
        let mut ends = [0; 5];
        for ((_, value), end) in fields.iter().zip(&mut ends) {
            text.push_str(value.text());
            *end = text.len();
        }
        Self { text, ends }
    }

    /// The five fields of a status `data`, borrowed.
    pub fn fields_of<'a>(data: &Object<'a>) -> [(&'static str, Json<'a>); 5] {
        AGREED.map(|name| (name, data.get(name).unwrap_or(Json::new("null"))))
    }

    /// The five fields: `transactionId`, `referenceNo`, `amount`,
    /// `productCode`, `createdAt`.
    pub fn fields(&self) -> [(&'static str, Json<'_>); 5] {
        let mut start = 0;
        let mut n = 0;
        AGREED.map(|name| {
            let end = self.ends[n];
            n += 1;
            let value = Json::new(self.text.get(start..end).unwrap_or("null"));
            start = end;
            (name, value)
        })
    }
}

/// What passed through about one transaction.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Seen {
    /// The initiate's amount in minor units, when its initiate passed.
    pub amount_minor: Option<u64>,
    /// The initiate's currency (`MYR` when it named none).
    pub currency: Option<String>,
    /// The merchant (canonical, when a UUID) of the first initiate
    /// answered 200 with it.
    pub merchant: Option<String>,
    /// The referenceNo of that initiate.
    pub reference_no: Option<String>,
    /// A confirm of it was answered 200.
    pub confirmed: bool,
    /// The first final status (`SUCCESSFUL`, `FAILED`) an answer showed,
    /// and when that answer was complete.
    pub final_status: Option<(String, DateTime<Utc>)>,
    /// When the first answer showing it `CONFIRMED` (or final) was
    /// complete.
    pub confirmed_seen: Option<DateTime<Utc>>,
    /// The status the latest answer about it showed (one the interface
    /// names): where interface coverage counts a transition from.
    pub status: Option<payments_interface::Status>,
    /// The latest status read by id (the path's id).
    pub by_id: Option<Snapshot>,
    /// The latest status read by reference (the reference's transaction).
    pub by_reference: Option<Snapshot>,
}

/// The proxy's memory.
#[derive(Debug)]
pub struct Memory {
    transactions: LruCache<String, Seen>,
    /// `(merchantId, referenceNo)` → the transactionId an initiate of it
    /// was answered 200 with.
    references: LruCache<(String, String), String>,
    /// `referenceNo` → the transactionId an initiate of it was answered
    /// 200 with (the status by reference names no merchant).
    reference_nos: LruCache<String, String>,
}

impl Default for Memory {
    fn default() -> Self {
        Self::with_capacity(CAPACITY)
    }
}

impl Memory {
    /// A memory of at most `capacity` transactions and references.
    pub fn with_capacity(capacity: usize) -> Self {
        let capacity = NonZeroUsize::new(capacity).unwrap_or(NonZeroUsize::MIN);
        Self {
            transactions: LruCache::new(capacity),
            references: LruCache::new(capacity),
            reference_nos: LruCache::new(capacity),
        }
    }

    /// What passed through about `transaction_id`, without marking it used.
    pub fn transaction(&self, transaction_id: &str) -> Option<&Seen> {
        self.transactions.peek(transaction_id)
    }

    /// The transaction an initiate of `(merchant, reference)` was answered
    /// 200 with.
    pub fn initiated(&self, merchant: &str, reference: &str) -> Option<&str> {
        self.references
            .peek(&(merchant.to_owned(), reference.to_owned()))
            .map(String::as_str)
    }

    /// The entry of `transaction_id`, made if new (and the most recent).
    pub fn seen(&mut self, transaction_id: &str) -> &mut Seen {
        // One look-up; the key is copied only when the entry is new.
        self.transactions
            .get_or_insert_mut_ref(transaction_id, Seen::default)
    }

    /// Remembers a 200 initiate of `(merchant, reference)`.
    pub fn remember_reference(&mut self, merchant: &str, reference: &str, transaction_id: &str) {
        self.references.put(
            (merchant.to_owned(), reference.to_owned()),
            transaction_id.to_owned(),
        );
        self.reference_nos
            .put(reference.to_owned(), transaction_id.to_owned());
    }

    /// The transaction the latest 200 initiate of `reference` (any
    /// merchant) was answered with.
    pub fn transaction_of_reference(&self, reference: &str) -> Option<&str> {
        self.reference_nos.peek(reference).map(String::as_str)
    }

    /// How many transactions and references are remembered.
    pub fn len(&self) -> (usize, usize) {
        (self.transactions.len(), self.references.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_least_recently_seen_are_forgotten_first() {
        let mut memory = Memory::with_capacity(3);
        for id in ["a", "b", "c"] {
            memory.seen(id).confirmed = true;
        }
        memory.seen("a");
        memory.seen("d");
        assert!(memory.transaction("b").is_none(), "b was the least recent");
        assert!(memory.transaction("a").is_some_and(|s| s.confirmed));
        assert_eq!(memory.len().0, 3);
    }
}
