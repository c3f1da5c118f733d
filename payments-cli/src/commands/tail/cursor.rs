//! Where `tail` is in a journal, and what a page says about what it
//! missed.
//!
//! The mock's journal (the root's, a sandbox's) numbers its entries one
//! after another and pages in seq order: a page after `SEQ` that does not
//! start at `SEQ + 1` lost entries, evicted (it keeps the last 1,000) or
//! reset. A merchant's key sees only its merchant's entries, so its pages
//! skip seqs of others as a matter of course: a gap is said only for the
//! seqs the journal can no longer hold whoever reads it (1,000 or more
//! below its newest), which for the admin key is the whole gap.
//!
//! The proxy's listing pages in the order exchanges were judged, not by
//! seq: `after` is its paging cursor only (from the start), `--since` is
//! applied here (`seq > SINCE`), and the seqs read are remembered so that
//! an exchange judged late is shown once, and never twice.
//!
//! A journal that started again (a mock or a proxy restarted numbers from
//! 1 again) may already number past the last entry read by the next read:
//! so each page is asked so that it starts with the last entry read again
//! (the mock's from one before it, the proxy's after the exchange judged
//! before it: [`Cursor::asked`]), the same entry ([`Mark`]), or another
//! (started again), or without it (then the journal's start says whether
//! it went back: [`Cursor::started_again`], the proxy's `relist.rs`).

use std::collections::{HashSet, VecDeque};
use std::hash::{DefaultHasher, Hash as _, Hasher as _};

use super::entry::Entry;

/// Entries the mock's journal keeps (CONTRACT section 10).
pub const JOURNAL_KEEPS: u64 = 1000;
/// The proxy's seqs remembered: twice what it keeps, so that any exchange
/// it may list again is still known.
const REMEMBERED: usize = 2000;

/// An entry (the mock's, or the proxy's exchange), told from another
/// numbered the same: its seq and a digest of the fields that never
/// change once it is written (`requestId`, `at` or `time`, `method`,
/// `path`; not its whole JSON, in case a field is filled in later).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mark {
    pub seq: u64,
    digest: u64,
}

impl From<&Entry> for Mark {
    fn from(entry: &Entry) -> Self {
        let mut hasher = DefaultHasher::new();
        (
            entry.request_id.as_deref(),
            entry.time.as_deref(),
            entry.method.as_str(),
            entry.path.as_str(),
        )
            .hash(&mut hasher);
        Self {
            seq: entry.seq,
            digest: hasher.finish(),
        }
    }
}

#[cfg(test)]
impl Mark {
    /// An entry numbered `seq` of the fields `digest` stands for.
    pub fn test(seq: u64, digest: u64) -> Self {
        Self { seq, digest }
    }
}

/// What a page asked with [`Cursor::asked`] starts with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overlap {
    /// Not asked so (nothing read yet, `--since`).
    None,
    /// The last entry read: already shown.
    Same,
    /// Another entry with its seq: the journal started again.
    Other,
    /// Not the last entry read: evicted, or the journal started again (or
    /// a merchant's key no longer sees it; on the proxy, the exchange
    /// judged before it is no longer kept).
    Missing,
}

/// The next page's `after`, and what was read.
#[derive(Debug)]
pub struct Cursor {
    proxy: bool,
    /// The next page's `after`.
    pub after: u64,
    /// `after` is the seq of an entry this server gave (not `--since`).
    read_here: bool,
    /// Only entries numbered above it are shown.
    since: u64,
    /// No `--since`: read from what the journal keeps, so nothing before
    /// it was asked for (an explicit `--since 0` asks for seq 1 on).
    from_start: bool,
    /// The proxy's seqs read, oldest first, and as a set.
    order: VecDeque<u64>,
    seen: HashSet<u64>,
    /// The entries read, the last `JOURNAL_KEEPS` (any it may still
    /// hold), oldest first; the last is the next page's first.
    marks: VecDeque<Mark>,
    /// The proxy's `after` whose page starts with the last exchange read
    /// (the seq of the one judged before it, or where it was read from).
    before: u64,
    /// The proxy's `after` whose page starts with the first exchange of
    /// the page being read ([`Cursor::from`]).
    from: u64,
    /// The place of the last exchange read in the proxy's order judged,
    /// when it said ([`Cursor::placed`]).
    judged: Option<u64>,
}

