//! [`MockServerBuilder`]: the options of a [`MockServer`], and its start.

use std::ops::RangeInclusive;
use std::time::Duration;

use tokio::sync::oneshot;
use uuid::Uuid;

use super::listening::Listening;
use super::real_time::RealTime;
#[cfg(feature = "tls")]
use super::tls;
use super::{Controls, MockServer, MockServerBuilder};
use crate::config::{AdminKey, ApiKey, Config};
use crate::domain::catalog::Catalog;
use crate::domain::port::STORE_TIMEOUT;
use crate::error::Error;
use crate::seed::Sighting;
use crate::state::AppState;
use crate::store::{Durability, StoreSpec};

/// How long a start on a SQLite file waits for a store of this process
/// on the same file (a server just dropped, finishing its requests) to
/// close.
#[cfg(feature = "sqlite")]
const SAME_FILE_WAIT: Duration = Duration::from_secs(5);

impl MockServerBuilder {
    /// Expiry of unconfirmed transactions (`--expiry`, default 15 minutes).
    pub fn expiry(self, expiry: Duration) -> Self {
        self.set(move |c| {
            c.expiry = expiry;
            c.given.expiry = true;
        })
    }

    /// Adds an API key, optionally bound to a merchant (`--api-key`). The
    /// same key twice makes [`MockServerBuilder::start`] fail.
    pub fn api_key(self, key: impl Into<String>, merchant: Option<Uuid>) -> Self {
        let key = ApiKey::new(key, merchant);
        self.set(move |c| c.api_keys.push(key))
    }

    /// Adds an admin key (`--admin-key`, CONTRACT section 18): the console,
    /// `/metrics` and every `/_mock/` route except `/_mock/health` then
    /// need it (an API key bound to a merchant reads that merchant's part;
    /// `/_mock/health` tells a caller without a key only `{"status":"ok"}`). The
    /// same key twice, or a key also given to [`MockServerBuilder::api_key`],
    /// makes [`MockServerBuilder::start`] fail.
    pub fn admin_key(self, key: impl Into<String>) -> Self {
        let key = AdminKey::new(key);
        self.set(move |c| c.admin_keys.push(key))
    }

    /// How long a console sign-in lasts (default 12 hours).
    pub fn session_lifetime(self, lifetime: Duration) -> Self {
        self.set(move |c| {
            c.session_lifetime = lifetime;
        })
    }

    /// The product catalogue (`--catalog`).
    pub fn catalog(self, catalog: Catalog) -> Self {
        self.set(move |c| {
            c.catalog = catalog;
            c.given.catalog = true;
        })
    }

    /// Probability 0..=1 of a random fault per `/api/` request (`--fail-rate`).
    pub fn fail_rate(self, rate: f64) -> Self {
        self.set(move |c| {
            c.fail_rate = rate;
        })
    }

    /// Seed of the fail-rate and latency draws (`--fault-seed`): the same
    /// requests then get the same faults, whatever order they arrive in.
    pub fn fault_seed(self, seed: u64) -> Self {
        self.set(move |c| {
            c.fault_seed = Some(seed);
        })
    }

    /// Added delay per `/api/` request (`--latency`).
    pub fn latency(self, range: RangeInclusive<Duration>) -> Self {
        self.set(move |c| {
            c.latency = Some(range);
        })
    }

    /// `/api/` requests per second before 429 (`--rate-limit`).
    pub fn rate_limit(self, per_second: u32) -> Self {
        self.set(move |c| {
            c.rate_limit = Some(per_second);
        })
    }

    /// How long a connection may take to send a request's headers before it
    /// is closed (default 30 seconds); tests of slow clients set it short.
    pub fn header_read_timeout(self, timeout: Duration) -> Self {
        self.set(move |c| {
            c.header_read_timeout = timeout;
        })
    }

    /// The base URL payment pages are announced under (`--public-url`),
    /// when the server is reached through another address than it listens
    /// on (a proxy, a container); by default the listening address.
    pub fn public_url(self, url: crate::PublicUrl) -> Self {
        self.set(move |c| {
            c.public_url = Some(url);
        })
    }

    /// Where state is kept (`--store`): [`StoreSpec::Memory`] (the
    /// default), a SQLite file or a PostgreSQL URL, so a test can start a
    /// mock on a database. Parse one from text with `"sqlite:mock.db".parse()`.
    ///
    /// On a paused clock (`#[tokio::test(start_paused = true)]`) the start
    /// measures the store's limits in real time (the clock stands still
    /// meanwhile). Once started, a request that writes to a SQLite store
    /// waits for its writer thread on Tokio's timer: the paused clock may
    /// jump past the 4 s limit at once, and the request is answered `503`
    /// ("SQLite did not commit within 4 s"). Test writes to a SQLite store
    /// on a real clock.
    pub fn store(self, store: StoreSpec) -> Self {
        self.set(move |c| {
            c.store = store;
        })
    }

