//! Redirect-based payments (CONTRACT section 13): payment page tokens, the
//! page's address under the public base URL, and the return address the
//! payer's browser is sent to.
//!
//! URLs here are parsed by `http`'s `Uri` and escaped by `percent-encoding`
//! and `form_urlencoded`, and come out as the `url` crate (WHATWG) writes
//! them: scheme and host in lower case, no default port, dot segments
//! resolved, every character outside ASCII percent-encoded as UTF-8. The
//! `url` crate itself stays out of the light build: with its IDNA and
//! Unicode tables it was 26 of the crates an embedding test compiles
//! (BENCHMARKS.md, "Embedding the mock"); the tests below hold these
//! functions to it, property by property.
//!
//! One difference is kept on purpose: a host label that starts with
//! `xn--` is taken as written. WHATWG also decodes its Punycode and checks
//! the result against the IDNA tables (so `http://xn--/` is no URL to it);
//! doing that needs those tables, the crates left out above. A return
//! address the real service might refuse for that reason is accepted here.

use std::fmt;
use std::str::FromStr;

use percent_encoding::{AsciiSet, CONTROLS, utf8_percent_encode};
use rand::RngExt as _;
use rand::distr::Alphanumeric;

use crate::domain::transaction::Record;

/// Characters in a payment page token.
pub const TOKEN_LEN: usize = 32;

/// A fresh payment page token: 32 characters of `A-Z a-z 0-9` (about 190
/// random bits), URL-safe as it is. It comes from `rand`'s thread RNG, a
/// CSPRNG (ChaCha12) seeded from the operating system, and has nothing to do
/// with the transactionId: knowing one never reveals the other.
pub(crate) fn new_token() -> Box<str> {
    rand::rng()
        .sample_iter(Alphanumeric)
        .take(TOKEN_LEN)
        .map(char::from)
        .collect::<String>()
        .into_boxed_str()
}

/// Whether `text` has a token's shape; anything else names no page (and is
/// answered like an unknown token, without a look-up).
pub fn is_token(text: &str) -> bool {
    text.len() == TOKEN_LEN && text.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// A public base URL (`--public-url`, CONTRACT section 13): absolute
/// `http` or `https` with a host, maybe a port and a path prefix, and
/// nothing a page address cannot carry on from (no query, fragment or
/// credentials). Kept as WHATWG writes it (`http://127.0.0.1:8080/`,
/// `https://dev.example/mock`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PublicUrl {
    text: String,
}

impl PublicUrl {
    /// The URL a browser reaches a server listening on `addr` at: a
    /// wildcard address (`0.0.0.0`, `::`) is not one it can open, so it
    /// becomes loopback.
    pub fn of_listener(addr: std::net::SocketAddr) -> Self {
        Self::of_listener_with(addr, false)
    }

    /// [`PublicUrl::of_listener`] for a listener that speaks `https`
    /// (TLS) or `http`.
    pub fn of_listener_with(addr: std::net::SocketAddr, https: bool) -> Self {
        let mut addr = addr;
        if addr.ip().is_unspecified() {
            addr.set_ip(match addr {
                std::net::SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
                std::net::SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
            });
        }
        let (scheme, default_port) = if https { ("https", 443) } else { ("http", 80) };
        let port = match addr.port() {
            port if port == default_port => String::new(),
            port => format!(":{port}"),
        };
        let host = match addr {
            std::net::SocketAddr::V4(a) => a.ip().to_string(),
            std::net::SocketAddr::V6(a) => format!("[{}]", a.ip()),
        };
        Self {
            text: format!("{scheme}://{host}{port}/"),
        }
    }

    /// The URL as text.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// This URL with `path` (relative) after it, one `/` between them
    /// whether or not the URL ends in one (`https://dev.example/mock` and
    /// `https://dev.example/mock/` both give `https://dev.example/mock/x`): a
    /// sandbox's base URL is the server's followed by `sandboxes/{id}`.
    pub fn joined(&self, path: &str) -> Self {
        let base = self.text.strip_suffix('/').unwrap_or(&self.text);
        Self {
            text: format!("{base}/{path}"),
        }
    }
}

