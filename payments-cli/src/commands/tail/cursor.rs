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

use std::collections::{HashSet, VecDeque};

/// Entries the mock's journal keeps (CONTRACT section 10).
pub const JOURNAL_KEEPS: u64 = 1000;
/// The proxy's seqs remembered: twice what it keeps, so that any exchange
/// it may list again is still known.
const REMEMBERED: usize = 2000;

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
    /// The proxy's seqs read, oldest first, and as a set.
    order: VecDeque<u64>,
    seen: HashSet<u64>,
}

impl Cursor {
    /// From the start, showing what is numbered after `since`.
    #[must_use]
    pub fn new(proxy: bool, since: u64) -> Self {
        Self {
            proxy,
            // The proxy's `after` is in the order judged: from its start.
            after: if proxy { 0 } else { since },
            read_here: false,
            since,
            order: VecDeque::new(),
            seen: HashSet::new(),
        }
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
        *self = Self::new(self.proxy, 0);
    }

    /// The seqs a page of the mock's journal skipped that it can no
    /// longer hold: those between `after` and `first` (the page's first
    /// seq) that are `JOURNAL_KEEPS` or more below `newest` (the newest
    /// seq known). `None` on the proxy, from the start, or when nothing
    /// is known to be lost.
    #[must_use]
    pub fn lost(&self, first: u64, newest: u64) -> Option<(u64, u64)> {
        if self.proxy || self.after == 0 || first <= self.after.saturating_add(1) {
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
    pub fn advance(&mut self, seqs: &[u64]) -> Vec<bool> {
        let Some(&last) = seqs.last() else {
            return Vec::new();
        };
        let shown = seqs
            .iter()
            .map(|&seq| {
                if self.proxy {
                    self.remember(seq) && seq > self.since
                } else {
                    seq > self.after.max(self.since)
                }
            })
            .collect();
        // The proxy's `after` is the last item's seq, whatever its number.
        self.after = if self.proxy {
            last
        } else {
            last.max(self.after)
        };
        self.read_here = true;
        shown
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

/// The note for a journal that went back.
pub const RESTARTED: &str =
    "note: the server's journal started again (restarted or reset?); reading from its start";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gap_is_said_only_for_what_the_journal_cannot_hold() {
        let mut cursor = Cursor::new(false, 26);
        // The admin key: the journal keeps 2311..=3310, the page starts
        // at its oldest.
        assert_eq!(cursor.lost(2311, 3310), Some((27, 2310)));
        // A merchant's key: others' entries between, nothing evicted.
        assert_eq!(cursor.lost(40, 41), None);
        // Partly evicted: only what the journal cannot hold.
        assert_eq!(cursor.lost(2000, 1500), Some((27, 500)));
        assert_eq!(cursor.lost(27, 5000), None, "no gap");
        assert_eq!(
            Cursor::new(false, 0).lost(2311, 3310),
            None,
            "from the start"
        );
        assert_eq!(Cursor::new(true, 26).lost(2311, 3310), None, "the proxy");
        cursor.advance(&[3310]);
        assert!(cursor.read_here());
        assert_eq!(
            lost_note(27, 2310),
            "note: seq 27–2310 are no longer kept by the server (it keeps the last 1,000)"
        );
        assert!(lost_note(5, 5).starts_with("note: seq 5 is no longer"));
    }

    #[test]
    fn the_proxy_shows_a_late_exchange_once_and_since_by_seq() {
        let mut cursor = Cursor::new(true, 3007);
        assert_eq!(cursor.after, 0, "from the start of the listing");
        // 3008 judged before 3007: only 3008 is after --since 3007.
        assert_eq!(cursor.advance(&[3006, 3008, 3007]), [false, true, false]);
        assert_eq!(cursor.after, 3007);
        // Listed again (its cursor forgotten), and a late one.
        assert_eq!(cursor.advance(&[3008, 3010, 3009]), [false, true, true]);
        cursor.restart();
        assert_eq!(cursor.after, 0);
        assert!(!cursor.read_here());
        assert_eq!(cursor.advance(&[1, 2]), [true, true], "new numbers");
    }

    #[test]
    fn the_mock_never_shows_a_seq_twice() {
        let mut cursor = Cursor::new(false, 0);
        assert!(!cursor.read_here());
        assert_eq!(cursor.advance(&[1, 2]), [true, true]);
        assert_eq!(cursor.advance(&[2, 3]), [false, true]);
        assert_eq!(cursor.after, 3);
    }

    #[test]
    fn the_proxy_forgets_only_the_oldest() {
        let mut cursor = Cursor::new(true, 0);
        let seqs: Vec<u64> = (1..=3000).collect();
        assert!(cursor.advance(&seqs).iter().all(|s| *s));
        assert_eq!(cursor.seen.len(), REMEMBERED);
        assert_eq!(cursor.advance(&[3000, 1000]), [false, true]);
    }
}
