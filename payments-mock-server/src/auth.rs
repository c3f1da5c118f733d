//! API-key authentication (CONTRACT section 9): `Authorization: Bearer KEY`,
//! scheme in any letter case, keys compared in constant time, never logged.

use axum::http::{HeaderMap, header};
use subtle::ConstantTimeEq;

use crate::config::ApiKey;
use crate::error::ApiError;
use crate::extract::Caller;

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
}