impl Default for PublicUrl {
    /// `http://localhost/`: a state made without a listener.
    fn default() -> Self {
        Self {
            text: "http://localhost/".to_owned(),
        }
    }
}

impl fmt::Display for PublicUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl FromStr for PublicUrl {
    type Err = String;

    /// Checks and normalizes a public base URL. The error never repeats
    /// the URL: it may hold credentials.
    fn from_str(text: &str) -> Result<Self, String> {
        let absolute = || "public URL must be an absolute http or https URL with a host".to_owned();
        let (scheme, rest) = text.split_once("://").ok_or_else(absolute)?;
        let scheme = scheme.to_ascii_lowercase();
        if !matches!(scheme.as_str(), "http" | "https") {
            return Err(absolute());
        }
        let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        if rest[..authority_end].contains('@') {
            return Err("public URL must not carry credentials".to_owned());
        }
        if rest.contains(['?', '#']) {
            return Err("public URL must have no query or fragment".to_owned());
        }
        if has_non_ascii_host(text) {
            return Err(NON_ASCII_HOST.to_owned());
        }
        // `Uri` takes ASCII only: what is not is escaped first, as WHATWG
        // escapes it in a path.
        let ascii = utf8_percent_encode(text, &AsciiSet::EMPTY).to_string();
        let uri = ascii.parse::<http::Uri>().map_err(|_| absolute())?;
        let authority = uri.authority().ok_or_else(absolute)?;
        let host = authority.host().to_ascii_lowercase();
        if host.is_empty() {
            return Err(absolute());
        }
        let default = if scheme == "https" { 443 } else { 80 };
        // The port as written (`Uri` forgets one past 65535 instead of
        // refusing it): digits after the host's last `:`, maybe none.
        let after_host = authority
            .as_str()
            .rsplit_once(']')
            .map_or(authority.as_str(), |(_, after)| after);
        let port = match after_host.rsplit_once(':') {
            None | Some((_, "")) => String::new(),
            Some((_, digits)) => match digits.parse::<u16>() {
                Ok(number) if number == default => String::new(),
                Ok(number) => format!(":{number}"),
                Err(_) => return Err(absolute()),
            },
        };
        let path = normalized_path(uri.path());
        Ok(Self {
            text: format!("{scheme}://{host}{port}{path}"),
        })
    }
}

/// What WHATWG escapes in a path beside what is not ASCII: controls,
/// space, `"`, `#`, `<`, `>`, `?`, `` ` ``, `{`, `}`.
const PATH: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'`')
    .add(b'{')
    .add(b'}');
/// What WHATWG escapes in the query of an `http(s)` URL: controls, space,
/// `"`, `#`, `<`, `>`, and `'`.
const QUERY: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'<')
    .add(b'>')
    .add(b'\'');
/// What WHATWG escapes in a fragment: controls, space, `"`, `<`, `>`, `` ` ``.
const FRAGMENT: &AsciiSet = &CONTROLS.add(b' ').add(b'"').add(b'<').add(b'>').add(b'`');

/// A path with its dot segments resolved (`.` and `..`, also spelled
/// `%2e`), escaped, and at least `/`.
fn normalized_path(path: &str) -> String {
    let dot = |s: &str| s == "." || s.eq_ignore_ascii_case("%2e");
    let dots = |s: &str| {
        matches!(s.len(), 2 | 4 | 6)
            && ["..", ".%2e", "%2e.", "%2e%2e"]
                .iter()
                .any(|d| s.eq_ignore_ascii_case(d))
    };
    let rest = path.strip_prefix('/').unwrap_or(path);
    let segments: Vec<&str> = rest.split('/').collect();
    let mut out: Vec<&str> = Vec::with_capacity(segments.len());
    for (i, segment) in segments.iter().enumerate() {
        let last = i + 1 == segments.len();
        if dots(segment) {
            out.pop();
            if last {
                out.push("");
            }
        } else if dot(segment) {
            if last {
                out.push("");
            }
        } else {
            out.push(segment);
        }
    }
    format!("/{}", utf8_percent_encode(&out.join("/"), PATH))
}

