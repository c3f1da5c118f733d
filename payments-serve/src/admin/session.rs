//! The console's sign-in sessions (CONTRACT section 18): a person types the
//! key once on the sign-in page and the browser keeps a session cookie.
//!
//! A session id is 256 random bits from the operating system's CSPRNG
//! (through `rand`'s thread RNG), never the key and never derived from it.
//! The first half finds the session, the second half is compared in
//! constant time, so a look-up's timing says nothing about a valid id.
//! Sessions live in this process, each with an expiry; signing out, or a
//! restart, ends them. Time is the monotonic clock plus what
//! [`Sessions::pass_time`] added, so a test sees a session expire without
//! waiting. What a session grants (`R`) is the server's own: the mock's
//! role, `()` for the proxy's admin-only console.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, HeaderValue, header};
use rand::RngExt as _;
use subtle::ConstantTimeEq;

/// How many sessions are kept at most: beyond it the one closest to its
/// end goes first (only a key holder can open one).
const MAX_SESSIONS: usize = 10_000;

/// Bytes of the part that finds a session, and of the part compared.
const HALF: usize = 16;

/// A session's id as the cookie carries it: 64 lower-case hex digits.
/// Never shown: its `Debug` says `[redacted]`.
#[derive(Clone, PartialEq, Eq)]
pub struct SessionId(String);

impl SessionId {
    /// The cookie's value: a secret, for the `Set-Cookie` header only.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SessionId([redacted])")
    }
}

/// One open session.
struct Open<R> {
    verifier: [u8; HALF],
    role: R,
    ends: Instant,
}

/// The open sessions of this process.
pub struct Sessions<R> {
    lifetime: Duration,
    /// Nanoseconds [`Sessions::pass_time`] moved this clock ahead.
    passed: AtomicU64,
    /// By the first half of the id. A std mutex: held for a map operation,
    /// never across an await.
    open: Mutex<HashMap<[u8; HALF], Open<R>>>,
}

impl<R: Copy> fmt::Debug for Sessions<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sessions")
            .field("lifetime", &self.lifetime)
            .field("open", &self.len())
            .finish_non_exhaustive()
    }
}

impl<R: Copy> Sessions<R> {
    /// No sessions yet; each will last `lifetime`.
    pub fn new(lifetime: Duration) -> Self {
        Self {
            lifetime,
            passed: AtomicU64::new(0),
            open: Mutex::new(HashMap::new()),
        }
    }

    /// How long a session lasts from sign-in.
    pub fn lifetime(&self) -> Duration {
        self.lifetime
    }

