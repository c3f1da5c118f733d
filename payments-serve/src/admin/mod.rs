//! What both servers' admin sides share (CONTRACT section 18): admin keys
//! that never show ([`AdminKey`]), the `Authorization: Bearer` token
//! ([`bearer_token`]), the same-origin check of a form post
//! ([`same_origin`]), the `Host` an open admin side answers
//! ([`names_this_server`]: DNS rebinding), and the console's sign-in sessions kept in the
//! process ([`Sessions`]) with their cookie ([`SessionCookie`]), and the
//! console's forms: read once checked ([`read_form`]), their fields
//! ([`param`]), the way back after a sign-in ([`target_of`]). The checks
//! of an admin side's configuration ([`check_config`]), and, with the
//! `pages` feature, the console's sign-in page and its flow
//! (`sign_in`).
//!
//! Who may do what stays each server's own: the mock tells an admin from
//! a merchant's key; the proxy has admin keys only.
//!
//! # Example
//!
//! A key checked in constant time, and a session for it:
//!
//! ```
//! use std::time::Duration;
//! use payments_serve::admin::{AdminKey, SessionCookie, Sessions, bearer_token};
//!
//! let key: AdminKey = "adm_4f9c2e".parse().expect("a key's shape");
//! assert_eq!(format!("{key:?}"), "AdminKey([redacted])");
//! let token = bearer_token(b"Bearer adm_4f9c2e").expect("a bearer token");
//! assert!(key.matches(token));
//!
//! let sessions = Sessions::new(Duration::from_secs(3600));
//! let id = sessions.start(());
//! let cookie = SessionCookie::new("example_session").set(&id, sessions.lifetime(), false);
//! assert!(cookie.to_str().unwrap().contains("HttpOnly; SameSite=Strict"));
//! ```

use std::fmt;
use std::str::FromStr;

use axum::http::{HeaderMap, header};
use subtle::ConstantTimeEq;

mod form;
mod host;
mod session;
#[cfg(feature = "pages")]
#[cfg_attr(docsrs, doc(cfg(feature = "pages")))]
pub mod sign_in;

pub use form::{
    FormRefusal, bearer_challenge, is_form, param, query_pairs, read_form, read_form_at, see_other,
    target_of,
};
pub use host::{foreign_host, names_this_server};
pub use session::{SessionCookie, SessionId, Sessions};

/// Longest admin key (bytes): far more than any generated secret needs,
/// and a bound on what one comparison costs.
pub const MAX_ADMIN_KEY: usize = 1024;

/// How long a console session lasts by default: a working day and then
/// some.
pub const DEFAULT_SESSION_LIFETIME: std::time::Duration = std::time::Duration::from_secs(12 * 3600);

/// An admin key (`--admin-key`): a secret, never shown (its `Debug` says
/// `[redacted]`, its parse errors never repeat it).
#[derive(Clone, PartialEq, Eq)]
pub struct AdminKey(String);

impl AdminKey {
    /// A key as given; [`AdminKey::check`] tells whether it has a key's
    /// shape (as parsing does).
    pub fn new(key: impl Into<String>) -> Self {
        Self(key.into())
    }

    /// Whether it has a key's shape: see [`AdminKey::from_str`].
    ///
    /// # Errors
    ///
    /// What is wrong, without any of the key.
    pub fn check(&self) -> Result<(), String> {
        let s = self.0.as_str();
        if s.is_empty() || s.len() > MAX_ADMIN_KEY {
            return Err(format!(
                "an admin key is 1 to {MAX_ADMIN_KEY} characters (value not shown)"
            ));
        }
        if !s.bytes().all(|b| (0x21..=0x7e).contains(&b)) {
            return Err(
                "an admin key must be visible ASCII without spaces (value not shown)".to_owned(),
            );
        }
        Ok(())
    }

    /// Whether `token` is this key, compared in constant time (`subtle`):
    /// the time taken says nothing of how much of it matched.
    pub fn ct_eq(&self, token: &[u8]) -> subtle::Choice {
        self.0.as_bytes().ct_eq(token)
    }

    /// [`AdminKey::ct_eq`] as a `bool`.
    pub fn matches(&self, token: &[u8]) -> bool {
        bool::from(self.ct_eq(token))
    }

    /// The key itself, for this crate's redaction only (the spans' paths,
    /// [`crate::otlp::RequestSecrets::with_admin_keys`]): never shown.
    #[cfg(feature = "otlp")]
    pub(crate) fn secret(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for AdminKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AdminKey([redacted])")
    }
}

impl FromStr for AdminKey {
    type Err = String;

