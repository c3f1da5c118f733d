//! A body's secrets replaced: the usual body read once without building a
//! `Value` ([`Redactor::quick_body`]), anything else walked as JSON, a
//! body that is not JSON but names a secret field replaced whole.

use serde_json::Value;

use super::{Found, REDACTED, Redactor, Secrets};
use crate::json::{self, Json, Shape};

impl Redactor {
    /// A body with its secrets replaced: walked as JSON, or replaced whole
    /// when it is not JSON and mentions a secret field.
    pub fn body(&self, body: &str) -> String {
        self.replaced_body(body, None)
            .unwrap_or_else(|| body.to_owned())
    }

    /// [`Redactor::body`], `None` when nothing changed.
    pub(super) fn replaced_body(&self, body: &str, met: Found<'_>) -> Option<String> {
        self.replaced_body_of(body, met, None)
    }

    /// [`Redactor::replaced_body`] of a body whose object may have been
    /// read already (`object`: its fields).
    pub(super) fn replaced_body_of(
        &self,
        body: &str,
        met: Found<'_>,
        object: Option<&json::Object<'_>>,
    ) -> Option<String> {
        // Without an escape, a secret field's name appears as itself: a
        // body that names none has nothing to replace (most answers).
        if !body.contains('\\') && !body.contains("confirmationCode") && !body.contains("payerId") {
            return None;
        }
        let mut met = met;
        if let Some(quick) = self.quick_body(body, &mut met, object) {
            return quick;
        }
        self.walked_body(body, met)
    }

    /// [`Redactor::replaced_body`] by walking the body as a `Value`.
    pub(super) fn walked_body(&self, body: &str, met: Found<'_>) -> Option<String> {
        match serde_json::from_str::<Value>(body) {
            Ok(mut value) => {
                let mut met = met;
                self.walk(&mut value, &mut met, 0)
                    .then(|| value.to_string())
            }
            // JSON nested deeper than serde_json reads (128) may spell a
            // secret field's name with escapes: replaced whole too.
            Err(e) if names_a_secret(body) || (too_deep(&e) && body.contains("\\u")) => {
                // Replaced whole; its secret values still met, so an echo
                // of them elsewhere (the answer's) is replaced too.
                if let Some(met) = met {
                    self.scan_not_json(body, met);
                }
                Some(if too_deep(&e) {
                    "[redacted: a body nested too deep to read, which may name a secret field]"
                        .to_owned()
                } else {
                    "[redacted: a body that is not JSON names a secret field]".to_owned()
                })
            }
            Err(_) => None,
        }
    }

