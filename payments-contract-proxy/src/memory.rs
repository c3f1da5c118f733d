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
//!
//! Each value kept is bounded too, whatever an upstream or a client sends:
//! a transaction id, `referenceNo`, merchant or currency of at most
//! [`KEPT`] bytes, a status read of at most [`SNAPSHOT_KEPT`] (its five
//! values' text together). A longer value is never cut (a cut copy would
//! be taken for every value that begins alike): it is not remembered, and
//! what depends on it is not either, so a rule finds nothing to compare
//! with, as about a forgotten transaction. A transaction whose id is
//! longer is not remembered at all; a reference that is longer is not
//! remembered, and one initiated with a longer merchant or transaction id
//! is remembered as unknown (nothing is found for it, whatever merchant
//! asks, until it is forgotten); a transaction's longer merchant or
//! reference (both then go, and the reference as the listing shows it),
//! currency or status read goes as soon as the exchange that brought it
//! is remembered (`rules::remember` settles the memory: the exchange
//! right after never sees it, the same in the proxy and in `check`). A
//! transaction then holds at most about 3 KiB, a reference
//! about 4.5 KiB (eight merchants): a few hundred megabytes at the very
//! most, not gigabytes.

use std::num::NonZeroUsize;

use chrono::{DateTime, Utc};
use lru::LruCache;

use crate::json::{Json, Object};

/// Transactions (and references) remembered at most.
pub const CAPACITY: usize = 100_000;

/// The longest transaction id, `referenceNo`, merchant or currency
/// remembered, in bytes: a longer one is not remembered (never cut).
pub const KEPT: usize = 256;

/// The longest status read remembered: its five values' JSON text
/// together, in bytes.
pub const SNAPSHOT_KEPT: usize = 4 * KEPT;

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

impl Seen {
    /// Lets go of each value longer than the memory keeps (what goes
    /// with it too), never cutting one.
    fn bound(&mut self) {
        let long = |value: Option<&str>| value.is_some_and(|v| v.len() > KEPT);
        // The first merchant and reference go together (`id-reused`
        // compares the pair), and the reference as the listing shows it
        // with them: the listing never falls back to the reference as
        // sent when that is gone.
        if long(self.merchant.as_deref())
            || long(self.reference_no.as_deref())
            || long(self.shown_reference.as_deref())
        {
            self.merchant = None;
            self.reference_no = None;
            self.shown_reference = None;
        }
        if long(self.currency.as_deref()) {
            self.currency = None;
        }
        for read in [&mut self.by_id, &mut self.by_reference] {
            if read.as_ref().is_some_and(|r| r.text.len() > SNAPSHOT_KEPT) {
                *read = None;
            }
        }
    }
}