    /// What a SQLite store's commits survive (`--durability`).
    pub fn durability(self, durability: Durability) -> Self {
        self.set(move |c| {
            c.durability = durability;
        })
    }

    /// Empty the store before serving (`--fresh`).
    pub fn fresh(self, fresh: bool) -> Self {
        self.set(move |c| {
            c.fresh = fresh;
        })
    }

    /// Export a server span per request to this OTLP/HTTP receiver
    /// (`--otlp-endpoint`, feature `otlp`, CONTRACT section 21), batched;
    /// [`MockServer::shutdown`] sends the last batch.
    #[cfg(feature = "otlp")]
    #[cfg_attr(docsrs, doc(cfg(feature = "otlp")))]
    pub fn otlp_endpoint(self, endpoint: payments_serve::otlp::OtlpEndpoint) -> Self {
        self.set(move |c| {
            c.otlp_endpoint = Some(endpoint);
        })
    }

    /// This server's name in the journal (`--replica-name`); by default
    /// `HOST:PORT` as it listens.
    pub fn replica_name(self, name: impl Into<String>) -> Self {
        let name = name.into();
        self.set(move |c| c.replica_name = Some(name))
    }

    /// Serve on this listener instead of binding `127.0.0.1:0`.
    ///
    /// A dropped server leaves a listener given here as it is (one it
    /// bound itself it shuts down at once, see [`MockServer`]): its task
    /// stops accepting and closes its descriptor once it next runs, and
    /// another descriptor of the socket (a `try_clone` the caller kept for
    /// the next server, or for its own `accept`) still listens. New
    /// connects then wait in that socket's backlog for whoever accepts
    /// next; one that came in the instant the stopping server took its
    /// last look at the backlog may be served by it (its whole request
    /// already there) or closed unanswered.
    pub fn listener(mut self, listener: std::net::TcpListener) -> Self {
        self.listener = Some(listener);
        self
    }

    /// How long a sandbox lives unused (`--sandbox-ttl`, default an
    /// hour; whole seconds, 1 s to 7 days, else
    /// [`MockServerBuilder::start`] fails): each request to it renews it.
    pub fn sandbox_ttl(self, ttl: Duration) -> Self {
        self.set(move |c| c.sandbox_ttl = ttl)
    }

    /// At most this many sandboxes live at once (`--max-sandboxes`,
    /// default [`crate::DEFAULT_MAX_SANDBOXES`]): one more is
    /// [`crate::SandboxError::TooMany`] (HTTP: 429 `TOO_MANY_SANDBOXES`).
    pub fn max_sandboxes(self, max: usize) -> Self {
        self.set(move |c| c.max_sandboxes = max)
    }

    /// Start with these transactions placed, each in the last state seen
    /// (`--seed-from FILE`, which reads them from a proxy recording; see
    /// [`crate::seed`]), before the first request is served. Adds to what
    /// an earlier call gave.
    pub fn seed(mut self, sightings: impl IntoIterator<Item = Sighting>) -> Self {
        self.sightings.extend(sightings);
        self
    }

    /// The whole configuration at once, as the base every other setter
    /// applies on top of, whichever is called first: settings made before
    /// it are kept (`builder().api_key("k", None).config(config)` starts
    /// with authentication on). A second call replaces the first's base.
    pub fn config(mut self, config: Config) -> Self {
        self.config = config;
        self
    }

    fn set(mut self, setting: impl FnOnce(&mut Config) + Send + Sync + 'static) -> Self {
        self.settings.push(Box::new(setting));
        self
    }

