//! Secret values replaced wherever else they are echoed: in a path (an
//! endpoint's only in its id or reference), and in a JSON body's strings
//! and member names (never its numbers or structure), each text through
//! the exchange's one [`Matcher`].

use serde_json::Value;

use super::matcher::Matcher;

/// `path` with the values of `secrets` replaced, or `None` when none
/// occurs: in a path of the interface's endpoints
/// (`/api/payments/{transactionId}/status`…) only in its transaction id
/// or reference, since its words are the same in every exchange (they
/// show nothing of a secret, and `check` must find the endpoint again in
/// the recording); any other path as text.
pub(super) fn scrub_path(path: &str, secrets: &Matcher) -> Option<String> {
    let Some(route) = payments_interface::route(path) else {
        return secrets.scrub(path);
    };
    if route.raw.is_empty() {
        return None;
    }
    // The id or reference stands just before `/status`, the path's end.
    let end = path.len().checked_sub("/status".len())?;
    let start = end.checked_sub(route.raw.len())?;
    let clean = secrets.scrub(path.get(start..end)?)?;
    Some(format!("{}{clean}{}", &path[..start], &path[end..]))
}

/// Whether `name` is a member name the interface document defines (the
/// envelope's, a request's, a `data`'s): the same in every exchange, so
/// never rewritten for a secret it happens to contain.
fn documented_name(name: &str) -> bool {
    use payments_interface::fields::{
        CONFIRM_DATA, CONFIRM_REQUEST, INITIATE_DATA, INITIATE_REQUEST, STATUS_DATA,
    };
    payments_interface::ENVELOPE_FIELDS.contains(&name)
        || [
            INITIATE_REQUEST,
            CONFIRM_REQUEST,
            INITIATE_DATA,
            CONFIRM_DATA,
            STATUS_DATA,
        ]
        .iter()
        .any(|table| table.iter().any(|field| field.name == name))
}

/// Replaces `secrets` inside the string values and the member names of
/// `value` (never its numbers or structure, nor a member name the
/// document defines); whether anything changed. A name that becomes
/// another member's gets ` (2)`, ` (3)`… so none is lost and the document
/// stays valid JSON.
fn scrub_strings(value: &mut Value, secrets: &Matcher) -> bool {
    let scrub_name = |name: &str| secrets.scrub(name).filter(|_| !documented_name(name));
    if let Value::Object(map) = value
        && map.keys().any(|k| scrub_name(k).is_some())
    {
        let members = std::mem::take(map);
        let mut renamed = Vec::with_capacity(members.len());
        for (key, member) in members {
            match scrub_name(&key) {
                Some(clean) => renamed.push((clean, member, true)),
                None => renamed.push((key, member, false)),
            }
        }
        // Names left as they were first, so a replaced one never takes
        // theirs.
        renamed.sort_by_key(|(_, _, scrubbed)| *scrubbed);
        for (key, mut member, _) in renamed {
            scrub_strings(&mut member, secrets);
            let mut name = key.clone();
            let mut n = 1;
            while map.contains_key(&name) {
                n += 1;
                name = format!("{key} ({n})");
            }
            map.insert(name, member);
        }
        return true;
    }
    match value {
        Value::String(text) => match secrets.scrub(text) {
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
pub(super) fn scrub_body(body: &str, secrets: &Matcher) -> Option<String> {
    // Without a JSON escape, a string or member name appears in the text
    // as itself, between quotes: a secret it holds as written, the text
    // holds; one it holds percent-encoded, the text holds decoded (a `%`
    // and two hex digits never take in a quote). So a body without one
    // costs a look through its text, not one per string.
    let may_hold =
        body.contains('\\') || secrets.occurs_in(body) || secrets.occurs_decoded_in(body);
    if !may_hold {
        return None;
    }
    match serde_json::from_str::<Value>(body) {
        Ok(mut value) => scrub_strings(&mut value, secrets).then(|| value.to_string()),
        Err(_) => secrets.scrub(body),
    }
}