    /// The values a body that is not JSON gives its secret fields, read
    /// leniently: `"confirmationCode"` or `"payerId"` (or either name
    /// bare), then `:` or `=`, then a JSON string, or a run of characters
    /// up to a delimiter.
    fn scan_not_json(&self, body: &str, met: &mut Secrets) {
        static FIELD: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
            regex::Regex::new(
                r#""?(confirmationCode|payerId)"?\s*[:=]\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,;&}\]"]+))"#,
            )
            .expect("a valid pattern")
        });
        for found in FIELD.captures_iter(body) {
            let value = match (found.get(2), found.get(3)) {
                (Some(quoted), _) => {
                    serde_json::from_str::<String>(&format!("\"{}\"", quoted.as_str()))
                        .unwrap_or_else(|_| quoted.as_str().to_owned())
                }
                (None, Some(bare)) => bare.as_str().to_owned(),
                (None, None) => continue,
            };
            if value.is_empty() {
                continue;
            }
            let shown = if &found[1] == "payerId" {
                self.token(&value)
            } else {
                REDACTED.to_owned()
            };
            met.push((value, shown));
        }
    }

    /// [`Redactor::walked_body`] without building a `Value`, for the
    /// usual body (an initiate's or a confirm's): a JSON object whose
    /// secret fields are top-level strings, numbers or null and whose
    /// other values hold nothing the walk would change (no escape, no
    /// secret field's name). The same text and the same secrets met, in
    /// the same order: `Some(None)` when nothing changes. `None` when the
    /// body is not that usual one, and the walk decides.
    pub(super) fn quick_body(
        &self,
        body: &str,
        met: &mut Found<'_>,
        read: Option<&json::Object<'_>>,
    ) -> Option<Option<String>> {
        let parsed;
        let object = match read {
            Some(object) => object,
            None => {
                let json::Body::Object(object) = json::Body::of(body) else {
                    return None;
                };
                parsed = object;
                &parsed
            }
        };
        // As `serde_json::Map` holds them: sorted by key, a repeated key's
        // last value.
        let mut fields: Vec<(&str, Json<'_>)> = object
            .fields()
            .iter()
            .rev()
            .map(|(key, value)| (key.as_ref(), *value))
            .collect();
        fields.sort_by(|a, b| a.0.cmp(b.0));
        fields.dedup_by(|later, kept| later.0 == kept.0);
        let names = |text: &str| text.contains("confirmationCode") || text.contains("payerId");
        let mut found: Secrets = Vec::new();
        let mut replaced: Vec<Option<String>> = Vec::with_capacity(fields.len());
        for (key, value) in &fields {
            let replacement = match (*key, value.shape()) {
                ("confirmationCode" | "payerId", Shape::Null) => None,
                ("confirmationCode", Shape::String | Shape::Number) => {
                    let leaf = match value.as_str() {
                        Some(text) => text.into_owned(),
                        None => value.number_text()?.into_owned(),
                    };
                    found.push((leaf, REDACTED.to_owned()));
                    Some(serde_json::to_string(REDACTED).ok()?)
                }
                ("payerId", Shape::String) => {
                    let payer = value.as_str()?.into_owned();
                    let token = self.token(&payer);
                    let quoted = serde_json::to_string(&token).ok()?;
                    found.push((payer, token));
                    Some(quoted)
                }
                ("confirmationCode" | "payerId", _) => return None,
                (_, Shape::String) => {
                    let text = value.as_str()?;
                    let escaped_json =
                        text.contains('\\') && text.trim_start().starts_with(['{', '[']);
                    if names(&text) || escaped_json {
                        return None;
                    }
                    None
                }
                (_, Shape::Object | Shape::Array) => {
                    if value.text().contains('\\') || names(value.text()) {
                        return None;
                    }
                    None
                }
                _ => None,
            };
            replaced.push(replacement);
        }
        if let Some(met) = met.as_deref_mut() {
            met.extend(found);
        }
        if replaced.iter().all(Option::is_none) {
            return Some(None);
        }
        // Written as `Value` writes itself: compact, keys in order.
        let mut out = String::with_capacity(body.len() + 32);
        out.push('{');
        for (n, ((key, value), replacement)) in fields.iter().zip(&replaced).enumerate() {
            if n > 0 {
                out.push(',');
            }
            if key.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\') {
                out.push_str(&serde_json::to_string(key).ok()?);
            } else {
                out.push('"');
                out.push_str(key);
                out.push('"');
            }
            out.push(':');
            match replacement {
                Some(text) => out.push_str(text),
                None => match value.shape() {
                    Shape::String if !value.text().contains('\\') => out.push_str(value.text()),
                    Shape::Null | Shape::Bool => out.push_str(value.text()),
                    _ => out.push_str(&value.to_string()),
                },
            }
        }
        out.push('}');
        Some(Some(out))
    }

    /// Replaces secrets in `value`, noting the string values replaced in
    /// `met`; whether anything changed. `depth`: the objects and arrays
    /// around `value`, counted across the JSON held in strings it is
    /// inside of (each string's JSON is read afresh, so serde_json's own
    /// limit of 128 would start again at each; the walk recurses, and a
    /// body of strings holding JSON in strings, 16 MiB of it, would
    /// otherwise overflow the stack).
    fn walk(&self, value: &mut Value, met: &mut Found<'_>, depth: usize) -> bool {
        match value {
            Value::Object(map) => {
                let mut changed = false;
                for (key, inner) in map.iter_mut() {
                    match (key.as_str(), &*inner) {
                        ("confirmationCode", Value::Null) => {}
                        ("confirmationCode", _) => {
                            if let Some(met) = met.as_deref_mut() {
                                // A code sent as a number or inside a
                                // structure is a secret all the same.
                                leaves(inner, &mut |leaf| {
                                    met.push((leaf, REDACTED.to_owned()));
                                });
                            }
                            *inner = Value::String(REDACTED.to_owned());
                            changed = true;
                        }
                        ("payerId", Value::String(payer)) => {
                            let token = self.token(payer);
                            if let Some(met) = met.as_deref_mut() {
                                met.push((payer.clone(), token.clone()));
                            }
                            *inner = Value::String(token);
                            changed = true;
                        }
                        ("payerId", Value::Null) => {}
                        ("payerId", other) => {
                            let text = other.to_string();
                            let token = self.token(&text);
                            if let Some(met) = met.as_deref_mut() {
                                leaves(other, &mut |leaf| met.push((leaf, token.clone())));
                            }
                            *inner = Value::String(token);
                            changed = true;
                        }
                        _ => changed |= self.walk(inner, met, depth + 1),
                    }
                }
                changed
            }
            Value::Array(items) => items
                .iter_mut()
                .fold(false, |c, v| self.walk(v, met, depth + 1) | c),
            // JSON held in a string (extraProperties): walked too, also
            // when its keys are spelled with escapes.
            Value::String(text) => {
                let names = names_a_secret(text);
                let escaped_json = text.contains('\\') && text.trim_start().starts_with(['{', '[']);
                if !names && !escaped_json {
                    return false;
                }
                if depth + nesting(text) > DEPTH {
                    return self.unread(text, met);
                }
                match serde_json::from_str::<Value>(text) {
                    Ok(mut inner) if inner.is_object() || inner.is_array() => {
                        let changed = self.walk(&mut inner, met, depth);
                        if changed {
                            *text = inner.to_string();
                        }
                        changed
                    }
                    _ if names => {
                        // Text such as `confirmationCode=…`: its values
                        // are still looked for elsewhere.
                        if let Some(met) = met.as_deref_mut() {
                            for (k, v) in url::form_urlencoded::parse(text.as_bytes()) {
                                if k.ends_with("confirmationCode") {
                                    met.push((v.into_owned(), REDACTED.to_owned()));
                                } else if k.ends_with("payerId") {
                                    met.push((v.to_string(), self.token(&v)));
                                }
                            }
                        }
                        *text = "[redacted: text that names a secret field]".to_owned();
                        true
                    }
                    Err(e) if too_deep(&e) => self.unread(text, met),
                    _ => false,
                }
            }
            _ => false,
        }
    }

    /// A string of JSON nested too deep to walk: replaced whole when it
    /// may name a secret field (as written, or spelled with `\u`
    /// escapes), its values read leniently for the echo pass; else left.
    fn unread(&self, text: &mut String, met: &mut Found<'_>) -> bool {
        if !names_a_secret(text) && !text.contains("\\u") {
            return false;
        }
        if let Some(met) = met.as_deref_mut() {
            self.scan_not_json(text, met);
        }
        *text =
            "[redacted: JSON nested too deep to read, which may name a secret field]".to_owned();
        true
    }
}

