//! The journal of one process, kept in memory: the memory store's, and
//! the SQLite store's copy of what it also writes to its file.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use crate::domain::journal::{BODY_BUDGET, CAPACITY, Capture, Fence, JournalEntry};
use crate::domain::port::JournalStats;

pub(crate) mod headers;

/// The bounded journal of one process: the memory store's journal, and the
/// SQLite store's (which also writes it to its file, behind the answers).
#[derive(Debug, Default)]
pub struct Journal {
    inner: Mutex<Entries>,
    /// This process's replica name, on every entry it records.
    replica: Arc<str>,
    /// Told, under the lock, when a reset forgets the entries: the
    /// coverage of the state this journal is (set once).
    fence: OnceLock<Arc<dyn Fence>>,
}

#[derive(Debug, Default)]
struct Entries {
    captures: VecDeque<Capture>,
    /// The `seq` of the last capture recorded, ever.
    last_seq: u64,
    /// The bytes of the bodies not cut: those of the captures from `cut`
    /// on.
    body_bytes: usize,
    /// How many of the oldest captures have had their bodies cut (to
    /// [`crate::domain::journal::BODY_CUT`]) to keep `body_bytes` within
    /// [`BODY_BUDGET`]: the next one to cut is at this index.
    cut: usize,
}

impl Entries {
    /// Cuts the bodies of the oldest captures not cut yet, the newest
    /// excepted, until the bodies not cut are within [`BODY_BUDGET`].
    fn bound(&mut self) {
        while self.body_bytes > BODY_BUDGET && self.cut + 1 < self.captures.len() {
            if let Some(capture) = self.captures.get_mut(self.cut) {
                self.body_bytes -= capture.kept_body_len();
                capture.cut_body();
            }
            self.cut += 1;
        }
    }

    /// Counts the bodies afresh, as kept (after entries were put back or
    /// some forgotten): the cut ones are all older than every whole one.
    fn recount(&mut self) {
        self.cut = self
            .captures
            .iter()
            .position(|c| c.body_length.is_none())
            .unwrap_or(self.captures.len());
        self.body_bytes = self
            .captures
            .iter()
            .skip(self.cut)
            .map(Capture::kept_body_len)
            .sum();
        self.bound();
    }
}

