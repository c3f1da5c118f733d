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

/// Copies kept at most (about 300 bytes each)...
pub(super) const CACHED: usize = 4096;

/// ...and at most this many bytes of them: a transaction can carry tens of
/// KiB of extra properties, and 4,096 of those would pin hundreds of MiB.
pub(super) const CACHED_BYTES: usize = 8 << 20;

#[derive(Debug)]
struct Inner {
    records: LruCache<Uuid, Arc<Record>>,
    /// The [`weight`] of what `records` holds.
    bytes: usize,
    /// Moves on every change the writer commits.
    generation: u64,
}

/// About what a copy holds: the record itself and its texts that can be
/// long (the fields are bounded except the extra properties, which only
/// the body limit bounds).
fn weight(record: &Record) -> usize {
    let text = |t: Option<&str>| t.map_or(0, str::len);
    let rare = record.fields.rare.as_deref().map_or(0, |r| {
        text(r.description.as_deref())
            + text(r.device_id.as_deref())
            + text(r.return_url.as_deref())
            + text(r.extra_properties.as_deref())
    });
    let confirmation = record.confirmation.as_deref().map_or(0, |c| {
        text(c.provider_reference.as_deref()) + text(c.extra_properties.as_deref())
    });
    std::mem::size_of::<Record>()
        + record.fields.reference_no.len()
        + text(record.fields.payer_id.as_deref())
        + rare
        + confirmation
}

/// The copies, and the generation of the last change.
#[derive(Debug)]
pub(super) struct ReadCache(Mutex<Inner>);

impl Default for ReadCache {
    fn default() -> Self {
        Self(Mutex::new(Inner {
            records: LruCache::new(NonZeroUsize::new(CACHED).unwrap_or(NonZeroUsize::MIN)),
            bytes: 0,
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
        let adding = weight(&record);
        if inner.generation != generation || adding > CACHED_BYTES {
            return;
        }
        inner.bytes += adding;
        // The copy it replaced, or the least recently used one it pushed out.
        if let Some((_, out)) = inner.records.push(record.id, record) {
            inner.bytes -= weight(&out);
        }
        while inner.bytes > CACHED_BYTES {
            let Some((_, out)) = inner.records.pop_lru() else {
                break;
            };
            inner.bytes -= weight(&out);
        }
    }

    /// The writer changed `id` (committed, not yet answered).
    pub(super) fn changed(&self, id: Uuid) {
        let mut inner = self.lock();
        inner.generation += 1;
        if let Some(out) = inner.records.pop(&id) {
            inner.bytes -= weight(&out);
        }
    }

    /// The writer changed rows it cannot name cheaply (a payer's decision
    /// by page token, a reset).
    pub(super) fn changed_all(&self) {
        let mut inner = self.lock();
        inner.generation += 1;
        inner.records.clear();
        inner.bytes = 0;
    }

    /// How many copies are kept.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.lock().records.len()
    }

    /// The weight of the copies kept.
    #[cfg(test)]
    fn bytes(&self) -> usize {
        self.lock().bytes
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
        assert_eq!(cache.bytes(), 0);
    }

    #[test]
    fn large_copies_are_bounded_by_bytes_as_well_as_by_count() {
        let cache = ReadCache::default();
        let large = |n: u128| {
            let mut r = record();
            r.id = Uuid::from_u128(n);
            Arc::make_mut(r.fields.rare.get_or_insert_with(Arc::default)).extra_properties =
                Some("x".repeat(60 * 1024).into_boxed_str());
            Arc::new(r)
        };
        for n in 0..1_000 {
            let r = large(n);
            let Err(generation) = cache.get(r.id) else {
                panic!("new");
            };
            cache.keep(r, generation);
            assert!(cache.bytes() <= CACHED_BYTES);
        }
        let kept = cache.len();
        assert!(kept > 100 && kept < 200, "{kept} copies of 60 KiB in 8 MiB");
        assert!(cache.get(Uuid::from_u128(999)).is_ok(), "the newest stays");
        assert!(cache.get(Uuid::from_u128(0)).is_err(), "the oldest went");
        // Replacing a copy and dropping one keep the count right.
        let again = large(999);
        let Err(generation) = cache.get(Uuid::from_u128(5)) else {
            panic!("gone");
        };
        cache.keep(again, generation);
        let before = cache.bytes();
        cache.changed(Uuid::from_u128(999));
        assert_eq!(cache.bytes(), before - weight(&large(999)));
        // Small ones still fill the count.
        for n in 0..(CACHED as u128 + 10) {
            let mut r = record();
            r.id = Uuid::from_u128(10_000 + n);
            let Err(generation) = cache.get(r.id) else {
                panic!("new");
            };
            cache.keep(Arc::new(r), generation);
        }
        assert_eq!(cache.len(), CACHED);
    }
}
