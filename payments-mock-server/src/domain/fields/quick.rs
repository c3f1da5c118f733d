//! A body read the quick way: what nearly every merchant sends, a flat
//! JSON object whose values are strings, integers, `true`, `false` or
//! `null`, scanned in one pass without `serde_json`'s visitor machinery.
//!
//! `serde_json` spends about 300 instructions on each key and each
//! string value (a tenth of a whole initiate went into reading the two
//! dozen strings of a full body), most of it in the generic visitor calls
//! around a short scan. [`read`] answers only where it is certain to read
//! exactly what [`KnownFields::parse`]'s `serde_json` way reads, and
//! returns `None` wherever that is not certain: a nested object or array,
//! a number that is not an integer of `u64` (or, negative, `i64`) range,
//! `-0`, a key with an escape, `serde_json`'s private keys, and anything
//! that is not JSON. The full way then decides, with its own messages.
//! The one-letter escapes (`\n`, `\"`, …) are decoded here; a string
//! with any other (`\u`, or one JSON does not have) is decoded by
//! `serde_json` itself, so `\u` escapes and lone surrogates mean what
//! they mean there. Tests hold both ways to the same fields on generated
//! flat bodies, and the whole reader to the map on any bytes
//! (`super::tests`).

use std::borrow::Cow;

use serde_json::Value;

use super::{KnownFields, Name, Slot, VALUE_MAGIC_KEYS};
use crate::domain::scan::{members, number, string_end};

/// `text` read as a flat JSON object into its known fields; `None` where
/// the full way must decide.
pub(super) fn read(text: &str) -> Option<KnownFields<'_>> {
    let mut body = KnownFields::default();
    members(text, |key, at| {
        if VALUE_MAGIC_KEYS.contains(&key) {
            return None;
        }
        let (slot, end) = value(text, at)?;
        if let Some(name) = Name::of(key) {
            // The last of a repeated key wins, as on the full way.
            body.slots[name as usize] = slot;
        }
        Some(end)
    })?;
    Some(body)
}

/// The text of a string with escapes: the one-letter escapes decoded
/// here, any other (`\u`, or one JSON does not have) left to
/// `serde_json`.
fn unescape(raw: &str) -> Option<String> {
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    // A byte search: `str::find` with a `char` costs about a hundred
    // instructions a call on these short runs, and a backslash is ASCII,
    // so the position is a character boundary.
    while let Some(at) = rest.bytes().position(|b| b == b'\\') {
        out.push_str(&rest[..at]);
        out.push(match rest.as_bytes().get(at + 1)? {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            _ => return None,
        });
        rest = &rest[at + 2..];
    }
    out.push_str(rest);
    Some(out)
}

/// The value at `i` and where it ends.
fn value(text: &str, i: usize) -> Option<(Slot<'_>, usize)> {
    let b = text.as_bytes();
    let word = |w: &[u8], slot: Slot<'static>| b[i..].starts_with(w).then_some((slot, i + w.len()));
    match *b.get(i)? {
        b'"' => {
            let (end, escaped) = string_end(b, i + 1)?;
            let slot = if escaped {
                let decoded = match unescape(&text[i + 1..end]) {
                    Some(decoded) => decoded,
                    None => serde_json::from_str(&text[i..=end]).ok()?,
                };
                Slot::Str(Cow::Owned(decoded))
            } else {
                Slot::Str(Cow::Borrowed(&text[i + 1..end]))
            };
            Some((slot, end + 1))
        }
        b't' => word(b"true", Slot::Value(Value::Bool(true))),
        b'f' => word(b"false", Slot::Value(Value::Bool(false))),
        b'n' => word(b"null", Slot::Value(Value::Null)),
        b'-' | b'0'..=b'9' => integer(text, i),
        _ => None,
    }
}

