//! Secrets that overlap in a text (one starting inside another, one
//! inside another, a secret overlapping itself): every byte of every
//! occurrence is replaced, each run they cover once, through the loop,
//! the automaton and the switch, and through an exchange's redaction.

use serde_json::{Value, json};

use super::matcher::Matcher;
use super::matcher_tests::obvious;
use super::search::Mode;
use super::*;
use crate::rules::test_support::exchange;

/// Each way a matcher may go: looping, through the automaton, switching.
const MODES: [Mode; 4] = [Mode::Loop, Mode::Automaton, Mode::Lazy, Mode::BuildAfter(0)];

/// `secrets` (value, replacement) listed longest first, as the redactor
/// lists them.
fn listed(secrets: &[(&str, &str)]) -> Secrets {
    let mut secrets: Secrets = secrets
        .iter()
        .map(|(v, r)| ((*v).to_owned(), (*r).to_owned()))
        .collect();
    secrets.sort_by_key(|(v, _)| std::cmp::Reverse(v.len()));
    secrets
}

/// `secrets` and 40 more that never occur (so the matcher has more than
/// 32: the number past which 6afc7ce always built an automaton).
fn with_many(secrets: &[(&str, &str)]) -> Secrets {
    let mut all = listed(secrets);
    all.extend((0..40).map(|n| (format!("unrelated-{n:04}"), REDACTED.to_owned())));
    all.sort_by_key(|(v, _)| std::cmp::Reverse(v.len()));
    all
}

/// Checks that each way replaces `text` as `expected`, as [`obvious`]
/// does, alone and among many secrets.
fn check(secrets: &[(&str, &str)], text: &str, expected: &str) {
    for secrets in [listed(secrets), with_many(secrets)] {
        assert_eq!(obvious(&secrets, text).as_deref(), Some(expected), "{text}");
        for mode in MODES {
            let matcher = Matcher::with_mode(secrets.clone(), mode);
            assert_eq!(
                matcher.scrub(text).as_deref(),
                Some(expected),
                "{mode:?}, {} secrets: {text}",
                secrets.len()
            );
        }
    }
}

/// The reviewer's cases: a secret that starts inside an earlier one is
/// replaced too (leftmost-longest showed 12 of a token's 16 characters, or
/// 8 of the second secret's), as written and with a byte encoded.
#[test]
fn a_secret_starting_inside_an_earlier_one_shows_none_of_its_bytes() {
    let token = [
        ("QQQQRRRRRRRRRRRR", "<token>"),
        ("PPPPPPPP", "<a>"),
        ("PPPPPPPPQQQQ", "<b>"),
    ];
    check(&token, "PPPPPPPPQQQQRRRRRRRRRRRR", "<token>");
    check(&token, "x PPPPPPPPQQQQRRRRRRRRRRRR.", "x <token>.");
    check(&token, "PPPPPPPPQQQQRRRRRRRRRRR%52", "<token>");
    let two = [
        ("ABCDEFGH1234", "<first>"),
        ("1234WXYZ99999999", "<second>"),
    ];
    check(&two, "ABCDEFGH1234WXYZ99999999", "<second>");
    check(&two, "ABCDEFGH1234WXYZ9999999%39", "<second>");
    check(
        &two,
        "%41BCDEFGH1234WXYZ9999999%39 and ABCDEFGH12%334WXYZ99999999",
        "<second> and <second>",
    );
    // Overlapping each other as written and decoded: one run still.
    check(&two, "ABCDEFGH12%334WXYZ99999999", "<second>");
}

/// A secret that overlaps itself (`aaaaaaaa` in nine or more `a`s, or
/// `abababab` in `ababababab`) is replaced over all its occurrences, once;
/// next to each other without overlap, each is replaced on its own.
#[test]
fn overlapping_occurrences_of_one_secret_are_all_replaced() {
    let a = [("aaaaaaaa", "<a>")];
    check(&a, "xaaaaaaaaay", "x<a>y");
    check(&a, &"a".repeat(1000), "<a>");
    check(&a, "aaaa%61aaaa%61", "<a>");
    let ab = [("abababab", "<ab>")];
    check(&ab, "ababababab-abababab", "<ab>-<ab>");
    check(&ab, "abababababababab", "<ab>");
    let word = [("abcdefgh", "<w>")];
    check(&word, "abcdefghabcdefgh", "<w><w>");
}

/// A secret inside another (a token in its `Bearer` header) is one run:
/// one replacement, the longest's.
#[test]
fn a_secret_inside_another_is_replaced_once() {
    let nested = [
        ("Bearer tok_ABCDEFGH12345678", "<header>"),
        ("tok_ABCDEFGH12345678", "<token>"),
        ("ABCDEFGH1234", "<part>"),
    ];
    check(
        &nested,
        "[Bearer tok_ABCDEFGH12345678] tok_ABCDEFGH12345678 ABCDEFGH1234",
        "[<header>] <token> <part>",
    );
    check(&nested, "Bearer%20tok_ABCDEFGH12345678", "<header>");
}

