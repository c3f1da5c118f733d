//! The admin side's keys and sessions (CONTRACT section 18):
//! `--admin-key` opens every `/_mock/` route and the console; an API key
//! bound to a merchant reads its merchant's part and changes nothing;
//! without an admin key the admin side is open, as it always was on a
//! developer's loopback. [`AdminAccess`] tells a request's [`Role`] from a
//! bearer token or a console session; the console's sessions are
//! payments-serve's [`payments_serve::admin::Sessions`] (random ids kept in
//! this process, each with an expiry), granting a [`Role`], in the cookie
//! [`SESSION_COOKIE`].
//!
//! The rules of roles are the domain's (`domain::access::role`); this
//! module reads them off the keys and cookies a request carries, for the
//! middleware and the console alike. How a refusal is answered is
//! `http/access.rs`'s.

use std::time::Duration;

use axum::http::{HeaderMap, HeaderValue, header};
use payments_serve::admin::{SessionCookie, bearer_token};
use subtle::ConstantTimeEq;

use crate::domain::access::{Auth, Refusal, Role};

pub use payments_serve::admin::{AdminKey, SessionId};

/// The mock console's open sessions, each granting a [`Role`].
pub type Sessions = payments_serve::admin::Sessions<Role>;

/// The session cookie's name (the proxy's console has its own, so one
/// browser may be signed in to both on one host).
pub const SESSION_COOKIE: &str = "payments_mock_session";

/// The session cookie: the console's sign-in sets it, the guard reads it.
pub const COOKIE: SessionCookie = SessionCookie::new(SESSION_COOKIE);

/// The `Set-Cookie` value that keeps session `id` for `lifetime`:
/// `HttpOnly`, `SameSite=Strict`, `Path=/`, and `Secure` when the server
/// speaks TLS.
pub fn session_cookie(id: &SessionId, lifetime: Duration, secure: bool) -> HeaderValue {
    COOKIE.set(id, lifetime, secure)
}

/// The `Set-Cookie` value that makes a browser forget the session cookie.
pub fn ended_session_cookie(secure: bool) -> HeaderValue {
    COOKIE.ended(secure)
}

/// The values of the session cookie in a request's `Cookie` headers (a
/// browser may send several; at most 8 are looked at).
pub fn session_cookies(headers: &HeaderMap) -> impl Iterator<Item = &str> {
    COOKIE.read(headers)
}

/// The admin side's guard: the admin keys, the console's sessions, and
/// whether session cookies are marked `Secure` (served over TLS).
#[derive(Debug)]
pub struct AdminAccess {
    keys: Vec<AdminKey>,
    /// The console's sign-in sessions.
    pub sessions: Sessions,
    secure_cookies: bool,
}

impl AdminAccess {
    /// The guard for these keys; none leaves the admin side open.
    /// Sessions last `session_lifetime`.
    pub fn new(keys: Vec<AdminKey>, session_lifetime: Duration) -> Self {
        Self {
            keys,
            sessions: Sessions::new(session_lifetime),
            secure_cookies: false,
        }
    }

    /// The admin keys, for what must never show them (the spans' paths).
    #[cfg(feature = "otlp")]
    pub(crate) fn keys(&self) -> &[AdminKey] {
        &self.keys
    }

    /// Marks session cookies `Secure`: for a server that speaks TLS only.
    #[must_use]
    pub fn with_secure_cookies(mut self, secure: bool) -> Self {
        self.secure_cookies = secure;
        self
    }

    /// Whether session cookies are marked `Secure`.
    pub fn secure_cookies(&self) -> bool {
        self.secure_cookies
    }

    /// Whether an admin key is configured (else the admin side is open).
    pub fn is_enabled(&self) -> bool {
        !self.keys.is_empty()
    }

    /// The role of a presented key: every admin key and every API key of
    /// `api` is compared, in constant time, whatever matches.
    ///
    /// # Errors
    ///
    /// [`Refusal::Unauthenticated`] for a key that is neither;
    /// [`Refusal::Unbound`] for an API key bound to no merchant.
    pub fn role_of(&self, token: &[u8], api: &Auth) -> Result<Role, Refusal> {
        if !self.is_enabled() {
            return Ok(Role::Open);
        }
        // Every key is compared, so timing does not tell which one matched
        // (or whether any did).
        let mut admin = false;
        for key in &self.keys {
            admin |= bool::from(key.ct_eq(token));
        }
        let mut api_match = None;
        for key in api.keys() {
            if bool::from(key.secret().ct_eq(token)) {
                api_match = Some(key.merchant());
            }
        }
        match (admin, api_match) {
            (true, _) => Ok(Role::Admin),
            (false, Some(Some(merchant))) => Ok(Role::Merchant(merchant)),
            (false, Some(None)) => Err(Refusal::Unbound),
            (false, None) => Err(Refusal::Unauthenticated),
        }
    }

    /// The role of a request's `Authorization: Bearer` header; `None` when
    /// it has no `Authorization` header at all.
    ///
    /// # Errors
    ///
    /// As [`AdminAccess::role_of`]; an `Authorization` header that is not
    /// `Bearer <token>` is [`Refusal::Unauthenticated`].
    pub fn bearer(&self, headers: &HeaderMap, api: &Auth) -> Option<Result<Role, Refusal>> {
        let value = headers.get(header::AUTHORIZATION)?;
        Some(match bearer_token(value.as_bytes()) {
            Some(token) => self.role_of(token, api),
            None => Err(Refusal::Unauthenticated),
        })
    }

