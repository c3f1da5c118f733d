//! What a server's spans show of a request's path: `url.path` of its
//! server span, and the path in `url.full` of a call it makes for the
//! request (the contract proxy's upstream call, [`ShownPath`]). Never a
//! secret: a key a caller put in a reference (`REF-<key>`) is
//! `REF-[redacted]` there, as in every other output.
//!
//! A server says what it hides by a [`ShowPath`]; without one, its spans
//! hide what [`RequestSecrets`] hides: the credentials the request itself
//! carries.

use std::borrow::Cow;
use std::sync::Arc;

use axum::http::{HeaderMap, Method, Uri};

use crate::credentials::query::{REDACTED, form_decoded, query_params};

/// The shortest secret value replaced in a path (the contract proxy's
/// recording replaces the same ones wherever they are echoed): a shorter
/// one would hit the path's own words.
pub const SHOWN_MINIMUM: usize = 8;

/// What a server's spans show of a request's path, its secrets replaced.
pub trait ShowPath: Send + Sync + std::fmt::Debug {
    /// The path of `uri` (the request's target) as the request's spans
    /// show it.
    fn shown<'a>(&self, method: &Method, uri: &'a Uri, headers: &HeaderMap) -> Cow<'a, str>;
}

/// The path of the request a call is made for, as its server span shows
/// it ([`ShowPath`]): put into the request's extensions by the span layer
/// of a server that makes calls ([`SpanExport::spans_with_calls`]), so
/// the call's span (`url.full`) shows no more of it.
///
/// [`SpanExport::spans_with_calls`]: super::super::SpanExport::spans_with_calls
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShownPath(pub Arc<str>);

/// The rule a server's spans follow unless it gives its own: the path
/// with every value of [`SHOWN_MINIMUM`] characters or more replaced by
/// `[redacted]` (as written or percent-encoded) that is
///
/// - a credential the request carries: the value of a header that
///   carries one ([`crate::is_credential_header`]: `Authorization`, its
///   credential after the scheme too, a cookie's value, `X-Api-Key`…),
///   or of a query parameter named as one ([`crate::QueryParam`]:
///   `api_key`, `token`…);
/// - one of the server's own secrets given to [`RequestSecrets::new`]
///   (the mock's configured keys).
#[derive(Clone, Default)]
pub struct RequestSecrets {
    own: Vec<Box<str>>,
}

impl std::fmt::Debug for RequestSecrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RequestSecrets {{ own: {} [redacted] }}", self.own.len())
    }
}

impl RequestSecrets {
    /// The rule with `own` secrets too (those of [`SHOWN_MINIMUM`]
    /// characters or more are kept).
    pub fn new<I, S>(own: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let own = own
            .into_iter()
            .filter(|s| long_enough(s.as_ref()))
            .map(|s| s.as_ref().into())
            .collect();
        Self { own }
    }
}

impl RequestSecrets {
    /// The rule with the admin keys `keys` among its own secrets too (a
    /// server's `--admin-key`s): a path that echoes one shows
    /// `[redacted]` in its place. The keys never leave this crate.
    #[cfg(feature = "admin")]
    #[must_use]
    pub fn with_admin_keys(mut self, keys: &[crate::admin::AdminKey]) -> Self {
        self.own.extend(
            keys.iter()
                .map(crate::admin::AdminKey::secret)
                .filter(|key| long_enough(key))
                .map(Box::from),
        );
        self
    }
}

impl ShowPath for RequestSecrets {
    fn shown<'a>(&self, _: &Method, uri: &'a Uri, headers: &HeaderMap) -> Cow<'a, str> {
        let mut secrets: Vec<Cow<'_, str>> = self.own.iter().map(|s| Cow::Borrowed(&**s)).collect();
        for (name, value) in headers {
            if crate::is_credential_header(name.as_str()) {
                credentials_in(&String::from_utf8_lossy(value.as_bytes()), &mut secrets);
            }
        }
        if let Some(query) = uri.query() {
            secrets.extend(
                query_params(query)
                    .filter(|param| param.is_credential())
                    .map(|param| Cow::Owned(form_decoded(param.value).into_owned())),
            );
        }
        redacted_path(uri.path(), &secrets)
    }
}

