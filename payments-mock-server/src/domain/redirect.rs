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
mod tests {
    use super::*;
    use crate::domain::transaction::RareFields;

    fn record_returning_to(return_url: &str, reference: &str) -> Record {
        let mut record = crate::store::test_support::sample();
        record.id = uuid::Uuid::from_u128(0x0193_0000_0000_7000_8000_0000_0000_0017);
        record.fields.reference_no = reference.into();
        record.fields.rare = Some(std::sync::Arc::new(RareFields {
            return_url: Some(return_url.into()),
            ..RareFields::default()
        }));
        record
    }

    #[test]
    fn a_host_beyond_ascii_is_refused_saying_so_its_path_is_not() {
        for url in [
            "https://bücher.example/",
            "http://xn--bcher-kva.example.bücher.example:8080/x",
            "https://例え.テスト",
        ] {
            assert!(has_non_ascii_host(url), "{url}");
            assert_eq!(
                url.parse::<PublicUrl>().err().as_deref(),
                Some(NON_ASCII_HOST)
            );
            assert!(!is_returnable(url), "{url}");
        }
        for url in [
            "https://xn--bcher-kva.example/rückkehr",
            "https://shop.example/back?q=ü#ü",
            "not a url ü",
        ] {
            assert!(!has_non_ascii_host(url), "{url}");
        }
        assert!(is_returnable("https://xn--bcher-kva.example/rückkehr"));
    }

    #[test]
    fn the_return_address_keeps_the_query_and_puts_the_fragment_last() {
        let record = record_returning_to("https://shop.example/back?order=17#top", "INV/17");
        assert_eq!(
            return_address(&record, "SUCCESSFUL").as_deref(),
            Some(
                "https://shop.example/back?order=17&transactionId=01930000-0000-7000-8000-000000000017\
                 &referenceNo=INV%2F17&status=SUCCESSFUL#top"
            )
        );
    }

    #[test]
    fn hostile_references_are_encoded_never_pasted() {
        let record = record_returning_to("http://127.0.0.1:9/r", "a&status=SUCCESSFUL#x ü");
        let address = return_address(&record, "FAILED").expect("an address");
        let url = url::Url::parse(&address).expect("a URL");
        let pairs: Vec<(String, String)> = url.query_pairs().into_owned().collect();
        assert_eq!(
            pairs,
            [
                ("transactionId".to_owned(), record.id.to_string()),
                (
                    "referenceNo".to_owned(),
                    "a&status=SUCCESSFUL#x ü".to_owned()
                ),
                ("status".to_owned(), "FAILED".to_owned()),
            ]
        );
        assert_eq!(url.fragment(), None);
        // Percent-encoded, a space as %20 (a plain percent-decoder reads it
        // right), a plus as %2B.
        assert!(
            address.ends_with("&referenceNo=a%26status%3DSUCCESSFUL%23x%20%C3%BC&status=FAILED"),
            "{address}"
        );
        let record = record_returning_to("https://shop.example/back?", "1+1 = 2");
        assert_eq!(
            return_address(&record, "SUCCESSFUL").as_deref(),
            Some(
                "https://shop.example/back?transactionId=01930000-0000-7000-8000-000000000017\
                 &referenceNo=1%2B1%20%3D%202&status=SUCCESSFUL"
            )
        );
    }

    #[test]
    fn no_return_url_no_address() {
        let mut record = crate::store::test_support::sample();
        record.fields.rare = None;
        assert_eq!(return_address(&record, "FAILED"), None);
    }

    #[test]
    fn tokens_are_long_random_and_url_safe() {
        let a = new_token();
        let b = new_token();
        assert_ne!(a, b);
        assert!(is_token(&a) && is_token(&b));
        assert!(!is_token(&a[1..]));
        assert!(!is_token(&format!("{}-", &a[1..])));
        assert!(!is_token(&format!("{}é", &a[2..])));
    }

