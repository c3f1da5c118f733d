//! The matcher's three ways (each secret in turn, one automaton, and the
//! switch from the first to the second part way through an exchange)
//! replace the same secrets in the same texts.

use super::matcher::Matcher;
use super::search::Mode;
use super::*;

/// A small deterministic generator (no seed to report on failure).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        usize::try_from(self.0 >> 33).unwrap_or(0) % n
    }
}

/// `n` secrets of 8 to 12 letters of `ab` (so they overlap, hold one
/// another and repeat themselves), a few of 65 to 80 (the long tier),
/// each with an encoded form as the redactor adds them, longest first.
fn overlapping(random: &mut Lcg, n: usize) -> Secrets {
    let word = |random: &mut Lcg, len: usize| -> String {
        (0..len)
            .map(|_| if random.below(3) == 0 { 'b' } else { 'a' })
            .collect()
    };
    let mut secrets: Secrets = Vec::new();
    for k in 0..n {
        let len = if k % 10 == 0 {
            65 + random.below(16)
        } else {
            8 + random.below(5)
        };
        let value = word(random, len);
        let shown = format!("<{k}>");
        // And with an `é` (two bytes, `%C3%A9` encoded).
        let accented = format!("{}é{}", &value[..4], &value[4..]);
        for v in [value, accented] {
            if !secrets.iter().any(|(s, _)| *s == v) {
                secrets.push((v, shown.clone()));
            }
        }
    }
    secrets.sort_by_key(|(v, _)| std::cmp::Reverse(v.len()));
    secrets
}

/// A text of `len` pieces: parts of the secrets (so they meet, overlap
/// and almost match), letters of `ab`, a `%61` for an `a`, a `%FF`
/// (decoded, not UTF-8), an `é` written or encoded, a space.
fn text(random: &mut Lcg, secrets: &Secrets, len: usize) -> String {
    const PIECES: [&str; 9] = ["a", "a", "a", "b", "%61", "%FF", "é", "%C3%A9", " "];
    let mut text = String::new();
    for _ in 0..len {
        if random.below(3) == 0 {
            let chars: Vec<char> = secrets[random.below(secrets.len())].0.chars().collect();
            let from = random.below(chars.len());
            let to = from + 1 + random.below(chars.len() - from);
            for c in &chars[from..to] {
                match (c, random.below(4)) {
                    ('a', 0) => text.push_str("%61"),
                    ('é', 0) => text.push_str("%c3%a9"),
                    _ => text.push(*c),
                }
            }
        } else {
            text.push_str(PIECES[random.below(PIECES.len())]);
        }
    }
    text
}

/// What `secrets` leave of `text`, found the slow, obvious way: every
/// occurrence of every secret at every byte, as written and in the text
/// percent-decoded (as the encoded span it comes from), merged where
/// occurrences overlap, each run replaced by its first listed secret's
/// replacement.
pub(super) fn obvious(secrets: &Secrets, text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let hex = |at: usize| bytes.get(at).is_some_and(u8::is_ascii_hexdigit);
    // Each decoded byte and the span of `text` it comes from.
    let mut decoded = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] == b'%' && hex(at + 1) && hex(at + 2) {
            let byte = u8::from_str_radix(&text[at + 1..at + 3], 16).expect("hex");
            decoded.push((byte, at, at + 3));
            at += 3;
        } else {
            decoded.push((bytes[at], at, at + 1));
            at += 1;
        }
    }
    let mut found = Vec::new();
    for (n, (value, _)) in secrets.iter().enumerate() {
        let value = value.as_bytes();
        for start in 0..bytes.len() {
            if bytes[start..].starts_with(value) {
                found.push((start, start + value.len(), n));
            }
        }
        for start in 0..decoded.len() {
            let end = start + value.len();
            if decoded
                .get(start..end)
                .is_some_and(|d| d.iter().map(|(b, _, _)| *b).eq(value.iter().copied()))
            {
                found.push((decoded[start].1, decoded[end - 1].2, n));
            }
        }
    }
    found.sort_unstable();
    let mut runs: Vec<(usize, usize, usize)> = Vec::new();
    for (start, end, n) in found {
        match runs.last_mut() {
            Some(run) if start < run.1 => *run = (run.0, run.1.max(end), run.2.min(n)),
            _ => runs.push((start, end, n)),
        }
    }
    if runs.is_empty() {
        return None;
    }
    let mut out = String::new();
    let mut copied = 0;
    for (start, end, n) in runs {
        out.push_str(&text[copied..start]);
        out.push_str(&secrets[n].1);
        copied = end;
    }
    out.push_str(&text[copied..]);
    Some(out)
}

