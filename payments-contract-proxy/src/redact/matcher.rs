//! An exchange's secret values, found in text wherever they occur (each
//! run of bytes their occurrences cover, overlapping ones included,
//! replaced whole), through one matcher built once per exchange and kept
//! for every string, member name, header, path, query, body and finding
//! of it: each secret looked for in turn while that is cheap, one
//! Aho-Corasick automaton once it would cost more ([`super::search`]), so
//! that scrubbing grows with the texts, not with the number of secrets
//! times the texts, and a small exchange builds nothing.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::Secrets;
use super::search::{self, Found, Mode, Tier};

/// Secret values (longest first, as [`super::Redactor`] lists them) and
/// their tiers.
pub(crate) struct Matcher {
    secrets: Secrets,
    tiers: [Tier; 2],
    /// The secrets' beginnings, built when a cut text is first scrubbed.
    beginnings: OnceLock<Beginnings>,
}

impl std::fmt::Debug for Matcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Matcher { [redacted] }")
    }
}

#[cfg(test)]
thread_local! {
    /// The mode of the matchers made on this thread (tests).
    static FORCED: std::cell::Cell<Mode> = const { std::cell::Cell::new(Mode::Lazy) };
}

impl Matcher {
    /// The matcher of `secrets` (an empty value is never looked for).
    pub(crate) fn new(secrets: Secrets) -> Self {
        #[cfg(test)]
        let mode = FORCED.get();
        #[cfg(not(test))]
        let mode = Mode::Lazy;
        Self::with_mode(secrets, mode)
    }

    /// The matcher of `secrets`, its tiers choosing as `mode` says.
    pub(crate) fn with_mode(mut secrets: Secrets, mode: Mode) -> Self {
        secrets.retain(|(value, _)| !value.is_empty());
        let tiers = Tier::of(&secrets, mode);
        Self {
            secrets,
            tiers,
            beginnings: OnceLock::new(),
        }
    }

    /// Runs `f` with the matchers it makes in `mode` (tests).
    #[cfg(test)]
    pub(crate) fn forced<T>(mode: Mode, f: impl FnOnce() -> T) -> T {
        let before = FORCED.replace(mode);
        let out = f();
        FORCED.set(before);
        out
    }

    /// Whether the long and the short tiers built their automaton (tests).
    #[cfg(test)]
    pub(crate) fn built(&self) -> [bool; 2] {
        [self.tiers[0].built(), self.tiers[1].built()]
    }

    /// Whether there is no secret to look for.
    pub(crate) fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    /// The secrets, longest first.
    pub(crate) fn secrets(&self) -> &Secrets {
        &self.secrets
    }

    /// Whether a secret occurs in `text` as written.
    pub(crate) fn occurs_in(&self, text: &str) -> bool {
        search::occurs_in(&self.tiers, &self.secrets, text)
    }

    /// Whether a secret occurs in `text` percent-decoded (any byte
    /// encoded, either case), when `text` holds a `%`.
    pub(crate) fn occurs_decoded_in(&self, text: &str) -> bool {
        text.contains('%')
            && search::occurs_in_bytes(&self.tiers, &self.secrets, &decode(text, None))
    }

    /// Where secrets stand in `haystack`: the runs of bytes their
    /// occurrences cover (overlapping ones included), in order, each with
    /// the first listed (the longest) secret in it.
    fn find(&self, haystack: &[u8]) -> Vec<Found> {
        if self.secrets.is_empty() {
            return Vec::new();
        }
        search::find(&self.tiers, &self.secrets, haystack)
    }

    /// `text` with the secrets replaced, or `None` when none occurs: each
    /// run of bytes that occurrences of secrets cover (overlapping ones,
    /// of one secret or several, included: no byte of any is left) is
    /// replaced once, by what replaces the longest secret in it (the
    /// first listed of those as long). Occurrences count as written, and
    /// where the text percent-decoded holds one (`%2f` or `%2F`, `%73k`
    /// for `sk`: any byte encoded, either case) as the encoded span they
    /// come from; both kinds merge alike. The text is decoded once,
    /// whatever the number of secrets.
    pub(crate) fn scrub(&self, text: &str) -> Option<String> {
        if self.secrets.is_empty() {
            return None;
        }
        let plain = self.find(text.as_bytes());
        if !text.contains('%') {
            return self.replace(text, &plain);
        }
        let found = self.find(&decode(text, None));
        if found.is_empty() {
            return self.replace(text, &plain);
        }
        let mut spans = Vec::with_capacity(text.len());
        decode(text, Some(&mut spans));
        let mut decoded = found
            .iter()
            .map(|&(first, end, n)| (spans[first].0, spans[end - 1].1, n))
            .peekable();
        // Both in the order of their ends, merged.
        let mut merged = search::Spans::default();
        let mut plain = plain.into_iter().peekable();
        loop {
            let next = match (plain.peek(), decoded.peek()) {
                (Some(a), Some(b)) if a.1 <= b.1 => plain.next(),
                (Some(_), None) => plain.next(),
                _ => decoded.next(),
            };
            match next {
                Some(run) => merged.add(run),
                None => break,
            }
        }
        self.replace(text, &merged.0)
    }