impl Cursor {
    /// Showing what is numbered after `since` (`--since`), or from the
    /// start of what the journal keeps (none).
    #[must_use]
    pub fn new(proxy: bool, since: Option<u64>) -> Self {
        let from_start = since.is_none();
        let since = since.unwrap_or(0);
        Self {
            proxy,
            // The proxy's `after` is in the order judged: from its start.
            after: if proxy { 0 } else { since },
            read_here: false,
            since,
            from_start,
            order: VecDeque::new(),
            seen: HashSet::new(),
            marks: VecDeque::new(),
            before: 0,
            from: 0,
            judged: None,
        }
    }

    /// The last entry read, when it is where the next page starts.
    #[must_use]
    pub fn last(&self) -> Option<Mark> {
        self.marks
            .back()
            .copied()
            .filter(|m| self.read_here && m.seq == self.after && m.seq > 0)
    }

    /// The `after` to ask the next page with, so that the page starts
    /// with the last entry read again: on the mock one before it, on the
    /// proxy (in the order judged) the seq of the exchange judged before
    /// it, or the `after` it was first read with (0: the listing's start,
    /// or a seq no longer kept: those numbered above it).
    #[must_use]
    pub fn asked(&self) -> u64 {
        match self.last() {
            Some(_) if self.proxy => self.before,
            Some(m) => m.seq - 1,
            None => self.after,
        }
    }

    /// The proxy's `afterJudged` to ask the next page with, so that it
    /// starts with the last exchange read again: the place before it, when
    /// the proxy said its place.
    #[must_use]
    pub fn asked_judged(&self) -> Option<u64> {
        let place = self
            .judged
            .filter(|_| self.proxy && self.last().is_some())?;
        Some(place.saturating_sub(1))
    }

    /// The place of the last exchange read (the page just read's last),
    /// when the proxy said it.
    pub fn placed(&mut self, judged: Option<u64>) {
        self.judged = judged;
    }

    /// How many exchanges judged after the last one read the proxy no
    /// longer keeps, its oldest kept judged `oldest`th: none when it did
    /// not say, or nothing was lost.
    #[must_use]
    pub fn lost_judged(&self, oldest: Option<u64>) -> Option<u64> {
        let read = self.judged.filter(|_| self.proxy)?;
        oldest?
            .checked_sub(read.checked_add(1)?)
            .filter(|lost| *lost > 0)
    }

    /// The page about to be read over is what `after` lists on the
    /// proxy (from its first item on), so that the next one can be asked
    /// to start with its last item.
    pub fn from(&mut self, after: u64) {
        self.from = after;
    }

    /// What the page asked with [`Cursor::asked`] starts with (`first`).
    #[must_use]
    pub fn overlap(&self, first: Option<Mark>) -> Overlap {
        let Some(last) = self.last() else {
            return Overlap::None;
        };
        match first {
            Some(first) if first == last => Overlap::Same,
            Some(first) if first.seq == last.seq => Overlap::Other,
            _ => Overlap::Missing,
        }
    }

    /// Whether the journal may still hold the last entry read, it being
    /// missing: something is known (`newest`, the newest seq this key
    /// sees), and it is fewer than `JOURNAL_KEEPS` above it (else it may
    /// be evicted: [`Cursor::lost`] says what).
    #[must_use]
    pub fn could_hold(&self, newest: Option<u64>) -> bool {
        newest.is_some_and(|n| n < self.after.saturating_add(JOURNAL_KEEPS))
    }

    /// The seq the journal is read from (`--since`, or 0).
    #[must_use]
    pub fn start(&self) -> u64 {
        self.since
    }

    /// Whether the journal started again, the last entry read missing
    /// from it: `start`, its first page from [`Cursor::start`], holds an
    /// entry numbered up to the last one read, and none of them is one
    /// read (a merchant's key may no longer see an entry it saw: an entry
    /// read still there is the same journal); or its newest is below the
    /// last one read.
    #[must_use]
    pub fn started_again(&self, start: &[Mark], newest: Option<u64>) -> bool {
        let mut below = start.iter().filter(|m| m.seq <= self.after).peekable();
        let other = below.peek().is_some();
        if below.any(|m| self.marks.contains(m)) {
            return false;
        }
        other || newest.is_some_and(|n| n < self.after)
    }

    /// Whether `after` is a seq the server gave, so that a journal whose
    /// newest is below it went back (a `--since` beyond the newest is
    /// only a wait).
    #[must_use]
    pub fn read_here(&self) -> bool {
        self.read_here && self.after > 0
    }

