//! The answer guard's bounded memory: a least-recently-seen map.
//!
//! Each entry carries the stamp of its latest use; the queue holds
//! `(key, stamp)` in use order, and entries whose stamp is no longer the
//! key's latest are skipped (and, when they pile up, swept). Every operation
//! is amortised O(1), with std only: the client adds no dependency for it.

use std::collections::{HashMap, VecDeque};
use std::hash::Hash;

#[derive(Debug)]
pub(crate) struct Lru<K, V> {
    capacity: usize,
    entries: HashMap<K, (V, u64)>,
    order: VecDeque<(K, u64)>,
    next_stamp: u64,
}

impl<K: Hash + Eq + Clone, V> Lru<K, V> {
    /// A memory of at most `capacity` entries; 0 remembers nothing.
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            capacity,
            entries: HashMap::new(),
            order: VecDeque::new(),
            next_stamp: 0,
        }
    }

    /// The entry for `key`, marked as just used.
    pub(crate) fn get_mut(&mut self, key: &K) -> Option<&mut V> {
        let stamp = self.stamp();
        self.entries.get_mut(key)?.1 = stamp;
        self.order.push_back((key.clone(), stamp));
        self.sweep_if_needed();
        self.entries.get_mut(key).map(|(v, _)| v)
    }

    /// Inserts or replaces `key`, marked as just used; the least recently
    /// used entry leaves when the memory is full.
    pub(crate) fn insert(&mut self, key: K, value: V) {
        if self.capacity == 0 {
            return;
        }
        let stamp = self.stamp();
        self.order.push_back((key.clone(), stamp));
        self.entries.insert(key, (value, stamp));
        while self.entries.len() > self.capacity {
            let Some((oldest, used)) = self.order.pop_front() else {
                break;
            };
            if self.entries.get(&oldest).is_some_and(|(_, u)| *u == used) {
                self.entries.remove(&oldest);
            }
        }
        self.sweep_if_needed();
    }

    /// How many entries are held.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    fn stamp(&mut self) -> u64 {
        self.next_stamp += 1;
        self.next_stamp
    }

    /// Drops stale queue entries once they outnumber the live ones, so the
    /// queue stays within twice the capacity.
    fn sweep_if_needed(&mut self) {
        if self.order.len() > 2 * self.entries.len() + 16 {
            let entries = &self.entries;
            self.order
                .retain(|(k, stamp)| entries.get(k).is_some_and(|(_, u)| u == stamp));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Lru;

    #[test]
    fn the_least_recently_used_entry_leaves_first() {
        let mut lru = Lru::new(2);
        lru.insert("a", 1);
        lru.insert("b", 2);
        assert_eq!(lru.get_mut(&"a").copied(), Some(1));
        lru.insert("c", 3);
        assert_eq!(lru.len(), 2);
        assert_eq!(lru.get_mut(&"b"), None, "b was used least recently");
        assert_eq!(lru.get_mut(&"a").copied(), Some(1));
        assert_eq!(lru.get_mut(&"c").copied(), Some(3));
    }

    #[test]
    fn replacing_an_entry_does_not_grow_the_memory() {
        let mut lru = Lru::new(2);
        lru.insert("a", 1);
        lru.insert("a", 2);
        lru.insert("b", 3);
        assert_eq!(lru.len(), 2);
        assert_eq!(lru.get_mut(&"a").copied(), Some(2));
    }

    #[test]
    fn capacity_zero_remembers_nothing() {
        let mut lru = Lru::new(0);
        lru.insert("a", 1);
        assert_eq!(lru.len(), 0);
        assert_eq!(lru.get_mut(&"a"), None);
    }

    #[test]
    fn many_uses_of_few_entries_keep_the_queue_small() {
        let mut lru = Lru::new(4);
        for i in 0..4 {
            lru.insert(i, i);
        }
        for round in 0..10_000 {
            let _ = lru.get_mut(&(round % 4));
        }
        assert_eq!(lru.len(), 4);
        assert!(lru.order.len() <= 2 * 4 + 16 + 1, "{}", lru.order.len());
        lru.insert(99, 99);
        assert_eq!(lru.len(), 4);
    }
}