/// The proxy's memory.
#[derive(Debug)]
pub struct Memory {
    transactions: LruCache<String, Seen>,
    /// `referenceNo` → the `(merchantId, transactionId)` of each initiate
    /// of it answered 200: one entry per reference, whatever the number of
    /// merchants that used it (the status by reference names no merchant,
    /// and an initiate names both), so a new reference costs one entry of
    /// one map. `None`: initiated with a merchant or transaction id longer
    /// than [`KEPT`], so nothing is known of it.
    references: LruCache<String, Option<Initiated>>,
    /// The transaction last handed out to change ([`Memory::seen`],
    /// [`Memory::transaction_mut`]), when `pending`: its values are
    /// bounded at the next change or settle (the buffer is reused).
    changed: String,
    pending: bool,
    /// What [`Memory::seen`] hands out for an id longer than [`KEPT`]:
    /// never remembered, emptied at the next change.
    spare: Seen,
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
            changed: String::new(),
            pending: false,
            spare: Seen::default(),
        }
    }

    /// Bounds the values of the transaction handed out last, and lets go
    /// of what was written to the spare entry: called at each change, and
    /// by [`crate::rules::remember`] once an exchange is remembered, so a
    /// value longer than the memory keeps is gone straight away.
    pub(crate) fn settle(&mut self) {
        if std::mem::take(&mut self.pending)
            && let Some(seen) = self.transactions.peek_mut(self.changed.as_str())
        {
            seen.bound();
        }
        self.spare = Seen::default();
    }

    /// Notes `transaction_id` as the one handed out to change.
    fn changing(&mut self, transaction_id: &str) {
        self.changed.clear();
        self.changed.push_str(transaction_id);
        self.pending = true;
    }

    /// What passed through about `transaction_id`, without marking it used.
    pub fn transaction(&self, transaction_id: &str) -> Option<&Seen> {
        self.transactions.peek(transaction_id)
    }

    /// What passed through about `transaction_id`, to change, without
    /// marking it used. What is written to it is bounded at the next
    /// change, as [`Memory::seen`]'s is; the one handed out just before,
    /// when another, is bounded now.
    pub fn transaction_mut(&mut self, transaction_id: &str) -> Option<&mut Seen> {
        if transaction_id.len() > KEPT {
            return None;
        }
        if !self.pending || self.changed != transaction_id {
            self.settle();
            self.changing(transaction_id);
        }
        self.transactions.peek_mut(transaction_id)
    }

    /// The transaction an initiate of `(merchant, reference)` was answered
    /// 200 with.
    pub fn initiated(&self, merchant: &str, reference: &str) -> Option<&str> {
        self.references.peek(reference)?.as_ref()?.of(merchant)
    }

    /// The entry of `transaction_id`, made if new (and the most recent).
    /// An id longer than [`KEPT`] gets an entry that is not remembered;
    /// a value longer than the memory keeps that is written to the entry
    /// goes at the next change or [`Memory::settle`].
    pub fn seen(&mut self, transaction_id: &str) -> &mut Seen {
        self.settle();
        if transaction_id.len() > KEPT {
            return &mut self.spare;
        }
        self.changing(transaction_id);
        // One look-up; the key is copied only when the entry is new.
        self.transactions
            .get_or_insert_mut_ref(transaction_id, Seen::default)
    }

    /// Remembers a 200 initiate of `(merchant, reference)`: not at all
    /// when the reference is longer than [`KEPT`]; the reference as
    /// unknown when the merchant or the transaction id is.
    pub fn remember_reference(&mut self, merchant: &str, reference: &str, transaction_id: &str) {
        self.settle();
        if reference.len() > KEPT {
            return;
        }
        let kept = merchant.len() <= KEPT && transaction_id.len() <= KEPT;
        match self.references.get_mut(reference) {
            Some(Some(initiated)) if kept => initiated.put(merchant, transaction_id),
            // Unknown stays unknown until forgotten.
            Some(entry) => *entry = None,
            None => {
                self.references.put(
                    reference.to_owned(),
                    kept.then(|| Initiated {
                        first: (merchant.into(), transaction_id.into()),
                        more: Vec::new(),
                    }),
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
        let initiated = self.references.peek(reference)?.as_ref()?;
        match merchant {
            Some(merchant) => initiated.of(merchant),
            None if initiated.more.is_empty() => Some(&initiated.first.1),
            None => None,
        }
    }

    /// The transaction the latest 200 initiate of `reference` (any
    /// merchant) was answered with.
    pub fn transaction_of_reference(&self, reference: &str) -> Option<&str> {
        self.references
            .peek(reference)?
            .as_ref()
            .map(Initiated::latest)
    }

    /// How many transactions and references are remembered.
    pub fn len(&self) -> (usize, usize) {
        (self.transactions.len(), self.references.len())
    }

    /// The bytes of the ids, references and values held (what the memory
    /// bounds; the transaction changed last may hold longer ones until
    /// the next change or settle).
    #[cfg(test)]
    fn kept_bytes(&self) -> usize {
        let text = |value: Option<&str>| value.map_or(0, str::len);
        let read = |read: &Option<Snapshot>| read.as_ref().map_or(0, |r| r.text.len());
        let seen = |s: &Seen| {
            text(s.currency.as_deref())
                + text(s.merchant.as_deref())
                + text(s.reference_no.as_deref())
                + text(s.shown_reference.as_deref())
                + text(s.final_status.as_ref().map(|(f, _)| f.as_str()))
                + read(&s.by_id)
                + read(&s.by_reference)
        };
        let transactions: usize = self
            .transactions
            .iter()
            .map(|(id, s)| id.len() + seen(s))
            .sum();
        let references: usize = self
            .references
            .iter()
            .map(|(reference, initiated)| {
                reference.len()
                    + initiated.as_ref().map_or(0, |i| {
                        std::iter::once(&i.first)
                            .chain(&i.more)
                            .map(|(m, t)| m.len() + t.len())
                            .sum()
                    })
            })
            .sum();
        transactions + references + seen(&self.spare)
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

#[cfg(test)]
mod long_values;