    /// Binds (unless given a listener) and starts serving in the background.
    ///
    /// On a SQLite file a server of this process had open (one just
    /// dropped, finishing its requests in flight), under this name or
    /// another (a symbolic or, on Unix, a hard link), it first waits up to
    /// 5 seconds (of real time, on a paused clock too) for that store to
    /// close.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for an option out of range, [`Error::Bind`] when
    /// the listener cannot be bound or used; for a store, the errors of
    /// [`Service::open`](crate::Service::open); [`Error::Store`] when
    /// placing the [`MockServerBuilder::seed`] transactions failed.
    pub async fn start(self) -> Result<MockServer, Error> {
        let mut config = self.config;
        for setting in self.settings {
            setting(&mut config);
        }
        config.validate()?;
        // A listener the caller supplied is left as it is at the drop: the
        // caller may hold other descriptors of its socket (a clone for the
        // next server, its own accept), which a shutdown would stop too.
        let (std_listener, bound_here) = match self.listener {
            Some(l) => (l, false),
            None => (
                std::net::TcpListener::bind("127.0.0.1:0").map_err(|source| Error::Bind {
                    addr: "127.0.0.1:0".to_owned(),
                    source,
                })?,
                true,
            ),
        };
        let bind_error = |source| Error::Bind {
            addr: "the given listener".to_owned(),
            source,
        };
        std_listener.set_nonblocking(true).map_err(bind_error)?;
        let addr = std_listener.local_addr().map_err(bind_error)?;
        let listening = if bound_here {
            Listening::of(&std_listener)
        } else {
            Listening::default()
        };
        let listener = tokio::net::TcpListener::from_std(std_listener).map_err(bind_error)?;
        let header_read_timeout = config.header_read_timeout;
        let random_seed =
            config.fault_seed.is_none() && (config.fail_rate > 0.0 || config.latency.is_some());
        #[cfg(feature = "tls")]
        let tls = self.tls.build()?;
        #[cfg(feature = "tls")]
        let https = self.tls.is_on();
        #[cfg(not(feature = "tls"))]
        let https = false;
        config.secure_cookies |= https;
        if let Some(warning) = crate::config::open_admin_warning(addr, &config) {
            tracing::warn!(listening = %addr, "{warning}");
        }
        config
            .public_url
            .get_or_insert_with(|| crate::config::listening_url_with(addr, https));
        config.replica_name.get_or_insert_with(|| addr.to_string());
        #[cfg(feature = "otlp")]
        let endpoint = config.otlp_endpoint.clone();
        #[cfg(feature = "sqlite")]
        let sqlite = match &config.store {
            StoreSpec::Sqlite(path) => {
                // Not closed in time: the open below is refused.
                let _real_time = RealTime::hold(SAME_FILE_WAIT);
                crate::store::SqliteStore::closed_here(path, SAME_FILE_WAIT).await;
                Some(path.clone())
            }
            _ => None,
        };
        // Its limits in real time, on a paused clock too (a store's
        // commits wait for threads of its own).
        let threaded = !matches!(config.store, StoreSpec::Memory);
        let real_time = threaded.then(|| RealTime::hold(STORE_TIMEOUT));
        let state = match AppState::open(config).await {
            Ok(state) => state,
            #[cfg(feature = "sqlite")]
            Err(Error::StoreOpen { store, .. })
                if sqlite
                    .as_deref()
                    .is_some_and(crate::store::SqliteStore::open_here) =>
            {
                return Err(Error::StoreOpen {
                    store,
                    reason: format!(
                        "the file is held by this process (pid {}): another MockServer (or a Sandbox of one, or a Service) on this file is still open; await its `shutdown()` first (a dropped one closes its store once its requests in flight are answered; this start waited {} s)",
                        std::process::id(),
                        SAME_FILE_WAIT.as_secs()
                    ),
                });
            }
            Err(e) => return Err(e),
        };
        drop(real_time);
        if !self.sightings.is_empty() {
            let _real_time = threaded.then(|| RealTime::hold(STORE_TIMEOUT));
            crate::seed::seed(&state.store, self.sightings, state.expiry)
                .await
                .map_err(|e| Error::Store {
                    store: state.store.shown(),
                    reason: e.reason().to_owned(),
                })?;
        }
        #[cfg(feature = "otlp")]
        let spans = crate::http::server::export_spans(endpoint.as_ref(), &state)?;
        #[cfg(not(feature = "otlp"))]
        let spans = crate::http::server::NoSpans;
        if random_seed {
            let seed = state.faults.seed();
            tracing::info!(
                // A string: an f64 reader would round it (above 2^53).
                fault_seed = %seed,
                "fault seed {seed} (random; call fault_seed({seed}) to repeat this run's faults)"
            );
        }
        let scheme = if https { "https" } else { "http" };
        tracing::debug!("web console at {scheme}://{addr}/_mock/ui/");
        let (stop, stopped) = oneshot::channel::<()>();
        let stopped = async move {
            let _ = stopped.await;
        };
        // The duplicate goes with the task, however it ends.
        let released = listening.released_with_task();
        #[cfg(feature = "tls")]
        let (serving, tls) = match tls {
            Some((server_tls, started)) => (
                futures_util::future::Either::Left(crate::http::server::serve_spanned_tls(
                    listener,
                    state.clone(),
                    server_tls,
                    header_read_timeout,
                    spans.clone(),
                    || {},
                    stopped,
                )),
                started,
            ),
            None => (
                futures_util::future::Either::Right(crate::http::server::serve_spanned(
                    listener,
                    state.clone(),
                    header_read_timeout,
                    spans.clone(),
                    || {},
                    stopped,
                )),
                tls::Started::default(),
            ),
        };
        #[cfg(not(feature = "tls"))]
        let serving = crate::http::server::serve_spanned(
            listener,
            state.clone(),
            header_read_timeout,
            spans.clone(),
            || {},
            stopped,
        );
        let task = tokio::spawn(async move {
            let _released = released;
            serving.await;
        });
        Ok(MockServer {
            addr,
            https,
            #[cfg(feature = "tls")]
            tls,
            controls: Controls::new(state, format!("{scheme}://{addr}")),
            listening,
            stop: Some(stop),
            task: Some(task),
            #[cfg(feature = "otlp")]
            spans,
        })
    }
}
