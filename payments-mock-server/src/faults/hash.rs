//! The fixed hash and generator of the deterministic draws (`faults.rs`,
//! "Deterministic draws"): FNV-1a (64 bit) and SplitMix64, the same on
//! every platform and with every version of the standard library.

/// FNV-1a, 64 bit: a stable hash (never `RandomState`), so a key hashes
/// the same in every process.
#[derive(Debug, Clone)]
pub(crate) struct KeyHasher(u64);

impl KeyHasher {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;

    /// A hasher with nothing written yet.
    pub(crate) fn new() -> Self {
        Self(Self::OFFSET)
    }

    fn bytes(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(Self::PRIME);
        }
    }

    /// Writes one part, length first, so `("ab", "c")` and `("a", "bc")`
    /// differ.
    pub(crate) fn part(&mut self, part: &[u8]) -> &mut Self {
        self.bytes(&(part.len() as u64).to_le_bytes());
        self.bytes(part);
        self
    }

    /// The hash of everything written.
    pub(crate) fn finish(&self) -> u64 {
        self.0
    }
}

/// SplitMix64: a small, fixed generator for one request's draw.
#[derive(Debug)]
pub(super) struct SplitMix64(pub(super) u64);

impl SplitMix64 {
    pub(super) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`, 53 bits.
    pub(super) fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in `0..n` (`n > 0`), by the multiply-high method.
    pub(super) fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(n)) >> 64) as u64
    }
}

/// A uniform draw in `[0, 1)` from `seed` (SplitMix64, as the fail rate's).
pub(crate) fn unit(seed: u64) -> f64 {
    SplitMix64(seed).unit()
}