    /// The journal started again: from its start, everything shown.
    pub fn restart(&mut self) {
        *self = Self::new(self.proxy, None);
    }

    /// The seqs a page of the mock's journal skipped that it can no
    /// longer hold: those between `after` and `first` (the page's first
    /// seq) that are `JOURNAL_KEEPS` or more below `newest` (the newest
    /// seq known). `None` on the proxy, from the start (without
    /// `--since`: nothing before what the journal keeps was asked for), or
    /// when nothing is known to be lost.
    #[must_use]
    pub fn lost(&self, first: u64, newest: u64) -> Option<(u64, u64)> {
        if self.proxy
            || (self.from_start && self.after == 0)
            || first <= self.after.saturating_add(1)
        {
            return None;
        }
        let low = self.after + 1;
        let high = (first - 1).min(newest.saturating_sub(JOURNAL_KEEPS));
        (high >= low).then_some((low, high))
    }

    /// Moves past `seqs` (a page, in the server's order); which of them
    /// are new and numbered after `--since`, in order. On the mock, an
    /// entry at or below `after` (a server that did not page by it) is
    /// not shown again.
    pub fn advance(&mut self, marks: &[Mark]) -> Vec<bool> {
        let Some(last) = marks.last().map(|m| m.seq) else {
            return Vec::new();
        };
        let shown = marks
            .iter()
            .map(|&mark| {
                if self.proxy {
                    self.mark(mark);
                    self.remember(mark.seq) && mark.seq > self.since
                } else if mark.seq > self.after.max(self.since) {
                    self.mark(mark);
                    true
                } else {
                    false
                }
            })
            .collect();
        // The proxy's `after` is the last item's seq, whatever its number;
        // the one judged before it is asked after to list it first.
        self.after = if self.proxy {
            self.before = match marks {
                [.., before, _] => before.seq,
                _ => self.from,
            };
            last
        } else {
            last.max(self.after)
        };
        self.read_here = true;
        shown
    }

    /// Remembers an entry of the mock's read.
    fn mark(&mut self, mark: Mark) {
        self.marks.push_back(mark);
        if self.marks.len() as u64 > JOURNAL_KEEPS {
            self.marks.pop_front();
        }
    }

    /// Whether `seq` is read for the first time (the proxy).
    fn remember(&mut self, seq: u64) -> bool {
        if !self.seen.insert(seq) {
            return false;
        }
        self.order.push_back(seq);
        if self.order.len() > REMEMBERED
            && let Some(old) = self.order.pop_front()
        {
            self.seen.remove(&old);
        }
        true
    }
}

/// The note for seqs `low` to `high` lost.
#[must_use]
pub fn lost_note(low: u64, high: u64) -> String {
    let seqs = if low == high {
        format!("seq {low} is")
    } else {
        format!("seq {low}–{high} are")
    };
    format!("note: {seqs} no longer kept by the server (it keeps the last 1,000)")
}

/// The note for `count` exchanges judged after exchange `seq` (the last
/// one read) that the proxy no longer keeps.
#[must_use]
pub fn lost_exchanges_note(count: u64, seq: u64) -> String {
    let exchanges = if count == 1 {
        format!("1 exchange judged after seq {seq} is")
    } else {
        format!("{count} exchanges judged after seq {seq} are")
    };
    format!("note: {exchanges} no longer kept by the proxy (it keeps the last 1,000)")
}

/// The note for a journal that went back.
pub const RESTARTED: &str =
    "note: the server's journal started again (restarted or reset?); reading from its start";

#[cfg(test)]
mod tests {
    use super::*;

    /// Entries numbered `seqs`.
    fn marks(seqs: &[u64]) -> Vec<Mark> {
        seqs.iter().map(|&seq| Mark { seq, digest: seq }).collect()
    }

