//! Secrets replaced before an exchange is recorded (`--record`, CONTRACT
//! section 16), reported or shown in the console.
//!
//! Replaced: the values of `Authorization`, `Proxy-Authorization`,
//! `Cookie` and `Set-Cookie`; `confirmationCode` anywhere in a JSON body
//! (nested objects and JSON held in strings, such as `extraProperties`,
//! included) or the query. `payerId` becomes a keyed token
//! (`payer-` and 16 hex digits of HMAC-SHA-256): the same value always gives
//! the same token within one recording, so exchanges still join, and the
//! key is random per recording and never written. A body that is not JSON
//! but mentions either field is replaced whole. Then every secret value of
//! either side (of [`ECHO_MINIMUM`] characters or more) is replaced
//! wherever else it is echoed. The console shows exchanges through the
//! same redactor.

use hmac::{Hmac, KeyInit as _, Mac as _};
use serde_json::Value;
use sha2::Sha256;

use super::exchange::{Exchange, Message};
use super::json::{self, Json, Shape};

/// What a URL component encodes (RFC 3986's unreserved characters stay).
const COMPONENT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// What a replaced secret reads as.
pub const REDACTED: &str = "[redacted]";

/// Headers whose values are secrets.
const SECRET_HEADERS: [&str; 4] = [
    "authorization",
    "proxy-authorization",
    "cookie",
    "set-cookie",
];

/// Secret values found in an exchange, each with what replaces it,
/// longest first.
pub type Secrets = Vec<(String, String)>;

/// The shortest secret value replaced wherever it appears (shorter ones are
/// replaced only where they stand: anywhere, `2026` would hit a date).
pub const ECHO_MINIMUM: usize = 8;

/// Replaces the secrets of exchanges (one key per recording).
pub struct Redactor {
    /// HMAC-SHA-256 with the recording's key already absorbed: each token
    /// clones it rather than keying again.
    mac: Hmac<Sha256>,
    /// Secrets of the proxy itself (the credentials of `--upstream`),
    /// replaced wherever they appear.
    own: Secrets,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Redactor { key: [redacted] }")
    }
}

impl Default for Redactor {
    fn default() -> Self {
        Self::new()
    }
}

/// Secret values met while a request body is replaced, for the echo pass.
type Found<'a> = Option<&'a mut Secrets>;

impl Redactor {
    /// A redactor with a fresh random key.
    pub fn new() -> Self {
        let mut key = [0u8; 32];
        rand::fill(&mut key);
        let mac = <Hmac<Sha256>>::new_from_slice(&key).expect("HMAC takes a key of any length");
        Self {
            mac,
            own: Vec::new(),
        }
    }

    /// Also replaces `secret` (the proxy's own, such as the credentials of
    /// `--upstream`) wherever it appears, when it is long enough to tell
    /// from other text.
    pub fn also(mut self, secret: &str) -> Self {
        if secret.chars().count() >= ECHO_MINIMUM {
            self.own.push((secret.to_owned(), REDACTED.to_owned()));
            self.own.sort_by_key(|(v, _)| std::cmp::Reverse(v.len()));
        }
        self
    }

    /// The token of a payerId: keyed, so a list of likely payer ids cannot
    /// be hashed to find which one it was.
    pub fn token(&self, payer: &str) -> String {
        let mut mac = self.mac.clone();
        mac.update(payer.as_bytes());
        let digest = mac.finalize().into_bytes();
        let mut first = [0u8; 8];
        first.copy_from_slice(&digest[..8]);
        format!("payer-{:016x}", u64::from_be_bytes(first))
    }

    /// `exchange` with every secret replaced: by where it stands (the
    /// headers, fields and parameters above), then, for values of
    /// eight characters or more, wherever else the same value
    /// appears (an answer that echoes the key or the code in a message, a
    /// path that holds a payer id): in the path, the query, header values,
    /// and the string values of a JSON body (never its numbers or
    /// structure); a body that is not JSON as text.
    pub fn exchange(&self, exchange: &Exchange) -> Exchange {
        self.redact(exchange).0
    }

    /// [`Redactor::exchange`], and the secret values it replaced
    /// everywhere, for [`Redactor::scrub`] to use on text made from the
    /// exchange (the findings' messages).
    ///
    /// Each body is parsed at most twice (once for its fields, once for
    /// echoes), and only when its text can hold what is looked for.
    pub fn redact(&self, exchange: &Exchange) -> (Exchange, Secrets) {
        let plan = self.plan(exchange, None);
        let secrets = plan.secrets.clone();
        (plan.apply(exchange.clone()), secrets)
    }

