//! Who may do what. API keys on `/api/` (CONTRACT section 9): keys
//! compared in constant time, never logged; the `Authorization: Bearer`
//! header they arrive in is read by `http/`. The admin side (`/_mock/`,
//! the console; section 18):
//!
//! - `role.rs`: the [`Role`] a request has on the admin side, the
//!   [`Viewer`] a handler sees, and why one is refused ([`Refusal`]); the
//!   keys and sessions that give them are the crate's `admin` module.
//! - `claim.rs`: which merchant a journaled request belongs to, as far as
//!   the request itself says ([`Claim`]), so a merchant's key sees only
//!   its own requests.

use std::fmt;
use std::str::FromStr;

use subtle::ConstantTimeEq;
use uuid::Uuid;

mod claim;
mod role;

pub use claim::{Claim, claim};
pub use role::{Refusal, Role, Viewer};

/// No configured API key was presented (401 `UNAUTHORIZED` on `/api/`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unauthorized;

/// Who is calling: the merchant an API key is bound to, if any. Set by
/// the `/api/` guard; absent means unbound (or authentication off).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Caller {
    /// The bound merchant.
    pub merchant: Option<Uuid>,
}

/// An API key, optionally bound to one merchant (CONTRACT section 9).
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey {
    pub(crate) key: String,
    merchant: Option<Uuid>,
}

impl ApiKey {
    /// A key; `merchant` binds it.
    pub fn new(key: impl Into<String>, merchant: Option<Uuid>) -> Self {
        Self {
            key: key.into(),
            merchant,
        }
    }

    /// The secret itself.
    pub(crate) fn secret(&self) -> &[u8] {
        self.key.as_bytes()
    }

    /// The merchant it is bound to.
    pub fn merchant(&self) -> Option<Uuid> {
        self.merchant
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ApiKey")
            .field("key", &"[redacted]")
            .field("merchant", &self.merchant)
            .finish()
    }
}

impl FromStr for ApiKey {
    type Err = String;

    /// `KEY` or `KEY=MERCHANT_UUID`, split at the last `=`: a key may
    /// contain `=` itself. What follows the last `=` is the merchant's UUID,
    /// or nothing: then the `=` ends the key (base64 padding, `c2VjcmV0=`)
    /// and the whole text is a key bound to no merchant. So `abc==UUID` is
    /// the key `abc=` bound to that merchant.
    ///
    /// The error never repeats any part of `s`: what follows `=` may be the
    /// rest of a key that itself contains `=`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (key, merchant) = match s.rsplit_once('=') {
            Some((_, "")) => (s, None),
            Some((key, m)) => (
                key,
                Some(Uuid::parse_str(m).map_err(|_| {
                    "what follows the last '=' is not a UUID (value not shown: \
                     it may hold a secret): a key is read up to its last '=', which must be \
                     followed by the merchant's UUID (KEY=MERCHANT_UUID) or end the key (as \
                     base64 padding does)"
                        .to_owned()
                })?),
            ),
            None => (s, None),
        };
        if key.is_empty() || !key.bytes().all(|b| (0x21..=0x7e).contains(&b)) {
            return Err("an API key must be non-empty visible ASCII without spaces".to_owned());
        }
        Ok(Self::new(key, merchant))
    }
}

/// The configured keys; empty means authentication is off.
#[derive(Debug, Clone, Default)]
pub struct Auth {
    keys: Vec<ApiKey>,
}

impl Auth {
    /// Authentication with these keys.
    pub fn new(keys: Vec<ApiKey>) -> Self {
        Self { keys }
    }

    /// Whether any key is configured.
    pub fn is_enabled(&self) -> bool {
        !self.keys.is_empty()
    }

    /// Whether some key is bound to a merchant (then initiate can be 403).
    pub fn has_bound_keys(&self) -> bool {
        self.keys.iter().any(|k| k.merchant().is_some())
    }

    /// Whether some key is bound to no merchant (the admin side refuses
    /// it 403 when it has an admin key).
    pub fn has_unbound_keys(&self) -> bool {
        self.keys.iter().any(|k| k.merchant().is_none())
    }

    /// The configured keys (the admin side compares them too).
    pub(crate) fn keys(&self) -> &[ApiKey] {
        &self.keys
    }

