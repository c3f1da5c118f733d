//! Where an exchange's secrets stand in a text: every occurrence of every
//! secret, overlapping ones included, merged into the runs of bytes they
//! cover (so no byte of a secret is left beside another that overlaps
//! it). Each secret is looked for in turn (fast on any text, no build),
//! until that looping (its searches and its matches) has cost as much as
//! building an Aho-Corasick automaton of them would; then, for the rest
//! of the exchange, through that automaton, which keeps the longest
//! secret ending at each byte (a rent-or-buy choice: a small exchange
//! never builds one, a large one builds it once).
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

use aho_corasick::automaton::Automaton as _;
use aho_corasick::nfa::noncontiguous::NFA;
use aho_corasick::{Anchored, Input, MatchKind};

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
    automaton: OnceLock<Option<NFA>>,
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
    fn automaton(&self, secrets: &Secrets, len: usize) -> Option<&NFA> {
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
                NFA::builder()
                    .match_kind(MatchKind::Standard)
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
            Some(automaton) => matches!(automaton.try_find(&Input::new(text)), Ok(Some(_))),
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
    /// A tier's automaton (its matches, found beforehand).
    Automaton(usize),
    /// One secret, looked for alone, of a tier, from a byte on.
    Secret(usize, usize, usize),
}

/// [`find`] in one valid run, `offset` bytes into the haystack.
fn find_in(tiers: &[Tier; 2], secrets: &Secrets, text: &str, offset: usize, out: &mut Spans) {
    // Each tier's way through this text: none of its secrets fits, its
    // automaton ([`scan`]), or each of those that fit in turn.
    let mut scanned: [Option<&NFA>; 2] = [None, None];
    let mut looped: [Range<usize>; 2] = [0..0, 0..0];
    for (t, tier) in tiers.iter().enumerate() {
        let fitting = tier.fitting(secrets, text.len());
        if fitting.is_empty() {
            continue;
        }
        match tier.automaton(secrets, text.len()) {
            Some(automaton) => scanned[t] = Some(automaton),
            None => looped[t] = fitting,
        }
    }
    let shift = |(start, end, n): Found| (offset + start, offset + end, n);
    if looped.iter().all(Range::is_empty) && scanned.iter().flatten().count() == 1 {
        for (t, automaton) in scanned.into_iter().enumerate() {
            if let Some(automaton) = automaton {
                scan(automaton, tiers[t].range.start, text, |found| {
                    out.add(shift(found))
                });
            }
        }
        return;
    }
    // Each automaton's matches (at most one per byte), then merged.
    let mut searches: [Option<std::vec::IntoIter<Found>>; 2] = [None, None];
    for (t, automaton) in scanned.into_iter().enumerate() {
        if let Some(automaton) = automaton {
            let mut found = Vec::new();
            scan(automaton, tiers[t].range.start, text, |f| found.push(f));
            searches[t] = Some(found.into_iter());
        }
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
            Source::Automaton(t) => searches[t].as_mut()?.next(),
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
    // Looking again past each match costs too: once a tier's looping
    // (its many matches: a secret that overlaps itself in a long run of
    // its bytes, secrets that hold one another) has cost as much as its
    // automaton would, this text is looked through that automaton
    // instead (built then), whose cost does not grow with the secrets.
    let left = tiers.each_ref().map(|tier| {
        if tier.automaton.get().is_some() {
            u64::MAX
        } else {
            tier.build
                .saturating_sub(tier.spent.load(Ordering::Relaxed))
                / LOOK_AGAIN
        }
    });
    let before = out.0.len();
    let mut again = [0u64; 2];
    let mut overran = false;
    while let Some(Reverse((end, start, n, source))) = heap.pop() {
        out.add(shift((start, end, n)));
        // Its next occurrence: past this one's first character (the next
        // may overlap it).
        let source = match source {
            Source::Secret(t, n, _) => {
                again[t] += 1;
                if again[t] > left[t] {
                    overran = true;
                    break;
                }
                let step = secrets[n].0.chars().next().map_or(1, char::len_utf8);
                Source::Secret(t, n, start + step)
            }
            automaton => automaton,
        };
        push(&mut heap, source);
    }
    drop(heap);
    for (tier, again) in tiers.iter().zip(again) {
        if again > 0 {
            tier.charge(again.saturating_mul(LOOK_AGAIN));
        }
    }
    if overran {
        // Runs never cross from one valid run to the next: those of
        // earlier runs stay as they were.
        out.0.truncate(before);
        find_in(tiers, secrets, text, offset, out);
    }
}

/// Where the secrets of `automaton` (numbered from `first`) occur in
/// `text`: at each byte, the longest secret that ends there (any other
/// ending there lies inside it, so the runs they cover are the same), in
/// the order of their ends: linear in the text, however many secrets
/// overlap or hold one another. A match state lists its own secret (the
/// longest, the state's whole depth) before those of its failure states;
/// the tests check the result against every occurrence found one by one.
/// Between matches the automaton's prefilter skips ahead.
fn scan(automaton: &NFA, first: usize, text: &str, mut found: impl FnMut(Found)) {
    let bytes = text.as_bytes();
    let Ok(start) = automaton.start_state(Anchored::No) else {
        return;
    };
    let longest = automaton.max_pattern_len();
    let mut at = 0;
    while at < bytes.len() {
        // The first match ending from `at` on; no secret occurrence
        // crosses `at` (the automaton was back at its start there), and
        // none that ends there starts more than `longest` before.
        let input = Input::new(bytes).span(at..bytes.len());
        let Ok(Some(m)) = automaton.try_find(&input) else {
            return;
        };
        let mut pos = m.end().saturating_sub(longest).max(at);
        let mut state = start;
        while pos < bytes.len() {
            state = automaton.next_state(Anchored::No, state, bytes[pos]);
            pos += 1;
            if automaton.is_match(state) {
                let pattern = automaton.match_pattern(state, 0);
                let len = automaton.pattern_len(pattern);
                found((pos - len, pos, first + pattern.as_usize()));
            } else if state == start {
                break;
            }
        }
        at = pos;
    }
}