    /// For a route only an admin key opens (`/metrics`, say): `Ok` with
    /// an admin key in `Authorization: Bearer` or with no admin key
    /// configured.
    ///
    /// # Errors
    ///
    /// Why not (`http/access.rs` answers it): 401 without a key or with a
    /// wrong one, 403 for an API key.
    pub fn admit_admin(&self, headers: &HeaderMap, api: &Auth) -> Result<(), Refusal> {
        match self.bearer(headers, api) {
            _ if !self.is_enabled() => Ok(()),
            Some(Ok(Role::Admin)) => Ok(()),
            Some(Ok(_)) => Err(Refusal::ReadOnly),
            Some(Err(refusal)) => Err(refusal),
            None => Err(Refusal::Unauthenticated),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::access::ApiKey;
    use uuid::Uuid;

    fn bearer(token: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(
            header::AUTHORIZATION,
            HeaderValue::from_str(&format!("Bearer {token}")).expect("visible ASCII"),
        );
        h
    }

    fn access() -> (AdminAccess, Auth) {
        let admin: AdminKey = "adm_0123456789".parse().expect("a key");
        let api = Auth::new(vec![
            ApiKey::new("sk_a", Some(Uuid::from_u128(1))),
            ApiKey::new("sk_any", None),
        ]);
        (AdminAccess::new(vec![admin], Duration::from_secs(60)), api)
    }

    #[test]
    fn each_key_has_its_role() {
        let (access, api) = access();
        let role = |t: &str| access.bearer(&bearer(t), &api);
        assert_eq!(role("adm_0123456789"), Some(Ok(Role::Admin)));
        assert_eq!(role("sk_a"), Some(Ok(Role::Merchant(Uuid::from_u128(1)))));
        assert_eq!(role("sk_any"), Some(Err(Refusal::Unbound)));
        assert_eq!(role("adm_012345678"), Some(Err(Refusal::Unauthenticated)));
        assert_eq!(role("adm_01234567890"), Some(Err(Refusal::Unauthenticated)));
        assert_eq!(access.bearer(&HeaderMap::new(), &api), None);
        let mut basic = HeaderMap::new();
        basic.insert(header::AUTHORIZATION, HeaderValue::from_static("Basic x"));
        assert_eq!(
            access.bearer(&basic, &api),
            Some(Err(Refusal::Unauthenticated))
        );
    }

    #[test]
    fn without_an_admin_key_everything_is_open() {
        let access = AdminAccess::new(vec![], Duration::from_secs(60));
        let api = Auth::new(vec![ApiKey::new("sk_any", None)]);
        assert!(!access.is_enabled());
        assert_eq!(access.role_of(b"anything", &api), Ok(Role::Open));
        assert!(access.admit_admin(&HeaderMap::new(), &api).is_ok());
    }

    #[test]
    fn admit_admin_takes_the_admin_key_only() {
        let (access, api) = access();
        assert!(access.admit_admin(&bearer("adm_0123456789"), &api).is_ok());
        let refused = |h: &HeaderMap| {
            crate::http::access::refusal_response(access.admit_admin(h, &api).expect_err("refused"))
                .status()
                .as_u16()
        };
        assert_eq!(refused(&HeaderMap::new()), 401);
        assert_eq!(refused(&bearer("nope")), 401);
        assert_eq!(refused(&bearer("sk_a")), 403);
        assert_eq!(refused(&bearer("sk_any")), 403);
        let unauthorized = crate::http::access::refusal_response(
            access
                .admit_admin(&HeaderMap::new(), &api)
                .expect_err("refused"),
        );
        assert_eq!(unauthorized.headers()[header::WWW_AUTHENTICATE], "Bearer");
    }

    /// The body of [`AdminAccess::role_of`], as written.
    fn role_of_source() -> &'static str {
        let source = include_str!("admin.rs");
        let start = source
            .find("pub fn role_of")
            .expect("role_of is defined here");
        let end = start + source[start..].find("\n    }\n").expect("role_of ends");
        &source[start..end]
    }

    #[test]
    fn keys_are_compared_with_subtle_constant_time_eq_only() {
        let body = role_of_source();
        let start = body.find("for key in &self.keys").expect("the key loops");
        let end = body
            .find("match (admin, api_match)")
            .expect("after the loops");
        let loops = &body[start..end];
        assert_eq!(loops.matches(".ct_eq(token)").count(), 2, "{loops}");
        for forbidden in ["==", "!=", "starts_with", "break", "return", "?"] {
            assert!(
                !loops.contains(forbidden),
                "the key loops use {forbidden:?}:\n{loops}"
            );
        }
    }

    #[test]
    fn the_mocks_cookie_keeps_its_name_and_grants_a_role() {
        let sessions = Sessions::new(Duration::from_secs(60));
        let id = sessions.start(Role::Merchant(uuid::Uuid::from_u128(7)));
        assert_eq!(
            sessions.find(id.as_str()),
            Some(Role::Merchant(uuid::Uuid::from_u128(7)))
        );
        let set = session_cookie(&id, sessions.lifetime(), false);
        assert!(
            set.to_str()
                .expect("ascii")
                .starts_with(&format!("payments_mock_session={}", id.as_str()))
        );
        assert_eq!(
            ended_session_cookie(false).to_str().expect("ascii"),
            "payments_mock_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"
        );
        let mut headers = HeaderMap::new();
        headers.insert(
            axum::http::header::COOKIE,
            HeaderValue::from_str(&format!(
                "payments_proxy_session=x; payments_mock_session={}",
                id.as_str()
            ))
            .expect("ascii"),
        );
        assert_eq!(
            session_cookies(&headers).collect::<Vec<_>>(),
            vec![id.as_str()]
        );
    }
}
