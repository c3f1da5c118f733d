//! The console's sign-in sessions (CONTRACT section 18): payments-serve's
//! [`payments_serve::admin::Sessions`] (random ids kept in this process,
//! each with an expiry), granting a [`Role`], in the cookie
//! [`SESSION_COOKIE`].

use std::time::Duration;

use axum::http::{HeaderMap, HeaderValue};
use payments_serve::admin::SessionCookie;

use super::admin::Role;

pub use payments_serve::admin::SessionId;

/// The mock console's open sessions, each granting a [`Role`].
pub type Sessions = payments_serve::admin::Sessions<Role>;

/// The session cookie's name (the proxy's console has its own, so one
/// browser may be signed in to both on one host).
pub const SESSION_COOKIE: &str = "payments_mock_session";

const COOKIE: SessionCookie = SessionCookie::new(SESSION_COOKIE);

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

#[cfg(test)]
mod tests {
    use super::*;

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