    fn now(&self) -> Instant {
        Instant::now() + Duration::from_nanos(self.passed.load(Ordering::Acquire))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<[u8; HALF], Open<R>>> {
        // A panic while holding the lock leaves a consistent map.
        self.open
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Opens a session that grants `role`.
    pub fn start(&self, role: R) -> SessionId {
        let mut bytes = [0u8; 2 * HALF];
        rand::rng().fill(&mut bytes[..]);
        let mut selector = [0u8; HALF];
        let mut verifier = [0u8; HALF];
        selector.copy_from_slice(&bytes[..HALF]);
        verifier.copy_from_slice(&bytes[HALF..]);
        let now = self.now();
        let mut open = self.lock();
        open.retain(|_, s| s.ends > now);
        if open.len() >= MAX_SESSIONS
            && let Some(first) = open.iter().min_by_key(|(_, s)| s.ends).map(|(k, _)| *k)
        {
            open.remove(&first);
        }
        open.insert(
            selector,
            Open {
                verifier,
                role,
                ends: now + self.lifetime,
            },
        );
        SessionId(hex(&bytes))
    }

    /// The role of the session a cookie value names, if it is open: a
    /// value of any other shape, an unknown or an expired id is `None`.
    pub fn find(&self, id: &str) -> Option<R> {
        let (selector, verifier) = parse(id)?;
        let now = self.now();
        let mut open = self.lock();
        let session = open.get(&selector)?;
        if !bool::from(session.verifier.ct_eq(&verifier)) {
            return None;
        }
        if session.ends <= now {
            open.remove(&selector);
            return None;
        }
        Some(session.role)
    }

    /// Ends the session a cookie value names (sign-out); whether one was
    /// open.
    pub fn end(&self, id: &str) -> bool {
        let Some((selector, verifier)) = parse(id) else {
            return false;
        };
        let mut open = self.lock();
        let matches = open
            .get(&selector)
            .is_some_and(|s| bool::from(s.verifier.ct_eq(&verifier)));
        if matches {
            open.remove(&selector);
        }
        matches
    }

    /// How many sessions are kept (expired ones until the next sign-in).
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether none is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Moves this clock forward by `by`: a test's way to let sessions
    /// expire without waiting.
    pub fn pass_time(&self, by: Duration) {
        let nanos = u64::try_from(by.as_nanos()).unwrap_or(u64::MAX);
        let _ = self
            .passed
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |p| {
                Some(p.saturating_add(nanos))
            });
    }
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut text = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        text.push(char::from(DIGITS[usize::from(b >> 4)]));
        text.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    text
}

/// The two halves of an id written by [`hex`]; `None` for anything else.
fn parse(id: &str) -> Option<([u8; HALF], [u8; HALF])> {
    let digits = id.as_bytes();
    if digits.len() != 4 * HALF {
        return None;
    }
    let nibble = |d: u8| match d {
        b'0'..=b'9' => Some(d - b'0'),
        b'a'..=b'f' => Some(d - b'a' + 10),
        _ => None,
    };
    let mut bytes = [0u8; 2 * HALF];
    for (byte, pair) in bytes.iter_mut().zip(digits.chunks_exact(2)) {
        *byte = (nibble(pair[0])? << 4) | nibble(pair[1])?;
    }
    let mut selector = [0u8; HALF];
    let mut verifier = [0u8; HALF];
    selector.copy_from_slice(&bytes[..HALF]);
    verifier.copy_from_slice(&bytes[HALF..]);
    Some((selector, verifier))
}

/// A session cookie's name, and the `Set-Cookie` values and `Cookie`
/// reading that go with it. Each server has its own name, so a browser
/// signed in to a mock and a proxy on one host keeps both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionCookie {
    name: &'static str,
}

impl SessionCookie {
    /// The cookie called `name` (a cookie name: letters, digits, `_`).
    pub const fn new(name: &'static str) -> Self {
        Self { name }
    }