/// Why a URL whose host is not ASCII is refused: its IDNA form is what
/// browsers and HTTP libraries send (`xn--bcher-kva.example` for
/// `bücher.example`), and making it would take an IDNA crate (Unicode's
/// tables) into the light library build.
pub(crate) const NON_ASCII_HOST: &str = "the host must be ASCII: write an internationalized \
     name in its IDNA form (xn--…), as a browser sends it";

/// Whether the host of the absolute URL `text` (`scheme://host…`) holds a
/// character beyond ASCII; `false` for anything else.
pub(crate) fn has_non_ascii_host(text: &str) -> bool {
    let Some((_, rest)) = text.split_once("://") else {
        return false;
    };
    let authority = &rest[..rest.find(['/', '?', '#', '\\']).unwrap_or(rest.len())];
    !authority.is_ascii()
}

/// Whether a return address can be built from `return_url`: its scheme,
/// host, port and path read as a [`PublicUrl`] does.
pub(crate) fn is_returnable(return_url: &str) -> bool {
    let base = return_url.split(['?', '#']).next().unwrap_or_default();
    base.parse::<PublicUrl>().is_ok()
}

/// `<public base>/pay/<token>`: the base's own path (a prefix behind a
/// proxy) is kept.
pub(crate) fn payment_url(public_base: &PublicUrl, token: &str) -> String {
    format!("{}/pay/{token}", public_base.as_str().trim_end_matches('/'))
}

/// The return address: the transaction's `returnUrl` with `transactionId`,
/// `referenceNo` and `status` appended as query parameters, after any
/// query it already has; its fragment stays at the end. `None` when the
/// transaction has no `returnUrl` (only redirect products require one).
///
/// The values are percent-encoded with a space as `%20`, not the form
/// encoding's `+`: CONTRACT section 13 says percent-encoded, and a return
/// handler that decodes with `decodeURIComponent` (or any plain
/// percent-decoder) would read a `+` literally.
pub fn return_address(record: &Record, status: &str) -> Option<String> {
    let return_url = record.fields.rare.as_ref()?.return_url.as_deref()?;
    let mut id = uuid::Uuid::encode_buffer();
    let ours = [
        (
            "transactionId",
            &*record.id.hyphenated().encode_lower(&mut id),
        ),
        ("referenceNo", &*record.fields.reference_no),
        ("status", status),
    ]
    .map(|(name, value)| format!("{name}={}", percent_encoded(value)))
    .join("&");
    let (head, fragment) = match return_url.split_once('#') {
        Some((head, fragment)) => (head, Some(fragment)),
        None => (return_url, None),
    };
    let (base, theirs) = match head.split_once('?') {
        Some((base, query)) => (base, query),
        None => (head, ""),
    };
    // The scheme and authority as a public URL is written (the returnUrl
    // was checked at initiate: `rules::RETURN_URL`).
    let mut address = base.parse::<PublicUrl>().ok()?.text;
    address.push('?');
    if !theirs.is_empty() {
        address.extend(utf8_percent_encode(theirs, QUERY));
        address.push('&');
    }
    address.push_str(&ours);
    if let Some(fragment) = fragment {
        address.push('#');
        address.extend(utf8_percent_encode(fragment, FRAGMENT));
    }
    Some(address)
}

/// `value` as a query value: the form encoding of `form_urlencoded`
/// (every byte but `A-Z a-z 0-9 * - . _` escaped; a `+` in the value is
/// `%2B`), with its `+` for a space written `%20`.
fn percent_encoded(value: &str) -> String {
    form_urlencoded::byte_serialize(value.as_bytes())
        .collect::<String>()
        .replace('+', "%20")
}

#[cfg(test)]
mod tests;
