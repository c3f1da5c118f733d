//! Which proxy from the environment a base URL's requests go through (see
//! [Proxies](super::ClientBuilder#proxies)): the one rule the client's own
//! HTTP client follows, public so that a tool sending requests of its own
//! with reqwest (the `payments` CLI's `tail`, its product list) follows
//! the same rule, and so that a failure to connect can name the proxy it
//! failed to reach.

use std::net::IpAddr;

/// Whether requests to `base_url` skip every proxy the environment names:
/// its host is this machine (loopback: `127.0.0.0/8`, `::1`, `localhost`
/// and any `*.localhost`; or the unspecified address `0.0.0.0` or `::`
/// that a server listening on every interface prints). The client's own
/// HTTP client is built with `no_proxy()` for such a base URL; a tool
/// that builds a `reqwest::Client` of its own for the same service should
/// do the same where this says `true`. `false` for a URL that does not
/// parse.
///
/// # Examples
///
/// ```
/// use payments_client::skips_environment_proxy;
/// assert!(skips_environment_proxy("http://127.0.0.1:8080"));
/// assert!(skips_environment_proxy(" http://localhost/v1/ "));
/// assert!(!skips_environment_proxy("https://payments.example"));
/// ```
#[must_use]
pub fn skips_environment_proxy(base_url: &str) -> bool {
    url::Url::parse(base_url.trim()).is_ok_and(|url| is_loopback(&url))
}

/// A proxy the environment names for a base URL: where it is (scheme,
/// host and port, never its `user:pass@`) and the variable that named it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvironmentProxy {
    url: String,
    variable: &'static str,
}

impl EnvironmentProxy {
    /// The proxy's URL without any `user:pass@` (`http://proxy.example:3128`).
    #[must_use]
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The environment variable it came from (`HTTP_PROXY`, `https_proxy`,
    /// `ALL_PROXY`, ...).
    #[must_use]
    pub fn variable(&self) -> &'static str {
        self.variable
    }
}

/// The proxy the environment names for `base_url`, as the client's own
/// HTTP client reads it when it is built (reqwest's rules): `HTTP_PROXY`
/// (then `http_proxy`) for an `http` base URL, `HTTPS_PROXY` (then
/// `https_proxy`) for an `https` one, else `ALL_PROXY` (then `all_proxy`);
/// none for a host `NO_PROXY` (then `no_proxy`) lists, none at all when
/// `REQUEST_METHOD` is set (a CGI script), and none for a base URL that
/// [`skips_environment_proxy`]. For messages: the client does not use it
/// to connect (reqwest reads the environment itself), and the system
/// proxy settings of macOS and Windows are not read.
///
/// # Examples
///
/// ```
/// use payments_client::environment_proxy;
/// // A loopback service is never reached through a proxy.
/// assert_eq!(environment_proxy("http://127.0.0.1:8080"), None);
/// ```
#[must_use]
pub fn environment_proxy(base_url: &str) -> Option<EnvironmentProxy> {
    environment_proxy_in(base_url, |name| std::env::var(name).ok())
}

/// [`environment_proxy`] with the environment given.
fn environment_proxy_in(
    base_url: &str,
    var: impl Fn(&str) -> Option<String>,
) -> Option<EnvironmentProxy> {
    if var("REQUEST_METHOD").is_some() {
        return None;
    }
    let url = url::Url::parse(base_url.trim()).ok()?;
    if is_loopback(&url) {
        return None;
    }
    let first = |names: [&'static str; 2]| {
        names
            .into_iter()
            .find_map(|name| var(name).map(|value| (name, value)))
    };
    let specific = match url.scheme() {
        "http" => ["HTTP_PROXY", "http_proxy"],
        "https" => ["HTTPS_PROXY", "https_proxy"],
        _ => return None,
    };
    let (variable, url_text) = first(specific)
        .and_then(|(name, value)| Some((name, proxy_url(&value)?)))
        .or_else(|| {
            let (name, value) = first(["ALL_PROXY", "all_proxy"])?;
            Some((name, proxy_url(&value)?))
        })?;
    let host = url.host_str()?;
    if first(["NO_PROXY", "no_proxy"]).is_some_and(|(_, list)| no_proxy_lists(&list, host)) {
        return None;
    }
    Some(EnvironmentProxy {
        url: url_text,
        variable,
    })
}

/// A proxy variable's value as reqwest takes it (`host:port` is
/// `http://host:port`), shown without `user:pass@` or path; `None` for a
/// value reqwest would not use.
fn proxy_url(value: &str) -> Option<String> {
    let value = value.trim();
    if value.is_empty() {
        return None;
    }
    let with_scheme = if value.contains("://") {
        value.to_owned()
    } else {
        format!("http://{value}")
    };
    let mut url = url::Url::parse(&with_scheme).ok()?;
    if !matches!(
        url.scheme(),
        "http" | "https" | "socks4" | "socks4a" | "socks5" | "socks5h"
    ) || !url.has_host()
    {
        return None;
    }
    let _ = url.set_username("");
    let _ = url.set_password(None);
    let host = url.host_str()?;
    Some(match url.port() {
        Some(port) => format!("{}://{host}:{port}", url.scheme()),
        None => format!("{}://{host}", url.scheme()),
    })
}

/// Whether a `NO_PROXY` list names `host` (reqwest's rules: `*`, an
/// address, a network `a.b.c.d/n`, or a domain with its subdomains).
fn no_proxy_lists(list: &str, host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let ip = host.parse::<IpAddr>().ok();
    list.split(',').map(str::trim).any(|entry| {
        if entry == "*" {
            return true;
        }
        if let Some(net) = network(entry) {
            return ip.is_some_and(|ip| net.contains(ip));
        }
        if entry.is_empty() || ip.is_some() {
            return false;
        }
        let domain = entry.strip_prefix('.').unwrap_or(entry);
        host.eq_ignore_ascii_case(domain)
            || host
                .len()
                .checked_sub(domain.len() + 1)
                .and_then(|at| host.get(at..))
                .is_some_and(|tail| tail.starts_with('.') && tail[1..].eq_ignore_ascii_case(domain))
    })
}