    /// Its name.
    pub const fn name(self) -> &'static str {
        self.name
    }

    /// The `Set-Cookie` value that keeps session `id` for `lifetime`:
    /// `HttpOnly` (no script reads it), `SameSite=Strict` (no other site's
    /// page sends it), `Path=/`, and `Secure` when the server speaks TLS.
    pub fn set(self, id: &SessionId, lifetime: Duration, secure: bool) -> HeaderValue {
        let value = format!(
            "{}={}; Path=/; HttpOnly; SameSite=Strict; Max-Age={}{}",
            self.name,
            id.as_str(),
            lifetime.as_secs(),
            if secure { "; Secure" } else { "" }
        );
        // Hex digits, digits and fixed ASCII: always a valid header value.
        HeaderValue::from_str(&value).unwrap_or_else(|_| self.ended(secure))
    }

    /// The `Set-Cookie` value that makes a browser forget the cookie.
    pub fn ended(self, secure: bool) -> HeaderValue {
        let value = format!(
            "{}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0{}",
            self.name,
            if secure { "; Secure" } else { "" }
        );
        HeaderValue::from_str(&value)
            .unwrap_or_else(|_| HeaderValue::from_static("ended=; Max-Age=0"))
    }

    /// The values of this cookie in a request's `Cookie` headers (a
    /// browser may send several; at most 8 are looked at).
    pub fn read(self, headers: &HeaderMap) -> impl Iterator<Item = &str> {
        headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(move |pair| {
                let (name, value) = pair.split_once('=')?;
                (name.trim() == self.name).then(|| value.trim())
            })
            .take(8)
    }

    /// A `Cookie` header's `value` without this cookie (each time it
    /// appears), the others as they came: what may go on to another
    /// server. `None` when nothing else is left; borrowed when the cookie
    /// is not there.
    pub fn removed(self, value: &str) -> Option<Cow<'_, str>> {
        let named = |pair: &str| {
            pair.split_once('=')
                .is_some_and(|(name, _)| name.trim() == self.name)
        };
        if !value.split(';').any(named) {
            return Some(Cow::Borrowed(value));
        }
        let rest: Vec<&str> = value
            .split(';')
            .filter(|pair| !named(pair) && !pair.trim().is_empty())
            .map(str::trim)
            .collect();
        (!rest.is_empty()).then(|| Cow::Owned(rest.join("; ")))
    }

    /// A `Cookie` header's `value` with this cookie's value replaced by
    /// `[redacted]` (each time it appears), the other cookies as they
    /// came: what a journal or a log may keep of it, since the session
    /// grants what its key grants. Borrowed when the cookie is not there.
    pub fn redacted(self, value: &str) -> Cow<'_, str> {
        let named = |pair: &str| {
            pair.split_once('=')
                .is_some_and(|(name, _)| name.trim() == self.name)
        };
        if !value.split(';').any(named) {
            return Cow::Borrowed(value);
        }
        let pairs: Vec<Cow<'_, str>> = value
            .split(';')
            .map(|pair| {
                if named(pair) {
                    let lead = &pair[..pair.len() - pair.trim_start().len()];
                    Cow::Owned(format!("{lead}{}=[redacted]", self.name))
                } else {
                    Cow::Borrowed(pair)
                }
            })
            .collect();
        Cow::Owned(pairs.join(";"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const COOKIE: SessionCookie = SessionCookie::new("test_session");

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Role {
        Admin,
        Reader(u8),
    }

    #[test]
    fn a_session_is_found_until_it_ends_or_expires() {
        let sessions = Sessions::new(Duration::from_secs(12 * 3600));
        let id = sessions.start(Role::Admin);
        assert_eq!(id.as_str().len(), 64);
        assert_eq!(sessions.find(id.as_str()), Some(Role::Admin));
        sessions.pass_time(Duration::from_secs(12 * 3600 - 1));
        assert_eq!(sessions.find(id.as_str()), Some(Role::Admin));
        sessions.pass_time(Duration::from_secs(1));
        assert_eq!(sessions.find(id.as_str()), None, "expired");
        assert!(sessions.is_empty(), "an expired session is dropped");

        let id = sessions.start(Role::Reader(7));
        assert_eq!(sessions.find(id.as_str()), Some(Role::Reader(7)));
        assert!(sessions.end(id.as_str()));
        assert_eq!(sessions.find(id.as_str()), None, "signed out");
        assert!(!sessions.end(id.as_str()));
    }

    #[test]
    fn forged_ids_find_nothing() {
        let sessions = Sessions::new(Duration::from_secs(60));
        let id = sessions.start(Role::Admin);
        let text = id.as_str();
        // The right selector with another verifier, and the reverse.
        let flip = |i: usize| {
            let mut bytes = text.as_bytes().to_vec();
            bytes[i] = if bytes[i] == b'0' { b'1' } else { b'0' };
            String::from_utf8(bytes).expect("ascii")
        };
        assert_eq!(sessions.find(&flip(63)), None);
        assert_eq!(sessions.find(&flip(0)), None);
        for forged in [
            "",
            "0",
            &"0".repeat(64),
            &text.to_uppercase(),
            &format!("{text}0"),
            &text[..63],
            &"g".repeat(64),
            &"\u{e9}".repeat(32),
            &"a".repeat(100_000),
        ] {
            assert_eq!(sessions.find(forged), None, "{forged:.70}");
        }
        assert_eq!(sessions.find(text), Some(Role::Admin));
    }

    #[test]
    fn ids_are_random_and_never_shown() {
        let sessions = Sessions::new(Duration::from_secs(60));
        let a = sessions.start(());
        let b = sessions.start(());
        assert_ne!(a, b);
        assert_eq!(format!("{a:?}"), "SessionId([redacted])");
        assert!(!format!("{sessions:?}").contains(a.as_str()));
    }

    #[test]
    fn sessions_are_bounded() {
        let sessions = Sessions::new(Duration::from_secs(60));
        let first = sessions.start(());
        for _ in 0..MAX_SESSIONS {
            sessions.start(());
        }
        assert_eq!(sessions.len(), MAX_SESSIONS);
        assert_eq!(sessions.find(first.as_str()), None, "the oldest went");
    }

    #[test]
    fn cookies_carry_the_flags_and_are_read_back() {
        let sessions = Sessions::new(Duration::from_secs(43_200));
        let id = sessions.start(());
        let cookie = COOKIE.set(&id, sessions.lifetime(), false);
        let text = cookie.to_str().expect("ascii");
        assert!(text.starts_with(&format!("test_session={}", id.as_str())));
        for flag in ["Path=/", "HttpOnly", "SameSite=Strict", "Max-Age=43200"] {
            assert!(text.contains(flag), "{text}");
        }
        assert!(!text.contains("Secure"));
        let secure = COOKIE.set(&id, sessions.lifetime(), true);
        assert!(secure.to_str().expect("ascii").ends_with("; Secure"));
        assert_eq!(
            COOKIE.ended(true).to_str().expect("ascii"),
            "test_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0; Secure"
        );
        assert_eq!(
            COOKIE.ended(false).to_str().expect("ascii"),
            "test_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"
        );

        let mut headers = HeaderMap::new();
        headers.append(header::COOKIE, HeaderValue::from_static("a=1; b=2"));
        headers.append(
            header::COOKIE,
            HeaderValue::from_str(&format!(
                "x=y; test_session={}; other_session=z; test_session=other",
                id.as_str()
            ))
            .expect("ascii"),
        );
        let found: Vec<&str> = COOKIE.read(&headers).collect();
        assert_eq!(found, vec![id.as_str(), "other"]);
    }

    #[test]
    fn a_cookie_header_is_kept_with_only_the_session_redacted() {
        let sessions = Sessions::new(Duration::from_secs(60));
        let id = sessions.start(());
        let sent = format!(
            "x=y; test_session={}; other_session=z;test_session=again",
            id.as_str()
        );
        let kept = COOKIE.redacted(&sent);
        assert_eq!(
            kept,
            "x=y; test_session=[redacted]; other_session=z;test_session=[redacted]"
        );
        assert!(!kept.contains(id.as_str()));
        // Without the session (or only a look-alike name), the value is
        // kept as it came, not copied.
        for plain in ["a=1; b=2", "", "test_sessionx=1", "; ;", "test_session"] {
            assert!(
                matches!(COOKIE.redacted(plain), Cow::Borrowed(s) if s == plain),
                "{plain:?}"
            );
        }
        // An empty session value is still the session's.
        assert_eq!(
            COOKIE.redacted(" test_session= "),
            " test_session=[redacted]"
        );
    }

    #[test]
    fn a_cookie_header_goes_on_without_the_session() {
        let sent = "x=y; test_session=abc;other_session=z; test_session=again";
        assert_eq!(
            COOKIE.removed(sent).as_deref(),
            Some("x=y; other_session=z")
        );
        assert_eq!(COOKIE.removed("test_session=abc"), None, "nothing left");
        assert!(matches!(
            COOKIE.removed("a=1; b=2"),
            Some(Cow::Borrowed("a=1; b=2"))
        ));
        assert!(matches!(
            COOKIE.removed("test_sessionx=1"),
            Some(Cow::Borrowed(_))
        ));
    }
}
