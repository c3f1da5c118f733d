//! The shared state handlers see: store, clock, catalogue, auth, faults and
//! journal of one server.

use std::sync::Arc;
use std::time::Duration;

use crate::auth::Auth;
use crate::catalog::Catalog;
use crate::clock::Clock;
use crate::config::Config;
use crate::faults::Faults;
use crate::journal::Journal;
use crate::store::Store;

/// Cheap to clone: one `Arc`.
#[derive(Debug, Clone)]
pub struct AppState {
    inner: Arc<Shared>,
}

/// The parts of [`AppState`].
#[derive(Debug)]
#[non_exhaustive]
pub struct Shared {
    /// Transactions.
    pub store: Store,
    /// Virtual time.
    pub clock: Clock,
    /// Products.
    pub catalog: Catalog,
    /// Expiry of unconfirmed transactions.
    pub expiry: Duration,
    /// API keys.
    pub auth: Auth,
    /// Fault sources.
    pub faults: Faults,
    /// Request journal.
    pub journal: Journal,
    /// Base URL of payment pages (CONTRACT section 13).
    pub public_url: url::Url,
}

impl AppState {
    /// State for a server with this configuration (assumed validated).
    pub fn new(config: Config) -> Self {
        Self {
            inner: Arc::new(Shared {
                store: Store::new(),
                clock: Clock::new(),
                auth: Auth::new(config.api_keys),
                faults: Faults::new(
                    config.fail_rate,
                    config.fault_seed,
                    config.latency,
                    config.rate_limit,
                ),
                catalog: config.catalog,
                expiry: config.expiry,
                journal: Journal::default(),
                public_url: config.public_url.unwrap_or_else(|| {
                    url::Url::parse("http://localhost").expect("a constant URL")
                }),
            }),
        }
    }

    /// `POST /_mock/reset`: no transactions, no journal, no queued faults,
    /// real time.
    pub fn reset(&self) {
        self.store.clear();
        self.journal.clear();
        self.faults.clear();
        self.clock.reset();
    }
}

impl Default for AppState {
    fn default() -> Self {
        Self::new(Config::default())
    }
}

impl std::ops::Deref for AppState {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.inner
    }
}
