//! Which request and response headers carry credentials
//! ([`is_credential_header`]), and which query parameters
//! ([`query`]: read by the same words): the journal, the recording, the
//! report and the consoles show `[redacted]` for their values.
//!
//! The interface document does not show the service's authentication
//! scheme, so a real service (or an application in front of the mock) may
//! send its key in `X-Api-Key`, `Api-Key`, `X-Auth-Token`,
//! `Ocp-Apim-Subscription-Key`, sign its requests in
//! `X-Hub-Signature-256`, or use a name of its own. A header is taken as a
//! credential by the words of its name (split at `-` and `_`, in any
//! case):
//!
//! - any word that only names credentials: `authorization`,
//!   `authentication`, `auth`, `apikey`, `accesstoken`, `secret`,
//!   `password`, `passwd`, `pwd`, `otp`, `credential(s)`, `signature`,
//!   `sig`, `hmac`, `jwt`, `cookie`, `session`, `sessionid`, `sessid`,
//!   `sid`, `jsessionid`, `phpsessid`, `bearer`;
//! - `token`, but after `page`, `next`, `continuation`, `cursor`,
//!   `idempotency` or `sync` (a place in a list, or a request's name: a
//!   `pageToken` is where the next page starts, no credential);
//! - `key` at the end, alone or after `api`, `access`, `secret`, `private`,
//!   `subscription`, `client`, `master`, `account`, `app`, `license`,
//!   `signing`, `encryption` or `x` (`X-Key`); `Idempotency-Key`,
//!   `X-Cache-Key`, `X-Public-Key` or `Sec-WebSocket-Key` name no secret.

pub mod query;

/// What a word of a header's name says.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Word {
    /// It only names credentials.
    Credential,
    /// `token`.
    Token,
    /// `key`.
    Key,
    /// Anything else.
    Other,
}

/// The words [`word`] knows, each a credential's but `key` and `token`.
const KNOWN: [&str; 26] = [
    "key",
    "sig",
    "jwt",
    "sid",
    "pwd",
    "otp",
    "auth",
    "hmac",
    "token",
    "apikey",
    "secret",
    "cookie",
    "bearer",
    "passwd",
    "sessid",
    "session",
    "password",
    "sessionid",
    "phpsessid",
    "jsessionid",
    "signature",
    "credential",
    "accesstoken",
    "credentials",
    "authorization",
    "authentication",
];

/// For each length, the first letters (a bit each, `a` the lowest) of
/// the words of [`KNOWN`] that long: most words of a header's name
/// (`content`, `type`, `request`, `id`) are told apart by one look here.
const FIRST_LETTERS: [u32; 16] = {
    let mut table = [0u32; 16];
    let mut n = 0;
    while n < KNOWN.len() {
        let word = KNOWN[n].as_bytes();
        table[word.len()] |= 1 << (word[0] - b'a');
        n += 1;
    }
    table
};

/// What `word` says (a request's headers are looked at on the mock's hot
/// path: its length and first letter rule most words out).
fn word(word: &str) -> Word {
    let first = word.as_bytes().first().map_or(0, |b| b | 0x20);
    let known = first.is_ascii_lowercase()
        && FIRST_LETTERS
            .get(word.len())
            .is_some_and(|letters| letters & (1 << (first - b'a')) != 0);
    if !known {
        return Word::Other;
    }
    let is = |w: &str| word.eq_ignore_ascii_case(w);
    let credential = match word.len() {
        3 if is("key") => return Word::Key,
        5 if is("token") => return Word::Token,
        3 => is("sig") || is("jwt") || is("sid") || is("pwd") || is("otp"),
        4 => is("auth") || is("hmac"),
        6 => {
            is("apikey")
                || is("secret")
                || is("cookie")
                || is("bearer")
                || is("passwd")
                || is("sessid")
        }
        7 => is("session"),
        8 => is("password"),
        9 => is("signature") || is("sessionid") || is("phpsessid"),
        10 => is("credential") || is("jsessionid"),
        11 => is("accesstoken") || is("credentials"),
        13 => is("authorization"),
        14 => is("authentication"),
        _ => false,
    };
    if credential {
        Word::Credential
    } else {
        Word::Other
    }
}

/// Words before `token` that make it a place in a list or a request's
/// name, not a credential.
const NOT_SECRET_TOKENS: [&str; 6] = [
    "page",
    "next",
    "continuation",
    "cursor",
    "idempotency",
    "sync",
];