    /// What [`Redactor::redact`] replaces in `exchange`, without copying
    /// what stays: [`Redaction::apply`] then moves the replacements into
    /// the exchange. The proxy plans outside its judge's lock and applies
    /// inside it, so an exchange is never copied whole.
    ///
    /// `request` is the request body's object when it was read already
    /// (the rules' parse), so it is not read twice.
    pub(crate) fn plan(
        &self,
        exchange: &Exchange,
        request: Option<&json::Object<'_>>,
    ) -> Redaction {
        // The secret values of both bodies, each with what replaces it.
        let mut met: Secrets = Vec::new();
        let request_body = exchange
            .request
            .body
            .as_deref()
            .and_then(|b| self.replaced_body_of(b, Some(&mut met), request));
        let response_body = exchange
            .response
            .body
            .as_deref()
            .and_then(|b| self.replaced_body(b, Some(&mut met)));
        let secrets = self.secrets(exchange, met);
        let request = self.patch(&exchange.request, request_body, &secrets);
        let response = self.patch(&exchange.response, response_body, &secrets);
        Redaction {
            request,
            response,
            secrets,
        }
    }

    /// A message's replacements: its secrets where they stand (`body`: its
    /// body with them replaced, when that changed it), then every value of
    /// `secrets` wherever else it appears.
    fn patch(&self, message: &Message, body: Option<String>, secrets: &Secrets) -> Patch {
        let mut patch = Patch::default();
        for (n, (name, value)) in message.headers.iter().enumerate() {
            let standing = SECRET_HEADERS.iter().any(|s| name.eq_ignore_ascii_case(s));
            let current = if standing { REDACTED } else { value.as_str() };
            match scrub_text(current, secrets) {
                Some(clean) => patch.headers.push((n, clean)),
                None if standing => patch.headers.push((n, REDACTED.to_owned())),
                None => {}
            }
        }
        if let Some(query) = &message.query {
            let replaced = self.query(query);
            let current = replaced.as_deref().unwrap_or(query);
            patch.query = scrub_text(current, secrets).or(replaced);
        }
        patch.path = scrub_text(&message.path, secrets);
        let current = body.as_deref().or(message.body.as_deref());
        patch.body = match current {
            Some(text) if !secrets.is_empty() => scrub_body(text, secrets).or(body),
            _ => body,
        };
        patch
    }

    /// `text` with every value of `secrets` replaced.
    pub fn scrub(&self, text: &str, secrets: &Secrets) -> String {
        scrub_text(text, secrets).unwrap_or_else(|| text.to_owned())
    }

    /// The secret values an exchange carries (and the proxy's own), each
    /// with what replaces it, longest first (so a value inside another is
    /// not half replaced): `met` in its bodies, its secret headers (both
    /// ways: a `Set-Cookie` echoed later is replaced too) and the request's
    /// query. Values under [`ECHO_MINIMUM`] characters are left to the
    /// structural replacement.
    fn secrets(&self, exchange: &Exchange, met: Secrets) -> Secrets {
        let request = &exchange.request;
        let mut found: Secrets = self.own.clone();
        let mut add = |value: &str, shown: String| {
            let value = value.trim().trim_matches('"');
            if value.chars().count() >= ECHO_MINIMUM && !found.iter().any(|(v, _)| v == value) {
                found.push((value.to_owned(), shown));
            }
        };
        let headers = request.headers.iter().chain(&exchange.response.headers);
        for (name, value) in headers {
            if SECRET_HEADERS.iter().any(|s| name.eq_ignore_ascii_case(s)) {
                add(value, REDACTED.to_owned());
                if let Some((_, credential)) = value.split_once([' ', '\t']) {
                    add(credential, REDACTED.to_owned());
                }
                for cookie in value.split(';') {
                    if let Some((_, v)) = cookie.split_once('=') {
                        add(v, REDACTED.to_owned());
                    }
                }
            }
        }
        for (value, shown) in met {
            add(&value, shown);
        }
        if let Some(query) = &request.query {
            for (k, v) in url::form_urlencoded::parse(query.as_bytes()) {
                match &*k {
                    "confirmationCode" => add(&v, REDACTED.to_owned()),
                    "payerId" => add(&v, self.token(&v)),
                    _ => {}
                }
            }
        }
        // Echoed in a path, a query or a `Location`, a value may come
        // percent-encoded: its encoded forms are replaced too.
        let encoded: Secrets = found
            .iter()
            .flat_map(|(value, shown)| {
                let form: String = url::form_urlencoded::byte_serialize(value.as_bytes()).collect();
                let component = percent_encoding::utf8_percent_encode(value, COMPONENT).to_string();
                [form, component]
                    .into_iter()
                    .filter(move |e| e != value)
                    .map(move |e| (e, shown.clone()))
            })
            .collect();
        for (value, shown) in encoded {
            if !found.iter().any(|(v, _)| *v == value) {
                found.push((value, shown));
            }
        }
        found.sort_by_key(|(v, _)| std::cmp::Reverse(v.len()));
        found
    }

