//! The store's look-up indexes: key → record position, small and without
//! long pauses as they grow.
//!
//! An index holds no keys, only positions (`u32`) and 32 bits of each key's
//! hash; the key is read back from the record to confirm a match. That
//! keeps an entry at 8 bytes (the reference index used to keep a second
//! copy of every reference plus a `Vec` per reference).
//!
//! It is split into [`SHARDS`] hash tables by the top bits of the hash, and
//! each entry carries its hash, so growing a table rehashes only that shard
//! and never reads a record or runs the hasher: at a million transactions a
//! doubling moves ~64k entries of 8 bytes (well under a millisecond) where
//! one `HashMap` of a million `String` keys used to stall every request
//! behind the write lock for 50–300 ms (BENCHMARKS.md, proposal P7).

use std::hash::{BuildHasher, Hash};

use hashbrown::{DefaultHashBuilder, HashTable};

/// Shards per index (a power of two).
const SHARD_BITS: u32 = 4;
const SHARDS: usize = 1 << SHARD_BITS;

/// A key's hash as the index stores it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct KeyHash(u32);

#[derive(Debug, Clone, Copy)]
struct Slot {
    position: u32,
    hash: u32,
}

impl KeyHash {
    /// The 64-bit hash hashbrown works with, spread from the stored 32 bits
    /// (an odd multiplier: a bijection whose top bits, hashbrown's tag,
    /// depend on every bit).
    fn wide(self) -> u64 {
        u64::from(self.0).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }

    fn shard(self) -> usize {
        (self.0 >> (32 - SHARD_BITS)) as usize
    }
}

/// Positions of records by a key the caller hashes and compares.
#[derive(Debug)]
pub(crate) struct Index {
    hasher: DefaultHashBuilder,
    shards: Vec<HashTable<Slot>>,
}

impl Default for Index {
    fn default() -> Self {
        Self {
            hasher: DefaultHashBuilder::default(),
            shards: (0..SHARDS).map(|_| HashTable::new()).collect(),
        }
    }
}

impl Index {
    /// The hash of `key` under this index's (per-store random) seed.
    pub(crate) fn hash<K: Hash + ?Sized>(&self, key: &K) -> KeyHash {
        let h = self.hasher.hash_one(key);
        KeyHash((h ^ (h >> 32)) as u32)
    }

    /// The first position with this hash that `is_match` accepts.
    pub(crate) fn find(
        &self,
        hash: KeyHash,
        mut is_match: impl FnMut(usize) -> bool,
    ) -> Option<usize> {
        self.shards[hash.shard()]
            .find(hash.wide(), |slot| {
                slot.hash == hash.0 && is_match(slot.position as usize)
            })
            .map(|slot| slot.position as usize)
    }

    /// Adds `position` under `hash`. The caller has checked that no entry
    /// it would consider equal exists (or wants several: the reference
    /// index holds one entry per merchant).
    pub(crate) fn insert(&mut self, hash: KeyHash, position: u32) {
        let slot = Slot {
            position,
            hash: hash.0,
        };
        self.shards[hash.shard()].insert_unique(hash.wide(), slot, |s| KeyHash(s.hash).wide());
    }

    /// Bytes the tables hold (for the memory figures in BENCHMARKS.md).
    pub(crate) fn allocation_size(&self) -> usize {
        self.shards.iter().map(HashTable::allocation_size).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_what_it_holds_and_tells_colliding_keys_apart() {
        let keys: Vec<String> = (0..20_000).map(|i| format!("REF-{i}")).collect();
        let mut index = Index::default();
        for (position, key) in keys.iter().enumerate() {
            let hash = index.hash(key.as_str());
            assert!(index.find(hash, |p| keys[p] == *key).is_none());
            index.insert(hash, u32::try_from(position).expect("small"));
        }
        for (position, key) in keys.iter().enumerate() {
            let hash = index.hash(key.as_str());
            assert_eq!(index.find(hash, |p| keys[p] == *key), Some(position));
        }
        let absent = index.hash("REF-20000");
        assert_eq!(index.find(absent, |p| keys[p] == "REF-20000"), None);
        // Two entries under one hash (one reference, two merchants): the
        // predicate picks.
        let hash = index.hash("REF-7");
        index.insert(hash, 99_999);
        assert_eq!(index.find(hash, |p| p == 99_999), Some(99_999));
        assert_eq!(index.find(hash, |p| p == 7), Some(7));
        assert!(index.allocation_size() >= 20_001 * 8);
    }
}
