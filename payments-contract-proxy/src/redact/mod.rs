//! Secrets replaced before an exchange is recorded (`--record`, CONTRACT
//! section 16), reported or shown in the console.
//!
//! Replaced: the values of headers that carry credentials
//! ([`payments_serve::is_credential_header`]: `Authorization`,
//! `Proxy-Authorization`, `Cookie`, `Set-Cookie`, and any other whose
//! name ends in a credential's word, as `X-Api-Key` or `X-Auth-Token`, but
//! `Idempotency-Key`); `confirmationCode` anywhere in a JSON body
//! (nested objects and JSON held in strings, such as `extraProperties`,
//! included) or the query, and in the query every parameter whose name
//! says it carries a credential ([`payments_serve::QueryParam`], the
//! mock's journal's rule: `api_key`, `token`, `X-Amz-Signature`…),
//! written `[redacted]` in place, the rest of the query as sent.
//! `payerId` becomes a keyed token
//! (`payer-` and 16 hex digits of HMAC-SHA-256): the same value always gives
//! the same token within one recording, so exchanges still join, and the
//! key is random per recording and never written. A body that is not JSON
//! but mentions either field is replaced whole. Then every secret value of
//! either side (of [`ECHO_MINIMUM`] characters or more) is replaced
//! wherever else it is echoed, but in text the interface fixes (an
//! endpoint path's words, the document's member names), which shows
//! nothing of it. The console shows exchanges through the same redactor,
//! and the spans (`--otlp-endpoint`) show a request's path through it
//! (`span.rs`).

use std::borrow::Cow;
use std::collections::HashSet;

use hmac::{Hmac, KeyInit as _, Mac as _};
use sha2::Sha256;

use super::exchange::{Exchange, Message};
use super::json;
use echo::{scrub_body, scrub_path};
use matcher::Matcher;

mod body;
mod earlier;
mod echo;
mod matcher;
mod search;
#[cfg(any(feature = "otlp", test))]
mod span;

pub(crate) use earlier::Earlier;