    #[test]
    fn the_payment_url_keeps_a_path_prefix() {
        let base = |s: &str| s.parse::<PublicUrl>().expect("a public URL");
        assert_eq!(
            payment_url(&base("http://127.0.0.1:8080"), "T0K"),
            "http://127.0.0.1:8080/pay/T0K"
        );
        assert_eq!(
            payment_url(&base("https://dev.example/mock/"), "T0K"),
            "https://dev.example/mock/pay/T0K"
        );
        assert_eq!(
            payment_url(&base("https://dev.example/mock"), "T0K"),
            "https://dev.example/mock/pay/T0K"
        );
        for bad in [
            "ftp://dev.example",
            "https://dev.example/?a=1",
            "https://dev.example/#f",
            "https://u:p@dev.example/",
            "mailto:someone@example.com",
            "https://",
            "https://dev.example:65536/",
            "not a url",
            "",
        ] {
            let refused = bad.parse::<PublicUrl>().expect_err(bad);
            assert!(!refused.contains("u:p"), "{refused}");
        }
    }

    #[test]
    fn a_listener_is_announced_as_a_browser_can_open_it() {
        let url = |a: &str| PublicUrl::of_listener(a.parse().expect("an address")).to_string();
        assert_eq!(url("127.0.0.1:8080"), "http://127.0.0.1:8080/");
        assert_eq!(url("0.0.0.0:8080"), "http://127.0.0.1:8080/");
        assert_eq!(url("[::]:9"), "http://[::1]:9/");
        assert_eq!(url("10.0.0.1:80"), "http://10.0.0.1/");
    }

    /// Whether a path segment looks like a Windows drive letter (`C:`):
    /// the `url` crate keeps such a segment when `..` follows it, in any
    /// scheme, where the WHATWG standard (and browsers) keep it in `file:`
    /// URLs only. These functions follow the standard; such paths are left
    /// out of the comparison.
    fn has_drive_letter(url: &str) -> bool {
        url.split(['?', '#'])
            .next()
            .unwrap_or_default()
            .split('/')
            .any(|s| {
                s.len() == 2 && s.as_bytes()[0].is_ascii_alphabetic() && s.as_bytes()[1] == b':'
            })
    }

    /// Whether the URL's host has a label starting with `xn--` (any case):
    /// Punycode, which WHATWG validates with the IDNA tables and these
    /// functions take as written (the module's doc).
    fn has_punycode_label(url: &str) -> bool {
        let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
        let host = rest.split([':', '/', '?', '#']).next().unwrap_or_default();
        host.split('.')
            .any(|label| label.len() >= 4 && label[..4].eq_ignore_ascii_case("xn--"))
    }

    #[test]
    fn a_punycode_label_is_taken_as_written() {
        for (text, written) in [
            // Invalid Punycode to WHATWG (no URL at all), kept here.
            ("http://xn--", "http://xn--/"),
            ("http://XN--A.example", "http://xn--a.example/"),
            // Valid Punycode: the same for both.
            (
                "https://xn--mnchen-3ya.example/r",
                "https://xn--mnchen-3ya.example/r",
            ),
        ] {
            assert!(has_punycode_label(text), "{text}");
            let ours = text.parse::<PublicUrl>().map(|u| u.to_string());
            assert_eq!(ours.as_deref(), Ok(written), "{text}");
        }
        assert_eq!(whatwg_public("http://xn--"), None);
        assert_eq!(
            whatwg_public("https://xn--mnchen-3ya.example/r").as_deref(),
            Some("https://xn--mnchen-3ya.example/r")
        );
        assert!(!has_punycode_label("http://axn--b.example/xn--"));
    }

    #[test]
    fn a_drive_letter_segment_is_popped_as_any_other_in_http() {
        let record = record_returning_to("http://a/A:/..", "R");
        let address = return_address(&record, "FAILED").expect("an address");
        assert!(address.starts_with("http://a/?transactionId="), "{address}");
    }