/// The two secrets where the loop once missed one: the first holds the
/// second's first byte, so the second, found by itself where the first
/// stands, must be looked for again past it (and, overlapping each other,
/// every occurrence of both is one run: replaced once, by the first
/// listed of the longest, none of its bytes left).
#[test]
fn a_secret_overlapped_by_an_earlier_one_is_looked_for_again_past_it() {
    let secrets: Secrets = vec![
        ("aaaaaaaa".to_owned(), "<A>".to_owned()),
        ("bbbbbbba".to_owned(), "<B>".to_owned()),
    ];
    for mode in [Mode::Loop, Mode::Automaton, Mode::Lazy] {
        let matcher = Matcher::with_mode(secrets.clone(), mode);
        assert_eq!(
            matcher.scrub("bbbbbbbaaaaaaaaaa").as_deref(),
            Some("<A>"),
            "{mode:?}"
        );
        assert_eq!(
            matcher
                .scrub(&format!("bbbbbbb{}", "%61".repeat(9)))
                .as_deref(),
            Some("<A>"),
            "{mode:?}"
        );
    }
}

/// Many overlapping secrets (two tiers), texts written and
/// percent-encoded: the loop, the automaton, and a matcher that switches
/// from one to the other after some texts replace the same spans with
/// the same values, those [`obvious`] finds (every byte of every
/// occurrence, overlapping ones included); nothing of a secret is left in
/// what they give; the switch happens.
#[test]
fn the_loop_the_automaton_and_the_switch_between_them_replace_alike() {
    let mut random = Lcg(7);
    for round in 0..6 {
        let secrets = overlapping(&mut random, 40 + 10 * round);
        let looped = Matcher::with_mode(secrets.clone(), Mode::Loop);
        let automaton = Matcher::with_mode(secrets.clone(), Mode::Automaton);
        let lazy = Matcher::with_mode(secrets.clone(), Mode::BuildAfter(40_000));
        let mut switched = None;
        for n in 0..300 {
            let len = 1 + random.below(40);
            let text = text(&mut random, &secrets, len);
            let expected = looped.scrub(&text);
            assert_eq!(expected, obvious(&secrets, &text), "loop: {text:?}");
            // Nothing of a secret left: looked for again, none occurs,
            // as written or decoded.
            if let Some(out) = &expected {
                assert!(
                    !looped.occurs_in(out) && !looped.occurs_decoded_in(out),
                    "{text:?} -> {out:?}"
                );
                assert_eq!(automaton.scrub(out), None, "{text:?} -> {out:?}");
            }
            assert_eq!(automaton.scrub(&text), expected, "automaton: {text:?}");
            assert_eq!(lazy.scrub(&text), expected, "switching: {text:?}");
            let any = expected.is_some();
            assert_eq!(
                looped.occurs_in(&text) || looped.occurs_decoded_in(&text),
                any
            );
            assert_eq!(
                automaton.occurs_in(&text) || automaton.occurs_decoded_in(&text),
                any
            );
            assert_eq!(lazy.occurs_in(&text) || lazy.occurs_decoded_in(&text), any);
            if switched.is_none() && lazy.built() == [true, true] {
                switched = Some(n);
            }
        }
        assert_eq!(looped.built(), [false, false], "the loop never builds");
        assert_eq!(automaton.built(), [true, true]);
        assert!(
            matches!(switched, Some(n) if n > 0),
            "round {round}: switched at {switched:?}, not first nor never"
        );
    }
}

/// A lazy matcher of an exchange's few secrets, looked through a few
/// small texts, builds nothing; the same secrets through a text of
/// megabytes build their automaton at once.
#[test]
fn a_small_exchange_builds_nothing_and_a_large_text_builds_at_once() {
    let secrets: Secrets = (0..300)
        .map(|n| (format!("V{n:012}"), REDACTED.to_owned()))
        .collect();
    let small = Matcher::with_mode(secrets.clone(), Mode::Lazy);
    for text in ["[redacted]", "/api/payments/initiate", "application/json"] {
        assert_eq!(small.scrub(text), None);
    }
    assert_eq!(small.built(), [false, false]);
    let large = Matcher::with_mode(secrets, Mode::Lazy);
    let mut text = "y".repeat(1 << 21);
    text.push_str("V000000000042");
    assert!(large.occurs_in(&text));
    assert_eq!(large.built(), [false, true], "no long secret to build for");
}

/// Every redaction test, its secrets each looked for in turn, and again
/// through the automaton built at once: the same replacements.
#[test]
fn every_redaction_test_passes_looping_and_through_the_automaton() {
    for mode in [Mode::Loop, Mode::Automaton] {
        Matcher::forced(mode, || {
            super::tests::every_secret_is_replaced_and_payers_still_join();
            super::tests::short_secrets_never_damage_the_rest_and_echoed_long_ones_are_replaced();
            super::tests::secrets_in_every_shape_are_replaced_wherever_they_are_echoed();
            super::tests::the_quick_body_replacement_is_the_walks();
            super::tests::echoes_encoded_any_way_member_names_and_a_not_json_bodys_codes_are_replaced();
            super::tests::json_nested_in_strings_past_any_depth_never_overflows_and_keeps_no_secret(
            );
            super::tests::a_secret_cut_short_in_a_findings_message_shows_none_of_it();
            super::large_tests::a_percent_encoded_secret_among_a_hundred_cookies_is_redacted();
            super::large_tests::a_cut_finding_beside_a_secret_is_redacted_among_many_secrets();
        });
    }
    Matcher::forced(Mode::Automaton, || {
        super::large_tests::every_one_of_ten_thousand_distinct_secrets_is_redacted_in_the_recording_and_report();
    });
}
