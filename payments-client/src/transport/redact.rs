//! A URL as a message may show it ([`redact_url`]).

/// `url` as a message, `Debug` or a log may show it: any `user:pass@`
/// userinfo replaced by `***@`, a query by `?***` and a fragment by
/// `#***` (`?api_key=…` is as secret as a password), everything else as
/// it came. Works on text that does not parse as a URL too, so a mistyped
/// URL is shown as safely as a good one.
///
/// ```
/// use payments_client::redact_url;
///
/// assert_eq!(
///     redact_url("https://alice:s3cret@payments.example.com/v1"),
///     "https://***@payments.example.com/v1"
/// );
/// assert_eq!(redact_url("http://alice:s3cret@host:99999"), "http://***@host:99999");
/// assert_eq!(redact_url("https://payments.example.com"), "https://payments.example.com");
/// assert_eq!(
///     redact_url("http://127.0.0.1:1/?api_key=sk_live_x#t"),
///     "http://127.0.0.1:1/?***"
/// );
/// ```
#[must_use]
pub fn redact_url(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return without_query(url, 0);
    };
    let authority_start = scheme_end + 3;
    let rest = &url[authority_start..];
    // Text that is no URL may hold a password with an unescaped `/`, `?` or
    // `#` (`https://alice:s3cr#et@host`): everything up to its last `@` is
    // hidden then, since where its authority ends cannot be known.
    let authority_len = if url::Url::parse(url).is_ok() {
        rest.find(['/', '?', '#']).unwrap_or(rest.len())
    } else {
        rest.len()
    };
    match rest[..authority_len].rfind('@') {
        Some(at) => {
            let shown = format!("{}***{}", &url[..authority_start], &rest[at..]);
            // After `***@`: the host, no `@` left before a query.
            without_query(&shown, authority_start + 4)
        }
        None => without_query(url, authority_start),
    }
}

/// `text` with what follows its first `?` or `#` from `from` on (a query,
/// a fragment, or both) replaced by `***`; as it is when nothing does.
fn without_query(text: &str, from: usize) -> String {
    let start = text
        .get(from..)
        .and_then(|rest| rest.find(['?', '#']))
        .map(|at| from + at + 1);
    match start {
        Some(start) if start < text.len() => format!("{}***", &text[..start]),
        _ => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::redact_url;

    #[test]
    fn userinfo_is_redacted_and_everything_else_kept() {
        assert_eq!(
            redact_url("https://user:pa%40ss@host:8443/prefix"),
            "https://***@host:8443/prefix"
        );
        assert_eq!(redact_url("http://token@host"), "http://***@host");
        assert_eq!(redact_url("http://host/a@b"), "http://host/a@b");
        assert_eq!(redact_url("not a url"), "not a url");
        assert_eq!(redact_url("http://u:p@"), "http://***@");
        // A password with an unescaped `#`, `/` or `?` makes no URL: all of
        // it up to the last `@` is hidden.
        for text in [
            "https://alice:s3cr#et@payments.example.com",
            "https://alice:s3cr/et@payments.example.com",
            "https://alice:s3cr?et@payments.example.com:99999",
        ] {
            let shown = redact_url(text);
            assert!(
                shown.starts_with("https://***@payments.example.com"),
                "{shown}"
            );
            assert!(
                !shown.contains("s3cr") && !shown.contains("alice"),
                "{shown}"
            );
        }
        // A URL that parses keeps an `@` of its path.
        assert_eq!(redact_url("https://u:p@host/a@b"), "https://***@host/a@b");
    }

    /// A key in the query (`?api_key=…`) or the fragment is hidden as a
    /// password is: the query was shown as it came.
    #[test]
    fn a_query_or_a_fragment_is_redacted() {
        for (url, shown) in [
            (
                "https://user:pa%40ss@host:8443/prefix?q=1",
                "https://***@host:8443/prefix?***",
            ),
            (
                "http://127.0.0.1:1/?api_key=QCLICANARY66",
                "http://127.0.0.1:1/?***",
            ),
            ("http://host?key=1", "http://host?***"),
            ("http://host/p#key=1", "http://host/p#***"),
            ("http://host/p?a=1#key", "http://host/p?***"),
            ("http://host/p?", "http://host/p?"),
            ("http://a:b@host:99999/?key=1", "http://***@host:99999/?***"),
            ("http://a:b?c@host/?key=1", "http://***@host/?***"),
            ("host:1/?api_key=1", "host:1/?***"),
        ] {
            assert_eq!(redact_url(url), shown, "{url}");
        }
    }
}