    /// Who the request comes from, by the bearer `token` it presented
    /// (`None`: no `Authorization: Bearer` header).
    ///
    /// # Errors
    ///
    /// [`Unauthorized`] when authentication is on and no configured key
    /// was presented.
    pub fn authenticate(&self, token: Option<&[u8]>) -> Result<Caller, Unauthorized> {
        if !self.is_enabled() {
            return Ok(Caller::default());
        }
        let token = token.ok_or(Unauthorized)?;
        // Every key is compared, so timing does not tell which one matched.
        let mut found = None;
        for key in &self.keys {
            if bool::from(key.secret().ct_eq(token)) {
                found = Some(Caller {
                    merchant: key.merchant(),
                });
            }
        }
        found.ok_or(Unauthorized)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--api-key` splits at the last `=`: a key may hold `=` (base64
    /// padding), and `KEY=UUID` still binds it.
    #[test]
    fn a_key_may_contain_equals_signs() {
        let merchant = "6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60";
        let id = Uuid::parse_str(merchant).expect("a UUID");
        let parsed = |text: &str| text.parse::<ApiKey>().expect(text);
        let unbound = parsed("c2VjcmV0=");
        assert_eq!(
            (unbound.key.as_str(), unbound.merchant()),
            ("c2VjcmV0=", None)
        );
        let padded = parsed("c2VjcmV0Cg==");
        assert_eq!(
            (padded.key.as_str(), padded.merchant()),
            ("c2VjcmV0Cg==", None)
        );
        let bound = parsed(&format!("abc=={merchant}"));
        assert_eq!((bound.key.as_str(), bound.merchant()), ("abc=", Some(id)));
        let bound = parsed(&format!("a=b={merchant}"));
        assert_eq!((bound.key.as_str(), bound.merchant()), ("a=b", Some(id)));
        let plain = parsed(&format!("sk_a={merchant}"));
        assert_eq!((plain.key.as_str(), plain.merchant()), ("sk_a", Some(id)));
        let plain = parsed("sk_a");
        assert_eq!((plain.key.as_str(), plain.merchant()), ("sk_a", None));
        // What follows the last `=` is neither a UUID nor nothing: the
        // rule, and nothing of the text.
        for bad in [
            "sk_secretpart=nope",
            "sk_secretpart=b=nope",
            &format!("{merchant}=nope"),
        ] {
            let error = bad.parse::<ApiKey>().expect_err(bad);
            assert!(error.contains("last '='"), "{error}");
            assert!(error.contains("KEY=MERCHANT_UUID"), "{error}");
            for shown in ["secretpart", "nope", merchant] {
                assert!(!error.contains(shown), "{error} shows {shown}");
            }
        }
        // No key before the merchant: refused as an empty key.
        assert!(format!("={merchant}").parse::<ApiKey>().is_err());
    }

    #[test]
    fn the_key_presented_names_the_caller() {
        let merchant = Uuid::from_u128(9);
        let auth = Auth::new(vec![
            ApiKey::new("k1", None),
            ApiKey::new("k2", Some(merchant)),
        ]);
        assert_eq!(auth.authenticate(Some(b"k1")), Ok(Caller::default()));
        assert_eq!(
            auth.authenticate(Some(b"k2")),
            Ok(Caller {
                merchant: Some(merchant)
            })
        );
        assert_eq!(auth.authenticate(Some(b"k3")), Err(Unauthorized));
        assert_eq!(auth.authenticate(None), Err(Unauthorized));
        assert_eq!(Auth::default().authenticate(None), Ok(Caller::default()));
    }

    /// The body of [`Auth::authenticate`], as written.
    fn authenticate_source() -> &'static str {
        let source = include_str!("access.rs");
        let start = source
            .find("pub fn authenticate")
            .expect("authenticate is defined here");
        let end = start
            + source[start..]
                .find("\n    }\n")
                .expect("authenticate ends");
        &source[start..end]
    }

    #[test]
    fn keys_are_compared_with_subtle_constant_time_eq_only() {
        let body = authenticate_source();
        let start = body.find("for key in &self.keys").expect("the key loop");
        let end = body.find("found.ok_or").expect("after the loop");
        let key_loop = &body[start..end];
        assert!(key_loop.contains(".ct_eq(token)"), "{key_loop}");
        // No short-circuiting comparison of secrets, and no early exit from
        // the loop on a match: every key is compared every time.
        for forbidden in [
            "==",
            "!=",
            "eq(token",
            "starts_with",
            "break",
            "return",
            "?",
        ] {
            let allowed = usize::from(forbidden == "eq(token");
            assert!(
                key_loop.matches(forbidden).count() <= allowed,
                "the key loop uses {forbidden:?}:\n{key_loop}"
            );
        }
    }

    #[test]
    fn tokens_of_equal_and_different_length_are_refused_unless_exact() {
        let key = "sk_live_0123456789";
        let auth = Auth::new(vec![ApiKey::new(key, None), ApiKey::new("other", None)]);
        let try_token = |t: &str| auth.authenticate(Some(t.as_bytes())).is_ok();
        assert!(try_token(key));
        assert!(try_token("other"));
        // Same length, one byte off at the start, the middle, the end.
        for i in [0, key.len() / 2, key.len() - 1] {
            let mut bytes = key.as_bytes().to_vec();
            bytes[i] ^= 0x01;
            let near = String::from_utf8(bytes).expect("ascii");
            assert_eq!(near.len(), key.len());
            assert!(!try_token(&near), "{near}");
        }
        // Prefixes, extensions, and keys glued together.
        assert!(!try_token(&key[..key.len() - 1]));
        assert!(!try_token(&key[..1]));
        assert!(!try_token(&format!("{key}0")));
        assert!(!try_token(&format!("{key}other")));
        assert!(!try_token(&key.to_uppercase()));
        // subtle itself: unequal lengths compare unequal, never panic.
        assert!(!bool::from(key.as_bytes().ct_eq(&key.as_bytes()[..3])));
        assert!(bool::from(key.as_bytes().ct_eq(key.as_bytes())));
    }

    #[test]
    fn the_last_matching_key_wins_without_stopping_early() {
        let a = uuid::Uuid::from_u128(1);
        let auth = Auth::new(vec![ApiKey::new("k", Some(a)), ApiKey::new("x", None)]);
        let caller = auth.authenticate(Some(b"k")).expect("known key");
        assert_eq!(caller.merchant, Some(a));
    }
}