    /// 1 to 1,024 visible ASCII characters (what a header can
    /// carry after `Bearer `). The error never repeats any of `s`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let key = Self::new(s);
        key.check()?;
        Ok(key)
    }
}

/// Whether any of `keys` is `token`: every key is compared, in constant
/// time, so the timing tells neither which one matched nor whether any
/// did.
pub fn any_matches(keys: &[AdminKey], token: &[u8]) -> bool {
    let mut found = subtle::Choice::from(0);
    for key in keys {
        found |= key.ct_eq(token);
    }
    bool::from(found)
}

/// The 1-based positions of the first key that repeats an earlier one,
/// and of that earlier one: a configuration error that names no key.
pub fn repeated_key(keys: &[AdminKey]) -> Option<(usize, usize)> {
    keys.iter().enumerate().find_map(|(j, later)| {
        keys[..j]
            .iter()
            .position(|earlier| earlier.matches(later.0.as_bytes()))
            .map(|i| (i + 1, j + 1))
    })
}

/// Checks an admin side's configuration before a server starts: every
/// key has a key's shape ([`AdminKey::check`]), none is given twice, none
/// is also one of the server's API keys (`api_keys`, their secrets in
/// order: the mock's; the proxy takes none), and a session lasts.
///
/// # Errors
///
/// What is wrong, naming keys by their 1-based positions only, never a
/// key.
pub fn check_config<'a>(
    keys: &[AdminKey],
    api_keys: impl IntoIterator<Item = &'a [u8]>,
    session_lifetime: std::time::Duration,
) -> Result<(), String> {
    if let Some((i, problem)) = keys
        .iter()
        .enumerate()
        .find_map(|(i, k)| k.check().err().map(|e| (i + 1, e)))
    {
        return Err(format!("admin key #{i}: {problem}"));
    }
    if let Some((first, second)) = repeated_key(keys) {
        return Err(format!(
            "the same admin key is given twice (admin keys #{first} and #{second})"
        ));
    }
    let api_keys: Vec<&[u8]> = api_keys.into_iter().collect();
    if let Some((admin, api)) = keys.iter().enumerate().find_map(|(i, admin)| {
        api_keys
            .iter()
            .position(|api| admin.matches(api))
            .map(|j| (i + 1, j + 1))
    }) {
        return Err(format!(
            "admin key #{admin} is also API key #{api}: a key has one role"
        ));
    }
    if session_lifetime.is_zero() {
        return Err("the console's session lifetime must be greater than 0".to_owned());
    }
    Ok(())
}

/// The token of `Bearer <token>`, scheme in any letter case; `None` for
/// another scheme or an empty token.
pub fn bearer_token(value: &[u8]) -> Option<&[u8]> {
    let space = value.iter().position(|b| *b == b' ')?;
    let (scheme, rest) = value.split_at(space);
    if !scheme.eq_ignore_ascii_case(b"bearer") {
        return None;
    }
    let token = rest.trim_ascii();
    (!token.is_empty()).then_some(token)
}

/// Whether a POST comes from this server's own pages (or from a tool): a
/// browser sends `Origin` with a POST; when it names another host than the
/// request's `Host`, another site's page made the browser post here.
pub fn same_origin(headers: &HeaderMap) -> bool {
    same_origin_as(headers, None)
}

/// [`same_origin`], and also an `Origin` that is `public`'s origin (a
/// server's public URL, `scheme://host[:port]/path`): behind a reverse
/// proxy that rewrites `Host` (nginx's default `proxy_pass`) the browser's
/// `Origin` is the public one while `Host` is the upstream's.
pub fn same_origin_as(headers: &HeaderMap, public: Option<&str>) -> bool {
    let Some(origin) = headers.get(header::ORIGIN) else {
        return true;
    };
    let Some(origin) = origin.to_str().ok() else {
        return false;
    };
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
    if matches!((host, origin_host(origin)), (Some(h), Some(o)) if h.eq_ignore_ascii_case(&o)) {
        return true;
    }
    // The public URL's origin: the same scheme and `host[:port]`.
    public.is_some_and(|public| {
        let of = |url: &str| {
            let scheme = url
                .parse::<axum::http::Uri>()
                .ok()?
                .scheme_str()?
                .to_ascii_lowercase();
            Some((scheme, origin_host(url)?.to_ascii_lowercase()))
        };
        of(origin).is_some_and(|o| of(public) == Some(o))
    })
}

/// `host[:port]` of an `Origin` (`scheme://host[:port]`), as a `Host`
/// header names it: the port only when it is not the scheme's default.
/// `None` for `null` and for anything that is not an origin.
fn origin_host(origin: &str) -> Option<String> {
    let uri = origin.parse::<axum::http::Uri>().ok()?;
    let default = match uri.scheme_str()? {
        "http" => 80,
        "https" => 443,
        _ => 0,
    };
    let authority = uri.authority()?;
    Some(match authority.port_u16() {
        Some(port) if port != default => format!("{}:{port}", authority.host()),
        _ => authority.host().to_owned(),
    })
}

