//! The admin side's keys (CONTRACT section 18): `--admin-key` opens every
//! `/_mock/` route and the console; an API key bound to a merchant reads
//! its merchant's part and changes nothing; without an admin key the admin
//! side is open, as it always was on a developer's loopback.

use std::time::Duration;

use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse as _, Response};
use payments_serve::{ApiError, ErrorCode};
use subtle::ConstantTimeEq;
use uuid::Uuid;

use super::Auth;
use super::session::Sessions;
use payments_serve::admin::{bearer_challenge, bearer_token};

pub use payments_serve::admin::AdminKey;

/// What a request may do on the admin side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// No admin key is configured: the admin side is open to everyone.
    Open,
    /// An admin key: everything.
    Admin,
    /// An API key bound to this merchant: reads that merchant's
    /// transactions and requests, changes nothing.
    Merchant(Uuid),
}

impl Role {
    /// The merchant whose part alone this role sees; `None`: everything.
    pub fn scope(self) -> Option<Uuid> {
        match self {
            Self::Open | Self::Admin => None,
            Self::Merchant(m) => Some(m),
        }
    }

    /// Whether this role may change the mock (reset, clock, payer).
    pub fn may_change(self) -> bool {
        !matches!(self, Self::Merchant(_))
    }
}

/// Who a request to the admin side comes from, as the middleware found it
/// (a request extension of every route outside `/api/` it lets through).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Viewer {
    /// What it may do.
    pub role: Role,
    /// Whether it came with a console session (the console then offers
    /// sign-out).
    pub signed_in: bool,
}

impl Viewer {
    /// A viewer of an open admin side.
    pub const OPEN: Self = Self {
        role: Role::Open,
        signed_in: false,
    };
}

/// The viewer the middleware let through; a route reached without one
/// (never: every request outside `/api/` passes the middleware) is 401.
impl<S: Send + Sync> axum::extract::FromRequestParts<S> for Viewer {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _: &S,
    ) -> Result<Self, Self::Rejection> {
        parts
            .extensions
            .get::<Self>()
            .copied()
            .ok_or_else(|| Refusal::Unauthenticated.response())
    }
}

/// The viewer, when the middleware found one: an open route
/// (`/_mock/health`) is reached without one by an anonymous caller.
impl<S: Send + Sync> axum::extract::OptionalFromRequestParts<S> for Viewer {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _: &S,
    ) -> Result<Option<Self>, Self::Rejection> {
        Ok(parts.extensions.get::<Self>().copied())
    }
}

/// Why a request may not use the admin side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// No key, or one that is neither an admin key nor an API key: 401.
    Unauthenticated,
    /// An API key bound to no merchant: known, but it has no part of the
    /// admin side to read: 403.
    Unbound,
    /// A merchant's key asked for a change: 403.
    ReadOnly,
}

impl Refusal {
    /// The envelope for it (a 401 carries `WWW-Authenticate: Bearer`).
    pub fn response(self) -> Response {
        let error = match self {
            Self::Unauthenticated => ApiError::new(
                StatusCode::UNAUTHORIZED,
                ErrorCode::Unauthorized,
                "missing or invalid admin key: send Authorization: Bearer <key>",
            ),
            Self::Unbound => ApiError::new(
                StatusCode::FORBIDDEN,
                ErrorCode::Forbidden,
                "this API key is bound to no merchant: the admin side takes an admin key, or a key bound to a merchant for reading that merchant's part",
            ),
            Self::ReadOnly => ApiError::new(
                StatusCode::FORBIDDEN,
                ErrorCode::Forbidden,
                "a merchant's key reads its own transactions and requests here and changes nothing: this needs an admin key",
            ),
        };
        // A 401 names its scheme; the 403s need none.
        bearer_challenge(error.into_response())
    }
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
        for key in &api.keys {
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
    /// Why not ([`Refusal::response`] is the answer): 401 without a key or
    /// with a wrong one, 403 for an API key.
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
    use axum::http::HeaderValue;

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
            access
                .admit_admin(h, &api)
                .expect_err("refused")
                .response()
                .status()
                .as_u16()
        };
        assert_eq!(refused(&HeaderMap::new()), 401);
        assert_eq!(refused(&bearer("nope")), 401);
        assert_eq!(refused(&bearer("sk_a")), 403);
        assert_eq!(refused(&bearer("sk_any")), 403);
        let unauthorized = access
            .admit_admin(&HeaderMap::new(), &api)
            .expect_err("refused")
            .response();
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
}
