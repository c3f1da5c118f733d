//! Server options, shared by the binary's flags and the library builder
//! (COMMANDS.md, `payments-mock-server`).

use std::ops::RangeInclusive;
use std::time::Duration;

pub use crate::admin::AdminKey;
pub use crate::domain::access::ApiKey;
use crate::domain::catalog::Catalog;
pub use crate::domain::redirect::PublicUrl;
use crate::domain::settings::Given;
use crate::error::Error;
use crate::store::{Durability, StoreSpec};

/// Default of [`Config::session_lifetime`]: a working day and then some
/// (the proxy's console has the same).
pub use payments_serve::admin::DEFAULT_SESSION_LIFETIME;

/// The longest [`Config::expiry`]: 100 years of 365.25 days, as
/// `--expiry 100y` reads (an expiry is a time on the virtual clock, which
/// ends about 292 years on).
pub const MAX_EXPIRY: Duration = crate::domain::clock::MAX_SETTING;

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
    /// Admin keys (`--admin-key`, CONTRACT section 18): with one, the
    /// console, `/metrics` and every `/_mock/` route except `/_mock/health`
    /// need it (or, for reading a merchant's part, an API key bound to that
    /// merchant).
    /// Empty: the admin side is open. Each key at most once, and none
    /// also an API key (checked by [`Config::validate`]).
    pub admin_keys: Vec<AdminKey>,
    /// How long a console sign-in lasts (default 12 hours).
    pub session_lifetime: Duration,
    /// Marks the console's session cookie `Secure`: for a server that
    /// speaks TLS only.
    pub secure_cookies: bool,
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
    /// response): a slow or idle client is disconnected after it (at most
    /// an eighth of it later: the connection watches in ticks), so it
    /// cannot hold a connection task forever (default 30 seconds).
    pub header_read_timeout: Duration,
    /// How long a sandbox lives unused (`--sandbox-ttl`, default an hour;
    /// CONTRACT section 19); each request to it renews it.
    pub sandbox_ttl: Duration,
    /// At most this many sandboxes live at once (`--max-sandboxes`,
    /// default 1,000); one more is 429 `TOO_MANY_SANDBOXES`.
    pub max_sandboxes: usize,
    /// The base URL payment pages are announced under (`--public-url`,
    /// CONTRACT section 13), for a mock reached through another address
    /// than it listens on. `None`: the listening address (the binary and
    /// [`crate::MockServer`] fill it in once bound; a wildcard address
    /// becomes loopback). A server state made without either uses
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
    /// Where the mock's server spans go (`--otlp-endpoint`, feature
    /// `otlp`, CONTRACT section 21); `None`: no span is made.
    #[cfg(feature = "otlp")]
    #[cfg_attr(docsrs, doc(cfg(feature = "otlp")))]
    pub otlp_endpoint: Option<payments_serve::otlp::OtlpEndpoint>,
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
            admin_keys: Vec::new(),
            session_lifetime: DEFAULT_SESSION_LIFETIME,
            secure_cookies: false,
            catalog: Catalog::default(),
            fail_rate: 0.0,
            fault_seed: None,
            latency: None,
            rate_limit: None,
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            sandbox_ttl: crate::sandboxes::DEFAULT_SANDBOX_TTL,
            max_sandboxes: crate::sandboxes::DEFAULT_MAX_SANDBOXES,
            public_url: None,
            store: StoreSpec::Memory,
            durability: Durability::Process,
            fresh: false,
            replica_name: None,
            #[cfg(feature = "otlp")]
            otlp_endpoint: None,
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
        // The stores keep it in milliseconds: a finer one came back
        // different from what was given (and 1ns as 0, an expiry no store
        // would open with again).
        if !self.expiry.subsec_nanos().is_multiple_of(1_000_000) {
            return Err(Error::Config(
                "expiry must be a whole number of milliseconds, e.g. 1500ms".to_owned(),
            ));
        }
        if self.expiry > MAX_EXPIRY {
            return Err(Error::Config("expiry must be at most 100 years".to_owned()));
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
        if self
            .latency
            .as_ref()
            .is_some_and(|range| *range.end() > MAX_LATENCY)
        {
            return Err(Error::Config(format!(
                "latency must be at most {} ms (like X-Mock-Fault delay=)",
                MAX_LATENCY.as_millis()
            )));
        }
        if self.header_read_timeout.is_zero() {
            return Err(Error::Config(
                "header read timeout must be greater than 0".to_owned(),
            ));
        }
        if self.sandbox_ttl < Duration::from_secs(1)
            || self.sandbox_ttl > crate::sandboxes::MAX_SANDBOX_TTL
        {
            return Err(Error::Config(
                "sandbox time to live must be between 1 second and 7 days".to_owned(),
            ));
        }
        // A sandbox's `ttlSeconds` is whole seconds (the body refuses a
        // fraction): 1500ms lived 1.5 s while its sandboxes said 1.
        if self.sandbox_ttl.subsec_nanos() != 0 {
            return Err(Error::Config(
                "sandbox time to live must be a whole number of seconds, e.g. 90s".to_owned(),
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
        payments_serve::admin::check_config(
            &self.admin_keys,
            self.api_keys.iter().map(ApiKey::secret),
            self.session_lifetime,
        )
        .map_err(Error::Config)
    }

    /// The 1-based positions of the first key that repeats an earlier one
    /// (bound or not: a key names one caller), and of that earlier key.
    fn duplicate_api_keys(&self) -> Option<(usize, usize)> {
        repeated(&self.api_keys, ApiKey::secret)
    }
}

/// The 1-based positions of the first item whose secret repeats an
/// earlier one's, and of that earlier one. (Configuration, not a request:
/// an ordinary comparison.)
fn repeated<T>(items: &[T], secret: impl Fn(&T) -> &[u8]) -> Option<(usize, usize)> {
    items.iter().enumerate().find_map(|(j, later)| {
        items[..j]
            .iter()
            .position(|earlier| secret(earlier) == secret(later))
            .map(|i| (i + 1, j + 1))
    })
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

/// [`listening_url`] for a listener that speaks TLS (`https://`) or not.
pub fn listening_url_with(addr: std::net::SocketAddr, https: bool) -> PublicUrl {
    PublicUrl::of_listener_with(addr, https)
}

/// The warning for a server listening on `addr` with `config`, when it
/// has one: an admin side without an admin key on an address other
/// machines can reach (CONTRACT section 18). Loopback stays quiet.
pub fn open_admin_warning(addr: std::net::SocketAddr, config: &Config) -> Option<String> {
    // `::ffff:127.0.0.1` is loopback too (IPv4-mapped).
    (config.admin_keys.is_empty() && !addr.ip().to_canonical().is_loopback()).then(|| {
        format!(
            "listening on {addr} without --admin-key: anyone who reaches this address can read every merchant's transactions and requests, move the clock and reset everything (/_mock/ and the console /_mock/ui/); give --admin-key KEY to put them behind a key"
        )
    })
}

/// The longest `--latency`: one minute, like `X-Mock-Fault: delay=`.
pub const MAX_LATENCY: Duration = Duration::from_millis(crate::domain::rules::MAX_FAULT_DELAY_MS);

/// Parses `MS` or `MS..MS` into a latency range, each at most one minute
/// (60000 ms, as `X-Mock-Fault: delay=`).
///
/// # Errors
///
/// A message naming the problem (and the bound), quoting at most 32
/// characters of the value.
pub fn parse_latency(s: &str) -> Result<RangeInclusive<Duration>, String> {
    let cut = |t: &str| t.chars().take(32).collect::<String>();
    let ms = |t: &str| {
        t.trim()
            .parse::<u64>()
            .ok()
            .filter(|ms| u128::from(*ms) <= MAX_LATENCY.as_millis())
            .map(Duration::from_millis)
            .ok_or_else(|| {
                format!(
                    "{:?} is not a whole number of milliseconds from 0 to {}",
                    cut(t),
                    MAX_LATENCY.as_millis()
                )
            })
    };
    let (lo, hi) = match s.split_once("..") {
        Some((a, b)) => (ms(a)?, ms(b)?),
        None => {
            let v = ms(s)?;
            (v, v)
        }
    };
    if lo > hi {
        return Err(format!("{:?}: the range ends before it starts", cut(s)));
    }
    Ok(lo..=hi)
}

#[cfg(test)]
mod tests {
    use uuid::Uuid;

    use super::*;

    #[test]
    fn a_sandbox_lives_from_one_second_to_seven_days() {
        for (ttl, ok) in [
            (Duration::ZERO, false),
            (Duration::from_millis(500), false),
            (Duration::from_millis(999), false),
            (Duration::from_secs(1), true),
            (crate::sandboxes::MAX_SANDBOX_TTL, true),
            (
                crate::sandboxes::MAX_SANDBOX_TTL + Duration::from_millis(1),
                false,
            ),
        ] {
            let config = Config {
                sandbox_ttl: ttl,
                ..Config::default()
            };
            match config.validate() {
                Ok(()) => assert!(ok, "{ttl:?} accepted"),
                Err(e) => {
                    assert!(!ok, "{ttl:?} refused");
                    assert!(e.to_string().contains("between 1 second and 7 days"), "{e}");
                }
            }
        }
    }

    /// A sandbox's time to live is whole seconds, as the body's
    /// `ttlSeconds`: `--sandbox-ttl 1500ms` made sandboxes that said
    /// `"ttlSeconds":1` and lived 1.5 s.
    #[test]
    fn a_sandbox_lives_whole_seconds() {
        for (ttl, ok) in [
            (Duration::from_millis(1500), false),
            (Duration::from_secs(1) + Duration::from_nanos(1), false),
            (Duration::from_secs(90), true),
            (
                crate::sandboxes::MAX_SANDBOX_TTL - Duration::from_millis(1),
                false,
            ),
        ] {
            let config = Config {
                sandbox_ttl: ttl,
                ..Config::default()
            };
            match config.validate() {
                Ok(()) => assert!(ok, "{ttl:?} accepted"),
                Err(e) => {
                    assert!(!ok, "{ttl:?} refused");
                    assert!(matches!(e, Error::Config(_)), "{e:?}");
                    assert!(
                        e.to_string()
                            .contains("sandbox time to live must be a whole number of seconds"),
                        "{e}"
                    );
                }
            }
        }
    }

    /// The stores keep an expiry in milliseconds: a finer one, or one
    /// past the clock's reach, is refused up front (a SQLite file took
    /// 1500us as 1ms and refused its own settings; 1ns as 0, and no start
    /// opened it again).
    #[test]
    fn an_expiry_is_whole_milliseconds_up_to_100_years() {
        for (expiry, ok) in [
            (Duration::from_millis(1), true),
            (Duration::from_micros(1500), false),
            (Duration::from_nanos(1), false),
            (MAX_EXPIRY, true),
            // `--expiry 100y` (humantime's years are 365.25 days): it was
            // refused as over 100 years.
            (humantime::parse_duration("100y").expect("parses"), true),
            (MAX_EXPIRY + Duration::from_millis(1), false),
            (Duration::from_secs(u64::MAX), false),
        ] {
            let config = Config {
                expiry,
                ..Config::default()
            };
            assert_eq!(config.validate().is_ok(), ok, "{expiry:?}");
        }
    }

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
    fn admin_keys_are_each_given_once_and_are_no_api_key() {
        let admin = |k: &str| k.parse::<AdminKey>().expect("an admin key");
        let mut config = Config {
            admin_keys: vec![admin("adm_one"), admin("adm_two"), admin("adm_one")],
            ..Config::default()
        };
        let message = config.validate().expect_err("duplicate").to_string();
        assert!(
            message.contains("the same admin key is given twice (admin keys #1 and #3)"),
            "{message}"
        );
        assert!(!message.contains("adm_"), "{message}");
        assert!(
            !format!("{config:?}").contains("adm_"),
            "Debug shows no key"
        );
        config.admin_keys.truncate(2);
        assert!(config.validate().is_ok());
        config.api_keys = vec![ApiKey::new("sk_x", None), ApiKey::new("adm_two", None)];
        let message = config.validate().expect_err("shared").to_string();
        assert!(
            message.contains("admin key #2 is also API key #2"),
            "{message}"
        );
        assert!(!message.contains("adm_"), "{message}");
        config.api_keys.truncate(1);
        config.session_lifetime = Duration::ZERO;
        assert!(config.validate().is_err());
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
    fn only_an_open_admin_side_off_loopback_is_warned_about() {
        let open = Config::default();
        let keyed = Config {
            admin_keys: vec!["adm_k".parse().expect("a key")],
            ..Config::default()
        };
        let at = |a: &str| a.parse::<std::net::SocketAddr>().expect("an address");
        let warning = open_admin_warning(at("0.0.0.0:8080"), &open).expect("a warning");
        assert!(warning.contains("anyone who reaches"), "{warning}");
        assert!(open_admin_warning(at("[::]:8080"), &open).is_some());
        assert!(open_admin_warning(at("192.0.2.7:8080"), &open).is_some());
        assert!(open_admin_warning(at("127.0.0.1:8080"), &open).is_none());
        assert!(open_admin_warning(at("[::1]:8080"), &open).is_none());
        assert!(open_admin_warning(at("0.0.0.0:8080"), &keyed).is_none());
    }

    /// `--host ::ffff:127.0.0.1` is IPv4 loopback written as IPv6.
    #[test]
    fn an_ipv4_mapped_loopback_is_not_warned_about() {
        let at = |a: &str| a.parse::<std::net::SocketAddr>().expect("an address");
        let open = Config::default();
        assert!(open_admin_warning(at("[::ffff:127.0.0.1]:8080"), &open).is_none());
        assert!(open_admin_warning(at("[::ffff:127.3.0.9]:8080"), &open).is_none());
        assert!(open_admin_warning(at("[::ffff:192.0.2.7]:8080"), &open).is_some());
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

    /// `--latency` is bounded as `delay=` is (0 to 60000 ms): beyond it no
    /// request was ever answered; the message names the bound and quotes
    /// the value cut short.
    #[test]
    fn latency_is_at_most_a_minute() {
        let minute = Duration::from_millis(60_000);
        assert_eq!(parse_latency("60000"), Ok(minute..=minute));
        assert!(parse_latency("0..60000").is_ok());
        for over in ["60001", "1..60001", "99999999999999"] {
            let e = parse_latency(over).expect_err(over);
            assert!(e.contains("from 0 to 60000"), "{e}");
        }
        let long = "9".repeat(200);
        let e = parse_latency(&long).expect_err("long");
        assert!(e.len() < 100, "{e}");
        let config = Config {
            latency: Some(Duration::ZERO..=minute + Duration::from_millis(1)),
            ..Config::default()
        };
        let e = config.validate().expect_err("over a minute").to_string();
        assert!(e.contains("at most 60000 ms"), "{e}");
        let config = Config {
            latency: Some(minute..=minute),
            ..Config::default()
        };
        assert!(config.validate().is_ok());
    }
}
