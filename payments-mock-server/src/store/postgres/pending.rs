//! This replica's journal entries not yet written ([`Pending`]), each
//! stamped by the replica's capture clock when its request is answered,
//! and what one write takes of them ([`Batch`]). `journal.rs` writes and
//! numbers them.

use std::collections::VecDeque;

use uuid::Uuid;

use crate::domain::journal::{CAPACITY, JournalEntry};

/// This replica's journal entries not yet written, and how many were
/// dropped unwritten (the oldest, past [`CAPACITY`] while the database was
/// slow or gone, and those served before a reset): their numbers are still
/// taken, so entries are numbered as every store numbers them, one per
/// request.
///
/// Each entry is stamped when it is captured (when its request is
/// answered) by this replica's capture clock ([`Pending::stamp`]): the
/// journal is numbered in stamp order across replicas, so in the order
/// requests were answered.
#[derive(Debug, Default)]
pub(super) struct Pending {
    /// Oldest first, at most [`CAPACITY`].
    entries: VecDeque<Held>,
    skipped: u64,
    /// The newest reset epoch this replica knows of: a new entry carries
    /// it.
    epoch: u64,
    /// The last stamp given (an entry's or a write's watermark).
    clock: i64,
}

/// A pending entry: its sandbox (nil: the root), the root's reset epoch
/// it was captured under, and its stamp.
#[derive(Debug)]
pub(super) struct Held {
    pub(super) sandbox: Uuid,
    pub(super) epoch: u64,
    pub(super) stamp: i64,
    pub(super) entry: JournalEntry,
}

/// What one write takes from [`Pending`].
#[derive(Debug, Default)]
pub(super) struct Batch {
    pub(super) entries: VecDeque<Held>,
    pub(super) skipped: u64,
}

/// Now by the wall clock, in nanoseconds since the epoch: what stamps are
/// made of. Replicas on one machine share it; on several, stamps are as
/// good as their clocks agree.
pub(super) fn wall_clock() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}

impl Pending {
    /// Nothing pending, in the reset epoch `epoch`; every stamp given from
    /// now on is later than `clock`.
    pub(super) fn new(epoch: u64, clock: i64) -> Self {
        Self {
            epoch,
            clock,
            ..Self::default()
        }
    }

    /// The next stamp: the wall clock, but always later than the last
    /// stamp given (a clock set back does not reorder this replica's
    /// entries), so every stamp is given once.
    fn stamp(&mut self) -> i64 {
        self.clock = self.clock.saturating_add(1).max(wall_clock());
        self.clock
    }

    /// Captures `entry` (its request answered) in `sandbox`, stamped now.
    pub(super) fn push(&mut self, sandbox: Uuid, entry: JournalEntry) {
        let (epoch, stamp) = (self.epoch, self.stamp());
        self.push_held(Held {
            sandbox,
            epoch,
            stamp,
            entry,
        });
    }

    fn push_held(&mut self, held: Held) {
        if self.entries.len() == CAPACITY {
            self.entries.pop_front();
            self.skipped += 1;
        }
        self.entries.push_back(held);
    }

    /// Whether a write would have nothing to write.
    pub(super) fn is_empty(&self) -> bool {
        self.entries.is_empty() && self.skipped == 0
    }

    /// Learns of the root's reset epoch `epoch` (read from the database):
    /// the root's entries captured under an older one were served before
    /// that reset, and are dropped instead of written after it. (A
    /// sandbox's reset is fenced by its stamp: [`Pending::reset_sandbox`].)
    pub(super) fn adopt(&mut self, epoch: u64) {
        self.epoch = self.epoch.max(epoch);
        let before = self.entries.len();
        let current = self.epoch;
        self.entries
            .retain(|h| !h.sandbox.is_nil() || h.epoch >= current);
        self.skipped += (before - self.entries.len()) as u64;
    }

    /// A stamp for a sandbox's reset, answered by this replica: every
    /// entry captured before it was served before the reset.
    pub(super) fn reset_stamp(&mut self) -> i64 {
        self.stamp()
    }

    /// The sandbox `sandbox` was reset at `stamp` (or removed: `i64::MAX`):
    /// its entries captured before are dropped (their numbers are not
    /// taken: a sandbox's journal is numbered across sandboxes, with gaps).
    pub(super) fn reset_sandbox(&mut self, sandbox: Uuid, stamp: i64) {
        self.entries
            .retain(|h| h.sandbox != sandbox || h.stamp >= stamp);
    }

    /// A watermark, then everything, for one write: every entry captured
    /// before it is in the batch (or was in an earlier one), and every
    /// entry captured after it has a later stamp.
    pub(super) fn take(&mut self) -> (i64, Batch) {
        let watermark = self.stamp();
        let batch = Batch {
            entries: std::mem::take(&mut self.entries),
            skipped: std::mem::take(&mut self.skipped),
        };
        (watermark, batch)
    }

    /// Puts back what a failed write took, before what came since.
    pub(super) fn put_back(&mut self, taken: Batch) {
        let newer = std::mem::replace(&mut self.entries, taken.entries);
        self.skipped += taken.skipped;
        for held in newer {
            self.push_held(held);
        }
        self.adopt(self.epoch);
    }

    /// A reset answered by this replica, which moved the epoch to `epoch`:
    /// what is pending was served before it. The numbers go on (the
    /// root's dropped entries' stay taken), after `POST /_mock/reset` and
    /// after `--fresh`, which also drops the sandboxes' entries (the
    /// sandboxes are gone). The capture clock goes on either way.
    pub(super) fn reset(&mut self, epoch: u64, how: Clear) {
        if how == Clear::Erase {
            self.entries.retain(|h| h.sandbox.is_nil());
        }
        self.adopt(epoch);
    }
}

/// How much of the whole state a clear empties; the journal's numbers go
/// on either way (`seq` only grows across the whole service).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Clear {
    /// `POST /_mock/reset`: the root.
    Reset,
    /// `--fresh`: everything, sandboxes and settings too; refused while
    /// another replica is live.
    Erase,
}
