//! Server options, shared by the binary's flags and the library builder
//! (COMMANDS.md, `payments-mock-server`).

use std::ops::RangeInclusive;
use std::time::Duration;

pub use crate::domain::access::ApiKey;
use crate::domain::catalog::Catalog;
pub use crate::domain::redirect::PublicUrl;
use crate::domain::settings::Given;
use crate::error::Error;
use crate::store::{Durability, StoreSpec};

/// Default of [`Config::header_read_timeout`]: 30 seconds.
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = payments_serve::DEFAULT_HEADER_READ_TIMEOUT;

/// Everything that shapes a server's behaviour.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Config {
    /// Unconfirmed transactions expire after this (default 15 minutes).
    pub expiry: Duration,
    /// Authentication is on when this is not empty. Each key at most once
    /// (checked by [`Config::validate`]).
    pub api_keys: Vec<ApiKey>,
    /// The products offered.
    pub catalog: Catalog,
    /// Probability 0..=1 that an `/api/` request gets a random fault.
    pub fail_rate: f64,
    /// Seed of the fail-rate and latency draws; `None` picks a random one
    /// at start (logged, and given by [`crate::MockServer::fault_seed`]).
    /// Each request's draw derives from the seed and the request itself,
    /// so the same requests get the same faults in any arrival order.
    pub fault_seed: Option<u64>,
    /// Added delay per `/api/` request, uniformly in the range.
    pub latency: Option<RangeInclusive<Duration>>,
    /// `/api/` requests per second before 429.
    pub rate_limit: Option<u32>,
    /// How long a connection may take to send a request's headers, from
    /// the moment it is ready for one (connect, or the end of the previous
    /// response): a slow or idle client is disconnected after it, so it
    /// cannot hold a connection task forever (default 30 seconds).
    pub header_read_timeout: Duration,
    /// The base URL payment pages are announced under (`--public-url`,
    /// CONTRACT section 13), for a mock reached through another address
    /// than it listens on. `None`: the listening address (the binary and
    /// [`crate::MockServer`] fill it in once bound; a wildcard address
    /// becomes loopback). An [`crate::state::AppState`] made without either uses
    /// `http://localhost`.
    pub public_url: Option<PublicUrl>,
    /// Where state is kept (`--store`, CONTRACT section 15); memory by
    /// default.
    pub store: StoreSpec,
    /// SQLite only: what a commit survives (`--durability`).
    pub durability: Durability,
    /// Empty the store before serving (`--fresh`).
    pub fresh: bool,
    /// This process's name in the journal (`--replica-name`); `None`: the
    /// listening `HOST:PORT` (the binary and [`crate::MockServer`] fill it
    /// in once bound).
    pub replica_name: Option<String>,
    /// Which of `catalog` and `expiry` this start chose itself: a store
    /// that already holds settings serves its own for the others, and
    /// refuses chosen ones that differ (CONTRACT section 15).
    pub given: Given,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            expiry: Duration::from_secs(15 * 60),
            api_keys: Vec::new(),
            catalog: Catalog::default(),
            fail_rate: 0.0,
            fault_seed: None,
            latency: None,
            rate_limit: None,
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            public_url: None,
            store: StoreSpec::Memory,
            durability: Durability::Process,
            fresh: false,
            replica_name: None,
            given: Given::default(),
        }
    }
}

impl Config {
    /// Checks ranges that the types do not.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] naming the option.
    pub fn validate(&self) -> Result<(), Error> {
        if !(0.0..=1.0).contains(&self.fail_rate) {
            return Err(Error::Config(format!(
                "fail rate {} is not between 0 and 1",
                self.fail_rate
            )));
        }
        if self.expiry.is_zero() {
            return Err(Error::Config("expiry must be greater than 0".to_owned()));
        }
        if self
            .latency
            .as_ref()
            .is_some_and(|range| range.start() > range.end())
        {
            return Err(Error::Config(
                "latency range must not end before it starts".to_owned(),
            ));
        }
        if self.header_read_timeout.is_zero() {
            return Err(Error::Config(
                "header read timeout must be greater than 0".to_owned(),
            ));
        }
        if self.rate_limit == Some(0) {
            return Err(Error::Config("rate limit must be at least 1".to_owned()));
        }
        if self.durability != Durability::Process && !matches!(self.store, StoreSpec::Sqlite(_)) {
            return Err(Error::Config(
                "--durability applies to a sqlite: store only".to_owned(),
            ));
        }
        if let Some(name) = &self.replica_name {
            check_replica_name(name).map_err(Error::Config)?;
        }
        if let Some((first, second)) = self.duplicate_api_keys() {
            // Positions only: neither key value may reach a log.
            return Err(Error::Config(format!(
                "the same API key is given twice (keys #{first} and #{second})"
            )));
        }
        Ok(())
    }

