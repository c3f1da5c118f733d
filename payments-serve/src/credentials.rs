//! Which request and response headers carry credentials
//! ([`is_credential_header`]): the journal, the recording, the report and
//! the consoles show `[redacted]` for their values.
//!
//! The interface document does not show the service's authentication
//! scheme, so a real service (or an application in front of the mock) may
//! send its key in `X-Api-Key`, `Api-Key`, `X-Auth-Token`,
//! `Ocp-Apim-Subscription-Key` or a name of its own. A header is taken as a
//! credential by its name's last word (the words split at `-`, in any
//! case), as credentials are named: `authorization`, `auth`, `key`,
//! `apikey`, `token`, `secret`, `password`, `passwd`, `credential(s)`,
//! `signature`, `cookie`, `session`; but `Idempotency-Key`, which names a
//! request and is no secret, is kept.

/// Whether a header named `name` carries a credential (see the module's
/// documentation).
///
/// ```
/// use payments_serve::is_credential_header;
///
/// assert!(is_credential_header("Authorization"));
/// assert!(is_credential_header("x-api-key"));
/// assert!(is_credential_header("X-Auth-Token"));
/// assert!(!is_credential_header("Idempotency-Key"));
/// assert!(!is_credential_header("X-Request-Id"));
/// ```
pub fn is_credential_header(name: &str) -> bool {
    let (before, last) = match name.rsplit_once('-') {
        Some((before, last)) => (Some(before), last),
        None => (None, name),
    };
    // The common headers end in short words none of which is a
    // credential's: one comparison of a length rules most of them out.
    if !(3..=13).contains(&last.len()) {
        return false;
    }
    let is = |word: &str| last.eq_ignore_ascii_case(word);
    if is("key") {
        let idempotency = before.is_some_and(|b| {
            let word = b.rsplit_once('-').map_or(b, |(_, w)| w);
            word.eq_ignore_ascii_case("idempotency")
        });
        return !idempotency;
    }
    [
        "authorization",
        "auth",
        "apikey",
        "token",
        "secret",
        "password",
        "passwd",
        "credential",
        "credentials",
        "signature",
        "cookie",
        "session",
    ]
    .into_iter()
    .any(is)
}

#[cfg(test)]
mod tests {
    use super::is_credential_header;

    #[test]
    fn credentials_by_their_names_last_word() {
        for name in [
            "authorization",
            "Proxy-Authorization",
            "cookie",
            "Set-Cookie",
            "X-Api-Key",
            "api-key",
            "ApiKey",
            "x-apikey",
            "X-Auth-Token",
            "x-auth",
            "X-Amz-Security-Token",
            "Ocp-Apim-Subscription-Key",
            "x-goog-api-key",
            "X-Client-Secret",
            "x-password",
            "X-Merchant-Signature",
            "x-credentials",
            "X-Session",
            "Private-Token",
        ] {
            assert!(is_credential_header(name), "{name}");
        }
    }

    #[test]
    fn others_are_kept() {
        for name in [
            "Idempotency-Key",
            "x-idempotency-key",
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
            "",
            "-",
            "key-",
        ] {
            assert!(!is_credential_header(name), "{name}");
        }
    }
}