/// Longest `next` a sign-in keeps (a console address with its filters):
/// a server's sign-in form must take one this long, since its page offers
/// one.
pub const MAX_NEXT: usize = 512;

/// Where a sign-in sends the browser: `next` when it is a console address
/// relative to the server's root (starting with `home`, e.g. `_mock/ui/`;
/// visible ASCII; no way out of the console; not the sign-in page at
/// `sign_in`), else `home`. A sign-in never sends the browser anywhere
/// else.
pub fn console_target<'a>(next: &'a str, home: &'a str, sign_in: &str) -> &'a str {
    let safe = next.len() <= MAX_NEXT
        && next.starts_with(home)
        && next.bytes().all(|b| b.is_ascii_graphic() && b != b'\\')
        && !next.contains("//")
        && !next.contains("/.")
        && !next.starts_with(sign_in.trim_start_matches('/'));
    if safe { next } else { home }
}

/// A session's lifetime as a person reads it: `12 hours`, `1 hour`, or
/// humantime's `1h 30m` for anything else.
pub fn shown_lifetime(lifetime: std::time::Duration) -> String {
    match lifetime.as_secs() {
        3600 => "1 hour".to_owned(),
        s if s % 3600 == 0 && lifetime.subsec_nanos() == 0 => format!("{} hours", s / 3600),
        _ => humantime::format_duration(lifetime).to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn admin_keys_parse_quietly_and_never_show() {
        let key: AdminKey = "adm_secret".parse().expect("a key");
        assert_eq!(format!("{key:?}"), "AdminKey([redacted])");
        for bad in ["", "has space", "tab\there", "caf\u{e9}"] {
            let error = bad.parse::<AdminKey>().expect_err("refused");
            assert!(bad.is_empty() || !error.contains(bad), "{error}");
        }
        let huge = "k".repeat(MAX_ADMIN_KEY + 1);
        let error = huge.parse::<AdminKey>().expect_err("too long");
        assert!(!error.contains("kkkk"), "{error}");
        assert!("k".repeat(MAX_ADMIN_KEY).parse::<AdminKey>().is_ok());
    }

    #[test]
    fn keys_match_exactly_and_any_of_several() {
        let keys: Vec<AdminKey> = ["adm_one", "adm_two"]
            .iter()
            .map(|k| k.parse().expect("a key"))
            .collect();
        assert!(any_matches(&keys, b"adm_one"));
        assert!(any_matches(&keys, b"adm_two"));
        for wrong in [&b"adm_on"[..], b"adm_one ", b"ADM_ONE", b"", b"adm_three"] {
            assert!(!any_matches(&keys, wrong), "{wrong:?}");
        }
        assert!(!any_matches(&[], b"adm_one"));
    }

    #[test]
    fn a_repeated_key_is_found_by_position() {
        let keys: Vec<AdminKey> = ["a1", "b2", "c3", "b2"]
            .iter()
            .map(|k| k.parse().expect("a key"))
            .collect();
        assert_eq!(repeated_key(&keys), Some((2, 4)));
        assert_eq!(repeated_key(&keys[..3]), None);
    }

    #[test]
    fn a_configuration_names_positions_never_keys() {
        use std::time::Duration;
        let keys =
            |list: &[&str]| -> Vec<AdminKey> { list.iter().map(|k| AdminKey::new(*k)).collect() };
        let day = Duration::from_secs(86_400);
        let none: [&[u8]; 0] = [];
        assert_eq!(check_config(&[], none, day), Ok(()));
        assert_eq!(
            check_config(&keys(&["adm_1", "adm_2"]), [&b"sk_1"[..]], day),
            Ok(())
        );
        for (given, api, says) in [
            (
                &["adm_1", "adm_tab\tkey"][..],
                &[][..],
                "admin key #2: an admin key must be visible ASCII",
            ),
            (
                &["adm_1", "adm_2", "adm_1"],
                &[],
                "the same admin key is given twice (admin keys #1 and #3)",
            ),
            (
                &["adm_1", "adm_2"],
                &[&b"sk_1"[..], b"adm_2"],
                "admin key #2 is also API key #2: a key has one role",
            ),
        ] {
            let error = check_config(&keys(given), api.iter().copied(), day).expect_err(says);
            assert!(error.starts_with(says), "{error}");
            assert!(!error.contains("adm_") && !error.contains("tab"), "{error}");
        }
        assert_eq!(
            check_config(&keys(&["adm_1"]), none, Duration::ZERO),
            Err("the console's session lifetime must be greater than 0".to_owned())
        );
    }

    #[test]
    fn a_sign_in_only_ever_leads_into_the_console() {
        const HOME: &str = "_mock/ui/";
        const SIGN_IN: &str = "/_mock/ui/sign-in";
        for kept in [
            "_mock/ui/",
            "_mock/ui/requests",
            "_mock/ui/transactions/0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
            "_mock/ui/?status=FAILED&reference=INV%2F1",
        ] {
            assert_eq!(console_target(kept, HOME, SIGN_IN), kept);
        }
        for refused in [
            "",
            "https://evil.example/",
            "//evil.example/",
            "/_mock/ui/",
            "_mock/ui//evil.example",
            "_mock/ui/../../reset",
            "_mock/ui/./x",
            "_mock/reset",
            "_mock/ui/\\evil",
            "_mock/ui/a b",
            "_mock/ui/sign-in",
            "_mock/ui/sign-in?next=x",
            "_mock/ui/\u{e9}",
            "_proxy/ui/",
        ] {
            assert_eq!(console_target(refused, HOME, SIGN_IN), HOME, "{refused}");
        }
        let long = format!("_mock/ui/{}", "a".repeat(MAX_NEXT));
        assert_eq!(console_target(&long, HOME, SIGN_IN), HOME);
        assert_eq!(
            console_target("_proxy/ui/exchanges/3", "_proxy/ui/", "/_proxy/ui/sign-in"),
            "_proxy/ui/exchanges/3"
        );
    }

    #[test]
    fn lifetimes_read_as_words() {
        use std::time::Duration;
        assert_eq!(shown_lifetime(Duration::from_secs(12 * 3600)), "12 hours");
        assert_eq!(shown_lifetime(Duration::from_secs(3600)), "1 hour");
        assert_eq!(shown_lifetime(Duration::from_secs(90 * 60)), "1h 30m");
    }

    #[test]
    fn bearer_in_any_case() {
        assert_eq!(bearer_token(b"Bearer k"), Some(&b"k"[..]));
        assert_eq!(bearer_token(b"bEaReR   k  "), Some(&b"k"[..]));
        assert_eq!(bearer_token(b"Basic k"), None);
        assert_eq!(bearer_token(b"Bearer "), None);
        assert_eq!(bearer_token(b"Bearer"), None);
    }

    #[test]
    fn a_post_from_another_origin_is_refused() {
        let headers = |origin: Option<&str>, host: &str| {
            let mut h = HeaderMap::new();
            h.insert(header::HOST, HeaderValue::from_str(host).expect("host"));
            if let Some(o) = origin {
                h.insert(header::ORIGIN, HeaderValue::from_str(o).expect("origin"));
            }
            h
        };
        assert!(same_origin(&headers(None, "127.0.0.1:8080")));
        assert!(same_origin(&headers(
            Some("http://127.0.0.1:8080"),
            "127.0.0.1:8080"
        )));
        assert!(same_origin(&headers(
            Some("https://example.com"),
            "example.com"
        )));
        assert!(!same_origin(&headers(
            Some("http://evil.example"),
            "127.0.0.1:8080"
        )));
        assert!(!same_origin(&headers(Some("null"), "127.0.0.1:8080")));
    }

    /// Behind a reverse proxy that rewrites `Host` to the upstream's, the
    /// browser's `Origin` is the public URL's: that is this server too.
    #[test]
    fn a_post_from_the_public_urls_origin_is_accepted() {
        let headers = |origin: &str| {
            let mut h = HeaderMap::new();
            h.insert(header::HOST, HeaderValue::from_static("127.0.0.1:8080"));
            h.insert(
                header::ORIGIN,
                HeaderValue::from_str(origin).expect("origin"),
            );
            h
        };
        let public = Some("http://shop.example/mock/");
        assert!(same_origin_as(&headers("http://shop.example"), public));
        assert!(same_origin_as(&headers("HTTP://Shop.Example:80"), public));
        assert!(!same_origin(&headers("http://shop.example")));
        assert!(same_origin_as(&headers("http://127.0.0.1:8080"), public));
        for other in [
            "https://shop.example",
            "http://shop.example:8443",
            "http://evil.example",
            "http://shop.example.evil.example",
            "null",
        ] {
            assert!(!same_origin_as(&headers(other), public), "{other}");
        }
        assert!(!same_origin_as(&headers("http://shop.example"), None));
        assert!(!same_origin_as(
            &headers("http://shop.example"),
            Some("not a url")
        ));
    }
}
