//! What `--store` (and `PAYMENTS_MOCK_STORE`) names: `memory`,
//! `sqlite:PATH` or `postgres://…` (CONTRACT section 15), parsed once into
//! a [`StoreSpec`] that never shows a password.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

/// Where a server keeps its state.
#[derive(Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreSpec {
    /// In the process; nothing survives it (the default).
    #[default]
    Memory,
    /// A SQLite file, created if missing, owned by one process.
    Sqlite(PathBuf),
    /// A PostgreSQL database shared by any number of replicas. The URL may
    /// hold a password: it is shown as `***` everywhere.
    Postgres(PostgresUrl),
}

/// A `postgres://` or `postgresql://` URL, kept whole for connecting and
/// shown only without its password.
#[derive(Clone, PartialEq, Eq)]
pub struct PostgresUrl {
    url: String,
    shown: String,
}

impl PostgresUrl {
    /// The URL to connect with, password included: never print it.
    #[cfg(feature = "postgres")]
    pub(crate) fn secret(&self) -> &str {
        &self.url
    }
}

impl fmt::Display for PostgresUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shown)
    }
}

impl fmt::Debug for PostgresUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("PostgresUrl").field(&self.shown).finish()
    }
}

/// `url` with the password (in the user part or a `password` query
/// parameter) replaced by `***`.
#[cfg(feature = "postgres")]
fn redacted(url: &url::Url) -> String {
    let mut shown = url.clone();
    if shown.password().is_some() {
        let _ = shown.set_password(Some("***"));
    }
    if shown.query().is_some() {
        let pairs: Vec<(String, String)> = shown
            .query_pairs()
            .map(|(k, v)| {
                let v = if k.eq_ignore_ascii_case("password") {
                    "***".to_owned()
                } else {
                    v.into_owned()
                };
                (k.into_owned(), v)
            })
            .collect();
        shown.query_pairs_mut().clear().extend_pairs(pairs);
    }
    shown.to_string().replace("%2A%2A%2A", "***")
}

impl FromStr for StoreSpec {
    type Err = String;

    /// `memory`, `sqlite:PATH` or `postgres://…` / `postgresql://…`.
    ///
    /// The error never repeats the value past its scheme: a mistyped URL
    /// may still hold a password.
    fn from_str(text: &str) -> Result<Self, String> {
        if text == "memory" {
            return Ok(Self::Memory);
        }
        if let Some(path) = text.strip_prefix("sqlite:") {
            if path.is_empty() {
                return Err("sqlite: needs a file: sqlite:PATH, e.g. sqlite:mock.db".to_owned());
            }
            if path.contains('\0') {
                return Err("the sqlite: path must not contain a NUL byte".to_owned());
            }
            return Ok(Self::Sqlite(PathBuf::from(path)));
        }
        let scheme = text.split_once(':').map(|(s, _)| s);
        #[cfg(not(feature = "postgres"))]
        if matches!(scheme, Some("postgres" | "postgresql")) {
            return Err(
                "a postgres:// store needs a payments-mock-server built with the feature postgres"
                    .to_owned(),
            );
        }
        #[cfg(feature = "postgres")]
        if matches!(scheme, Some("postgres" | "postgresql")) {
            let url = url::Url::parse(text).map_err(|e| {
                format!(
                    "the PostgreSQL URL is malformed ({e}); it is not shown, it may hold a password"
                )
            })?;
            text.parse::<tokio_postgres::Config>().map_err(|_| {
                "the PostgreSQL URL is not one PostgreSQL accepts (not shown: it may hold a password)"
                    .to_owned()
            })?;
            return Ok(Self::Postgres(PostgresUrl {
                url: text.to_owned(),
                shown: redacted(&url),
            }));
        }
        let what = match scheme {
            Some(s)
                if !s.is_empty()
                    && s.len() <= 16
                    && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'+') =>
            {
                format!("unknown store scheme {s:?}")
            }
            _ if text.is_empty() => "an empty store".to_owned(),
            _ => "unknown store".to_owned(),
        };
        Err(format!(
            "{what}: use memory, sqlite:PATH or postgres://USER:PASSWORD@HOST:PORT/DATABASE"
        ))
    }
}

impl fmt::Display for StoreSpec {
    /// How logs and the console name the store: the password as `***`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Memory => f.write_str("memory"),
            Self::Sqlite(path) => write!(f, "sqlite:{}", path.display()),
            Self::Postgres(url) => url.fmt(f),
        }
    }
}

impl fmt::Debug for StoreSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "StoreSpec({self})")
    }
}

/// How much a SQLite store survives (`--durability`, CONTRACT section 15).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Durability {
    /// The process dying (`kill -9`): WAL with `synchronous=NORMAL`.
    #[default]
    Process,
    /// Also the machine losing power: `synchronous=FULL`, an fsync per
    /// (grouped) commit.
    Power,
}

impl FromStr for Durability {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "process" => Ok(Self::Process),
            "power" => Ok(Self::Power),
            _ => Err("durability is process or power".to_owned()),
        }
    }
}

impl fmt::Display for Durability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Process => "process",
            Self::Power => "power",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_three_stores_parse() {
        assert_eq!("memory".parse(), Ok(StoreSpec::Memory));
        assert_eq!(
            "sqlite:/tmp/a b.db".parse(),
            Ok(StoreSpec::Sqlite(PathBuf::from("/tmp/a b.db")))
        );
        let url = "postgresql://mock:s3cret@127.0.0.1:5433/db?password=s3cret&sslmode=disable";
        if cfg!(not(feature = "postgres")) {
            let refused = url.parse::<StoreSpec>().expect_err("needs the feature");
            assert!(refused.contains("feature postgres") && !refused.contains("s3cret"));
            return;
        }
        let pg: StoreSpec = url.parse().expect("a URL");
        let shown = pg.to_string();
        assert!(!shown.contains("s3cret"), "{shown}");
        assert!(!format!("{pg:?}").contains("s3cret"));
        assert_eq!(
            shown,
            "postgresql://mock:***@127.0.0.1:5433/db?password=***&sslmode=disable"
        );
    }

    #[test]
    fn bad_values_are_refused_without_repeating_them() {
        for (value, says) in [
            ("", "an empty store"),
            ("sqlite:", "needs a file"),
            ("mysql://u:hunter2@h/db", "unknown store scheme \"mysql\""),
            ("Memory", "unknown store"),
            ("hunter2", "unknown store"),
            (
                "postgres://u:hunter2@[::1",
                if cfg!(feature = "postgres") {
                    "malformed"
                } else {
                    "feature postgres"
                },
            ),
            ("sqlite:a\0b", "NUL"),
        ] {
            let e = value.parse::<StoreSpec>().expect_err(value);
            assert!(e.contains(says), "{value}: {e}");
            assert!(!e.contains("hunter2"), "{e}");
        }
    }
}
