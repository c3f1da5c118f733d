//! What the proxy remembers of the exchanges that passed through, for the
//! rules that span requests (the amount's units across initiate and
//! status, a second confirm, a status that goes backwards, a reference
//! answered twice, an id answered for two references), and the status
//! each transaction was last seen in (interface coverage's transitions).
//!
//! Bounded: at most [`CAPACITY`] transactions and [`CAPACITY`] references
//! (each with the merchants that initiated it, at most eight), the least
//! recently seen forgotten first, so a day-long run stays within
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
    /// That referenceNo as the initiate's recording shows it (its secrets
    /// replaced, a payer id echoed in it as its token), when that is not
    /// the same: what the proxy's listing shows of it, never the other.
    pub shown_reference: Option<Box<str>>,
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
    /// `referenceNo` → the `(merchantId, transactionId)` of each initiate
    /// of it answered 200: one entry per reference, whatever the number of
    /// merchants that used it (the status by reference names no merchant,
    /// and an initiate names both), so a new reference costs one entry of
    /// one map.
    references: LruCache<String, Initiated>,
}

/// Merchants kept per reference: a reference the proxy saw initiated by
/// more merchants forgets the earliest after the first (a rule then finds
/// nothing to compare with; memory stays bounded whatever is sent).
const MERCHANTS_PER_REFERENCE: usize = 8;

/// The 200 initiates of one `referenceNo`: each merchant (canonical) and
/// the transaction its first such initiate was answered with, the latest
/// last.
#[derive(Debug)]
struct Initiated {
    first: (Box<str>, Box<str>),
    more: Vec<(Box<str>, Box<str>)>,
}

impl Initiated {
    fn of(&self, merchant: &str) -> Option<&str> {
        std::iter::once(&self.first)
            .chain(&self.more)
            .find(|(m, _)| &**m == merchant)
            .map(|(_, id)| &**id)
    }

    fn latest(&self) -> &str {
        &self.more.last().unwrap_or(&self.first).1
    }

    fn put(&mut self, merchant: &str, transaction_id: &str) {
        let entry = std::iter::once(&mut self.first)
            .chain(&mut self.more)
            .find(|(m, _)| &**m == merchant);
        match entry {
            Some((_, id)) => *id = transaction_id.into(),
            None => {
                if self.more.len() + 1 == MERCHANTS_PER_REFERENCE {
                    self.more.remove(0);
                }
                self.more.push((merchant.into(), transaction_id.into()));
            }
        }
    }
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
        }
    }

    /// What passed through about `transaction_id`, without marking it used.
    pub fn transaction(&self, transaction_id: &str) -> Option<&Seen> {
        self.transactions.peek(transaction_id)
    }

    /// What passed through about `transaction_id`, to change, without
    /// marking it used.
    pub fn transaction_mut(&mut self, transaction_id: &str) -> Option<&mut Seen> {
        self.transactions.peek_mut(transaction_id)
    }

    /// The transaction an initiate of `(merchant, reference)` was answered
    /// 200 with.
    pub fn initiated(&self, merchant: &str, reference: &str) -> Option<&str> {
        self.references.peek(reference)?.of(merchant)
    }

    /// The entry of `transaction_id`, made if new (and the most recent).
    pub fn seen(&mut self, transaction_id: &str) -> &mut Seen {
        // One look-up; the key is copied only when the entry is new.
        self.transactions
            .get_or_insert_mut_ref(transaction_id, Seen::default)
    }

    /// Remembers a 200 initiate of `(merchant, reference)`.
    pub fn remember_reference(&mut self, merchant: &str, reference: &str, transaction_id: &str) {
        match self.references.get_mut(reference) {
            Some(initiated) => initiated.put(merchant, transaction_id),
            None => {
                self.references.put(
                    reference.to_owned(),
                    Initiated {
                        first: (merchant.into(), transaction_id.into()),
                        more: Vec::new(),
                    },
                );
            }
        }
    }

    /// The transaction a status read of `reference` is about: with the
    /// merchant it was scoped to (`merchantId`), that merchant's initiate;
    /// unscoped, the one merchant's that initiated it, and none when
    /// several did (the scope then lies with the caller's key, which the
    /// proxy does not know).
    pub fn transaction_for(&self, reference: &str, merchant: Option<&str>) -> Option<&str> {
        let initiated = self.references.peek(reference)?;
        match merchant {
            Some(merchant) => initiated.of(merchant),
            None if initiated.more.is_empty() => Some(&initiated.first.1),
            None => None,
        }
    }

    /// The transaction the latest 200 initiate of `reference` (any
    /// merchant) was answered with.
    pub fn transaction_of_reference(&self, reference: &str) -> Option<&str> {
        self.references.peek(reference).map(Initiated::latest)
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

    #[test]
    fn a_reference_remembers_each_merchant_and_the_latest() {
        let mut memory = Memory::with_capacity(2);
        memory.remember_reference("m1", "R", "t1");
        memory.remember_reference("m2", "R", "t2");
        assert_eq!(memory.initiated("m1", "R"), Some("t1"));
        assert_eq!(memory.initiated("m2", "R"), Some("t2"));
        assert_eq!(memory.initiated("m3", "R"), None);
        assert_eq!(memory.transaction_of_reference("R"), Some("t2"));
        // Two merchants of one reference are one reference.
        assert_eq!(memory.len().1, 1);
        memory.remember_reference("m1", "S", "t3");
        memory.remember_reference("m1", "T", "t4");
        assert_eq!(memory.initiated("m1", "R"), None, "R was the least recent");
        assert_eq!(memory.transaction_of_reference("S"), Some("t3"));
        assert_eq!(memory.len().1, 2);
    }

    #[test]
    fn one_reference_keeps_a_bounded_number_of_merchants() {
        let mut memory = Memory::with_capacity(4);
        for n in 0..1000 {
            memory.remember_reference(&format!("m{n}"), "R", &format!("t{n}"));
        }
        assert_eq!(memory.initiated("m0", "R"), Some("t0"), "the first stays");
        assert_eq!(memory.initiated("m999", "R"), Some("t999"));
        assert_eq!(
            memory.initiated("m900", "R"),
            None,
            "the earliest after the first go"
        );
        assert_eq!(memory.transaction_of_reference("R"), Some("t999"));
        let kept = (0..1000)
            .filter(|n| memory.initiated(&format!("m{n}"), "R").is_some())
            .count();
        assert_eq!(kept, MERCHANTS_PER_REFERENCE);
    }
}
