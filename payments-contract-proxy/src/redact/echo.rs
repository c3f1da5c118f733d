//! Secret values replaced wherever else they are echoed: in text, and in a
//! JSON body's strings (never its keys, numbers or structure).

use serde_json::Value;

use super::Secrets;

/// `text` with the values of `secrets` replaced, or `None` when none occurs.
pub(super) fn scrub_text(text: &str, secrets: &Secrets) -> Option<String> {
    if !secrets.iter().any(|(v, _)| text.contains(v.as_str())) {
        return None;
    }
    let mut out = text.to_owned();
    for (secret, shown) in secrets {
        if out.contains(secret.as_str()) {
            out = out.replace(secret.as_str(), shown);
        }
    }
    Some(out)
}

/// Replaces `secrets` inside the string values of `value` (never its keys,
/// numbers or structure); whether anything changed.
fn scrub_strings(value: &mut Value, secrets: &Secrets) -> bool {
    match value {
        Value::String(text) => match scrub_text(text, secrets) {
            Some(clean) => {
                *text = clean;
                true
            }
            None => false,
        },
        Value::Array(items) => items
            .iter_mut()
            .fold(false, |c, v| scrub_strings(v, secrets) | c),
        Value::Object(map) => map
            .values_mut()
            .fold(false, |c, v| scrub_strings(v, secrets) | c),
        _ => false,
    }
}

/// A body's text with the values of `secrets` replaced in its JSON
/// strings (never its keys, numbers or structure), or as text when it is
/// not JSON; `None` when none occurs.
pub(super) fn scrub_body(body: &str, secrets: &Secrets) -> Option<String> {
    // Without an escape, a value inside a JSON string appears in the text
    // as itself.
    let may_hold = body.contains('\\') || secrets.iter().any(|(v, _)| body.contains(v.as_str()));
    if !may_hold {
        return None;
    }
    match serde_json::from_str::<Value>(body) {
        Ok(mut value) => scrub_strings(&mut value, secrets).then(|| value.to_string()),
        Err(_) => scrub_text(body, secrets),
    }
}
