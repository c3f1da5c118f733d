//! How the profile's values that need care are read: a key never repeated
//! in an error, a timeout said in the flag's words, serde's messages without
//! the string they quote.

use std::time::Duration;

use secrecy::SecretString;
use serde::Deserialize;

/// A key: a string, or an error that does not repeat the value (serde's
/// "invalid type: integer `123…`" would print an unquoted key).
pub(super) fn secret<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<SecretString>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Key {
        Text(String),
        Other(serde::de::IgnoredAny),
    }
    match Option::<Key>::deserialize(d)? {
        Some(Key::Text(key)) => Ok(Some(SecretString::from(key))),
        Some(Key::Other(_)) => Err(serde::de::Error::custom(
            "api_key must be a quoted string, e.g. api_key = \"sk_...\" (its value is not shown)",
        )),
        None => Ok(None),
    }
}

/// serde's message without the string it quotes: a string where a table
/// or a number belongs may be a key put in the wrong place (`[profiles]`
/// then `api_key = "sk_..."`, the profile's name left out, reads as a
/// profile named `api_key`); the message says what was expected without it.
pub(super) fn unquoted(message: &str) -> String {
    match (
        message.strip_prefix("invalid type: string "),
        message.rfind(", expected "),
    ) {
        (Some(_), Some(at)) => format!("invalid type: a string (not shown){}", &message[at..]),
        _ => message.to_owned(),
    }
}

/// `timeout = 10` or `timeout = 1.5`: read as `--timeout` reads its text.
/// Anything else (a string, a boolean, a table) is said in the flag's
/// words, never in serde's (`data did not match any variant of untagged
/// enum`).
pub(super) fn seconds<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<Duration>, D::Error> {
    struct Seconds;
    impl serde::de::Visitor<'_> for Seconds {
        type Value = String;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a number of seconds, e.g. 30 or 0.5")
        }
        fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<String, E> {
            Ok(n.to_string())
        }
        fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<String, E> {
            Ok(n.to_string())
        }
        fn visit_f64<E: serde::de::Error>(self, x: f64) -> Result<String, E> {
            // The shortest text that reads back as the same number: 1.5,
            // not 1.5000000000000000001; nan and inf read as nothing.
            Ok(if x.is_finite() {
                format!("{x}")
            } else {
                String::new()
            })
        }
        fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<String, E> {
            // `timeout = "30"`: a number in quotes; `"abc"` is none.
            Err(E::custom(if crate::cli::looks_like_seconds(text) {
                "timeout: a number of seconds without quotes, e.g. timeout = 30 or 0.5"
            } else {
                "timeout: not a number of seconds, e.g. 30 or 0.5"
            }))
        }
        fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<String, E> {
            Err(E::custom(
                "timeout: not a number of seconds, e.g. 30 or 0.5",
            ))
        }
    }
    let text = d.deserialize_any(Seconds).map_err(|e: D::Error| {
        // A table or an array: serde's words name the type; say the flag's.
        let message = e.to_string();
        if message.starts_with("timeout:") {
            e
        } else {
            serde::de::Error::custom("timeout: not a number of seconds, e.g. 30 or 0.5")
        }
    })?;
    crate::cli::parse_seconds(&text)
        .map(Some)
        .map_err(|reason| serde::de::Error::custom(format!("timeout: {reason}")))
}
