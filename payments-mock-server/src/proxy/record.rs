//! Recording (`--record`, CONTRACT section 16): each exchange whole, one
//! JSON line, with secrets replaced before anything is written, and read
//! back by `check` and `--seed-from`.
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
        let mut out = exchange.clone();
        // The secret values of both bodies, each with what replaces it.
        let mut met: Secrets = Vec::new();
        self.message(&mut out.request, Some(&mut met));
        self.message(&mut out.response, Some(&mut met));
        let secrets = self.secrets(exchange, met);
        if !secrets.is_empty() {
            for message in [&mut out.request, &mut out.response] {
                let scrub = |text: &mut String| {
                    if let Some(clean) = scrub_text(text, &secrets) {
                        *text = clean;
                    }
                };
                scrub(&mut message.path);
                if let Some(q) = message.query.as_mut() {
                    scrub(q);
                }
                for (_, value) in &mut message.headers {
                    scrub(value);
                }
                if let Some(body) = message.body.as_mut() {
                    // Without an escape, a value inside a JSON string
                    // appears in the text as itself.
                    let may_hold = body.contains('\\')
                        || secrets.iter().any(|(v, _)| body.contains(v.as_str()));
                    if may_hold {
                        match serde_json::from_str::<Value>(body) {
                            Ok(mut value) => {
                                if scrub_strings(&mut value, &secrets) {
                                    *body = value.to_string();
                                }
                            }
                            Err(_) => scrub(body),
                        }
                    }
                }
            }
        }
        (out, secrets)
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

    /// Replaces a message's secrets where they stand; the string values
    /// replaced in its body go to `met`.
    fn message(&self, message: &mut Message, met: Found<'_>) {
        for (name, value) in &mut message.headers {
            if SECRET_HEADERS.iter().any(|s| name.eq_ignore_ascii_case(s)) {
                *value = REDACTED.to_owned();
            }
        }
        if let Some(query) = &message.query {
            message.query = Some(self.query(query));
        }
        if let Some(body) = &message.body
            && let Some(replaced) = self.replaced_body(body, met)
        {
            message.body = Some(replaced);
        }
    }

    fn query(&self, query: &str) -> String {
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
            return query.to_owned();
        }
        url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(pairs)
            .finish()
    }

    /// A body with its secrets replaced: walked as JSON, or replaced whole
    /// when it is not JSON and mentions a secret field.
    pub fn body(&self, body: &str) -> String {
        self.replaced_body(body, None)
            .unwrap_or_else(|| body.to_owned())
    }

    /// [`Redactor::body`], `None` when nothing changed.
    fn replaced_body(&self, body: &str, met: Found<'_>) -> Option<String> {
        // Without an escape, a secret field's name appears as itself: a
        // body that names none has nothing to replace (most answers).
        if !body.contains('\\') && !body.contains("confirmationCode") && !body.contains("payerId") {
            return None;
        }
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

/// One line of a recording that could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadLine {
    /// 1-based.
    pub line: usize,
    /// Why.
    pub reason: String,
}

