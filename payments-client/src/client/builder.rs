//! [`ClientBuilder`]: a client's settings, checked once by
//! [`ClientBuilder::build`].

use std::sync::Arc;
use std::time::Duration;

use reqwest::header::HeaderValue;
use secrecy::SecretString;

use super::{Client, DEFAULT_USER_AGENT};
use crate::error::Error;
use crate::guard::{AnswerGuard, DEFAULT_ANSWER_MEMORY};
use crate::retry::RetryPolicy;
use crate::secret::Credential;
use crate::transport::{Transport, redact_url};

/// Builder of a [`Client`]; see [`Client::builder`]. Its `Debug` shows the
/// base URL's `user:pass@` as `***@`, and no key.
///
/// # Proxies
///
/// The client's own HTTP client (without
/// [`http_client`](Self::http_client)) takes its proxy from the
/// environment when it is built, as curl does: `HTTPS_PROXY` (or
/// `https_proxy`) for an `https` base URL, `HTTP_PROXY` (or `http_proxy`,
/// ignored when `REQUEST_METHOD` is set, as in a CGI script) for an `http`
/// one, `ALL_PROXY` (or `all_proxy`) for either, and none for the hosts
/// `NO_PROXY` (or `no_proxy`) lists; on macOS and Windows the system's
/// proxy settings too, when reqwest's `system-proxy` feature is on in the
/// application. Everything the client sends goes through that proxy: an
/// `http` base URL's requests whole (the API key, payer ids and OTPs
/// included) to the proxy named; an `https` one's through a `CONNECT`
/// tunnel, encrypted end to end.
///
/// Two exceptions:
///
/// - a base URL whose host is this machine (loopback: `127.0.0.0/8`,
///   `::1`, `localhost` and any `*.localhost`; or the unspecified address
///   `0.0.0.0` or `::` that a server listening on every interface prints:
///   a mock or a sidecar on this machine) never goes through a proxy from
///   the environment ([`skips_environment_proxy`](crate::skips_environment_proxy)
///   says which: a tool building a `reqwest::Client` of its own for the
///   same service applies the same rule with it);
/// - [`no_proxy`](Self::no_proxy) turns every proxy off, whatever the
///   environment says.
///
/// With [`http_client`](Self::http_client), the proxy is that client's:
/// neither rule applies.
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until build() is called"]
pub struct ClientBuilder {
    pub(super) base_url: BaseUrl,
    pub(super) api_key: Option<SecretString>,
    pub(super) auth_header: Option<String>,
    pub(super) connect_timeout: Option<Duration>,
    pub(super) timeout: Option<Duration>,
    pub(super) deadline: Option<Duration>,
    pub(super) retry: RetryPolicy,
    pub(super) user_agent: String,
    pub(super) http_client: Option<reqwest::Client>,
    pub(super) no_proxy: bool,
    pub(super) check_answers: bool,
    pub(super) answer_memory: usize,
    #[cfg(any(feature = "rustls", feature = "native-tls"))]
    pub(super) tls: super::tls::TlsOptions,
}

/// The base URL as given: `Debug` shows it as messages do, its userinfo
/// as `***@`.
#[derive(Clone)]
pub(super) struct BaseUrl(String);

impl std::fmt::Debug for BaseUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&redact_url(&self.0), f)
    }
}

impl ClientBuilder {
    /// The defaults; see [`Client::builder`].
    pub(super) fn new(base_url: String) -> Self {
        ClientBuilder {
            base_url: BaseUrl(base_url),
            api_key: None,
            auth_header: None,
            connect_timeout: None,
            timeout: Some(Duration::from_secs(30)),
            deadline: None,
            retry: RetryPolicy::default(),
            user_agent: DEFAULT_USER_AGENT.to_owned(),
            http_client: None,
            no_proxy: false,
            check_answers: true,
            answer_memory: DEFAULT_ANSWER_MEMORY,
            #[cfg(any(feature = "rustls", feature = "native-tls"))]
            tls: super::tls::TlsOptions::default(),
        }
    }