/// An address or a network of a `NO_PROXY` list.
struct Network {
    base: IpAddr,
    bits: u32,
}

fn network(entry: &str) -> Option<Network> {
    let (address, bits) = match entry.split_once('/') {
        Some((address, bits)) => (address, Some(bits.parse::<u32>().ok()?)),
        None => (entry, None),
    };
    let base = address.parse::<IpAddr>().ok()?;
    let width = if base.is_ipv4() { 32 } else { 128 };
    let bits = bits.unwrap_or(width);
    (bits <= width).then_some(Network { base, bits })
}

impl Network {
    fn contains(&self, ip: IpAddr) -> bool {
        let mask = |width: u32| {
            if self.bits == 0 {
                0
            } else {
                u128::MAX << (width - self.bits)
            }
        };
        match (self.base, ip) {
            (IpAddr::V4(base), IpAddr::V4(ip)) => {
                let mask = mask(32) as u32;
                u32::from(base) & mask == u32::from(ip) & mask
            }
            (IpAddr::V6(base), IpAddr::V6(ip)) => {
                let mask = mask(128);
                u128::from(base) & mask == u128::from(ip) & mask
            }
            _ => false,
        }
    }
}

/// Whether `url`'s host is this machine: loopback (`127.0.0.0/8`, `::1`,
/// an IPv4-mapped `::ffff:127.x.y.z` too), `localhost` or a name under it
/// (RFC 6761), or the unspecified address (`0.0.0.0`, `::`,
/// `::ffff:0.0.0.0`), which a server prints when it listens on every
/// interface (`payments-mock-server --host 0.0.0.0`) and which, connected
/// to, reaches this machine (Linux, macOS).
pub(super) fn is_loopback(url: &url::Url) -> bool {
    let local = |ip: std::net::Ipv4Addr| ip.is_loopback() || ip.is_unspecified();
    match url.host() {
        Some(url::Host::Ipv4(ip)) => local(ip),
        Some(url::Host::Ipv6(ip)) => {
            ip.is_loopback() || ip.is_unspecified() || ip.to_ipv4_mapped().is_some_and(local)
        }
        Some(url::Host::Domain(name)) => {
            let name = name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase();
            name == "localhost" || name.ends_with(".localhost")
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::{environment_proxy_in, is_loopback};

    #[test]
    fn loopback_hosts_are_the_machines_own() {
        for url in [
            "http://127.0.0.1:8080",
            "http://127.1.2.3",
            "http://[::1]:9",
            "http://[::ffff:127.0.0.1]",
            "http://localhost",
            "http://LocalHost.:80",
            "https://mock.localhost/v1",
            "http://a.b.localhost",
            // Every interface: a connection to it reaches this machine.
            "http://0.0.0.0:8080",
            "http://[::]:9",
            "http://[::ffff:0.0.0.0]",
        ] {
            assert!(is_loopback(&url.parse().unwrap()), "{url}");
        }
        for url in [
            "http://0.0.0.1",
            "http://10.0.0.1",
            "http://[::2]",
            "http://localhost.example",
            "http://notlocalhost",
            "https://payments.example",
        ] {
            assert!(!is_loopback(&url.parse().unwrap()), "{url}");
        }
    }

    fn proxy(base: &str, env: &[(&str, &str)]) -> Option<(String, &'static str)> {
        environment_proxy_in(base, |name| {
            env.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (*v).to_owned())
        })
        .map(|p| (p.url().to_owned(), p.variable()))
    }

    #[test]
    fn the_environment_names_the_proxy_and_its_variable() {
        let http = [("HTTP_PROXY", "http://user:secret@proxy.example:3128/x")];
        assert_eq!(
            proxy("http://pay.example", &http),
            Some(("http://proxy.example:3128".to_owned(), "HTTP_PROXY"))
        );
        assert_eq!(proxy("https://pay.example", &http), None);
        assert_eq!(proxy("http://127.0.0.1:9", &http), None);
        let lower = [
            ("https_proxy", "proxy.example:8080"),
            ("all_proxy", "socks5://s:1"),
        ];
        assert_eq!(
            proxy("https://pay.example", &lower),
            Some(("http://proxy.example:8080".to_owned(), "https_proxy"))
        );
        assert_eq!(
            proxy("http://pay.example", &lower),
            Some(("socks5://s:1".to_owned(), "all_proxy"))
        );
        let cgi = [("HTTP_PROXY", "http://p:1"), ("REQUEST_METHOD", "GET")];
        assert_eq!(proxy("http://pay.example", &cgi), None);
    }

    #[test]
    fn no_proxy_lists_hosts_domains_and_networks() {
        for (list, base, skipped) in [
            ("pay.example", "http://pay.example", true),
            (".example", "http://pay.example", true),
            ("example", "http://pay.EXAMPLE", true),
            ("example", "http://payexample", false),
            ("*", "http://anything.test", true),
            ("10.0.0.0/8, other", "http://10.1.2.3", true),
            ("10.0.0.0/8", "http://11.1.2.3", false),
            ("::2", "http://[::2]:80", true),
            ("", "http://pay.example", false),
        ] {
            let env = [("HTTP_PROXY", "http://p:1"), ("NO_PROXY", list)];
            assert_eq!(proxy(base, &env).is_none(), skipped, "{list:?} with {base}");
        }
    }
}