    /// The 1-based positions of the first key that repeats an earlier one
    /// (bound or not: a key names one caller), and of that earlier key.
    fn duplicate_api_keys(&self) -> Option<(usize, usize)> {
        self.api_keys.iter().enumerate().find_map(|(j, later)| {
            self.api_keys[..j]
                .iter()
                .position(|earlier| earlier.key == later.key)
                .map(|i| (i + 1, j + 1))
        })
    }
}

/// Checks a replica name: 1 to 64 characters, no control characters (it is
/// shown in the journal, the console and logs).
///
/// # Errors
///
/// A message naming the problem.
pub fn check_replica_name(name: &str) -> Result<(), String> {
    let length = name.chars().count();
    if !(1..=64).contains(&length) || name.trim() != name {
        return Err(
            "a replica name is 1 to 64 characters without leading or trailing spaces".to_owned(),
        );
    }
    if name.chars().any(char::is_control) {
        return Err("a replica name must not contain control characters".to_owned());
    }
    Ok(())
}

/// The public base URL for a server listening on `addr` (CONTRACT section
/// 13: by default the listening address). A wildcard address (`0.0.0.0`,
/// `::`) is not one a browser can open, so it becomes loopback.
pub fn listening_url(addr: std::net::SocketAddr) -> PublicUrl {
    PublicUrl::of_listener(addr)
}

/// Parses `MS` or `MS..MS` into a latency range.
///
/// # Errors
///
/// A message naming the problem.
pub fn parse_latency(s: &str) -> Result<RangeInclusive<Duration>, String> {
    let ms = |t: &str| {
        t.trim()
            .parse::<u64>()
            .map(Duration::from_millis)
            .map_err(|_| format!("{t:?} is not a whole number of milliseconds"))
    };
    let (lo, hi) = match s.split_once("..") {
        Some((a, b)) => (ms(a)?, ms(b)?),
        None => {
            let v = ms(s)?;
            (v, v)
        }
    };
    if lo > hi {
        return Err(format!("{s:?}: the range ends before it starts"));
    }
    Ok(lo..=hi)
}

#[cfg(test)]
mod tests {
    use uuid::Uuid;

    use super::*;

    #[test]
    fn keys_parse_with_and_without_merchant() {
        let k: ApiKey = "sk_test".parse().expect("plain key");
        assert_eq!(k.merchant(), None);
        let k: ApiKey = "sk=6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60"
            .parse()
            .expect("bound");
        assert!(k.merchant().is_some());
        assert!("sk=nope".parse::<ApiKey>().is_err());
        assert!(!format!("{k:?}").contains("sk"));
    }

    #[test]
    fn a_repeated_key_is_a_configuration_error_naming_positions_only() {
        let m = Uuid::from_u128(9);
        let mut config = Config {
            api_keys: vec![
                ApiKey::new("sk_alpha", Some(m)),
                ApiKey::new("sk_beta", None),
                ApiKey::new("sk_alpha", None),
                ApiKey::new("sk_beta", None),
            ],
            ..Config::default()
        };
        let message = config.validate().expect_err("duplicate").to_string();
        assert!(
            message.contains("the same API key is given twice (keys #1 and #3)"),
            "{message}"
        );
        assert!(!message.contains("sk_"), "{message}");
        config.api_keys.truncate(2);
        assert!(config.validate().is_ok());
    }

    #[test]
    fn the_listening_url_is_one_a_browser_can_open() {
        let url = |a: &str| listening_url(a.parse().expect("an address")).to_string();
        assert_eq!(url("127.0.0.1:8080"), "http://127.0.0.1:8080/");
        assert_eq!(url("0.0.0.0:8080"), "http://127.0.0.1:8080/");
        assert_eq!(url("[::]:9"), "http://[::1]:9/");
        assert_eq!(url("[::1]:9"), "http://[::1]:9/");
    }

    #[test]
    fn a_public_url_must_be_http_without_query_or_credentials() {
        let config = |u: &str| -> Result<Config, String> {
            Ok(Config {
                public_url: Some(u.parse::<PublicUrl>()?),
                ..Config::default()
            })
        };
        assert!(config("https://dev.example/mock").map(|c| c.validate().is_ok()) == Ok(true));
        let e = config("https://user:pw@dev.example").expect_err("credentials");
        assert!(!e.contains("pw"), "{e}");
        assert!(config("ftp://dev.example").is_err());
    }

    #[test]
    fn latency_parses() {
        assert_eq!(
            parse_latency("5"),
            Ok(Duration::from_millis(5)..=Duration::from_millis(5))
        );
        assert!(parse_latency("9..1").is_err());
        assert!(parse_latency("x").is_err());
    }
}