/// An integer that `serde_json` hands over as a `u64` (or, negative, an
/// `i64`): its text is then the number's own decimal text, which is what
/// it was sent as. Fractions, exponents, `-0`, leading zeros and numbers
/// out of that range are left to the full way.
fn integer(text: &str, start: usize) -> Option<(Slot<'_>, usize)> {
    let n = number(text.as_bytes(), start)?;
    let literal = &text[start..n.end];
    let fits = n.integer
        && if literal.starts_with('-') {
            literal != "-0" && literal.parse::<i64>().is_ok()
        } else {
            literal.parse::<u64>().is_ok()
        };
    fits.then_some((Slot::Number(Cow::Borrowed(literal)), n.end))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::tests::{ALL, shown};
    use super::super::{Field, Fields, KnownFields};
    use super::read;

    /// What the full way (`serde_json`'s visitor) reads.
    fn full_way(text: &str) -> Result<Vec<String>, String> {
        KnownFields::parse_fully(text.as_bytes())
            .map(|b| shown(&b))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn a_full_body_is_read_the_quick_way_and_borrows_its_strings() {
        let text = r#" {"merchantId":"6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60", "referenceNo" : "R-1","amount":1050,"quantity":-3,"payerId":null,"x":[1],"extraProperties":"{\"a\":\"b\"}"} "#;
        // An array value (under any key) is the full way's.
        assert!(read(text).is_none());
        let text = text.replace(r#""x":[1],"#, r#""x":true,"#);
        let body = read(&text).expect("the quick way");
        assert_eq!(Ok(shown(&body)), full_way(&text));
        assert!(matches!(
            body.field(super::super::Name::ReferenceNo),
            Some(Field::Str("R-1"))
        ));
        assert!(matches!(
            body.field(super::super::Name::ExtraProperties),
            Some(Field::Str(r#"{"a":"b"}"#))
        ));
    }

    #[test]
    fn what_the_quick_way_leaves_to_the_full_way() {
        for text in [
            "",
            "[]",
            "{",
            r#"{"a":1,}"#,
            r#"{"a" 1}"#,
            r#"{"amount":1.5}"#,
            r#"{"amount":1e2}"#,
            r#"{"amount":-0}"#,
            r#"{"amount":01}"#,
            r#"{"amount":-}"#,
            r#"{"amount":18446744073709551616}"#,
            r#"{"amount":-9223372036854775809}"#,
            r#"{"amount":{}}"#,
            r#"{"ref\u0065renceNo":"x"}"#,
            r#"{"$serde_json::private::Number":"1"}"#,
            r#"{"a":"\ud800"}"#,
            r#"{"a":"\x"}"#,
            "{\"a\":\"tab\there\"}",
            r#"{"a":tru}"#,
            r#"{"a":truex}"#,
            r#"{"a":1} x"#,
            r#"{"a":"unterminated}"#,
        ] {
            assert!(read(text).is_none(), "{text}");
        }
        for text in [
            "{}",
            " \t\r\n{ } ",
            r#"{"amount":18446744073709551615,"quantity":-9223372036854775808}"#,
            r#"{"a":"\"\\\/\b\f\n\r\t\u00e9\ud83d\ude80"}"#,
            r#"{"referenceNo":"a","referenceNo":"b"}"#,
            r#"{"description":"ünï ✓ 🚀"}"#,
        ] {
            let body = read(text).expect(text);
            assert_eq!(Ok(shown(&body)), full_way(text), "{text}");
        }
    }

    /// A JSON text for a string value, raw or escaped.
    fn string_value() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-zA-Z0-9 /?#%.-]{0,12}".prop_map(|s| format!("\"{s}\"")),
            "[ü✓🚀\"\\\\\u{1}\t]{0,6}".prop_map(|s| serde_json::Value::String(s).to_string()),
            Just(r#""\ud800""#.to_owned()),
            Just(r#""\u00E9\/""#.to_owned()),
            prop::collection::vec(
                prop::sample::select(vec![
                    "a", "é", r"\\", r#"\""#, r"\/", r"\b", r"\f", r"\n", r"\r", r"\t", r"\u0041",
                    r"\q", r"\", r"\u12", "\u{7f}",
                ]),
                0..6,
            )
            .prop_map(|parts| format!("\"{}\"", parts.concat())),
            Just("\"raw\ttab\"".to_owned()),
        ]
    }

    fn any_value() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => string_value(),
            2 => any::<i64>().prop_map(|n| n.to_string()),
            1 => any::<u64>().prop_map(|n| n.to_string()),
            1 => prop::sample::select(vec![
                "true", "false", "null", "-0", "0", "01", "1.0", "1e3", "-", "{}", "[1]",
                "18446744073709551616", "-9223372036854775809", "tru",
            ])
            .prop_map(str::to_owned),
        ]
    }

    fn any_key() -> impl Strategy<Value = String> {
        prop_oneof![
            6 => prop::sample::select(ALL.to_vec()).prop_map(|n| format!("\"{}\"", n.as_str())),
            1 => Just("\"other\"".to_owned()),
            1 => Just("\"\"".to_owned()),
            1 => Just(r#""$serde_json::private::Number""#.to_owned()),
            1 => Just(r#""amoun\u0074""#.to_owned()),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]

        #[test]
        fn the_quick_way_reads_what_the_full_way_reads(
            entries in prop::collection::vec((any_key(), any_value()), 0..8),
            space in prop::sample::select(vec!["", " ", "\n\t", "\r "]),
            trailing in prop::sample::select(vec!["", " ", ",", "x"]),
        ) {
            let inner: Vec<String> = entries
                .iter()
                .map(|(k, v)| format!("{k}{space}:{space}{v}"))
                .collect();
            let text = format!("{space}{{{space}{}{space}}}{trailing}", inner.join(","));
            if let Some(body) = read(&text) {
                prop_assert_eq!(Ok(shown(&body)), full_way(&text));
            }
        }
    }
}
