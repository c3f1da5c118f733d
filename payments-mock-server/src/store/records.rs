//! The store's containers: records in creation order, and one shared copy
//! of each repeated code.

use std::sync::Arc;

use crate::store::Record;

/// Records per chunk of [`Records`].
const CHUNK: usize = 4096;

/// Records in creation order, in fixed-size chunks: growing never moves or
/// copies what is stored (one `Vec` would copy everything at each doubling,
/// under the write lock).
#[derive(Debug, Default)]
pub(crate) struct Records {
    chunks: Vec<Vec<Record>>,
    pub(crate) len: usize,
}

impl Records {
    pub(crate) fn get(&self, position: usize) -> Option<&Record> {
        self.chunks.get(position / CHUNK)?.get(position % CHUNK)
    }

    pub(crate) fn get_mut(&mut self, position: usize) -> Option<&mut Record> {
        self.chunks
            .get_mut(position / CHUNK)?
            .get_mut(position % CHUNK)
    }

    pub(crate) fn push(&mut self, record: Record) {
        match self.chunks.last_mut() {
            Some(chunk) if chunk.len() < CHUNK => chunk.push(record),
            _ => {
                let mut chunk = Vec::with_capacity(CHUNK);
                chunk.push(record);
                self.chunks.push(chunk);
            }
        }
        self.len += 1;
    }

    /// The records before position `end`, newest first.
    pub(crate) fn before(&self, end: usize) -> impl Iterator<Item = &Record> {
        (0..end.min(self.len)).rev().filter_map(|p| self.get(p))
    }

    /// The records from `start` on, in order.
    pub(crate) fn from(&self, start: usize) -> impl Iterator<Item = &Record> {
        let first = start / CHUNK;
        let head = self
            .chunks
            .get(first)
            .map_or(&[][..], |c| c.get(start % CHUNK..).unwrap_or(&[]));
        head.iter()
            .chain(self.chunks.iter().skip(first + 1).flatten())
    }
}

/// One shared copy of each distinct short code.
#[derive(Debug, Default)]
pub(crate) struct Interner(hashbrown::HashSet<Arc<str>>);

impl Interner {
    pub(crate) fn intern(&mut self, text: String) -> Arc<str> {
        if let Some(shared) = self.0.get(text.as_str()) {
            return shared.clone();
        }
        let shared: Arc<str> = Arc::from(text);
        self.0.insert(shared.clone());
        shared
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_keep_positions_and_order_across_boundaries() {
        let record = |n: u128| -> Record {
            let mut r = crate::store::test_support::sample();
            r.id = uuid::Uuid::from_u128(n);
            r
        };
        let mut records = Records::default();
        let count = 2 * CHUNK + 3;
        for n in 0..count {
            records.push(record(n as u128));
        }
        assert_eq!(records.len, count);
        assert_eq!(
            records.get(CHUNK).map(|r| r.id.as_u128()),
            Some(CHUNK as u128)
        );
        assert!(records.get(count).is_none());
        for start in [
            0,
            1,
            CHUNK - 1,
            CHUNK,
            CHUNK + 1,
            2 * CHUNK,
            count - 1,
            count,
            count + 9,
        ] {
            let ids: Vec<u128> = records.from(start).map(|r| r.id.as_u128()).collect();
            let expected: Vec<u128> = (start.min(count)..count).map(|n| n as u128).collect();
            assert_eq!(ids, expected, "from {start}");
            let ids: Vec<u128> = records.before(start).map(|r| r.id.as_u128()).collect();
            let expected: Vec<u128> = (0..start.min(count)).rev().map(|n| n as u128).collect();
            assert_eq!(ids, expected, "before {start}");
        }
    }

    #[test]
    fn interned_codes_are_one_copy() {
        let mut codes = Interner::default();
        let a = codes.intern("MYR".to_owned());
        let b = codes.intern("MYR".to_owned());
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(&*codes.intern("SGD".to_owned()), "SGD");
    }
}