/// The secret values of a credential header's `value`: itself, the
/// credential after its scheme (`Bearer …`), each cookie's value.
fn credentials_in(value: &str, out: &mut Vec<Cow<'_, str>>) {
    let mut add = |v: &str| {
        let v = v.trim().trim_matches('"').trim();
        if long_enough(v) {
            out.push(Cow::Owned(v.to_owned()));
        }
    };
    add(value);
    if let Some((_, credential)) = value.trim().split_once([' ', '\t']) {
        add(credential);
    }
    for cookie in value.split(';') {
        if let Some((_, v)) = cookie.split_once('=') {
            add(v);
        }
    }
}

fn long_enough(value: &str) -> bool {
    value.chars().nth(SHOWN_MINIMUM - 1).is_some()
}

/// `path` with every value of `secrets` (those of [`SHOWN_MINIMUM`]
/// characters or more) replaced by `[redacted]`: as written, and in a
/// segment that holds it percent-encoded (any of its bytes), the segment
/// decoded, the secret replaced and the rest written escaped again.
/// Borrowed when none occurs.
///
/// ```
/// use payments_serve::otlp::redacted_path;
///
/// let key = "sk_test_CANARY";
/// assert_eq!(
///     redacted_path("/api/payments/reference/REF-sk_test_CANARY/status", &[key]),
///     "/api/payments/reference/REF-[redacted]/status"
/// );
/// assert_eq!(
///     redacted_path("/api/payments/reference/REF-sk%5Ftest%5FCANARY/status", &[key]),
///     "/api/payments/reference/REF-[redacted]/status"
/// );
/// ```
pub fn redacted_path<'a, S: AsRef<str>>(path: &'a str, secrets: &[S]) -> Cow<'a, str> {
    let mut secrets: Vec<&str> = secrets
        .iter()
        .map(|s| s.as_ref().trim())
        .filter(|s| long_enough(s))
        .collect();
    if secrets.is_empty() {
        return Cow::Borrowed(path);
    }
    // Longest first: a secret inside another is not half replaced.
    secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    secrets.dedup();
    let mut shown = Cow::Borrowed(path);
    for secret in &secrets {
        if shown.contains(secret) {
            shown = Cow::Owned(shown.replace(secret, REDACTED));
        }
    }
    if !shown.contains('%') {
        return shown;
    }
    let mut rebuilt = String::with_capacity(shown.len());
    let mut changed = false;
    for (n, segment) in shown.split('/').enumerate() {
        if n > 0 {
            rebuilt.push('/');
        }
        match segment
            .contains('%')
            .then(|| replaced_decoded(segment, &secrets))
            .flatten()
        {
            Some(clean) => {
                rebuilt.push_str(&clean);
                changed = true;
            }
            None => rebuilt.push_str(segment),
        }
    }
    if changed { Cow::Owned(rebuilt) } else { shown }
}

/// `segment` decoded with `secrets` replaced in it and the rest escaped
/// again, or `None` when its decoded text holds none.
fn replaced_decoded(segment: &str, secrets: &[&str]) -> Option<String> {
    let decoded = percent_decoded(segment);
    let mut at = 0;
    let mut out = String::new();
    let mut found = false;
    while at < decoded.len() {
        let hit = secrets
            .iter()
            .find(|s| decoded[at..].starts_with(**s))
            .map(|s| s.len());
        if let Some(len) = hit {
            out.push_str(REDACTED);
            at += len;
            found = true;
            continue;
        }
        let c = decoded[at..].chars().next()?;
        escape_into(c, &mut out);
        at += c.len_utf8();
    }
    found.then_some(out)
}

/// `text` with each `%XY` decoded (a `+` stays: a path's, not a form's),
/// the bytes read as UTF-8, lossily.
fn percent_decoded(text: &str) -> String {
    // A `+` in a path is itself: kept apart from the form decoder's space.
    form_decoded(&text.replace('+', "%2B")).into_owned()
}