    /// `text` with each run replaced by what replaces its secret, or
    /// `None` when there is none (a run that would cut a character is
    /// left).
    fn replace(&self, text: &str, found: &[Found]) -> Option<String> {
        let mut out = String::new();
        let (mut copied, mut changed) = (0, false);
        for &(start, stop, n) in found {
            if !text.is_char_boundary(start) || !text.is_char_boundary(stop) {
                continue;
            }
            out.push_str(&text[copied..start]);
            out.push_str(&self.secrets[n].1);
            copied = stop;
            changed = true;
        }
        changed.then(|| {
            out.push_str(&text[copied..]);
            out
        })
    }

    /// `text` with the beginning of a secret that ends it before a `…` (a
    /// value cut there) replaced by what replaces the secret: of
    /// [`super::ECHO_MINIMUM`]` / 2` characters or more, shorter than the
    /// secret, the longest such beginning (the last secret listed when
    /// several begin so). Each `…` looks at the text before it no further
    /// back than the longest secret, each end of it once.
    pub(crate) fn scrub_cut_ends(&self, text: &str) -> String {
        let shortest = super::ECHO_MINIMUM / 2;
        let beginnings = self
            .beginnings
            .get_or_init(|| Beginnings::of(&self.secrets, shortest));
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(at) = rest.find('…') {
            let before = &rest[..at];
            match beginnings.longest_ending(before, &self.secrets, shortest) {
                Some((len, n)) => {
                    out.push_str(&before[..before.len() - len]);
                    out.push_str(&self.secrets[n].1);
                }
                None => out.push_str(before),
            }
            out.push('…');
            rest = &rest[at + '…'.len_utf8()..];
        }
        out.push_str(rest);
        out
    }
}

/// Each byte of `text` percent-decoded, and into `spans` (when given)
/// the span of `text` each came from.
fn decode(text: &str, mut spans: Option<&mut Vec<(usize, usize)>>) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        let escaped = (bytes[at] == b'%')
            .then(|| Some((hex(*bytes.get(at + 1)?)?, hex(*bytes.get(at + 2)?)?)))
            .flatten();
        let (byte, len) = match escaped {
            Some((high, low)) => (u8::try_from(high * 16 + low).unwrap_or(0), 3),
            None => (bytes[at], 1),
        };
        decoded.push(byte);
        if let Some(spans) = spans.as_deref_mut() {
            spans.push((at, at + len));
        }
        at += len;
    }
    decoded
}

/// The multiplier of the beginnings' hashes (odd: wrapping products keep
/// every bit).
const BASE: u64 = 0x100_0000_01b3;

/// The beginnings of secrets a cut value may end with, by their length
/// and a hash of their bytes (checked byte for byte when found).
struct Beginnings {
    /// `(length, hash)` → the secrets that begin so, in the order listed.
    by_hash: HashMap<(usize, u64), Vec<usize>>,
    /// The longest beginning kept.
    longest: usize,
}

impl Beginnings {
    /// The beginnings of `secrets` of `shortest` characters or more and
    /// shorter than the secret, at a character boundary.
    fn of(secrets: &Secrets, shortest: usize) -> Self {
        let mut by_hash: HashMap<(usize, u64), Vec<usize>> = HashMap::new();
        let mut longest = 0;
        for (n, (value, _)) in secrets.iter().enumerate() {
            let (mut hash, mut chars) = (0u64, 0usize);
            for (at, b) in value.bytes().enumerate() {
                if value.is_char_boundary(at) {
                    if chars >= shortest {
                        by_hash.entry((at, hash)).or_default().push(n);
                        longest = longest.max(at);
                    }
                    chars += 1;
                }
                hash = hash.wrapping_mul(BASE).wrapping_add(u64::from(b));
            }
        }
        Self { by_hash, longest }
    }

    /// The longest end of `before` that is a kept beginning: its length
    /// in bytes and the secret (the last listed of those it begins).
    fn longest_ending(
        &self,
        before: &str,
        secrets: &Secrets,
        shortest: usize,
    ) -> Option<(usize, usize)> {
        let bytes = before.as_bytes();
        let window = self.longest.min(bytes.len());
        // Each end's hash and character count, from the shortest.
        let mut ends = Vec::with_capacity(window);
        let (mut hash, mut power, mut chars) = (0u64, 1u64, 0usize);
        for len in 1..=window {
            let b = bytes[bytes.len() - len];
            hash = hash.wrapping_add(u64::from(b).wrapping_mul(power));
            power = power.wrapping_mul(BASE);
            if before.is_char_boundary(bytes.len() - len) {
                chars += 1;
                if chars >= shortest {
                    ends.push((len, hash));
                }
            }
        }
        ends.iter().rev().find_map(|&(len, hash)| {
            let end = &bytes[bytes.len() - len..];
            self.by_hash
                .get(&(len, hash))?
                .iter()
                .rev()
                .find(|&&n| secrets[n].0.as_bytes().get(..len) == Some(end))
                .map(|&n| (len, n))
        })
    }
}