    /// The API key, sent as `Authorization: Bearer KEY` (or in the header
    /// set with [`auth_header`](Self::auth_header)). Kept in a
    /// [`SecretString`]; never logged or shown by `Debug`.
    ///
    /// A key is visible ASCII without spaces: [`build`](Self::build)
    /// refuses any other (a pasted no-break space, an accented letter)
    /// rather than send bytes the service would refuse. With `user:pass@`
    /// in the base URL (`Authorization: Basic`), send the key in another
    /// header with [`auth_header`](Self::auth_header): `build` refuses the
    /// two in one `Authorization`.
    pub fn api_key(mut self, key: impl Into<SecretString>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    /// Sends the key as the raw value of this header instead of
    /// `Authorization: Bearer`.
    pub fn auth_header(mut self, name: impl Into<String>) -> Self {
        self.auth_header = Some(name.into());
        self
    }

    /// Time allowed to open a connection: DNS, TCP and the TLS handshake
    /// (default 10 s), and never more than nine tenths of the
    /// [`timeout`](Self::timeout), so that a connection that cannot be
    /// made in an attempt's time ends as a connect failure
    /// ([`TransportKind::Connect`](crate::error::TransportKind::Connect):
    /// nothing was sent, [`Outcome::NotCarriedOut`](crate::Outcome)), not
    /// as a timeout whose outcome is unknown. Ignored with
    /// [`http_client`](Self::http_client): configure that client instead
    /// (with a connect timeout shorter than the `timeout`, for the same
    /// reason).
    pub fn connect_timeout(mut self, d: Duration) -> Self {
        self.connect_timeout = Some(d);
        self
    }

    /// Time allowed for each attempt, from connecting (or sending, on a
    /// connection kept from an earlier call) to the last body byte
    /// (default 30 s); connecting has at most nine tenths of it (see
    /// [`connect_timeout`](Self::connect_timeout)).
    ///
    /// What stays unknown: an attempt cut short by the
    /// [`deadline`](Self::deadline) (its last slice, shorter than the
    /// timeout) while it is still connecting ends as a timeout
    /// ([`Outcome::Unknown`](crate::Outcome)), though nothing was sent.
    pub fn timeout(mut self, d: Duration) -> Self {
        self.timeout = Some(d);
        self
    }

    /// No per-attempt time limit (the [`deadline`](Self::deadline), if set,
    /// still applies).
    pub fn no_timeout(mut self) -> Self {
        self.timeout = None;
        self
    }

    /// Total time for the attempts of one logical call, retries and backoff
    /// included (none by default). No retry is started that would end after
    /// it.
    ///
    /// A read-back that settles an ambiguous outcome (a retry refused as a
    /// repeat after an attempt whose outcome was unknown, an answer that
    /// could not be read or was about another request) runs after the
    /// attempts, on a deadline of the same length of its own: cut short, it
    /// would leave unknown what it can still learn. So a call that
    /// reconciles may take up to twice this; bound the whole call with the
    /// `timeout` and `deadline` halved where twice is too long.
    pub fn deadline(mut self, d: Duration) -> Self {
        self.deadline = Some(d);
        self
    }

    /// When and how to retry. Default: [`RetryPolicy::default`].
    // CONTRACT section 12.
    pub fn retry_policy(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// The `User-Agent` header (default `payments-client/VERSION`).
    pub fn user_agent(mut self, ua: impl Into<String>) -> Self {
        self.user_agent = ua.into();
        self
    }

    /// Uses the caller's own `reqwest::Client` (its pool, TLS and proxy
    /// settings); [`build`](Self::build) then refuses
    /// `add_root_certificate_pem`, `identity_pem` and
    /// [`no_proxy`](Self::no_proxy).
    ///
    /// Its proxies are its own: a `reqwest::Client` built with reqwest's
    /// defaults takes them from the environment for every host, a
    /// loopback one included (see [Proxies](ClientBuilder#proxies)); call
    /// `reqwest::ClientBuilder::no_proxy` on it where that is not wanted.
    ///
    /// The type is reqwest 0.12's: the application's `reqwest` must be
    /// 0.12 to pass one (another major version is another type, and the
    /// call does not compile). A move of this crate to another reqwest
    /// major version is a breaking release of this crate.
    pub fn http_client(mut self, client: reqwest::Client) -> Self {
        self.http_client = Some(client);
        self
    }

    /// Sends every request straight to the service, whatever the proxy
    /// environment variables say (`HTTP_PROXY`, `HTTPS_PROXY`,
    /// `ALL_PROXY`; see [Proxies](ClientBuilder#proxies)). A loopback base URL
    /// needs no call of this: it never goes through an environment proxy.
    ///
    /// [`build`](Self::build) refuses it with
    /// [`http_client`](Self::http_client), whose proxies are its own.
    ///
    /// # Examples
    ///
    /// ```
    /// use payments_client::Client;
    /// // Reached directly even where a corporate HTTPS_PROXY is set.
    /// let client = Client::builder("https://payments.internal.example")
    ///     .no_proxy()
    ///     .build()?;
    /// # drop(client);
    /// # Ok::<(), payments_client::Error>(())
    /// ```
    pub fn no_proxy(mut self) -> Self {
        self.no_proxy = true;
        self
    }

    /// Whether every answer is checked against its request (default
    /// `true`).
    ///
    /// With the check on, an answer about something else than what was
    /// asked (another reference, amount, product, currency or transaction,
    /// a confirm whose amount is not the one initiated, one transactionId
    /// answered for two references) is [`Error::AnswerMismatch`] instead
    /// of a success.
    ///
    /// Turn it off only for a service known to rewrite its echoes (a
    /// gateway that upper-cases references, say), and then check the
    /// answers yourself: **without the check, an answer for another
    /// merchant's or another order's transaction is handed to you as a
    /// success**, and confirming, shipping or booking against it moves
    /// money for the wrong order.
    ///
    /// # Examples
    ///
    /// ```
    /// use payments_client::Client;
    /// let trusting = Client::builder("http://127.0.0.1:8080").check_answers(false).build()?;
    /// assert!(format!("{trusting:?}").contains("check_answers: false"));
    /// # Ok::<(), payments_client::Error>(())
    /// ```
    pub fn check_answers(mut self, on: bool) -> Self {
        self.check_answers = on;
        self
    }

    /// How many transactions the answer check remembers (default
    /// 10,000, a couple of megabytes when full): for each, the reference
    /// (and merchant) it was answered for and, for those this client
    /// initiated, the amount. A transactionId answered for another
    /// reference, or a confirm amount that is not the initiated one, is
    /// only noticed while the transaction is remembered; the least
    /// recently seen leaves first. 0 keeps the per-call checks and
    /// remembers nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use payments_client::Client;
    /// // A batch job that initiates and confirms a million payments.
    /// let client = Client::builder("http://127.0.0.1:8080")
    ///     .answer_memory(1_000_000)
    ///     .build()?;
    /// # drop(client);
    /// # Ok::<(), payments_client::Error>(())
    /// ```
    pub fn answer_memory(mut self, transactions: usize) -> Self {
        self.answer_memory = transactions;
        self
    }

    /// Builds the client.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for a base URL that is not an absolute `http(s)`
    /// URL without query or fragment, an invalid key (empty, or holding a
    /// space or a character outside visible ASCII), header name or user
    /// agent, a base URL with `user:pass@` together with an
    /// [`api_key`](Self::api_key) sent as `Authorization` (both would be
    /// that one header), or when the HTTP client cannot be created.
    ///
    /// # Examples
    ///
    /// ```
    /// use payments_client::{Client, RetryPolicy};
    /// use std::time::Duration;
    /// let client = Client::builder("https://payments.example/prefix/")
    ///     .api_key("sk_live_secret")
    ///     .timeout(Duration::from_secs(5))
    ///     .deadline(Duration::from_secs(20))
    ///     .retry_policy(RetryPolicy::default().max_retries(3))
    ///     .build()?;
    /// assert!(!format!("{client:?}").contains("sk_live_secret"));
    /// assert!(Client::builder("not a url").build().is_err());
    /// # Ok::<(), payments_client::Error>(())
    /// ```
    pub fn build(self) -> Result<Client, Error> {
        // Messages show the URL without `user:pass@`.
        let shown = redact_url(&self.base_url.0);
        let parsed = url::Url::parse(self.base_url.0.trim())
            .map_err(|e| Error::config(format!("invalid base URL {shown:?}: {e}")))?;
        if !matches!(parsed.scheme(), "http" | "https") || !parsed.has_host() {
            return Err(Error::config(format!(
                "base URL {shown:?} must be an absolute http or https URL"
            )));
        }
        if parsed.query().is_some() || parsed.fragment().is_some() {
            return Err(Error::config(format!(
                "base URL {shown:?} must not have a query or fragment"
            )));
        }
        let base = parsed.as_str().trim_end_matches('/').to_owned();
        let base_path = parsed.path().trim_end_matches('/').to_owned();
        let credential = self
            .api_key
            .as_ref()
            .map(|k| Credential::new(k, self.auth_header.as_deref()))
            .transpose()?;
        let user_agent = HeaderValue::from_str(&self.user_agent)
            .map_err(|_| Error::config(format!("invalid user agent {:?}", self.user_agent)))?;
        #[cfg(any(feature = "rustls", feature = "native-tls"))]
        if self.http_client.is_some() && !self.tls.is_empty() {
            return Err(Error::config(
                "add_root_certificate_pem and identity_pem configure the client's own HTTP client; with http_client, configure that one",
            ));
        }
        if self.http_client.is_some() && self.no_proxy {
            return Err(Error::config(
                "no_proxy configures the client's own HTTP client; with http_client, configure that one (reqwest::ClientBuilder::no_proxy)",
            ));
        }
        let http = match self.http_client {
            Some(c) => c,
            // Redirects are not followed: a redirected POST would turn into a
            // GET, and the service never redirects.
            None => {
                // Connecting ends (as a connect failure: nothing sent)
                // before the attempt's timeout can (an unknown outcome).
                let connect = self.connect_timeout.unwrap_or(Duration::from_secs(10));
                let connect = match self.timeout {
                    Some(timeout) => connect.min(timeout / 10 * 9),
                    None => connect,
                };
                let builder = reqwest::Client::builder()
                    .connect_timeout(connect)
                    .redirect(reqwest::redirect::Policy::none());
                // A loopback service is never behind the environment's
                // proxy (which would answer for it, or not at all).
                let builder = if self.no_proxy || super::proxy::is_loopback(&parsed) {
                    builder.no_proxy()
                } else {
                    builder
                };
                // rustls, named: an application's own reqwest with its
                // default features turns native-tls on, and reqwest would
                // take it, whose errors (and PEM identity) this build does
                // not know (compat/reqwest-defaults tests it).
                #[cfg(all(feature = "rustls", not(feature = "native-tls")))]
                let builder = builder.use_rustls_tls();
                #[cfg(any(feature = "rustls", feature = "native-tls"))]
                let builder = self.tls.apply(builder)?;
                builder.build().map_err(|e| {
                    Error::config(format!(
                        "cannot create the HTTP client: {}",
                        crate::error::chain(&e)
                    ))
                })?
            }
        };
        // `user:pass@` in the base URL becomes `Authorization: Basic`, as
        // reqwest does for a URL it is given; done once here, with reqwest's
        // own code, so each call starts from a URL without it.
        let probe = http.get(parsed).build().map_err(|e| {
            Error::config(format!("invalid base URL {shown:?}: {}", e.without_url()))
        })?;
        let basic_auth = probe.headers().get(reqwest::header::AUTHORIZATION).cloned();
        // Both would be `Authorization`, and one would silently replace
        // the other: refused, naming both and showing neither.
        if basic_auth.is_some()
            && credential
                .as_ref()
                .is_some_and(|c| *c.header() == reqwest::header::AUTHORIZATION)
        {
            return Err(Error::config(format!(
                "the base URL {shown:?} has user:pass@ (sent as Authorization: Basic) and an api_key is set (sent as Authorization: Bearer): only one can be sent; remove one, or send the key in another header with auth_header"
            )));
        }
        let base_url = probe.url().clone();
        Ok(Client {
            inner: Arc::new(Transport {
                http,
                base,
                base_url,
                base_path,
                basic_auth,
                credential,
                user_agent,
                timeout: self.timeout,
                deadline: self.deadline,
                retry: self.retry,
                guard: self
                    .check_answers
                    .then(|| AnswerGuard::new(self.answer_memory)),
                #[cfg(feature = "opentelemetry")]
                metrics: crate::otel::Metrics::new(),
            }),
        })
    }
}

// Extra trust and a client certificate (CONTRACT section 18): kept in
// tls.rs's options, checked there at build().
#[cfg(any(feature = "rustls", feature = "native-tls"))]
impl ClientBuilder {
    /// Also trusts the CA certificates of this PEM text (one or more
    /// `-----BEGIN CERTIFICATE-----` blocks), beside the usual roots: a
    /// sandbox's local CA, a staging service's private CA.
    ///
    /// # Examples
    ///
    /// ```
    /// use payments_client::Client;
    /// // E.g. the CA a mock made with `--tls-self-signed DIR`: DIR/ca.pem.
    /// let bad = Client::builder("https://sandbox.example")
    ///     .add_root_certificate_pem(b"not a certificate")
    ///     .build();
    /// assert!(bad.unwrap_err().to_string().contains("root certificate: not PEM"));
    /// ```
    ///
    /// # Errors
    ///
    /// [`build`](Self::build) fails with [`Error::Config`] when the text
    /// holds no PEM certificate.
    #[cfg_attr(docsrs, doc(cfg(any(feature = "rustls", feature = "native-tls"))))]
    pub fn add_root_certificate_pem(mut self, pem: impl AsRef<[u8]>) -> Self {
        self.tls.add_roots(pem.as_ref().to_vec());
        self
    }

    /// Presents this client certificate (mutual TLS): the certificate
    /// (then any intermediates) and its private key, in one PEM text (with
    /// the `native-tls` feature alone the key must be PKCS#8). The key
    /// never appears in `Debug` or an error.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use payments_client::Client;
    /// let mut identity = std::fs::read("client.pem")?;
    /// identity.extend(std::fs::read("client-key.pem")?);
    /// let client = Client::builder("https://staging.example")
    ///     .add_root_certificate_pem(std::fs::read("ca.pem")?)
    ///     .identity_pem(identity)
    ///     .build()?;
    /// assert!(!format!("{client:?}").contains("PRIVATE KEY"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`build`](Self::build) fails with [`Error::Config`] when the text
    /// is not a certificate and a key in PEM.
    #[cfg_attr(docsrs, doc(cfg(any(feature = "rustls", feature = "native-tls"))))]
    pub fn identity_pem(mut self, cert_and_key_pem: impl AsRef<[u8]>) -> Self {
        self.tls.set_identity(cert_and_key_pem.as_ref().to_vec());
        self
    }
}