    /// The query with its secret parameters replaced, `None` when it has
    /// none.
    fn query(&self, query: &str) -> Option<String> {
        let pairs: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes())
            .map(|(k, v)| {
                let v = match &*k {
                    "confirmationCode" => REDACTED.to_owned(),
                    "payerId" => self.token(&v),
                    _ => v.into_owned(),
                };
                (k.into_owned(), v)
            })
            .collect();
        if !pairs
            .iter()
            .any(|(k, _)| k == "confirmationCode" || k == "payerId")
        {
            return None;
        }
        Some(
            url::form_urlencoded::Serializer::new(String::new())
                .extend_pairs(pairs)
                .finish(),
        )
    }

    /// A body with its secrets replaced: walked as JSON, or replaced whole
    /// when it is not JSON and mentions a secret field.
    pub fn body(&self, body: &str) -> String {
        self.replaced_body(body, None)
            .unwrap_or_else(|| body.to_owned())
    }

    /// [`Redactor::body`], `None` when nothing changed.
    fn replaced_body(&self, body: &str, met: Found<'_>) -> Option<String> {
        self.replaced_body_of(body, met, None)
    }

    /// [`Redactor::replaced_body`] of a body whose object may have been
    /// read already (`object`: its fields).
    fn replaced_body_of(
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
    fn walked_body(&self, body: &str, met: Found<'_>) -> Option<String> {
        match serde_json::from_str::<Value>(body) {
            Ok(mut value) => {
                let mut met = met;
                self.walk(&mut value, &mut met).then(|| value.to_string())
            }
            Err(_) if body.contains("confirmationCode") || body.contains("payerId") => {
                Some("[redacted: a body that is not JSON names a secret field]".to_owned())
            }
            Err(_) => None,
        }
    }

    /// [`Redactor::walked_body`] without building a `Value`, for the
    /// usual body (an initiate's or a confirm's): a JSON object whose
    /// secret fields are top-level strings, numbers or null and whose
    /// other values hold nothing the walk would change (no escape, no
    /// secret field's name). The same text and the same secrets met, in
    /// the same order: `Some(None)` when nothing changes. `None` when the
    /// body is not that usual one, and the walk decides.
    fn quick_body(
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
    /// `met`; whether anything changed.
    fn walk(&self, value: &mut Value, met: &mut Found<'_>) -> bool {
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
                        _ => changed |= self.walk(inner, met),
                    }
                }
                changed
            }
            Value::Array(items) => items.iter_mut().fold(false, |c, v| self.walk(v, met) | c),
            // JSON held in a string (extraProperties): walked too, also
            // when its keys are spelled with escapes.
            Value::String(text) => {
                let names = text.contains("confirmationCode") || text.contains("payerId");
                let escaped_json = text.contains('\\') && text.trim_start().starts_with(['{', '[']);
                if !names && !escaped_json {
                    return false;
                }
                match serde_json::from_str::<Value>(text) {
                    Ok(mut inner) if inner.is_object() || inner.is_array() => {
                        let changed = self.walk(&mut inner, met);
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
                    _ => false,
                }
            }
            _ => false,
        }
    }
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

/// `text` with the values of `secrets` replaced, or `None` when none occurs.
fn scrub_text(text: &str, secrets: &Secrets) -> Option<String> {
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
fn scrub_body(body: &str, secrets: &Secrets) -> Option<String> {
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

/// What redaction replaces in one side of an exchange.
#[derive(Default)]
struct Patch {
    path: Option<String>,
    query: Option<String>,
    /// Header values by their place in the list.
    headers: Vec<(usize, String)>,
    body: Option<String>,
}

impl Patch {
    fn apply(self, message: &mut Message) {
        if let Some(path) = self.path {
            message.path = path;
        }
        if let Some(query) = self.query {
            message.query = Some(query);
        }
        for (n, value) in self.headers {
            if let Some((_, slot)) = message.headers.get_mut(n) {
                *slot = value;
            }
        }
        if let Some(body) = self.body {
            message.body = Some(body);
        }
    }
}

/// An exchange's redaction, planned ([`Redactor::plan`]) and not yet
/// applied. Its `Debug` shows no secret.
pub(crate) struct Redaction {
    request: Patch,
    response: Patch,
    /// The secret values replaced everywhere, for the findings' messages.
    pub(crate) secrets: Secrets,
}

impl std::fmt::Debug for Redaction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Redaction { [redacted] }")
    }
}

impl Redaction {
    /// `exchange` (the one planned for) with its secrets replaced.
    pub(crate) fn apply(self, mut exchange: Exchange) -> Exchange {
        self.request.apply(&mut exchange.request);
        self.response.apply(&mut exchange.response);
        exchange
    }
}

#[cfg(test)]
mod tests;
