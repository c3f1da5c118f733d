//! `extraProperties` as the mock keeps it: the compact text of the JSON
//! object the field holds, as `serde_json`'s `Value` writes it (keys in
//! order, the last of a repeated key, no spaces), whichever way the
//! merchant spelled it.

use serde_json::Value;

use crate::domain::scan::{members, number, string_end};

/// The kept text of the object `text` holds; `None` when it holds no JSON
/// object.
pub(crate) fn object_text(text: &str) -> Option<String> {
    if let Some(quick) = flat_object_text(text) {
        return Some(quick);
    }
    match serde_json::from_str::<Value>(text) {
        Ok(object @ Value::Object(_)) => Some(object.to_string()),
        _ => None,
    }
}

/// [`object_text`] the quick way, for what nearly every merchant sends: a
/// flat object whose keys and string values have no escapes, and whose
/// numbers have no exponent. Each value is then written as read (a
/// number's digits are kept as read: `serde_json`'s
/// `arbitrary_precision`), in key order; parsing it into a `Value` and
/// writing that out again cost about a tenth of an initiate, and reading
/// it through `serde_json` at all still 1.5k instructions (BENCHMARKS.md,
/// "The hot paths at the framework's limit"). `None` for anything else,
/// which the full way decides. A test holds both ways to the same text.
fn flat_object_text(text: &str) -> Option<String> {
    let b = text.as_bytes();
    let mut entries: Vec<(&str, &str)> = Vec::new();
    members(text, |key, start| {
        // `serde_json` reads an object whose first key is one of its
        // private ones as something else.
        if key.starts_with("$serde_json::private::") {
            return None;
        }
        let word = |w: &[u8]| b[start..].starts_with(w).then_some(start + w.len());
        let end = match *b.get(start)? {
            b'"' => match string_end(b, start + 1)? {
                (end, false) => end + 1,
                (_, true) => return None,
            },
            b't' => word(b"true")?,
            b'f' => word(b"false")?,
            b'n' => word(b"null")?,
            // Without an exponent (`serde_json` writes `1E5` as `1e+5`).
            b'-' | b'0'..=b'9' => match number(b, start)? {
                n if n.exponent => return None,
                n => n.end,
            },
            // Nesting is the full way's.
            _ => return None,
        };
        entries.push((key, &text[start..end]));
        Some(end)
    })?;
    // Key order; of a repeated key the last (a stable sort keeps their
    // order), as in a `Value`.
    entries.sort_by(|x, y| x.0.cmp(y.0));
    let mut out = String::with_capacity(text.len());
    out.push('{');
    for (n, (key, raw)) in entries.iter().enumerate() {
        if entries.get(n + 1).is_some_and(|next| next.0 == *key) {
            continue;
        }
        if out.len() > 1 {
            out.push(',');
        }
        out.push('"');
        out.push_str(key);
        out.push_str("\":");
        out.push_str(raw);
    }
    out.push('}');
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full_way(text: &str) -> Option<String> {
        match serde_json::from_str::<Value>(text) {
            Ok(object @ Value::Object(_)) => Some(object.to_string()),
            _ => None,
        }
    }

    #[test]
    fn what_merchants_send_is_taken_the_quick_way() {
        for (given, kept) in [
            (
                r#"{"channel":"app","promo":"NOV26"}"#,
                r#"{"channel":"app","promo":"NOV26"}"#,
            ),
            (r#" { "b" : 1 , "a" : "x" } "#, r#"{"a":"x","b":1}"#),
            (r#"{"a":1,"a":2}"#, r#"{"a":2}"#),
            (
                r#"{"n":1.50,"m":-0,"f":false,"t":true,"z":null}"#,
                r#"{"f":false,"m":-0,"n":1.50,"t":true,"z":null}"#,
            ),
            (r#"{"ü":"✓ 🚀"}"#, r#"{"ü":"✓ 🚀"}"#),
            ("{}", "{}"),
        ] {
            assert_eq!(flat_object_text(given).as_deref(), Some(kept), "{given}");
            assert_eq!(full_way(given).as_deref(), Some(kept), "{given}");
        }
    }

    #[test]
    fn anything_else_is_left_to_the_full_way() {
        for given in [
            r#"{"a":{"c":1,"b":2}}"#,
            r#"{"a":[1, 2]}"#,
            r#"{"e":1E+5}"#,
            r#"{"e":0e0}"#,
            r#"{"a":"\u0041"}"#,
            r#"{"\u0061":1}"#,
            r#"{"$serde_json::private::Number":"1"}"#,
            r#"{"$serde_json::private::RawValue":"1"}"#,
            "[]",
            "1",
            "",
            "{",
            r#"{"a":1}x"#,
        ] {
            assert_eq!(flat_object_text(given), None, "{given}");
            assert_eq!(object_text(given), full_way(given), "{given}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4096))]

        /// Both ways give the same text, or both refuse, on JSON-ish text
        /// of keys, strings, numbers, literals, nesting and escapes.
        #[test]
        fn both_ways_agree(text in r#"[ {}\[\]",:a-c0-9.eE+\-\\u$]{0,40}|\{("[a-c$]{0,3}" ?: ?(-?[0-9]{1,3}(\.[0-9]{1,2})?([eE][+-]?[0-9])?|"[a-z\\/ ]{0,4}"|true|null|\{\}|\[1\]),?){0,5}\}"#) {
            proptest::prop_assert_eq!(object_text(&text), full_way(&text));
        }
    }
}
