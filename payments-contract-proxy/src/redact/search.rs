//! Where an exchange's secrets stand in a text, leftmost first and the
//! longest there: each secret looked for in turn (fast on any text, no
//! build), until that looping has cost as much as building an
//! Aho-Corasick automaton of them would; then, for the rest of the
//! exchange, through that automaton (a rent-or-buy choice: a small
//! exchange never builds one, a large one builds it once).
//!
//! The secrets make two tiers, each with its own automaton: the long
//! (a whole `Cookie` header and its encoded forms) and the short (each
//! cookie's value, each code). An automaton of long secrets that hold
//! many short ones costs several times more to build per byte, and a
//! long secret looked for in a shorter text costs nothing.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::ops::Range;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use aho_corasick::{AhoCorasick, AhoCorasickKind, Input, MatchKind};

use super::Secrets;

/// Where a secret stands in a text: its bytes, and which secret.
pub(super) type Found = (usize, usize, usize);

/// Secrets of more than this many bytes make the long tier.
const LONG: usize = 64;

/// Estimated nanoseconds to build an automaton, per byte of its secrets
/// (release build; long secrets that hold short ones cost the most).
const BUILD_PER_BYTE: [u64; 2] = [150, 50];

/// Estimated nanoseconds to look for one secret in a text, besides its
/// bytes…
const LOOK: u64 = 4;

/// …and picoseconds per byte of the text, for a long secret (a text of
/// bytes it also holds is read byte by byte) and a short one.
const READ_PS: [u64; 2] = [1000, 40];

/// Estimated nanoseconds to look for a secret again past a match.
const LOOK_AGAIN: u64 = 20;

/// How the tiers choose between looping and their automaton.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Loop until the looping has cost as much as the build would.
    Lazy,
    /// Never build (tests: the loop's answers).
    #[cfg(test)]
    Loop,
    /// Build at the first look (tests: the automaton's answers).
    #[cfg(test)]
    Automaton,
    /// Build once the looping has cost this many nanoseconds (tests).
    #[cfg(test)]
    BuildAfter(u64),
}

/// Some of the secrets (a range of them, as listed longest first), and
/// their automaton once built.
pub(super) struct Tier {
    range: Range<usize>,
    /// 0 for the long tier, 1 for the short.
    kind: usize,
    /// Estimated nanoseconds the automaton takes to build.
    build: u64,
    /// Estimated nanoseconds spent looking for each secret in turn.
    spent: AtomicU64,
    /// `Some(None)` when it could not be built (then looping goes on).
    automaton: OnceLock<Option<AhoCorasick>>,
}

impl Tier {
    /// The long and the short tiers of `secrets` (longest first, none
    /// empty).
    pub(super) fn of(secrets: &Secrets, mode: Mode) -> [Tier; 2] {
        let long = secrets.partition_point(|(v, _)| v.len() > LONG);
        let tier = |kind: usize, range: Range<usize>| {
            let bytes: u64 = secrets[range.clone()]
                .iter()
                .map(|(v, _)| v.len() as u64)
                .sum();
            let build = match mode {
                Mode::Lazy => bytes.saturating_mul(BUILD_PER_BYTE[kind]),
                #[cfg(test)]
                Mode::Loop => u64::MAX,
                #[cfg(test)]
                Mode::Automaton => 0,
                #[cfg(test)]
                Mode::BuildAfter(ns) => ns,
            };
            Tier {
                range,
                kind,
                build,
                spent: AtomicU64::new(0),
                automaton: OnceLock::new(),
            }
        };
        [tier(0, 0..long), tier(1, long..secrets.len())]
    }

    /// Whether its automaton was built (tests).
    #[cfg(test)]
    pub(super) fn built(&self) -> bool {
        self.automaton.get().is_some_and(Option::is_some)
    }

    /// Its secrets that fit in `len` bytes (a text shorter than a secret
    /// cannot hold it).
    fn fitting(&self, secrets: &Secrets, len: usize) -> Range<usize> {
        let tier = &secrets[self.range.clone()];
        self.range.start + tier.partition_point(|(v, _)| v.len() > len)..self.range.end
    }

    /// The automaton to look through in a text of `len` bytes, or `None`
    /// to look for each secret in turn (counted towards the build).
    fn automaton(&self, secrets: &Secrets, len: usize) -> Option<&AhoCorasick> {
        if let Some(built) = self.automaton.get() {
            return built.as_ref();
        }
        let fitting = self.fitting(secrets, len).len() as u64;
        let read = (len as u64).saturating_mul(READ_PS[self.kind]) / 1000;
        let cost = fitting.saturating_mul(LOOK.saturating_add(read));
        if self.charge(cost) < self.build {
            return None;
        }
        self.automaton
            .get_or_init(|| {
                AhoCorasick::builder()
                    .match_kind(MatchKind::LeftmostLongest)
                    .kind(Some(AhoCorasickKind::NoncontiguousNFA))
                    .build(
                        secrets[self.range.clone()]
                            .iter()
                            .map(|(v, _)| v.as_bytes()),
                    )
                    .ok()
            })
            .as_ref()
    }