/// Writes `c` as a path segment may hold it: unreserved characters,
/// sub-delimiters, `:` and `@` as they are, every other byte escaped.
fn escape_into(c: char, out: &mut String) {
    if c.is_ascii_alphanumeric() || "-._~!$&'()*+,;=:@".contains(c) {
        out.push(c);
        return;
    }
    let mut bytes = [0u8; 4];
    for b in c.encode_utf8(&mut bytes).bytes() {
        out.push_str(&format!("%{b:02X}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(rule: &RequestSecrets, target: &str, headers: &[(&str, &str)]) -> String {
        let uri: Uri = target.parse().expect("a target");
        let mut map = HeaderMap::new();
        for (name, value) in headers {
            map.append(
                axum::http::HeaderName::from_bytes(name.as_bytes()).expect("a name"),
                value.parse().expect("a value"),
            );
        }
        rule.shown(&Method::GET, &uri, &map).into_owned()
    }

    #[test]
    fn the_credentials_a_request_carries_are_not_shown_in_its_path() {
        let rule = RequestSecrets::default();
        let path = "/api/payments/reference/REF-sk_test_KEYCANARY1/status";
        for headers in [
            &[("authorization", "Bearer sk_test_KEYCANARY1")][..],
            &[("x-api-key", "sk_test_KEYCANARY1")],
            &[("cookie", "a=1; s=sk_test_KEYCANARY1")],
        ] {
            assert_eq!(
                shown(&rule, path, headers),
                "/api/payments/reference/REF-[redacted]/status",
                "{headers:?}"
            );
        }
        assert_eq!(
            shown(&rule, &format!("{path}?api%5Fkey=sk_test_KEYCANARY1"), &[]),
            "/api/payments/reference/REF-[redacted]/status"
        );
        // Not a credential's header or parameter: shown as sent.
        assert_eq!(
            shown(
                &rule,
                &format!("{path}?pageToken=sk_test_KEYCANARY1"),
                &[("idempotency-key", "sk_test_KEYCANARY1")]
            ),
            path
        );
    }

    #[test]
    fn the_servers_own_secrets_are_not_shown_and_short_values_are_left() {
        let rule = RequestSecrets::new(["sk_live_OWNCANARY9", "short"]);
        assert_eq!(
            shown(&rule, "/api/payments/sk_live_OWNCANARY9/status", &[]),
            "/api/payments/[redacted]/status"
        );
        assert_eq!(
            shown(&rule, "/api/payments/short/status", &[]),
            "/api/payments/short/status"
        );
        assert_eq!(format!("{rule:?}"), "RequestSecrets { own: 1 [redacted] }");
    }

    /// Issue: the mock's spans showed its `--admin-key` echoed in a path
    /// (`REF-adminsecret3xyz`, `/_mock/transactions/adminsecret3xyz`)
    /// where its API keys were `[redacted]`.
    #[cfg(feature = "admin")]
    #[test]
    fn the_servers_admin_keys_are_not_shown() {
        let keys: Vec<crate::admin::AdminKey> = ["adminsecret3xyz", "adm_7"]
            .iter()
            .map(|k| k.parse().expect("a key"))
            .collect();
        let rule = RequestSecrets::new(["sk_live_OWNCANARY9"]).with_admin_keys(&keys);
        for (path, kept) in [
            (
                "/api/payments/reference/REF-adminsecret3xyz/status",
                "/api/payments/reference/REF-[redacted]/status",
            ),
            (
                "/_mock/transactions/adminsecret3xyz",
                "/_mock/transactions/[redacted]",
            ),
            (
                "/_mock/transactions/admin%73ecret3xyz",
                "/_mock/transactions/[redacted]",
            ),
            (
                "/api/payments/sk_live_OWNCANARY9/status",
                "/api/payments/[redacted]/status",
            ),
            (
                "/api/payments/adm_shor/status",
                "/api/payments/adm_shor/status",
            ),
        ] {
            assert_eq!(shown(&rule, path, &[]), kept, "{path}");
        }
        assert_eq!(format!("{rule:?}"), "RequestSecrets { own: 2 [redacted] }");
    }

    #[test]
    fn a_secret_is_found_under_any_escapes_and_the_rest_stays_readable() {
        let key = ["sk/test+CANARY1"];
        for path in [
            "/r/REF-sk%2Ftest+CANARY1/status",
            "/r/REF-sk%2ftest%2BCANARY1/status",
            "/r/REF-%73k%2Ftest%2bCANARY1/status",
        ] {
            assert_eq!(
                redacted_path(path, &key),
                "/r/REF-[redacted]/status",
                "{path}"
            );
        }
        // Written as it is, across what reads as segments.
        assert_eq!(
            redacted_path("/r/sk/test+CANARY1/x", &key),
            "/r/[redacted]/x"
        );
        // The rest of a segment it was found in: escaped where it must be.
        assert_eq!(
            redacted_path("/r/%E8%AB%8B%20sk%2Ftest+CANARY1%2F", &key),
            "/r/%E8%AB%8B%20[redacted]%2F"
        );
        // Nothing found: borrowed, escapes as sent.
        assert!(matches!(
            redacted_path("/r/%41%2f", &key),
            Cow::Borrowed("/r/%41%2f")
        ));
        assert!(matches!(redacted_path("/r", &["short"]), Cow::Borrowed(_)));
    }
}
