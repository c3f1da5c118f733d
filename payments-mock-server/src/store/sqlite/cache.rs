//! Transactions read lately, by id, in the process: a status poll reads
//! the same few transactions over and over, and this process is the file's
//! only writer (`open.rs` holds the owner lock), so a copy kept here is the
//! file's own as long as the writer drops it when it changes that row.
//!
//! The writer drops an id after the commit that changed it and before it
//! answers (a read that starts after a confirm was answered never sees the
//! copy from before it). A read that missed and went to the file keeps
//! what it read only if no change was committed while it read (the
//! generation did not move), so a copy older than a commit is never put
//! back after the writer dropped it.

use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex, PoisonError};

use lru::LruCache;
use uuid::Uuid;

use crate::domain::transaction::Record;

/// Copies kept at most (about 300 bytes each).
pub(super) const CACHED: usize = 4096;

#[derive(Debug)]
struct Inner {
    records: LruCache<Uuid, Arc<Record>>,
    /// Moves on every change the writer commits.
    generation: u64,
}

/// The copies, and the generation of the last change.
#[derive(Debug)]
pub(super) struct ReadCache(Mutex<Inner>);

impl Default for ReadCache {
    fn default() -> Self {
        Self(Mutex::new(Inner {
            records: LruCache::new(NonZeroUsize::new(CACHED).unwrap_or(NonZeroUsize::MIN)),
            generation: 0,
        }))
    }
}

impl ReadCache {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The copy of `id`, or the generation to hand to [`ReadCache::keep`]
    /// after reading the file.
    pub(super) fn get(&self, id: Uuid) -> Result<Arc<Record>, u64> {
        let mut inner = self.lock();
        match inner.records.get(&id) {
            Some(record) => Ok(Arc::clone(record)),
            None => Err(inner.generation),
        }
    }

    /// Keeps `record`, read from the file when the generation was
    /// `generation`, unless a change was committed since.
    pub(super) fn keep(&self, record: Arc<Record>, generation: u64) {
        let mut inner = self.lock();
        if inner.generation == generation {
            inner.records.put(record.id, record);
        }
    }

    /// The writer changed `id` (committed, not yet answered).
    pub(super) fn changed(&self, id: Uuid) {
        let mut inner = self.lock();
        inner.generation += 1;
        inner.records.pop(&id);
    }

    /// The writer changed rows it cannot name cheaply (a payer's decision
    /// by page token, a reset).
    pub(super) fn changed_all(&self) {
        let mut inner = self.lock();
        inner.generation += 1;
        inner.records.clear();
    }

    /// How many copies are kept.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.lock().records.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::sample as record;

    #[test]
    fn a_read_that_raced_a_change_is_not_kept() {
        let cache = ReadCache::default();
        let r = Arc::new(record());
        let Err(generation) = cache.get(r.id) else {
            panic!("empty at first");
        };
        // The writer commits a change to any row while the read is out.
        cache.changed(uuid::Uuid::nil());
        cache.keep(Arc::clone(&r), generation);
        assert_eq!(cache.len(), 0, "older than a commit: never kept");
        let Err(generation) = cache.get(r.id) else {
            panic!("still not there");
        };
        cache.keep(Arc::clone(&r), generation);
        assert!(cache.get(r.id).is_ok(), "kept when nothing changed");
        cache.changed(r.id);
        assert!(cache.get(r.id).is_err(), "dropped when its row changes");
        cache.keep(Arc::clone(&r), generation);
        assert!(cache.get(r.id).is_err(), "the stale read is not put back");
        let Err(generation) = cache.get(r.id) else {
            panic!("dropped");
        };
        cache.keep(r, generation);
        cache.changed_all();
        assert_eq!(cache.len(), 0);
    }
}
