//! What shapes a proxy ([`ProxyConfig`], COMMANDS.md `proxy`) and the
//! checks it passes before a proxy starts.

use std::path::PathBuf;
use std::time::Duration;

use crate::Error;

pub(crate) mod files;

/// Default of [`ProxyConfig::upstream_timeout`].
pub const DEFAULT_UPSTREAM_TIMEOUT: Duration = Duration::from_secs(30);

/// The longest [`ProxyConfig::upstream_timeout`] accepted: a day. A
/// longer wait is no test run's, and a timeout near the clock's range
/// would overflow the deadlines the proxy sets from it.
pub const MAX_UPSTREAM_TIMEOUT: Duration = Duration::from_secs(24 * 60 * 60);

/// Everything that shapes a proxy (COMMANDS.md, `proxy`).
#[derive(Clone)]
#[non_exhaustive]
pub struct ProxyConfig {
    /// The service to check: `http` or `https`, maybe with a path prefix.
    pub upstream: url::Url,
    /// `--report FILE`: one JSON line per exchange, appended.
    pub report: Option<PathBuf>,
    /// `--record FILE`: each exchange whole, secrets replaced, appended.
    pub record: Option<PathBuf>,
    /// `--junit FILE`: the exchanges as JUnit XML, written at the stop
    /// ([`Proxy::shutdown`](crate::Proxy::shutdown) or
    /// [`Proxy::finish`](crate::Proxy::finish); not when a proxy is only
    /// dropped), CONTRACT section 20: into a temporary file beside it,
    /// renamed over it. Checked at the start without being created or
    /// emptied, so a path that cannot be written, or that is the same
    /// file as `record`, `report` or `sarif`, stops the start.
    pub junit: Option<PathBuf>,
    /// `--sarif FILE`: the findings as SARIF 2.1.0, written at the stop
    /// as `junit` is.
    pub sarif: Option<PathBuf>,
    /// `--enforce`: an exchange with a violation is answered 502
    /// `CONTRACT_VIOLATION`.
    pub enforce: bool,
    /// `--strict`: an undocumented finding fails the run too.
    pub strict: bool,
    /// How long the upstream may take to answer (default 30 s).
    pub upstream_timeout: Duration,
    /// The listener's TLS (`--tls-cert`/`--tls-key`,
    /// `--tls-self-signed`, `--tls-client-ca`): HTTPS only when set.
    pub tls: Option<payments_serve::tls::ServerTls>,
    /// `--upstream-ca FILE`: also trust this CA (PEM) for an https
    /// upstream, beside Mozilla's roots.
    pub upstream_ca: Option<PathBuf>,
    /// `--upstream-client-cert FILE` and `--upstream-client-key FILE`
    /// (PEM): the client certificate presented to an upstream that
    /// demands mutual TLS.
    pub upstream_identity: Option<(PathBuf, PathBuf)>,
    /// `--admin-key` (CONTRACT section 18): with one, `/_proxy/` and
    /// `/metrics` want `Authorization: Bearer KEY`, and the console a
    /// key or a session of its sign-in page. None: they are open.
    /// `/api/` is never affected.
    pub admin_keys: Vec<payments_serve::admin::AdminKey>,
    /// How long a console session lasts (default 12 hours).
    pub session_lifetime: Duration,
    /// The name the proxy is reached by, when it is one (`--host NAME`:
    /// its console is announced under it). Without an admin key, the
    /// proxy's own pages answer a `Host` of this name, as they answer an
    /// IP address or `localhost`; any other name is refused (DNS
    /// rebinding). `None`: addresses and `localhost` only.
    pub host_name: Option<String>,
    /// `--otlp-endpoint URL` (feature `otlp`, CONTRACT section 21): a
    /// server span per request exported there, and its `traceparent` sent
    /// upstream instead of the caller's, so the service's span is its
    /// child. `None`: no span, and the caller's header goes on untouched.
    #[cfg(feature = "otlp")]
    #[cfg_attr(docsrs, doc(cfg(feature = "otlp")))]
    pub otlp_endpoint: Option<payments_serve::otlp::OtlpEndpoint>,
}