/// The most objects and arrays the walk goes into, counted across the
/// JSON held in strings: as deep as serde_json reads one document. JSON
/// held in a string that would go deeper is not read (see
/// [`Redactor::unread`]).
const DEPTH: usize = 128;

/// How deep the objects and arrays of JSON text nest (of text that is not
/// JSON, about that), read without recursing.
fn nesting(text: &str) -> usize {
    let (mut depth, mut deepest) = (0_usize, 0_usize);
    let (mut in_string, mut escaped) = (false, false);
    for b in text.bytes() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// Whether `text` names a secret field as written.
fn names_a_secret(text: &str) -> bool {
    text.contains("confirmationCode") || text.contains("payerId")
}

/// Whether serde_json stopped reading at its nesting limit.
fn too_deep(e: &serde_json::Error) -> bool {
    e.to_string().starts_with("recursion limit exceeded")
}

/// Hands every string and number inside `value` (itself included) to `on`,
/// as text.
fn leaves(value: &Value, on: &mut dyn FnMut(String)) {
    match value {
        Value::String(s) => on(s.clone()),
        Value::Number(n) => on(n.to_string()),
        Value::Array(items) => items.iter().for_each(|v| leaves(v, on)),
        Value::Object(map) => map.values().for_each(|v| leaves(v, on)),
        Value::Bool(_) | Value::Null => {}
    }
}
