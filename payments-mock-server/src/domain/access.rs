//! API-key authentication (CONTRACT section 9): `Authorization: Bearer KEY`,
//! scheme in any letter case, keys compared in constant time, never logged.

use axum::http::{HeaderMap, header};
use subtle::ConstantTimeEq;

use crate::config::ApiKey;
use crate::error::ApiError;
use crate::http::extract::Caller;

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

    /// Who the request comes from.
    ///
    /// # Errors
    ///
    /// 401 `UNAUTHORIZED` when authentication is on and no configured key
    /// was presented.
    pub fn authenticate(&self, headers: &HeaderMap) -> Result<Caller, ApiError> {
        if !self.is_enabled() {
            return Ok(Caller::default());
        }
        let token = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| bearer_token(v.as_bytes()))
            .ok_or_else(ApiError::unauthorized)?;
        // Every key is compared, so timing does not tell which one matched.
        let mut found = None;
        for key in &self.keys {
            if bool::from(key.secret().ct_eq(token)) {
                found = Some(Caller {
                    merchant: key.merchant(),
                });
            }
        }
        found.ok_or_else(ApiError::unauthorized)
    }
}

/// The token of `Bearer <token>`, scheme in any letter case.
fn bearer_token(value: &[u8]) -> Option<&[u8]> {
    let space = value.iter().position(|b| *b == b' ')?;
    let (scheme, rest) = value.split_at(space);
    if !scheme.eq_ignore_ascii_case(b"bearer") {
        return None;
    }
    let token = rest.trim_ascii();
    (!token.is_empty()).then_some(token)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(v: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(
            header::AUTHORIZATION,
            HeaderValue::from_str(v).expect("test value"),
        );
        h
    }

    #[test]
    fn bearer_in_any_case() {
        let auth = Auth::new(vec![ApiKey::new("k1", None)]);
        assert!(auth.authenticate(&headers("Bearer k1")).is_ok());
        assert!(auth.authenticate(&headers("bEARER k1")).is_ok());
        assert!(auth.authenticate(&headers("Bearer k2")).is_err());
        assert!(auth.authenticate(&headers("Basic k1")).is_err());
        assert!(auth.authenticate(&HeaderMap::new()).is_err());
    }

    /// The body of [`Auth::authenticate`], as written.
    fn authenticate_source() -> &'static str {
        let source = include_str!("auth.rs");
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
        let end = body.find("found.ok_or_else").expect("after the loop");
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
        let try_token = |t: &str| auth.authenticate(&headers(&format!("Bearer {t}"))).is_ok();
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
        let caller = auth.authenticate(&headers("Bearer k")).expect("known key");
        assert_eq!(caller.merchant, Some(a));
    }
}