    #[test]
    fn a_gap_is_said_only_for_what_the_journal_cannot_hold() {
        let mut cursor = Cursor::new(false, Some(26));
        // The admin key: the journal keeps 2311..=3310, the page starts
        // at its oldest.
        assert_eq!(cursor.lost(2311, 3310), Some((27, 2310)));
        // A merchant's key: others' entries between, nothing evicted.
        assert_eq!(cursor.lost(40, 41), None);
        // Partly evicted: only what the journal cannot hold.
        assert_eq!(cursor.lost(2000, 1500), Some((27, 500)));
        assert_eq!(cursor.lost(27, 5000), None, "no gap");
        assert_eq!(
            Cursor::new(false, None).lost(2311, 3310),
            None,
            "from the start"
        );
        assert_eq!(
            Cursor::new(false, Some(0)).lost(2311, 3310),
            Some((1, 2310)),
            "--since 0: from seq 1"
        );
        assert_eq!(
            Cursor::new(true, Some(26)).lost(2311, 3310),
            None,
            "the proxy"
        );
        cursor.advance(&marks(&[3310]));
        assert!(cursor.read_here());
        assert_eq!(
            lost_note(27, 2310),
            "note: seq 27–2310 are no longer kept by the server (it keeps the last 1,000)"
        );
        assert!(lost_note(5, 5).starts_with("note: seq 5 is no longer"));
    }

    #[test]
    fn the_proxy_says_how_many_judged_after_the_last_one_read_it_lost() {
        let mut cursor = Cursor::new(true, None);
        assert_eq!(cursor.asked_judged(), None, "nothing read");
        cursor.advance(&marks(&[1, 3, 2]));
        cursor.placed(Some(3));
        // The next page starts with 2, the third judged, again.
        assert_eq!(cursor.asked_judged(), Some(2));
        assert_eq!(cursor.lost_judged(Some(1)), None, "all kept");
        assert_eq!(cursor.lost_judged(Some(4)), None, "the next one kept");
        assert_eq!(cursor.lost_judged(Some(41)), Some(37));
        assert_eq!(cursor.lost_judged(None), None, "an older proxy");
        cursor.placed(None);
        assert_eq!(cursor.lost_judged(Some(41)), None, "no place known");
        assert_eq!(cursor.asked_judged(), None);
        let mut mock = Cursor::new(false, None);
        mock.advance(&marks(&[1]));
        mock.placed(Some(1));
        assert_eq!(
            (mock.asked_judged(), mock.lost_judged(Some(9))),
            (None, None)
        );
        assert_eq!(
            lost_exchanges_note(37, 812),
            "note: 37 exchanges judged after seq 812 are no longer kept by the proxy \
             (it keeps the last 1,000)"
        );
        assert!(lost_exchanges_note(1, 5).starts_with("note: 1 exchange judged after seq 5 is no"));
    }

    #[test]
    fn the_proxy_shows_a_late_exchange_once_and_since_by_seq() {
        let mut cursor = Cursor::new(true, Some(3007));
        assert_eq!(cursor.after, 0, "from the start of the listing");
        // 3008 judged before 3007: only 3008 is after --since 3007.
        assert_eq!(
            cursor.advance(&marks(&[3006, 3008, 3007])),
            [false, true, false]
        );
        assert_eq!(cursor.after, 3007);
        // Listed again (its cursor forgotten), and a late one.
        assert_eq!(
            cursor.advance(&marks(&[3008, 3010, 3009])),
            [false, true, true]
        );
        cursor.restart();
        assert_eq!(cursor.after, 0);
        assert!(!cursor.read_here());
        assert_eq!(cursor.advance(&marks(&[1, 2])), [true, true], "new numbers");
    }

    #[test]
    fn the_mock_never_shows_a_seq_twice() {
        let mut cursor = Cursor::new(false, None);
        assert!(!cursor.read_here());
        assert_eq!(cursor.advance(&marks(&[1, 2])), [true, true]);
        assert_eq!(cursor.advance(&marks(&[2, 3])), [false, true]);
        assert_eq!(cursor.after, 3);
    }

    #[test]
    fn the_proxy_forgets_only_the_oldest() {
        let mut cursor = Cursor::new(true, None);
        let seqs: Vec<u64> = (1..=3000).collect();
        assert!(cursor.advance(&marks(&seqs)).iter().all(|s| *s));
        assert_eq!(cursor.seen.len(), REMEMBERED);
        assert_eq!(cursor.advance(&marks(&[3000, 1000])), [false, true]);
    }
}

#[cfg(test)]
mod overlap {
    use super::*;

    /// Entries numbered `seqs`, of one journal life (`life`).
    fn of(life: u64, seqs: &[u64]) -> Vec<Mark> {
        seqs.iter()
            .map(|&seq| Mark {
                seq,
                digest: life * 1_000_000 + seq,
            })
            .collect()
    }