/// Words before a last `key` that make it a credential.
const SECRET_KEYS: [&str; 13] = [
    "api",
    "access",
    "secret",
    "private",
    "subscription",
    "client",
    "master",
    "account",
    "app",
    "license",
    "signing",
    "encryption",
    "x",
];

/// Whether a header named `name` carries a credential (see the module's
/// documentation).
///
/// ```
/// use payments_serve::is_credential_header;
///
/// assert!(is_credential_header("Authorization"));
/// assert!(is_credential_header("x-api-key"));
/// assert!(is_credential_header("X-Auth-Token"));
/// assert!(is_credential_header("X-Hub-Signature-256"));
/// assert!(!is_credential_header("Idempotency-Key"));
/// assert!(!is_credential_header("X-Request-Id"));
/// ```
pub fn is_credential_header(name: &str) -> bool {
    // The words in one pass, a byte at a time: `-` and `_` are ASCII, so
    // every cut is at a character's boundary (the mock's hot path looks at
    // the headers of every request).
    let bytes = name.as_bytes();
    let mut previous: Option<&str> = None;
    let mut start = 0;
    for end in 0..=bytes.len() {
        if end < bytes.len() && !matches!(bytes[end], b'-' | b'_') {
            continue;
        }
        if end > start {
            let this = name.get(start..end).unwrap_or_default();
            let after = |list: &[&str]| {
                previous.is_some_and(|p| list.iter().any(|w| p.eq_ignore_ascii_case(w)))
            };
            match word(this) {
                Word::Credential => return true,
                Word::Token if !after(&NOT_SECRET_TOKENS) => return true,
                Word::Key
                    if bytes[end..].iter().all(|&b| matches!(b, b'-' | b'_'))
                        && (previous.is_none() || after(&SECRET_KEYS)) =>
                {
                    return true;
                }
                Word::Other | Word::Token | Word::Key => {}
            }
            previous = Some(this);
        }
        start = end + 1;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::is_credential_header;

    #[test]
    fn credentials_by_the_words_of_their_names() {
        for name in [
            "authorization",
            "Proxy-Authorization",
            "cookie",
            "Set-Cookie",
            "X-Api-Key",
            "X-API-KEY",
            "api-key",
            "ApiKey",
            "x-apikey",
            "X_API_KEY",
            "api_key",
            "X-Auth-Token",
            "x-auth",
            "Authentication",
            "X-Authentication",
            "X-Access-Token",
            "Api-Token",
            "X-Amz-Security-Token",
            "X-Amzn-Oidc-Accesstoken",
            "Ocp-Apim-Subscription-Key",
            "x-goog-api-key",
            "X-Goog-Iap-Jwt-Assertion",
            "Cf-Access-Jwt-Assertion",
            "X-Jwt",
            "X-Client-Secret",
            "x-password",
            "X-Merchant-Signature",
            "X-Hub-Signature-256",
            "Stripe-Signature",
            "X-Shopify-Hmac-Sha256",
            "X-Shopify-Access-Token",
            "Paypal-Transmission-Sig",
            "x-credentials",
            "X-Session",
            "X-Session-Id",
            "Private-Token",
            "X-Key",
            "Key",
            "X-CSRF-Token",
            "sessionid",
            "JSESSIONID",
            "PHPSESSID",
            "X-Sid",
            "sessid",
            "X-Pwd",
            "X-Otp",
        ] {
            assert!(is_credential_header(name), "{name}");
        }
    }

    #[test]
    fn others_are_kept() {
        for name in [
            "Idempotency-Key",
            "x-idempotency-key",
            "X-Idempotency-Token",
            "X-Page-Token",
            "Next-Page-Token",
            "X-Cache-Key",
            "X-Correlation-Key",
            "X-Routing-Key",
            "X-Public-Key",
            "Sec-WebSocket-Key",
            "X-Request-Id",
            "traceparent",
            "tracestate",
            "Content-Type",
            "content-length",
            "Host",
            "Accept",
            "User-Agent",
            "X-Mock-Fault",
            "keep-alive",
            "x-keyboard",
            "x-tokens-used",
            "X-Key-Id",
            "monkey",
            "X-Monkey",
            "tokenized",
            "X-Tokenized",
            "X-Side",
            "X-Otpx",
            "",
            "-",
        ] {
            assert!(!is_credential_header(name), "{name}");
        }
    }
}