/// What a URL component encodes (RFC 3986's unreserved characters stay).
const COMPONENT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// What a replaced secret reads as.
pub const REDACTED: &str = "[redacted]";

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
        let plan = self.plan(exchange, None, Secrets::new());
        let secrets = plan.matcher.secrets().clone();
        (plan.apply(exchange.clone()), secrets)
    }

    /// What [`Redactor::redact`] replaces in `exchange`, without copying
    /// what stays: [`Redaction::apply`] then moves the replacements into
    /// the exchange. The proxy plans outside its judge's lock and applies
    /// inside it, so an exchange is never copied whole.
    ///
    /// `request` is the request body's object when it was read already
    /// (the rules' parse), so it is not read twice.
    ///
    /// `earlier`: secrets the exchange may echo without carrying them (its
    /// transaction's initiate's, [`Earlier`]), replaced wherever they
    /// appear like those it carries.
    pub(crate) fn plan(
        &self,
        exchange: &Exchange,
        request: Option<&json::Object<'_>>,
        earlier: Secrets,
    ) -> Redaction {
        // The secret values of both bodies, each with what replaces it.
        let mut met: Secrets = earlier;
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
        // What an initiate leaves for its transaction's later exchanges:
        // the values its bodies carried (its payer id), long enough to be
        // replaced wherever they appear.
        let carried = met
            .iter()
            .filter(|(value, _)| value.chars().count() >= ECHO_MINIMUM)
            .cloned()
            .collect();
        // One automaton of them all, for every text of the exchange.
        let matcher = Matcher::new(self.secrets(exchange, met));
        let request = self.patch(&exchange.request, request_body, &matcher);
        let response = self.patch(&exchange.response, response_body, &matcher);
        Redaction {
            request,
            response,
            matcher,
            carried,
        }
    }

    /// A message's replacements: its secrets where they stand (`body`: its
    /// body with them replaced, when that changed it), then every value of
    /// `secrets` wherever else it appears.
    fn patch(&self, message: &Message, body: Option<String>, secrets: &Matcher) -> Patch {
        let mut patch = Patch::default();
        for (n, (name, value)) in message.headers.iter().enumerate() {
            let standing = payments_serve::is_credential_header(name);
            let current = if standing { REDACTED } else { value.as_str() };
            match secrets.scrub(current) {
                Some(clean) => patch.headers.push((n, clean)),
                None if standing => patch.headers.push((n, REDACTED.to_owned())),
                None => {}
            }
        }
        if let Some(query) = &message.query {
            let replaced = self.query(query);
            let current = replaced.as_deref().unwrap_or(query);
            patch.query = secrets.scrub(current).or(replaced);
        }
        patch.path = scrub_path(&message.path, secrets);
        let current = body.as_deref().or(message.body.as_deref());
        patch.body = match current {
            Some(text) if !secrets.is_empty() => scrub_body(text, secrets).or(body),
            _ => body,
        };
        patch
    }

    /// `text` with every value of `secrets` replaced (`secrets` as
    /// [`Redactor::redact`] gives them: longest first).
    pub fn scrub(&self, text: &str, secrets: &Secrets) -> String {
        Matcher::new(secrets.clone())
            .scrub(text)
            .unwrap_or_else(|| text.to_owned())
    }

    /// A finding's message with every value of `secrets` replaced, and
    /// where it quotes a value cut short (before each `…`) the beginning of
    /// a secret the cut value ends with too (of [`ECHO_MINIMUM`]` / 2`
    /// characters or more): a value cut inside a secret shows none of it.
    #[cfg(test)]
    pub(crate) fn scrub_cut(&self, text: &str, secrets: &Secrets) -> String {
        scrub_cut(text, &Matcher::new(secrets.clone()))
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
        // The values listed, each once (a set: an exchange may carry
        // thousands).
        let mut listed: HashSet<String> = found.iter().map(|(v, _)| v.clone()).collect();
        let mut add = |value: &str, shown: String| {
            // A quoted value (`sid="  abc  "`) is its text inside the
            // quotes and their blanks: an echo of the text alone is one.
            let value = value.trim().trim_matches('"').trim();
            if value.chars().count() >= ECHO_MINIMUM && !listed.contains(value) {
                listed.insert(value.to_owned());
                found.push((value.to_owned(), shown));
            }
        };
        let headers = request.headers.iter().chain(&exchange.response.headers);
        for (name, value) in headers {
            if payments_serve::is_credential_header(name) {
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
            for param in payments_serve::query_params(query) {
                let value = payments_serve::form_decoded(param.value);
                match &*param.name {
                    "confirmationCode" => add(&value, REDACTED.to_owned()),
                    "payerId" => add(&value, self.token(&value)),
                    _ if param.is_credential() => add(&value, REDACTED.to_owned()),
                    _ => {}
                }
            }
        }
        // Echoed in a path, a query or a `Location`, a value may come
        // percent-encoded: its encoded forms are replaced too. A value
        // that holds escapes itself (a cookie's `abc%41def`) may come
        // decoded by the server that echoes it: that form too.
        let encoded: Secrets = found
            .iter()
            .flat_map(|(value, shown)| {
                let form: String = url::form_urlencoded::byte_serialize(value.as_bytes()).collect();
                let component = percent_encoding::utf8_percent_encode(value, COMPONENT).to_string();
                // Decoded, a value may be blanks around its text (`%20`):
                // only its text is looked for, and only when it is as long
                // as any secret must be (a run of blanks is no secret).
                let decoded = percent_encoding::percent_decode_str(value)
                    .decode_utf8()
                    .ok()
                    .map(|d| d.trim().to_owned())
                    .filter(|d| d.chars().count() >= ECHO_MINIMUM);
                [Some(form), Some(component), decoded]
                    .into_iter()
                    .flatten()
                    .filter(move |e| e != value)
                    .map(move |e| (e, shown.clone()))
            })
            .collect();
        for (value, shown) in encoded {
            if !listed.contains(&value) {
                listed.insert(value.clone());
                found.push((value, shown));
            }
        }
        found.sort_by_key(|(v, _)| std::cmp::Reverse(v.len()));
        found
    }

    /// The query with its secret parameters' values replaced, `None` when
    /// it has none: `confirmationCode` and every parameter whose name says
    /// it carries a credential ([`payments_serve::QueryParam::is_credential`],
    /// the mock's journal's rule) by `[redacted]`, `payerId` by its token.
    /// Everything else stays as sent, byte for byte (the names, the other
    /// values, their escapes and order), and the replacement is written as
    /// the mock's journal writes it (`api_key=[redacted]`).
    fn query(&self, query: &str) -> Option<String> {
        let rewritten = payments_serve::rewrite_query(query, |param| match &*param.name {
            "confirmationCode" => Some(Cow::Borrowed(REDACTED)),
            "payerId" => Some(Cow::Owned(
                self.token(&payments_serve::form_decoded(param.value)),
            )),
            _ => param.is_credential().then_some(Cow::Borrowed(REDACTED)),
        });
        match rewritten {
            Cow::Owned(rewritten) => Some(rewritten),
            Cow::Borrowed(_) => None,
        }
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
    matcher: Matcher,
    /// The secret values of its bodies (and those it was planned with),
    /// of [`ECHO_MINIMUM`] characters or more, for [`Earlier::keep`].
    pub(crate) carried: Secrets,
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

    /// `text` (made from the exchange: an `errorCode`, a reference) with
    /// every secret value of the exchange replaced.
    pub(crate) fn scrub(&self, text: &str) -> String {
        self.matcher.scrub(text).unwrap_or_else(|| text.to_owned())
    }

    /// A finding's message with every secret value of the exchange
    /// replaced, and where it quotes a value cut short (before each `…`)
    /// the beginning of a secret the cut value ends with too (of
    /// [`ECHO_MINIMUM`]` / 2` characters or more): a value cut inside a
    /// secret shows none of it.
    pub(crate) fn scrub_cut(&self, text: &str) -> String {
        scrub_cut(text, &self.matcher)
    }

    /// Whether the exchange carries any secret value to replace.
    pub(crate) fn has_secrets(&self) -> bool {
        !self.matcher.is_empty()
    }
}

/// [`Redaction::scrub_cut`] through `matcher`.
fn scrub_cut(text: &str, matcher: &Matcher) -> String {
    let text = matcher.scrub(text).unwrap_or_else(|| text.to_owned());
    if matcher.is_empty() || !text.contains('…') {
        return text;
    }
    matcher.scrub_cut_ends(&text)
}

#[cfg(test)]
mod large_tests;
#[cfg(test)]
mod matcher_tests;
#[cfg(test)]
mod overlap_tests;
#[cfg(test)]
mod query_tests;
#[cfg(test)]
mod tests;
