//! Which proxy from the environment a base URL's requests go through (see
//! [Proxies](super::ClientBuilder#proxies)): the one rule the client's own
//! HTTP client follows, public so that a tool sending requests of its own
//! with reqwest (the `payments` CLI's `tail`, its product list) follows
//! the same rule, and so that a failure to connect can name the proxy it
//! failed to reach.

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
    credentials: bool,
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

    /// Whether the variable's value holds a `user:pass@`, which the
    /// client sends to the proxy (`Proxy-Authorization: Basic`): never
    /// the credentials themselves.
    #[must_use]
    pub fn has_credentials(&self) -> bool {
        self.credentials
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

/// [`environment_proxy`] with the environment given. Which variables
/// apply, how a value is read and what `NO_PROXY` lists are hyper-util's
/// rules (its proxy `Matcher`, the one reqwest itself reads the
/// environment with): only the variable's name is told here.
fn environment_proxy_in(
    base_url: &str,
    var: impl Fn(&str) -> Option<String>,
) -> Option<EnvironmentProxy> {
    use hyper_util::client::proxy::matcher::Matcher;
    if var("REQUEST_METHOD").is_some() {
        return None;
    }
    let url = url::Url::parse(base_url.trim()).ok()?;
    if is_loopback(&url) {
        return None;
    }
    let uri = url.as_str().parse::<http::Uri>().ok()?;
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
    // The scheme's own variable when its value is one the matcher takes,
    // else `ALL_PROXY`: the matcher's order.
    let (variable, proxy) = [first(specific), first(["ALL_PROXY", "all_proxy"])]
        .into_iter()
        .flatten()
        .find_map(|(variable, value)| {
            let matcher = Matcher::builder().http(&value).https(&value).build();
            Some((variable, matcher.intercept(&uri)?))
        })?;
    if let Some((_, no)) = first(["NO_PROXY", "no_proxy"]) {
        let any = "http://proxy.invalid";
        // None when NO_PROXY lists the host.
        Matcher::builder()
            .http(any)
            .https(any)
            .no(no)
            .build()
            .intercept(&uri)?;
    }
    // Scheme, host and port only. The matcher keeps the `user:pass@` it
    // finds apart, but splits it off at the first `@`: a password with an
    // unencoded `@` (`u:p@ss@host`) leaves `ss@` in the URI's authority.
    // Its host is what follows the last `@`, which is where it connects.
    let scheme = proxy.uri().scheme_str().unwrap_or("http");
    let host = proxy.uri().host()?;
    let url = match proxy.uri().port_u16() {
        Some(port) => format!("{scheme}://{host}:{port}"),
        None => format!("{scheme}://{host}"),
    };
    Some(EnvironmentProxy {
        url,
        variable,
        credentials: proxy.basic_auth().is_some()
            || proxy
                .uri()
                .authority()
                .is_some_and(|a| a.as_str().contains('@')),
    })
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

    /// A password with an unencoded `@` (the matcher splits the userinfo
    /// off at the first one) or an encoded one: the URL shown is the host
    /// and port it connects to, never a part of the userinfo.
    #[test]
    fn no_part_of_the_credentials_is_in_the_url_shown() {
        for (value, shown) in [
            ("http://u:p@ss@p1:1", "http://p1:1"),
            (
                "http://alice:Winter@2026-secret@127.0.0.1:9",
                "http://127.0.0.1:9",
            ),
            (
                "http://a@b:c@d@e@proxy.example:3128",
                "http://proxy.example:3128",
            ),
            ("http://u:p%40ss@p1:1", "http://p1:1"),
            ("http://u%40x:p%3Ass%40@[::1]:8080", "http://[::1]:8080"),
            ("http://alice@proxy.example", "http://proxy.example"),
            ("user:pw@ss@proxy.example:8080", "http://proxy.example:8080"),
        ] {
            let env = [("HTTPS_PROXY", value)];
            let found = environment_proxy_in("https://pay.example", |name| {
                env.iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| (*v).to_owned())
            })
            .unwrap_or_else(|| panic!("a proxy for {value}"));
            assert_eq!(found.url(), shown, "{value}");
            assert!(found.has_credentials(), "{value}");
            for secret in ["ss", "Winter", "2026", "alice", "pw", "%40", "p%3A"] {
                assert!(!found.url().contains(secret), "{value}: {}", found.url());
            }
        }
        let plain = environment_proxy_in("https://pay.example", |name| {
            (name == "HTTPS_PROXY").then(|| "http://proxy.example:3128".to_owned())
        })
        .expect("a proxy");
        assert!(!plain.has_credentials());
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