    /// The `url` crate (WHATWG), the reference these functions follow.
    fn whatwg_public(text: &str) -> Option<String> {
        let url = url::Url::parse(text).ok()?;
        Some(url.to_string())
    }

    fn whatwg_return(return_url: &str, ours: &str) -> Option<String> {
        let mut url = url::Url::parse(return_url).ok()?;
        let query = match url.query() {
            Some(theirs) if !theirs.is_empty() => format!("{theirs}&{ours}"),
            _ => ours.to_owned(),
        };
        url.set_query(Some(&query));
        Some(url.into())
    }

    /// Return URLs as `rules::RETURN_URL` admits them, with the parts WHATWG
    /// rewrites: upper-case hosts, default and zero-padded ports, dot
    /// segments (also `%2e`), empty paths, text outside ASCII, `'` in a
    /// query, empty queries and fragments.
    fn return_urls() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let host = prop_oneof![
            "[a-zA-Z][a-zA-Z0-9-]{0,8}(\\.[a-zA-Z][a-zA-Z0-9-]{0,8}){0,2}",
            "(25[0-5]|1[0-9]{2}|[1-9]?[0-9])(\\.(25[0-5]|1[0-9]{2}|[1-9]?[0-9])){3}",
        ];
        let port = prop_oneof!["", ":80", ":443", ":0080", ":8080", ":65535", ":1"];
        let segment = prop_oneof![
            "[A-Za-z0-9._~!$&'()*+,;=:@%-]{0,6}",
            Just(".".to_owned()),
            Just("..".to_owned()),
            Just("%2e".to_owned()),
            Just("%2E%2e".to_owned()),
            Just("café".to_owned()),
            Just("✓".to_owned()),
        ];
        let path = proptest::collection::vec(segment, 0..5)
            .prop_map(|segments| segments.iter().map(|s| format!("/{s}")).collect::<String>());
        let query = prop_oneof![
            Just(String::new()),
            Just("?".to_owned()),
            "\\?[A-Za-z0-9._~!$&'()*+,;=:@/?%-]{0,10}",
            Just("?q=ünï&o='x'".to_owned()),
        ];
        let fragment = prop_oneof![
            Just(String::new()),
            Just("#".to_owned()),
            "#[A-Za-z0-9._~!$&'()*+,;=:@/?%-]{0,8}",
            Just("#✓".to_owned()),
        ];
        (
            prop_oneof!["http", "https"],
            host,
            port,
            path,
            query,
            fragment,
        )
            .prop_map(|(scheme, host, port, path, query, fragment)| {
                format!("{scheme}://{host}{port}{path}{query}{fragment}")
            })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2048))]

        #[test]
        fn the_return_address_is_what_whatwg_writes(return_url in return_urls()) {
            proptest::prop_assume!(crate::domain::rules::is_return_url(&return_url));
            proptest::prop_assume!(!has_drive_letter(&return_url));
            proptest::prop_assume!(!has_punycode_label(&return_url));
            let record = record_returning_to(&return_url, "R 1+ü");
            let ours = "transactionId=01930000-0000-7000-8000-000000000017&referenceNo=R%201%2B%C3%BC&status=FAILED";
            proptest::prop_assert_eq!(
                return_address(&record, "FAILED"),
                whatwg_return(&return_url, ours),
                "{}", return_url
            );
        }

        #[test]
        fn a_public_url_is_what_whatwg_writes(return_url in return_urls()) {
            proptest::prop_assume!(!has_drive_letter(&return_url));
            proptest::prop_assume!(!has_punycode_label(&return_url));
            let base = return_url.split(['?', '#']).next().unwrap_or_default();
            let ours = base.parse::<PublicUrl>().ok().map(|u| u.to_string());
            proptest::prop_assert_eq!(ours, whatwg_public(base), "{}", base);
        }
    }
}