    #[test]
    fn a_page_is_asked_from_one_before_the_last_entry_read() {
        let mut cursor = Cursor::new(false, Some(3));
        assert_eq!(cursor.asked(), 3, "--since: nothing read to start with");
        assert_eq!(cursor.overlap(of(1, &[4]).first().copied()), Overlap::None);
        assert_eq!(cursor.advance(&of(1, &[4, 5])), [true, true]);
        assert_eq!((cursor.after, cursor.asked()), (5, 4));
        // Again: it, and nothing new.
        assert_eq!(
            cursor.overlap(of(1, &[5, 6]).first().copied()),
            Overlap::Same
        );
        assert_eq!(cursor.advance(&of(1, &[6])), [true]);
        assert_eq!(cursor.asked(), 5);
        // Another entry numbered 6: the journal started again.
        assert_eq!(cursor.overlap(of(2, &[6]).first().copied()), Overlap::Other);
        assert_eq!(
            cursor.overlap(of(1, &[7]).first().copied()),
            Overlap::Missing
        );
        assert_eq!(cursor.overlap(None), Overlap::Missing, "an empty page");
        cursor.restart();
        assert_eq!((cursor.asked(), cursor.overlap(None)), (0, Overlap::None));
        // The proxy pages in the order judged: after the one judged
        // before the last one read.
        let mut proxy = Cursor::new(true, None);
        assert_eq!((proxy.asked(), proxy.overlap(None)), (0, Overlap::None));
        proxy.advance(&of(1, &[1, 3, 2]));
        assert_eq!((proxy.asked(), proxy.after), (3, 2));
        assert_eq!(proxy.overlap(of(1, &[2]).first().copied()), Overlap::Same);
        assert_eq!(proxy.overlap(of(2, &[2]).first().copied()), Overlap::Other);
        assert_eq!(
            proxy.overlap(of(1, &[4]).first().copied()),
            Overlap::Missing
        );
        // One more: after the last one read.
        proxy.from(2);
        proxy.advance(&of(1, &[4]));
        assert_eq!((proxy.asked(), proxy.after), (2, 4));
        // One, read from the start.
        proxy.restart();
        proxy.from(0);
        proxy.advance(&of(2, &[1]));
        assert_eq!(
            (proxy.asked(), proxy.last()),
            (0, of(2, &[1]).first().copied())
        );
    }

    #[test]
    fn a_missing_entry_is_a_journal_started_again_only_on_evidence() {
        let mut cursor = Cursor::new(false, None);
        cursor.advance(&of(1, &[1, 2, 3, 4, 5]));
        // Evicted perhaps (1,000 or more above it): the loss note's.
        assert!(!cursor.could_hold(Some(1005)));
        assert!(cursor.could_hold(Some(1004)));
        assert!(!cursor.could_hold(None), "nothing seen: nothing to tell");
        // Restarted, and numbered past the cursor: its start is new.
        assert!(cursor.started_again(&of(2, &[1, 2, 3, 4, 5, 6]), Some(20)));
        // Its start is what was read (a merchant's key no longer sees the
        // last one): the same journal.
        assert!(!cursor.started_again(&of(1, &[2, 3]), Some(3)));
        assert!(!cursor.started_again(&[of(2, &[1])[0], of(1, &[3])[0]], Some(9)));
        // Nothing up to the cursor (emptied but numbered on, or evicted
        // for what this key sees): nothing was missed.
        assert!(!cursor.started_again(&of(2, &[8, 9]), Some(9)));
        assert!(!cursor.started_again(&[], None));
        // Ends below the cursor, nothing after --since on its start.
        assert!(cursor.started_again(&[], Some(2)));
    }

    #[test]
    fn since_is_no_evidence_and_only_the_last_1000_are_remembered() {
        let mut cursor = Cursor::new(false, Some(10));
        cursor.advance(&of(1, &[11, 12]));
        assert_eq!(cursor.start(), 10);
        // Read from --since: 11 and 12 are what was read.
        assert!(!cursor.started_again(&of(1, &[11]), Some(12)));
        assert!(cursor.started_again(&of(2, &[11]), Some(12)));
        let mut cursor = Cursor::new(false, None);
        let seqs: Vec<u64> = (1..=1500).collect();
        cursor.advance(&of(1, &seqs));
        assert_eq!(cursor.marks.len(), 1000);
        assert_eq!(cursor.marks.front().map(|m| m.seq), Some(501));
        // Seen twice (a server that did not page by `after`): one mark.
        cursor.advance(&of(1, &[1500, 1501]));
        assert_eq!(cursor.marks.iter().filter(|m| m.seq == 1500).count(), 1);
    }
}