/// The reviewer's exchange: a bearer token and two cookies that overlap it
/// echoed in a header and an `errorCode` (and with a byte encoded, in the
/// message), among few secrets and among many cookies, each way: no byte
/// of any secret is left in the recorded exchange.
#[test]
fn an_exchange_echoing_overlapping_secrets_records_none_of_their_bytes() {
    for cookies in [0, 40] {
        let mut cookie =
            "a=PPPPPPPP; b=PPPPPPPPQQQQ; c=ABCDEFGH1234; d=1234WXYZ99999999".to_owned();
        for n in 0..cookies {
            cookie.push_str(&format!("; k{n}=COOKIE-VALUE-{n:04}"));
        }
        let mut e = exchange(
            "POST",
            "/api/payments/initiate",
            json!({ "referenceNo": "R1" }),
            400,
            json!({
                "isSuccess": false,
                "errorCode": "PPPPPPPPQQQQRRRRRRRRRRRR",
                "message": "ABCDEFGH1234WXYZ9999999%39",
            }),
        );
        e.request.headers = vec![
            (
                "Authorization".to_owned(),
                "Bearer QQQQRRRRRRRRRRRR".to_owned(),
            ),
            ("Cookie".to_owned(), cookie),
            ("X-Echo".to_owned(), "PPPPPPPPQQQQRRRRRRRRRRRR".to_owned()),
        ];
        for mode in [Mode::Loop, Mode::Automaton, Mode::Lazy] {
            let redacted = Matcher::forced(mode, || Redactor::new().exchange(&e));
            let text = serde_json::to_string(&redacted).expect("serializes");
            for part in ["PPPP", "QQQQ", "RRRR", "ABCD", "1234", "WXYZ", "9999"] {
                assert!(
                    !text.contains(part),
                    "{mode:?}, {cookies}: {part} in {text}"
                );
            }
            let body: Value =
                serde_json::from_str(redacted.response.body.as_deref().expect("a body"))
                    .expect("still JSON");
            assert_eq!(body["errorCode"], REDACTED, "{mode:?}");
            assert_eq!(body["message"], REDACTED, "{mode:?}");
            assert!(
                redacted
                    .request
                    .headers
                    .contains(&("X-Echo".to_owned(), REDACTED.to_owned())),
                "{mode:?}: {:?}",
                redacted.request.headers
            );
        }
    }
}

/// Secrets that hold one another (`a` repeated 8 to 199 times, as
/// cookies could be) in a text of `a`s: every one occurs at nearly every
/// byte. Looping stops once those matches cost what the automaton would
/// and the text goes through the automaton, which keeps only the longest
/// secret ending at each byte: one replacement, built at once, not a
/// search per match per secret.
#[test]
fn secrets_holding_one_another_in_a_long_run_switch_to_the_automaton() {
    let secrets: Secrets = (8..200)
        .rev()
        .map(|n| ("a".repeat(n), format!("<{n}>")))
        .collect();
    let matcher = Matcher::with_mode(secrets, Mode::Lazy);
    assert_eq!(matcher.scrub(&"a".repeat(5000)).as_deref(), Some("<199>"));
    assert_eq!(matcher.built(), [true, true], "the looping stopped");
}

/// The ninth review's regression review: a quoted cookie's value with
/// blanks inside the quotes (`sid="  QUOTEDSECRET1  "`) was listed with
/// its blanks, so an echo of the text alone showed it; a cookie holding
/// escapes (`abc%41defgh%zz`) echoed decoded by the server
/// (`abcAdefgh%zz`) showed it too.
#[test]
fn a_quoted_cookie_and_a_cookie_echoed_decoded_are_replaced() {
    for (cookie, echo, parts) in [
        (
            "sid=\"  QUOTEDSECRET1  \"",
            "QUOTEDSECRET1 and \"  QUOTEDSECRET1  \"",
            &["QUOTED"][..],
        ),
        (
            "sid=abc%41defgh%zz",
            "abcAdefgh%zz / abc%41defgh%zz / abc%2541defgh%25zz",
            &["defgh"][..],
        ),
        (
            "sid=p%C3%A4ssw%C3%B6rd12",
            "p\u{e4}ssw\u{f6}rd12",
            &["ssw"][..],
        ),
    ] {
        let mut e = exchange(
            "GET",
            "/api/payments/T-1/status",
            Value::Null,
            200,
            json!({"ok": true}),
        );
        e.request.headers = vec![
            ("Cookie".to_owned(), cookie.to_owned()),
            ("X-Echo".to_owned(), echo.to_owned()),
        ];
        for mode in [Mode::Loop, Mode::Automaton, Mode::Lazy] {
            let redacted = Matcher::forced(mode, || Redactor::new().exchange(&e));
            let text = serde_json::to_string(&redacted).expect("serializes");
            for part in parts {
                assert!(!text.contains(part), "{mode:?}, {cookie}: {part} in {text}");
            }
        }
    }
}

/// The regression review of the decoded form: a cookie value that decodes
/// to blanks (`%20` ten times) made every run of ten blanks in the
/// exchange `[redacted]`, a description's spacing included; one that
/// decodes to blanks around its text is looked for as its text.
#[test]
fn a_cookie_that_decodes_to_blanks_redacts_no_spacing() {
    let blanks = "%20".repeat(10);
    let mut e = exchange(
        "POST",
        "/api/payments/initiate",
        json!({"referenceNo": "R-1", "description": "paid          in full"}),
        200,
        json!({"ok": true}),
    );
    e.request.headers = vec![
        (
            "Cookie".to_owned(),
            format!("blank={blanks}; padded=%20%20PADDEDSECRET%20"),
        ),
        ("X-Echo".to_owned(), "PADDEDSECRET".to_owned()),
    ];
    for mode in [Mode::Loop, Mode::Automaton, Mode::Lazy] {
        let redacted = Matcher::forced(mode, || Redactor::new().exchange(&e));
        let body: Value = serde_json::from_str(redacted.request.body.as_deref().expect("a body"))
            .expect("still JSON");
        assert_eq!(body["description"], "paid          in full", "{mode:?}");
        let text = serde_json::to_string(&redacted).expect("serializes");
        assert!(!text.contains("PADDED"), "{mode:?}: {text}");
    }
}
