//! The config file as written: its profiles, reading it, and picking one.

use std::{
    collections::BTreeMap,
    fmt,
    path::{Path, PathBuf},
    time::Duration,
};

use secrecy::SecretString;
use serde::Deserialize;
use uuid::Uuid;

use super::{
    DEFAULT_PROFILE,
    fields::{seconds, secret, unquoted},
    location::default_path,
    read::line_of,
};
use crate::{cli::OutputFormat, error::ConfigError};

/// The config file as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// The profile used when neither `--profile` nor `PAYMENTS_PROFILE` names one.
    pub default_profile: Option<String>,
    /// Profiles by name.
    #[serde(default)]
    pub profiles: BTreeMap<String, Profile>,
}

/// One profile: every field optional.
#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    pub base_url: Option<String>,
    #[serde(default, deserialize_with = "secret")]
    pub api_key: Option<SecretString>,
    pub merchant_id: Option<Uuid>,
    pub output: Option<OutputFormat>,
    /// Seconds, per attempt, a whole number or with a fraction (`1.5`), as
    /// `--timeout` takes them. Zero is refused when the file is read:
    /// every attempt would time out.
    #[serde(default, deserialize_with = "seconds")]
    pub timeout: Option<Duration>,
    pub retries: Option<u32>,
    /// Also trust this CA (PEM file).
    pub ca_cert: Option<PathBuf>,
    /// Client certificate (PEM file), for mutual TLS.
    pub client_cert: Option<PathBuf>,
    /// Its private key (PEM file): a path, not a secret itself.
    pub client_key: Option<PathBuf>,
}

impl fmt::Debug for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Profile")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "[REDACTED]"))
            .field("merchant_id", &self.merchant_id)
            .field("output", &self.output)
            .field("timeout", &self.timeout)
            .field("retries", &self.retries)
            .field("ca_cert", &self.ca_cert)
            .field("client_cert", &self.client_cert)
            .field("client_key", &self.client_key)
            .finish()
    }
}

impl ConfigFile {
    /// Parses the text of a config file; `path` only names it in errors.
    ///
    /// # Errors
    ///
    /// Invalid TOML, unknown keys or wrongly typed values, with the line.
    pub fn parse(text: &str, path: &Path) -> Result<Self, ConfigError> {
        toml::from_str(text).map_err(|err| ConfigError::Malformed {
            path: path.to_owned(),
            line: err.span().map_or(1, |span| line_of(text, span.start)),
            message: unquoted(err.message().trim_end_matches('\n')),
        })
    }

    /// Reads `explicit`, or the default file when it exists.
    ///
    /// Returns the path looked at (none when there is no default location:
    /// [`default_path`]), the file (none when the default file does not
    /// exist, or there is no default location), and a warning to print when
    /// the file holds an API key that other users can read or change.
    ///
    /// # Errors
    ///
    /// The file cannot be read (or an explicit one does not exist), it is
    /// larger than [`crate::error::MAX_CONFIG_BYTES`], not UTF-8, or malformed.
    pub fn load(explicit: Option<&Path>) -> Result<Loaded, ConfigError> {
        let (path, must_exist) = match explicit {
            Some(path) => (path.to_owned(), true),
            None => match default_path() {
                Some(path) => (path, false),
                None => return Ok(Loaded::default()),
            },
        };
        let Some(read) = super::read::read(&path, must_exist)? else {
            return Ok(Loaded {
                path: Some(path),
                ..Loaded::default()
            });
        };
        let file = Self::parse(&read.text, &path)?;
        let holds_a_key = file.profiles.values().any(|p| p.api_key.is_some());
        let warning = read
            .open_mode
            .filter(|_| holds_a_key)
            .map(|mode| super::read::open_to_others(&path, mode));
        Ok(Loaded {
            path: Some(path),
            file: Some(file),
            warning,
        })
    }

    /// The profile only, for the tests: [`ConfigFile::choose`].
    #[cfg(test)]
    pub fn select(
        self,
        requested: Option<&str>,
        path: &Path,
    ) -> Result<Option<Profile>, ConfigError> {
        self.choose(requested, path).map(|chosen| match chosen {
            Chosen::Profile(profile, _) => Some(*profile),
            Chosen::None { .. } => None,
        })
    }

    /// Picks the profile: `requested` (flag or env), else `default_profile`,
    /// else `default` when it exists, else none; with none, the names of
    /// the profiles the file has (so a missing setting can say how to pick
    /// one instead of "add it to a profile").
    ///
    /// # Errors
    ///
    /// A profile named by the user or by `default_profile` that the file lacks.
    pub(super) fn choose(
        mut self,
        requested: Option<&str>,
        path: &Path,
    ) -> Result<Chosen, ConfigError> {
        let name = match requested.or(self.default_profile.as_deref()) {
            Some(name) => name.to_owned(),
            None => {
                return Ok(match self.profiles.remove(DEFAULT_PROFILE) {
                    Some(profile) => Chosen::Profile(Box::new(profile), DEFAULT_PROFILE.to_owned()),
                    None => Chosen::None {
                        unselected: self.profiles.into_keys().collect(),
                    },
                });
            }
        };
        match self.profiles.remove(&name) {
            Some(profile) => Ok(Chosen::Profile(Box::new(profile), name)),
            None => Err(ConfigError::UnknownProfile {
                name,
                path: path.to_owned(),
                known: self.profiles.into_keys().collect(),
                from_default_profile: requested.is_none(),
            }),
        }
    }
}

/// What [`ConfigFile::load`] found.
#[derive(Debug, Default)]
pub struct Loaded {
    /// The file looked at: `--config`, or the default one (which may not
    /// exist); none when there is no default location.
    pub path: Option<PathBuf>,
    /// The file; none when the default file does not exist (or there is
    /// none).
    pub file: Option<ConfigFile>,
    /// `warning: …` to print: the file holds an API key and is open to
    /// other users.
    pub warning: Option<String>,
}

/// What [`ConfigFile::choose`] found.
pub(super) enum Chosen {
    /// The profile and its name.
    Profile(Box<Profile>, String),
    /// No profile named and none called `default`; the file's profiles.
    None { unselected: Vec<String> },
}
