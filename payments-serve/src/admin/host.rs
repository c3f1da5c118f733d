//! Whether an open admin side's request names this server in a way DNS
//! rebinding cannot forge ([`names_this_server`]).
//!
//! Without an admin key, a server's admin side (the mock's `/_mock/` and
//! console, the proxy's `/_proxy/`, `/metrics`) answers whoever reaches
//! it. A web page elsewhere reaches a developer's loopback through DNS
//! rebinding: its own name, `evil.example`, made to resolve to
//! `127.0.0.1`. The browser then sends `Host: evil.example:PORT` and an
//! `Origin` of the same name, so the same-origin check passes, and the
//! page reads every transaction or resets the mock. Only the name tells:
//! an open admin side answers a `Host` that is an IP address, `localhost`
//! (or a name under `.localhost`, which never leaves the machine), or the
//! server's public URL's host, as development servers do (Vite's
//! `allowedHosts`, webpack's `allowedHosts: "auto"`).

use axum::http::{HeaderMap, StatusCode, header};

use crate::{ApiError, ErrorCode};

/// Whether `headers`' `Host` names this server by an IP address, as
/// `localhost` or a name under `.localhost`, or as `public`'s host (a
/// server's public URL, `scheme://host[:port]/path`). A request without a
/// `Host` (HTTP/1.0, or in-process) names no other site and passes; a
/// `Host` that is not readable does not.
///
/// ```
/// use axum::http::{HeaderMap, HeaderValue, header};
/// use payments_serve::admin::names_this_server;
///
/// let host = |value: &'static str| {
///     let mut headers = HeaderMap::new();
///     headers.insert(header::HOST, HeaderValue::from_static(value));
///     headers
/// };
/// assert!(names_this_server(&host("127.0.0.1:8080"), None));
/// assert!(names_this_server(&host("localhost:8080"), None));
/// assert!(names_this_server(&host("mock.example:8080"), Some("http://mock.example:8080/")));
/// assert!(!names_this_server(&host("evil.example:8080"), None));
/// ```
pub fn names_this_server(headers: &HeaderMap, public: Option<&str>) -> bool {
    let Some(value) = headers.get(header::HOST) else {
        return true;
    };
    let Some(name) = value.to_str().ok().and_then(host_of) else {
        return false;
    };
    is_address_or_local(name)
        || public
            .and_then(public_host)
            .is_some_and(|p| same_name(&p, name))
}

/// The refusal (403 `FORBIDDEN`) of a request [`names_this_server`] turned
/// away, for `server` ("mock", "proxy"): which names `part` (with its
/// verb: "its admin side answers") takes (`names`), the request's `Host`
/// quoted (at most 100 characters of it), why, and what to do (`remedy`).
pub fn foreign_host(
    headers: &HeaderMap,
    server: &str,
    part: &str,
    names: &str,
    remedy: &str,
) -> ApiError {
    let name = headers
        .get(header::HOST)
        .map(|v| String::from_utf8_lossy(v.as_bytes()))
        .unwrap_or_default();
    let name: String = name.chars().take(100).collect();
    ApiError::new(
        StatusCode::FORBIDDEN,
        ErrorCode::Forbidden,
        format!(
            "this {server} has no --admin-key, so {part} only a Host that is {names}, and this request's Host is {name:?} (a web page elsewhere could reach an open {server} through DNS rebinding): ask through 127.0.0.1 or localhost, {remedy}"
        ),
    )
}

/// A `Host`'s name, without its port: `[::1]:80` is `[::1]`, `Mock:8080`
/// is `Mock`. `None` for an empty name.
fn host_of(value: &str) -> Option<&str> {
    let value = value.trim();
    let name = if value.starts_with('[') {
        &value[..=value.find(']')?]
    } else {
        value.rsplit_once(':').map_or(value, |(name, _)| name)
    };
    (!name.is_empty()).then_some(name)
}

/// An IP address (`[v6]` or dotted v4), `localhost`, or a name under
/// `.localhost` (RFC 6761: it resolves to loopback, never through DNS).
fn is_address_or_local(name: &str) -> bool {
    if let Some(v6) = name.strip_prefix('[').and_then(|n| n.strip_suffix(']')) {
        return v6.parse::<std::net::Ipv6Addr>().is_ok();
    }
    if name.parse::<std::net::Ipv4Addr>().is_ok() {
        return true;
    }
    let name = name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase();
    name == "localhost" || name.ends_with(".localhost")
}

/// The host of a public URL (`scheme://host[:port]/path`), as a `Host`
/// names it.
fn public_host(public: &str) -> Option<String> {
    let uri = public.parse::<axum::http::Uri>().ok()?;
    let host = uri.authority()?.host();
    Some(host.to_owned())
}

/// Names compared as DNS does: in any case, a final dot or none.
fn same_name(a: &str, b: &str) -> bool {
    let bare = |n: &str| n.strip_suffix('.').unwrap_or(n).to_ascii_lowercase();
    bare(a) == bare(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn host(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, HeaderValue::from_str(value).expect("a host"));
        headers
    }

    #[test]
    fn addresses_and_localhost_name_this_server() {
        for value in [
            "127.0.0.1",
            "127.0.0.1:8080",
            "10.1.2.3:80",
            "[::1]:8080",
            "[::1]",
            "[fe80::1]:80",
            "localhost",
            "LOCALHOST:8080",
            "localhost.:8080",
            "mock.localhost:8080",
            "a.b.Localhost",
        ] {
            assert!(names_this_server(&host(value), None), "{value}");
        }
        assert!(names_this_server(&HeaderMap::new(), None), "no Host");
    }

    #[test]
    fn other_names_do_not_unless_they_are_the_public_urls() {
        for value in [
            "evil.example:8080",
            "evil.example",
            "localhost.evil.example",
            "127.0.0.1.evil.example:80",
            "evillocalhost",
            "[::1",
            "[not-an-address]:80",
            "",
            ":8080",
            "1.2.3",
        ] {
            assert!(!names_this_server(&host(value), None), "{value:?}");
        }
        let public = Some("https://Mock.Example:8443/base/");
        assert!(names_this_server(&host("mock.example:8443"), public));
        assert!(names_this_server(&host("MOCK.EXAMPLE."), public));
        assert!(!names_this_server(&host("mock.example.evil:8443"), public));
        assert!(!names_this_server(&host("evil.example"), Some("not a url")));
        // A `Host` that is not text: no name to trust.
        let mut headers = HeaderMap::new();
        headers.insert(
            header::HOST,
            HeaderValue::from_bytes(b"\xffevil").expect("a header value"),
        );
        assert!(!names_this_server(&headers, None));
    }
}