    /// Adds `cost` to what looping has cost; the sum.
    fn charge(&self, cost: u64) -> u64 {
        self.spent
            .fetch_add(cost, Ordering::Relaxed)
            .saturating_add(cost)
    }
}

/// Whether a secret occurs in `text`.
pub(super) fn occurs_in(tiers: &[Tier; 2], secrets: &Secrets, text: &str) -> bool {
    tiers.iter().any(|tier| {
        if tier.fitting(secrets, text.len()).is_empty() {
            return false;
        }
        match tier.automaton(secrets, text.len()) {
            Some(automaton) => automaton.is_match(text),
            None => secrets[tier.fitting(secrets, text.len())]
                .iter()
                .any(|(v, _)| text.contains(v.as_str())),
        }
    })
}

/// Whether a secret occurs in `bytes` (decoded: maybe not UTF-8).
pub(super) fn occurs_in_bytes(tiers: &[Tier; 2], secrets: &Secrets, bytes: &[u8]) -> bool {
    // A secret is UTF-8: where it occurs, the bytes are too, all within
    // one of their valid runs.
    bytes
        .utf8_chunks()
        .any(|chunk| occurs_in(tiers, secrets, chunk.valid()))
}

/// Where secrets stand in `haystack`: leftmost first, the longest there,
/// none overlapping (what one leftmost-longest automaton of them all
/// finds).
pub(super) fn find(tiers: &[Tier; 2], secrets: &Secrets, haystack: &[u8]) -> Vec<Found> {
    let mut found = Vec::new();
    let mut offset = 0;
    for chunk in haystack.utf8_chunks() {
        let text = chunk.valid();
        find_in(tiers, secrets, text, offset, &mut found);
        offset += text.len() + chunk.invalid().len();
    }
    found
}

/// What gives the next secret from a place in a text.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Source {
    /// A tier's automaton.
    Automaton(usize),
    /// One secret, looked for alone, of a tier.
    Secret(usize, usize),
}

/// [`find`] in one valid run, `offset` bytes into the haystack.
fn find_in(tiers: &[Tier; 2], secrets: &Secrets, text: &str, offset: usize, out: &mut Vec<Found>) {
    let next = |source: Source, from: usize| -> Option<Found> {
        let rest = text.get(from..)?;
        match source {
            Source::Automaton(t) => {
                let automaton = tiers[t].automaton.get()?.as_ref()?;
                let input = Input::new(text).span(from..text.len());
                let m = automaton.find(input)?;
                Some((
                    m.start(),
                    m.end(),
                    tiers[t].range.start + m.pattern().as_usize(),
                ))
            }
            Source::Secret(_, n) => {
                let value = &secrets[n].0;
                let at = from + rest.find(value.as_str())?;
                Some((at, at + value.len(), n))
            }
        }
    };
    // Each tier's way through this text: none of its secrets fits, its
    // automaton, or each of those that fit in turn.
    let ways = tiers.each_ref().map(|tier| {
        let fitting = tier.fitting(secrets, text.len());
        if fitting.is_empty() {
            return None;
        }
        Some(tier.automaton(secrets, text.len()).ok_or(fitting))
    });
    if let [None, Some(Ok(automaton))] | [Some(Ok(automaton)), None] = ways {
        let start = tiers[usize::from(ways[0].is_none())].range.start;
        out.extend(automaton.find_iter(text).map(|m| {
            let n = start + m.pattern().as_usize();
            (offset + m.start(), offset + m.end(), n)
        }));
        return;
    }
    // The next of each source, the leftmost (then the longest) on top.
    let mut heap = BinaryHeap::new();
    let push = |heap: &mut BinaryHeap<_>, source, from| {
        if let Some((start, end, n)) = next(source, from) {
            heap.push(Reverse((start, Reverse(end), n, source)));
        }
    };
    for (t, way) in ways.into_iter().enumerate() {
        match way {
            None => {}
            Some(Ok(_)) => push(&mut heap, Source::Automaton(t), 0),
            Some(Err(fitting)) => fitting.for_each(|n| push(&mut heap, Source::Secret(t, n), 0)),
        }
    }
    let mut again = [0u64; 2];
    let mut at = 0;
    while let Some(Reverse((start, Reverse(end), n, source))) = heap.pop() {
        if start >= at {
            out.push((offset + start, offset + end, n));
            at = end;
        }
        // Its next from here (past this match, or past the one that
        // overlapped it).
        if let Source::Secret(t, _) = source {
            again[t] += 1;
        }
        push(&mut heap, source, at);
    }
    for (tier, again) in tiers.iter().zip(again) {
        if again > 0 {
            tier.charge(again.saturating_mul(LOOK_AGAIN));
        }
    }
}
