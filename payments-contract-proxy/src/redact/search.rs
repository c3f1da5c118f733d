//! Where an exchange's secrets stand in a text: every occurrence of every
//! secret, overlapping ones included, merged into the runs of bytes they
//! cover (so no byte of a secret is left beside another that overlaps
//! it). Each secret is looked for in turn (fast on any text, no build),
//! until that looping has cost as much as building an Aho-Corasick
//! automaton of them would; then, for the rest of the exchange, through
//! that automaton's overlapping search (a rent-or-buy choice: a small
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

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};

use super::Secrets;

/// Where a secret stands in a text (or a run of bytes secrets cover): its
/// bytes, and which secret (the first listed of those in the run).
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
                    .match_kind(MatchKind::Standard)
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

/// Where secrets stand in `haystack`: every occurrence of every secret
/// (overlapping ones, of one secret or of several, included), merged into
/// the maximal runs of bytes they cover, each with the first listed
/// secret occurring in it (the list is longest first: the longest); in
/// order, none overlapping.
pub(super) fn find(tiers: &[Tier; 2], secrets: &Secrets, haystack: &[u8]) -> Vec<Found> {
    let mut spans = Spans::default();
    let mut offset = 0;
    for chunk in haystack.utf8_chunks() {
        let text = chunk.valid();
        find_in(tiers, secrets, text, offset, &mut spans);
        offset += text.len() + chunk.invalid().len();
    }
    spans.0
}

/// Occurrences merged as they come, which they must in the order of
/// their ends: each overlapping the last runs kept is merged with them
/// (each run merged once: linear in the occurrences).
#[derive(Default)]
pub(super) struct Spans(pub(super) Vec<Found>);

impl Spans {
    /// Adds an occurrence (or a run) ending no sooner than those added.
    pub(super) fn add(&mut self, (mut start, mut end, mut n): Found) {
        while let Some(&(first, last, m)) = self.0.last()
            && last > start
        {
            self.0.pop();
            start = start.min(first);
            end = end.max(last);
            n = n.min(m);
        }
        self.0.push((start, end, n));
    }
}

/// What gives the next occurrence of a secret in a text.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Source {
    /// A tier's automaton (its overlapping search).
    Automaton(usize),
    /// One secret, looked for alone, of a tier, from a byte on.
    Secret(usize, usize, usize),
}

/// [`find`] in one valid run, `offset` bytes into the haystack.
fn find_in(tiers: &[Tier; 2], secrets: &Secrets, text: &str, offset: usize, out: &mut Spans) {
    // Each tier's way through this text: none of its secrets fits, its
    // automaton's overlapping search (`None` if it has none), or each of
    // those that fit in turn.
    let mut searches = [None, None];
    let mut looped: [Range<usize>; 2] = [0..0, 0..0];
    for (t, tier) in tiers.iter().enumerate() {
        let fitting = tier.fitting(secrets, text.len());
        if fitting.is_empty() {
            continue;
        }
        match tier
            .automaton(secrets, text.len())
            .and_then(|automaton| automaton.try_find_overlapping_iter(text).ok())
        {
            Some(search) => searches[t] = Some(search),
            None => looped[t] = fitting,
        }
    }
    let shift = |(start, end, n): Found| (offset + start, offset + end, n);
    if looped.iter().all(Range::is_empty) && searches.iter().filter(|s| s.is_some()).count() == 1 {
        for (t, search) in searches.into_iter().enumerate() {
            let first = tiers[t].range.start;
            for m in search.into_iter().flatten() {
                out.add(shift((m.start(), m.end(), first + m.pattern().as_usize())));
            }
        }
        return;
    }
    let mut sources = Vec::new();
    for t in 0..2 {
        if searches[t].is_some() {
            sources.push(Source::Automaton(t));
        }
        sources.extend(looped[t].clone().map(|n| Source::Secret(t, n, 0)));
    }
    // The next occurrence of each source, the one ending first on top.
    let mut next = |source: Source| -> Option<Found> {
        match source {
            Source::Automaton(t) => {
                let m = searches[t].as_mut()?.next()?;
                Some((
                    m.start(),
                    m.end(),
                    tiers[t].range.start + m.pattern().as_usize(),
                ))
            }
            Source::Secret(_, n, from) => {
                let value = &secrets[n].0;
                let at = from + text.get(from..)?.find(value.as_str())?;
                Some((at, at + value.len(), n))
            }
        }
    };
    let mut heap = BinaryHeap::new();
    let mut push = |heap: &mut BinaryHeap<_>, source| {
        if let Some((start, end, n)) = next(source) {
            heap.push(Reverse((end, start, n, source)));
        }
    };
    for source in sources {
        push(&mut heap, source);
    }
    let mut again = [0u64; 2];
    while let Some(Reverse((end, start, n, source))) = heap.pop() {
        out.add(shift((start, end, n)));
        // Its next occurrence: past this one's first character (the next
        // may overlap it).
        let source = match source {
            Source::Secret(t, n, _) => {
                again[t] += 1;
                let step = secrets[n].0.chars().next().map_or(1, char::len_utf8);
                Source::Secret(t, n, start + step)
            }
            automaton => automaton,
        };
        push(&mut heap, source);
    }
    for (tier, again) in tiers.iter().zip(again) {
        if again > 0 {
            tier.charge(again.saturating_mul(LOOK_AGAIN));
        }
    }
}
