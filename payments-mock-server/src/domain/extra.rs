//! `extraProperties` as the mock keeps it: the compact text of the JSON
//! object the field holds, as `serde_json`'s `Value` writes it (keys in
//! order, the last of a repeated key, no spaces), whichever way the
//! merchant spelled it.

use std::collections::BTreeMap;

use serde_json::Value;
use serde_json::value::RawValue;

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
/// writing that out again cost about a tenth of an initiate
/// (BENCHMARKS.md, "The hot paths at the framework's limit"). `None` for
/// anything else, which the full way decides. A test holds both ways to
/// the same text.
fn flat_object_text(text: &str) -> Option<String> {
    // Keys with escapes cannot be borrowed: refused here, so taken the
    // full way. A repeated key keeps its last value, as in a `Value`.
    let entries: BTreeMap<&str, &RawValue> = serde_json::from_str(text).ok()?;
    let mut out = String::with_capacity(text.len());
    out.push('{');
    for (n, (key, value)) in entries.iter().enumerate() {
        // `serde_json` reads an object whose first key is one of its
        // private ones as something else.
        if key.starts_with("$serde_json::private::") {
            return None;
        }
        let raw = value.get();
        let as_read = match raw.as_bytes().first() {
            Some(b'"') => !raw.contains('\\'),
            Some(b'{' | b'[') | None => false,
            Some(b't' | b'f' | b'n') => true,
            // A number without an exponent (`serde_json` writes `1E5` as
            // `1e+5`).
            Some(_) => !raw.contains(['e', 'E']),
        };
        if !as_read {
            return None;
        }
        if n > 0 {
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