impl std::fmt::Debug for ProxyConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut f = f.debug_struct("ProxyConfig");
        f.field("upstream", &self.shown_upstream())
            .field("report", &self.report)
            .field("record", &self.record)
            .field("junit", &self.junit)
            .field("sarif", &self.sarif)
            .field("enforce", &self.enforce)
            .field("strict", &self.strict)
            .field("upstream_timeout", &self.upstream_timeout)
            .field("tls", &self.tls)
            .field("upstream_ca", &self.upstream_ca)
            .field("upstream_identity", &self.upstream_identity)
            .field("admin_keys", &self.admin_keys)
            .field("session_lifetime", &self.session_lifetime)
            .field("host_name", &self.host_name);
        #[cfg(feature = "otlp")]
        f.field("otlp_endpoint", &self.otlp_endpoint);
        f.finish()
    }
}

impl ProxyConfig {
    /// A proxy in front of `upstream`, with the defaults.
    pub fn new(upstream: url::Url) -> Self {
        Self {
            upstream,
            report: None,
            record: None,
            junit: None,
            sarif: None,
            enforce: false,
            strict: false,
            upstream_timeout: DEFAULT_UPSTREAM_TIMEOUT,
            tls: None,
            upstream_ca: None,
            upstream_identity: None,
            admin_keys: Vec::new(),
            session_lifetime: payments_serve::admin::DEFAULT_SESSION_LIFETIME,
            host_name: None,
            #[cfg(feature = "otlp")]
            otlp_endpoint: None,
        }
    }

    /// Checks the upstream URL, the timeout, the admin keys and the
    /// session lifetime.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] naming the problem (never the URL's password,
    /// never a key).
    pub fn validate(&self) -> Result<(), Error> {
        let url = &self.upstream;
        if !matches!(url.scheme(), "http" | "https") || !url.has_host() {
            return Err(Error::Config(
                "--upstream must be an absolute http or https URL with a host".to_owned(),
            ));
        }
        if url.query().is_some() || url.fragment().is_some() {
            return Err(Error::Config(
                "--upstream must have no query or fragment".to_owned(),
            ));
        }
        if self.upstream_timeout.is_zero() {
            return Err(Error::Config(
                "--upstream-timeout must be greater than 0".to_owned(),
            ));
        }
        if self.upstream_timeout > MAX_UPSTREAM_TIMEOUT {
            // As the flag is written (humantime writes a day as `1day`,
            // which the flag's own parser reads, but no one types).
            return Err(Error::Config(
                "--upstream-timeout must be at most 24h (a day)".to_owned(),
            ));
        }
        // The proxy takes no API key of its own: an admin key is any key.
        payments_serve::admin::check_config(&self.admin_keys, [], self.session_lifetime)
            .map_err(Error::Config)
    }

    /// The upstream as logs and the console show it: without credentials
    /// (the user name too: an API key is often sent as one).
    pub fn shown_upstream(&self) -> String {
        let mut shown = self.upstream.clone();
        if !shown.username().is_empty() {
            let _ = shown.set_username("***");
        }
        if shown.password().is_some() {
            let _ = shown.set_password(Some("***"));
        }
        shown.to_string().replace("%2A%2A%2A", "***")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_upstream_timeout_longer_than_a_day_is_refused_naming_the_flag() {
        let mut config = ProxyConfig::new("http://127.0.0.1:1".parse().expect("a URL"));
        config.upstream_timeout = MAX_UPSTREAM_TIMEOUT;
        assert!(config.validate().is_ok());
        for long in [
            MAX_UPSTREAM_TIMEOUT + Duration::from_secs(1),
            Duration::from_secs(5_000_000_000_000_000 * 3600),
            Duration::MAX,
        ] {
            config.upstream_timeout = long;
            let refused = config.validate().expect_err("refused").to_string();
            assert!(refused.contains("--upstream-timeout"), "{refused}");
            assert!(refused.contains("at most 24h (a day)"), "{refused}");
        }
    }
}