#[cfg(test)]
thread_local! {
    /// The entries this thread expanded (what a read costs), for tests.
    pub(crate) static EXPANDED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

impl Journal {
    fn lock(&self) -> std::sync::MutexGuard<'_, Entries> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// An empty journal whose entries name `replica`.
    pub(crate) fn new(replica: &str) -> Self {
        Self {
            inner: Mutex::default(),
            replica: Arc::from(replica),
            fence: OnceLock::new(),
        }
    }

    /// Tells `fence` whenever a reset forgets the entries, under the lock
    /// that admits them ([`Journal::record_with`]); once (a second is
    /// ignored, and says so).
    pub(crate) fn fence_with(&self, fence: Arc<dyn Fence>) -> bool {
        self.fence.set(fence).is_ok()
    }

    /// Tells the fence, if any: the caller holds the lock.
    fn fenced(&self) {
        if let Some(fence) = self.fence.get() {
            fence.fenced();
        }
    }

    /// Appends, numbering it, its headers bounded ([`headers::bound`]),
    /// and drops the oldest beyond [`CAPACITY`]; returns its number.
    pub(crate) fn record(&self, capture: Capture) -> u64 {
        self.record_with(capture, || ())
    }

    /// As [`Journal::record`], calling `admitted` under the lock once the
    /// entry is in: before any reset can forget it, after any reset that
    /// came first ([`Fence`]).
    pub(crate) fn record_with(&self, capture: Capture, admitted: impl FnOnce()) -> u64 {
        let mut capture = headers::bounded(capture);
        let mut entries = self.lock();
        entries.last_seq += 1;
        capture.seq = entries.last_seq;
        // A capture without a replica is this journal's (`expand` names
        // it): no reference count to raise here and lower when it is
        // dropped, on a line every request of every journal shares.
        let body = capture.kept_body_len();
        let captures = &mut entries.captures;
        let mut oldest = None;
        if captures.len() == CAPACITY {
            oldest = captures.pop_front();
        } else if captures.len() == captures.capacity() {
            // Grown by hand to exactly CAPACITY at most (by itself it
            // would grow to 1,024): a full journal then writes its newest
            // entry into the very slot its oldest left, which dropping
            // that entry has just brought into the cache, instead of a
            // slot last written 1,024 requests ago (with many sandboxes,
            // each with its own journal, far out of the cache).
            let len = captures.len();
            captures.reserve_exact((len * 2).clamp(8, CAPACITY) - len);
        }
        captures.push_back(capture);
        if let Some(oldest) = &oldest {
            if entries.cut > 0 {
                entries.cut -= 1;
            } else {
                entries.body_bytes -= oldest.kept_body_len();
            }
        }
        entries.body_bytes += body;
        entries.bound();
        admitted();
        let seq = entries.last_seq;
        // The oldest entry is freed outside the lock: with many journals
        // its text is out of the cache, and another request of this
        // journal need not wait for it.
        drop(entries);
        drop(oldest);
        seq
    }

    /// The entry of `capture`, naming this journal's replica unless a
    /// store kept another's.
    fn expand(&self, capture: &Capture) -> JournalEntry {
        #[cfg(test)]
        EXPANDED.with(|n| n.set(n.get() + 1));
        let mut entry = capture.entry();
        if capture.replica.is_none() {
            entry.replica.push_str(&self.replica);
        }
        entry
    }

    /// Puts back entries a store kept (oldest first), and the numbering
    /// where it was (`last_seq`, which a reset does not set back).
    #[cfg(feature = "sqlite")]
    pub(crate) fn restore(&self, kept: &[JournalEntry], last_seq: u64) {
        let mut entries = self.lock();
        entries.captures = kept
            .iter()
            .rev()
            .take(CAPACITY)
            .rev()
            .map(Capture::from_entry)
            .collect();
        entries.last_seq = last_seq.max(kept.last().map_or(0, |e| e.seq));
        entries.recount();
    }

    /// The newest `limit` entries with a `seq` above `after`, oldest first:
    /// only those are expanded, so a reader polling for what is new costs
    /// little however busy the server is.
    pub fn since(&self, after: u64, limit: usize) -> Vec<JournalEntry> {
        let entries = self.lock();
        let newer = entries.captures.iter().rev().take_while(|c| c.seq > after);
        let mut picked: Vec<JournalEntry> = newer.take(limit).map(|c| self.expand(c)).collect();
        picked.reverse();
        picked
    }

    /// The oldest `limit` entries with a `seq` above `after`, oldest first
    /// (a page of what came after a position): found by the numbers, and
    /// only those are expanded.
    pub fn after(&self, after: u64, limit: usize) -> Vec<JournalEntry> {
        let entries = self.lock();
        let start = entries.captures.partition_point(|c| c.seq <= after);
        entries
            .captures
            .range(start..)
            .take(limit)
            .map(|c| self.expand(c))
            .collect()
    }

    /// The entry numbered `seq`, while it is kept.
    pub fn get(&self, seq: u64) -> Option<JournalEntry> {
        let entries = self.lock();
        let oldest = entries.captures.front()?.seq;
        let index = usize::try_from(seq.checked_sub(oldest)?).ok()?;
        entries
            .captures
            .get(index)
            .filter(|c| c.seq == seq)
            .map(|c| self.expand(c))
    }

    /// The `seq` of the newest entry ever recorded (0 before the first).
    #[cfg(any(feature = "sqlite", test))]
    pub fn last_seq(&self) -> u64 {
        self.lock().last_seq
    }

    /// The journal in brief, at one moment.
    pub(crate) fn stats(&self) -> JournalStats {
        let entries = self.lock();
        JournalStats {
            last_seq: entries.last_seq,
            len: entries.captures.len(),
            oldest_seq: entries.captures.front().map_or(0, |c| c.seq),
        }
    }

    /// Forgets every entry; the numbering goes on (a reader that polls
    /// with the last `seq` it saw still gets what comes next).
    pub fn clear(&self) {
        let mut entries = self.lock();
        entries.captures.clear();
        entries.recount();
        self.fenced();
    }

    /// The `seq` of the newest entry recorded, the floor of a reset that
    /// forgets what is numbered up to it ([`Journal::clear_through`],
    /// later): the fence is told at once, under the lock, so what is
    /// recorded from here on is counted and kept, and what came before is
    /// neither.
    #[cfg(feature = "sqlite")]
    pub(crate) fn fence_floor(&self) -> u64 {
        let entries = self.lock();
        self.fenced();
        entries.last_seq
    }

    /// Forgets the entries numbered up to `floor`, keeping the newer ones
    /// (recorded after a reset took effect); the numbering goes on.
    #[cfg(feature = "sqlite")]
    pub(crate) fn clear_through(&self, floor: u64) {
        let mut entries = self.lock();
        entries.captures.retain(|c| c.seq > floor);
        entries.recount();
    }

    /// Forgets every entry and the numbering (`--fresh`).
    pub(crate) fn erase(&self) {
        let mut entries = self.lock();
        *entries = Entries::default();
        self.fenced();
    }
}

/// SQLite keeps the journal of the last run: its entries come back as
/// captures, numbered and attributed as they were (and an entry whose
/// headers were cut becomes a capture again, [`headers::bounded`]).
impl Capture {
    /// A capture of an entry read back from a store (SQLite keeps the
    /// journal of the last run), numbered and attributed as it was.
    pub(crate) fn from_entry(entry: &JournalEntry) -> Self {
        let method = http::Method::from_bytes(entry.method.as_bytes()).unwrap_or(http::Method::GET);
        let headers = entry
            .headers
            .iter()
            .map(|(name, value)| (name.as_str(), std::borrow::Cow::Borrowed(value.as_str())));
        let query = entry.query.as_deref();
        let parts = [
            entry.path.len(),
            query.map_or(0, str::len),
            entry.request_id.len(),
        ]
        .into_iter()
        .chain(entry.headers.iter().flat_map(|(n, v)| [n.len(), v.len()]));
        let mut capture = Self::assemble(
            method,
            (&entry.path, query),
            &entry.request_id,
            headers,
            crate::domain::journal::room(parts, entry.body.len()),
            entry.at,
            crate::domain::journal::Parts::Unchecked,
        );
        capture.set_body(entry.body.as_bytes());
        capture.seq = entry.seq;
        capture.status = entry.status;
        capture.error_code = entry
            .error_code
            .as_deref()
            .and_then(payments_interface::ErrorCode::parse)
            .map(payments_interface::ErrorCode::as_str);
        capture.fault = entry
            .fault
            .as_deref()
            .map(|tokens| crate::domain::journal::join_fault(tokens, entry.fault_rule.as_deref()));
        capture.replica = Some(Arc::from(entry.replica.as_str()));
        capture.body_length = entry.body_length;
        capture.caller = entry.caller;
        capture
    }
}

#[cfg(test)]
mod tests {
    use axum::http::{HeaderMap, Method};
    use chrono::{DateTime, Utc};

    use super::*;

    fn capture(path: &str) -> Capture {
        Capture::new(
            &Method::GET,
            &path.parse().expect("uri"),
            &HeaderMap::new(),
            "r",
            DateTime::<Utc>::UNIX_EPOCH,
        )
    }

    #[test]
    fn entries_are_numbered_and_readers_get_what_is_new() {
        let journal = Journal::new("test");
        assert_eq!(journal.last_seq(), 0);
        for n in 0..(CAPACITY + 5) {
            journal.record(capture(&format!("/api/{n}")));
        }
        assert_eq!(journal.stats().len, CAPACITY);
        assert_eq!(journal.last_seq(), (CAPACITY + 5) as u64);
        let newest = journal.since(0, 3);
        let seqs: Vec<u64> = newest.iter().map(|e| e.seq).collect();
        assert_eq!(seqs, [1003, 1004, 1005]);
        assert!(newest.iter().all(|e| e.replica == "test"), "{newest:?}");
        assert_eq!(journal.since(1004, 50).len(), 1);
        assert!(journal.since(1005, 50).is_empty());
        assert_eq!(journal.get(6).map(|e| e.path), Some("/api/5".to_owned()));
        assert_eq!(journal.get(5), None, "dropped");
        assert_eq!(journal.get(1006), None);
        journal.clear();
        assert_eq!(journal.stats().len, 0);
        journal.record(capture("/api/after"));
        assert_eq!(journal.since(1005, 10)[0].seq, 1006);
    }

    #[test]
    fn a_page_after_a_position_is_the_oldest_of_what_is_above_it() {
        let journal = Journal::new("test");
        for n in 0..(CAPACITY + 10) {
            journal.record(capture(&format!("/api/{n}")));
        }
        // As the whole read above `after` cut to its oldest `limit` was.
        for after in [0, 5, 10, 11, 12, 500, 1008, 1009, 1010, 5000] {
            for limit in [0, 1, 7, 50, CAPACITY] {
                let whole: Vec<_> = journal
                    .since(after, CAPACITY)
                    .into_iter()
                    .take(limit)
                    .collect();
                assert_eq!(journal.after(after, limit), whole, "after {after}, {limit}");
            }
        }
        // Paged through whole, 64 at a time.
        let (mut seen, mut after) = (Vec::new(), 0);
        loop {
            let page = journal.after(after, 64);
            let Some(last) = page.last() else { break };
            after = last.seq;
            seen.extend(page);
        }
        assert_eq!(seen, journal.since(0, CAPACITY));
        // Only the page is expanded, wherever it starts.
        for after in [0, 11, 500, 1007] {
            EXPANDED.with(|n| n.set(0));
            assert_eq!(journal.after(after, 3).len(), 3);
            assert_eq!(EXPANDED.with(std::cell::Cell::get), 3, "after {after}");
        }
    }

    #[cfg(feature = "sqlite")]
    #[test]
    fn a_page_after_a_position_skips_the_numbers_a_journal_lacks() {
        // A journal put back from a store may lack numbers (entries
        // dropped unwritten).
        let journal = Journal::new("test");
        let gaps: Vec<JournalEntry> = (1..=20)
            .map(|n| {
                let mut c = capture(&format!("/api/gap/{n}"));
                c.seq = n * 3;
                c.entry()
            })
            .collect();
        journal.restore(&gaps, 60);
        let seqs = |page: Vec<JournalEntry>| page.iter().map(|e| e.seq).collect::<Vec<_>>();
        assert_eq!(seqs(journal.after(7, 3)), [9, 12, 15]);
        assert_eq!(seqs(journal.after(9, 2)), [12, 15]);
        assert_eq!(seqs(journal.after(58, 5)), [60]);
        assert!(journal.after(60, 5).is_empty());
    }

    #[test]
    fn an_entry_read_back_holds_the_room_it_needs() {
        let mut kept = capture("/api/kept?a=1");
        kept.set_body(b"{\"a\":1}");
        let entry = kept.entry();
        let back = Capture::from_entry(&entry);
        assert_eq!(back.text.capacity(), back.text.len(), "{:?}", back.text);
        assert_eq!(back.entry(), entry);
    }

    #[test]
    fn a_full_journal_writes_its_newest_entry_where_its_oldest_was() {
        let journal = Journal::new("test");
        assert_eq!(
            journal.lock().captures.capacity(),
            0,
            "an idle journal holds nothing"
        );
        for n in 0..(2 * CAPACITY + 7) {
            journal.record(capture(&format!("/api/{n}")));
            assert!(journal.lock().captures.capacity() <= CAPACITY);
        }
        let entries = journal.lock();
        assert_eq!(entries.captures.capacity(), CAPACITY);
        // One ring of exactly CAPACITY: the slot the oldest leaves is the
        // next one written.
        let slot = |c: &Capture| std::ptr::from_ref(c) as usize;
        let oldest = entries.captures.front().map(slot);
        drop(entries);
        journal.record(capture("/api/next"));
        assert_eq!(journal.lock().captures.back().map(slot), oldest);
        assert_eq!(journal.since(0, 1)[0].path, "/api/next");
    }

    #[test]
    fn a_journal_of_large_bodies_keeps_its_newest_whole_and_the_rest_cut() {
        use crate::domain::journal::{BODY_BUDGET, BODY_CUT};
        let journal = Journal::new("test");
        // Two bytes a character: a cut never splits one.
        let large = "é".repeat(32 * 1024);
        for n in 0..(CAPACITY + 3) {
            let mut big = capture(&format!("/api/{n}"));
            big.set_body(large.as_bytes());
            journal.record(big);
        }
        let entries = journal.lock();
        let kept: usize = entries.captures.iter().map(Capture::kept_body_len).sum();
        let whole: usize = entries
            .captures
            .iter()
            .skip(entries.cut)
            .map(Capture::kept_body_len)
            .sum();
        assert_eq!(whole, entries.body_bytes);
        assert!(whole <= BODY_BUDGET, "{whole}");
        assert!(kept <= BODY_BUDGET + CAPACITY * BODY_CUT, "{kept}");
        drop(entries);
        let all = journal.since(0, CAPACITY);
        let newest = all.last().expect("entries");
        assert_eq!(
            (newest.body.as_str(), newest.body_length),
            (large.as_str(), None)
        );
        assert_eq!(all[0].body, "é".repeat(BODY_CUT / 2));
        assert_eq!(all[0].body_length, Some(large.len()));
        let whole = all.iter().filter(|e| e.body_length.is_none()).count();
        assert_eq!(whole, BODY_BUDGET / large.len());
        // Forgotten, counted afresh: a small body stays whole.
        journal.clear();
        let mut small = capture("/api/small");
        small.set_body(b"{\"a\":1}");
        journal.record(small);
        assert_eq!(journal.since(0, 1)[0].body, "{\"a\":1}");
        assert_eq!(journal.lock().body_bytes, 7);
    }
}