/// Reads a recording line by line (never whole: a day's recording can be
/// larger than memory), handing each exchange to `on` in order, and returns
/// the lines that are none.
///
/// # Errors
///
/// The reader's error when it fails (a line that is not UTF-8 or not an
/// exchange is a [`BadLine`], not an error).
pub fn each(
    mut reader: impl std::io::BufRead,
    mut on: impl FnMut(Exchange),
) -> std::io::Result<Vec<BadLine>> {
    let mut bad = Vec::new();
    let mut line = Vec::new();
    let mut n = 0;
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            return Ok(bad);
        }
        n += 1;
        if line.trim_ascii().is_empty() {
            continue;
        }
        match serde_json::from_slice::<Exchange>(&line) {
            Ok(exchange) => on(exchange),
            Err(e) => {
                // Only the kind of error and the column: serde's message can
                // quote a value of the line.
                let kind = match e.classify() {
                    serde_json::error::Category::Syntax | serde_json::error::Category::Eof => {
                        "not JSON"
                    }
                    _ => "JSON, but not the shape of an exchange",
                };
                bad.push(BadLine {
                    line: n,
                    reason: format!("not a recorded exchange ({kind}, at column {})", e.column()),
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::proxy::rules::test_support::exchange;

    #[test]
    fn every_secret_is_replaced_and_payers_still_join() {
        let redactor = Redactor::new();
        let mut e = exchange(
            "POST",
            "/api/payments/confirm",
            json!({
                "transactionId": "t", "referenceNo": "R", "confirmationCode": "OTP-CANARY-1",
                "nested": { "payerId": "PAYER-CANARY-2", "list": [{ "confirmationCode": 9 }] },
                "extraProperties": "{\"confirmationCode\":\"OTP-CANARY-3\",\"payerId\":\"PAYER-CANARY-2\"}",
            }),
            200,
            json!({ "data": { "payerId": "PAYER-CANARY-2" } }),
        );
        e.request.headers = vec![
            ("Authorization".to_owned(), "Bearer KEY-CANARY-4".to_owned()),
            ("cookie".to_owned(), "s=COOKIE-CANARY-5".to_owned()),
        ];
        e.request.query =
            Some("payerId=PAYER-CANARY-2&confirmationCode=OTP-CANARY-6&x=1".to_owned());
        e.response
            .headers
            .push(("Set-Cookie".to_owned(), "s=COOKIE-CANARY-7".to_owned()));
        let redacted = redactor.exchange(&e);
        let text = serde_json::to_string(&redacted).expect("serializes");
        assert!(!text.contains("CANARY"), "{text}");
        let token = redactor.token("PAYER-CANARY-2");
        assert_eq!(
            text.matches(&token).count(),
            4,
            "the same token everywhere: {text}"
        );
        assert_ne!(
            Redactor::new().token("PAYER-CANARY-2"),
            token,
            "a key per recording"
        );
        assert_eq!(format!("{redactor:?}"), "Redactor { key: [redacted] }");
        assert!(
            redacted
                .request
                .query
                .as_deref()
                .is_some_and(|q| q.contains("x=1"))
        );
        assert_eq!(
            redactor.body("confirmationCode=OTP-CANARY"),
            "[redacted: a body that is not JSON names a secret field]"
        );
        assert_eq!(
            redactor.body("{\"a\":1}"),
            "{\"a\":1}",
            "untouched when nothing is secret"
        );
        // A key spelled with an escape is still the key.
        let hidden = redactor.body(
            "{\"payer\\u0049d\":\"PAYER-CANARY-8\",\"confirmation\\u0043ode\":\"OTP-CANARY-9\"}",
        );
        assert!(!hidden.contains("CANARY"), "{hidden}");
        // An answer that echoes a payer id or a code, plainly or escaped,
        // gets the same replacement.
        let mut echo = e.clone();
        echo.response.body =
            Some("{\"message\":\"payer PAYER-CANARY-2 and code \\u004fTP-CANARY-1\"}".to_owned());
        let (echoed, _) = redactor.redact(&echo);
        let answer = echoed.response.body.expect("a body");
        assert!(!answer.contains("CANARY"), "{answer}");
        assert!(answer.contains(&token), "{answer}");
    }

    #[test]
    fn short_secrets_never_damage_the_rest_and_echoed_long_ones_are_replaced() {
        let redactor = Redactor::new();
        let mut e = exchange(
            "POST",
            "/api/payments/confirm",
            json!({"transactionId": "t", "referenceNo": "R", "confirmationCode": "2026"}),
            400,
            json!({
                "isSuccess": false, "errorCode": "VALIDATION_ERROR",
                "message": "key Bearer-LONG-KEY-CANARY is not allowed for merchant true",
                "data": null, "createdAt": "2026-11-22T08:15:30Z", "flag": true,
            }),
        );
        e.request.headers = vec![
            ("cookie".to_owned(), "consent=true".to_owned()),
            (
                "authorization".to_owned(),
                "Bearer Bearer-LONG-KEY-CANARY".to_owned(),
            ),
        ];
        let (redacted, secrets) = redactor.redact(&e);
        let answer: Value =
            serde_json::from_str(redacted.response.body.as_deref().expect("a body"))
                .expect("still JSON");
        assert_eq!(
            answer["createdAt"], "2026-11-22T08:15:30Z",
            "a 4-digit code is not scrubbed out of dates"
        );
        assert_eq!(
            answer["flag"],
            json!(true),
            "a cookie value `true` leaves JSON alone"
        );
        assert_eq!(answer["isSuccess"], json!(false));
        let message = answer["message"].as_str().expect("a message");
        assert!(!message.contains("CANARY"), "{message}");
        assert!(message.ends_with("merchant true"), "{message}");
        let request: Value =
            serde_json::from_str(redacted.request.body.as_deref().expect("a body"))
                .expect("still JSON");
        assert_eq!(
            request["confirmationCode"], REDACTED,
            "replaced by its field"
        );
        assert_eq!(
            redactor.scrub("found Bearer-LONG-KEY-CANARY in 2026", &secrets),
            format!("found {REDACTED} in 2026")
        );
    }

    /// Each case: a request body, an answer body, and the answer's
    /// headers; no `CANARY` may be left anywhere in the redacted exchange.
    #[test]
    fn secrets_in_every_shape_are_replaced_wherever_they_are_echoed() {
        let redactor = Redactor::new();
        type Case<'a> = (&'a str, &'a str, &'a [(&'a str, &'a str)]);
        let cases: [Case<'_>; 9] = [
            // A key spelled with escapes inside JSON held in a string.
            (
                r#"{"extraProperties":"{\"confirmation\\u0043ode\":\"OTP-CANARY-A1\",\"payer\\u0049d\":\"PAYER-CANARY-A2\"}"}"#,
                r#"{"message":"ok"}"#,
                &[],
            ),
            // Secrets sent as numbers, echoed in a message.
            (
                r#"{"payerId":12345678901,"confirmationCode":87654321}"#,
                r#"{"message":"unknown payer 12345678901, code 87654321 expired"}"#,
                &[],
            ),
            // A code inside a structure, echoed.
            (
                r#"{"confirmationCode":{"otp":"OTP-CANARY-D"}}"#,
                r#"{"message":"code OTP-CANARY-D expired"}"#,
                &[],
            ),
            // A payer only the answer names, echoed in its message.
            (
                r#"{"transactionId":"t"}"#,
                r#"{"data":{"payerId":"PAYER-CANARY-H"},"message":"for PAYER-CANARY-H"}"#,
                &[],
            ),
            // A cookie the answer sets, echoed in its body.
            (
                "",
                r#"{"message":"session COOKIE-CANARY-I started"}"#,
                &[("set-cookie", "s=COOKIE-CANARY-I; Path=/")],
            ),
            // A quoted cookie value, echoed.
            (
                "",
                r#"{"message":"COOKIE-CANARY-Q"}"#,
                &[("set-cookie", "s=\"COOKIE-CANARY-Q\"")],
            ),
            // Form text naming a field inside a string, its value echoed.
            (
                r#"{"x":"confirmationCode=OTP-CANARY-U"}"#,
                r#"{"message":"OTP-CANARY-U is wrong"}"#,
                &[],
            ),
            // The echo written with an escape.
            (
                r#"{"confirmationCode":"OTP-CANARY-E"}"#,
                r#"{"message":"\u004fTP-CANARY-E"}"#,
                &[],
            ),
            // Nothing secret: nothing changes.
            (r#"{"a":"{\"b\\u0031\":1}"}"#, r#"{"message":"ok"}"#, &[]),
        ];
        for (request, answer, headers) in cases {
            let mut e = exchange(
                "POST",
                "/api/payments/confirm",
                json!(null),
                200,
                json!(null),
            );
            e.request.body = (!request.is_empty()).then(|| request.to_owned());
            e.response.body = Some(answer.to_owned());
            e.response.headers = headers
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect();
            let text = serde_json::to_string(&redactor.exchange(&e)).expect("serializes");
            assert!(!text.contains("CANARY"), "{request} / {answer}: {text}");
            assert!(
                !text.contains("12345678901") && !text.contains("87654321"),
                "{text}"
            );
        }
        // A secret echoed percent-encoded in a header or the path.
        let mut e = exchange(
            "GET",
            "/api/payments/t/status",
            json!(null),
            302,
            json!(null),
        );
        e.request.headers = vec![(
            "authorization".to_owned(),
            "Bearer KEY+CANARY/Z=".to_owned(),
        )];
        e.response.headers = vec![(
            "location".to_owned(),
            "/login?key=KEY%2BCANARY%2FZ%3D".to_owned(),
        )];
        e.request.path = "/api/payments/KEY%2BCANARY%2FZ%3D/status".to_owned();
        let text = serde_json::to_string(&redactor.exchange(&e)).expect("serializes");
        assert!(!text.contains("CANARY"), "{text}");
        // A request's `Authorization` with a tab: the credential still goes.
        let mut e = exchange(
            "GET",
            "/api/payments/t/status",
            json!(null),
            404,
            json!(null),
        );
        e.request.headers = vec![(
            "authorization".to_owned(),
            "Bearer\tKEY-CANARY-T".to_owned(),
        )];
        e.response.body = Some(r#"{"message":"key KEY-CANARY-T unknown"}"#.to_owned());
        let text = serde_json::to_string(&redactor.exchange(&e)).expect("serializes");
        assert!(!text.contains("CANARY"), "{text}");
        // Unchanged when nothing is secret, escapes and all.
        let mut e = exchange(
            "GET",
            "/api/payments/t/status",
            json!(null),
            200,
            json!(null),
        );
        e.response.body = Some(r#"{"a":"{\"b\\u0031\":1}"}"#.to_owned());
        assert_eq!(redactor.exchange(&e).response.body, e.response.body);
    }

    #[test]
    fn a_recording_reads_back_with_its_broken_lines_numbered() {
        let e = exchange("GET", "/api/payments/x/status", json!(null), 404, json!({}));
        let line = serde_json::to_string(&e).expect("serializes");
        let mut text = format!("{line}\n{{broken\n\n{line}\nnot json at all\n").into_bytes();
        text.extend_from_slice(b"\xff\xfe\n");
        text.extend_from_slice(line.as_bytes());
        let mut exchanges = Vec::new();
        let bad = each(text.as_slice(), |e| exchanges.push(e)).expect("reads");
        assert_eq!(exchanges.len(), 3, "the last line needs no newline");
        assert_eq!(bad.iter().map(|b| b.line).collect::<Vec<_>>(), [2, 5, 6]);
    }
}
