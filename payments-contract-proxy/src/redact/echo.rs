//! Secret values replaced wherever else they are echoed: in text (as
//! written or under any percent-encoding of any of its bytes), and in a
//! JSON body's strings and member names (never its numbers or structure).

use serde_json::Value;

use super::Secrets;

/// `text` with the beginning of a secret that ends it before a `…` (a
/// value cut there) replaced by what replaces the secret.
pub(super) fn scrub_cut_ends(text: &str, secrets: &Secrets) -> String {
    let shortest = super::ECHO_MINIMUM / 2;
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('…') {
        let before = &rest[..at];
        // The longest beginning of a secret `before` ends with.
        let hit = secrets
            .iter()
            .filter_map(|(value, shown)| {
                let longest = value.len().saturating_sub(1).min(before.len());
                ((before.len() - longest)..before.len())
                    .filter(|&start| before.is_char_boundary(start))
                    .map(|start| &before[start..])
                    .find(|end| end.chars().count() >= shortest && value.starts_with(end))
                    .map(|end| (end.len(), shown))
            })
            .max_by_key(|(len, _)| *len);
        match hit {
            Some((len, shown)) => {
                out.push_str(&before[..before.len() - len]);
                out.push_str(shown);
            }
            None => out.push_str(before),
        }
        out.push('…');
        rest = &rest[at + '…'.len_utf8()..];
    }
    out.push_str(rest);
    out
}

/// `text` with the values of `secrets` replaced, or `None` when none occurs:
/// as written, and where the text percent-decoded holds one (`%2f` or
/// `%2F`, `%73k` for `sk`: any byte encoded, either case), the encoded
/// span replaced whole.
pub(super) fn scrub_text(text: &str, secrets: &Secrets) -> Option<String> {
    let plain = secrets.iter().any(|(v, _)| text.contains(v.as_str()));
    if !plain && !text.contains('%') {
        return None;
    }
    let mut out = text.to_owned();
    let mut changed = false;
    for (secret, shown) in secrets {
        if out.contains(secret.as_str()) {
            out = out.replace(secret.as_str(), shown);
            changed = true;
        }
        if out.contains('%')
            && let Some(clean) = scrub_encoded(&out, secret, shown)
        {
            out = clean;
            changed = true;
        }
    }
    changed.then_some(out)
}

/// `path` with the values of `secrets` replaced, or `None` when none
/// occurs: in a path of the interface's endpoints
/// (`/api/payments/{transactionId}/status`…) only in its transaction id
/// or reference, since its words are the same in every exchange (they
/// show nothing of a secret, and `check` must find the endpoint again in
/// the recording); any other path as text.
pub(super) fn scrub_path(path: &str, secrets: &Secrets) -> Option<String> {
    let Some(route) = payments_interface::route(path) else {
        return scrub_text(path, secrets);
    };
    if route.raw.is_empty() {
        return None;
    }
    // The id or reference stands just before `/status`, the path's end.
    let end = path.len().checked_sub("/status".len())?;
    let start = end.checked_sub(route.raw.len())?;
    let clean = scrub_text(path.get(start..end)?, secrets)?;
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

/// `text` with each span that percent-decodes to `secret` replaced by
/// `shown`, or `None` when there is none.
fn scrub_encoded(text: &str, secret: &str, shown: &str) -> Option<String> {
    if secret.is_empty() {
        return None;
    }
    // Each decoded byte, and the span of `text` it came from.
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut spans = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        let escaped = (bytes[at] == b'%')
            .then(|| Some((hex(*bytes.get(at + 1)?)?, hex(*bytes.get(at + 2)?)?)))
            .flatten();
        match escaped {
            Some((high, low)) => {
                decoded.push(u8::try_from(high * 16 + low).unwrap_or(0));
                spans.push((at, at + 3));
                at += 3;
            }
            None => {
                decoded.push(bytes[at]);
                spans.push((at, at + 1));
                at += 1;
            }
        }
    }
    let needle = secret.as_bytes();
    let mut out = String::with_capacity(text.len());
    let (mut copied, mut from, mut found) = (0, 0, false);
    while let Some(offset) = decoded
        .get(from..)
        .and_then(|rest| rest.windows(needle.len()).position(|w| w == needle))
    {
        let first = from + offset;
        let last = first + needle.len() - 1;
        let (start, end) = (spans[first].0, spans[last].1);
        if text.is_char_boundary(start) && text.is_char_boundary(end) {
            out.push_str(&text[copied..start]);
            out.push_str(shown);
            copied = end;
            found = true;
        }
        from = last + 1;
    }
    found.then(|| {
        out.push_str(&text[copied..]);
        out
    })
}

/// Replaces `secrets` inside the string values and the member names of
/// `value` (never its numbers or structure, nor a member name the
/// document defines); whether anything changed. A name that becomes
/// another member's gets ` (2)`, ` (3)`… so none is lost and the document
/// stays valid JSON.
fn scrub_strings(value: &mut Value, secrets: &Secrets) -> bool {
    let scrub_name = |name: &str| scrub_text(name, secrets).filter(|_| !documented_name(name));
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
    // as itself, or percent-encoded.
    let may_hold =
        body.contains(['\\', '%']) || secrets.iter().any(|(v, _)| body.contains(v.as_str()));
    if !may_hold {
        return None;
    }
    match serde_json::from_str::<Value>(body) {
        Ok(mut value) => scrub_strings(&mut value, secrets).then(|| value.to_string()),
        Err(_) => scrub_text(body, secrets),
    }
}
