//! The config file and the one conversion from raw arguments to settings.
//!
//! The file is TOML at `$XDG_CONFIG_HOME/payments/config.toml` (else
//! `$HOME/.config/payments/config.toml`) or `--config PATH`:
//!
//! ```toml
//! default_profile = "staging"
//!
//! [profiles.staging]
//! base_url = "https://payments.staging.example.com"
//! api_key = "sk_test_..."
//! merchant_id = "4f1c6a2e-0b7d-4c1e-9a53-2f8e6d1b7c90"
//! output = "table"
//! timeout = 10
//! retries = 3
//! # mutual TLS, or a private CA (CONTRACT section 18)
//! ca_cert = "/etc/payments/ca.pem"            # relative: beside this file
//! client_cert = "/etc/payments/client.pem"
//! client_key = "/etc/payments/client-key.pem"
//! ```
//!
//! A flag beats the environment (clap applies `env = ...`), which beats the
//! profile. A missing file at the default location is fine, and so is no
//! default location at all (neither `XDG_CONFIG_HOME` nor `HOME` set, as for
//! a uid without a passwd entry under `env -i`): there is no file then. A
//! missing file named with `--config`, a malformed file or an unknown
//! profile is an error that names the file (a profile asked for where there
//! is no default location says that).

use std::{
    collections::BTreeMap,
    fmt,
    io::IsTerminal,
    path::{Path, PathBuf},
    time::Duration,
};

use secrecy::SecretString;
use serde::Deserialize;
use uuid::Uuid;

use crate::{
    cli::{ApiKey, GlobalArgs, OutputFormat},
    error::{CliError, ConfigError},
};

/// Per-attempt timeout when neither a flag nor the profile gives one.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// Retries when neither a flag nor the profile gives a number.
pub const DEFAULT_RETRIES: u32 = 2;
/// The profile used when none is named and the file has no `default_profile`.
pub const DEFAULT_PROFILE: &str = "default";

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

/// A key: a string, or an error that does not repeat the value (serde's
/// "invalid type: integer `123…`" would print an unquoted key).
fn secret<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<SecretString>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Key {
        Text(String),
        Other(serde::de::IgnoredAny),
    }
    match Option::<Key>::deserialize(d)? {
        Some(Key::Text(key)) => Ok(Some(SecretString::from(key))),
        Some(Key::Other(_)) => Err(serde::de::Error::custom(
            "api_key must be a quoted string, e.g. api_key = \"sk_...\" (its value is not shown)",
        )),
        None => Ok(None),
    }
}

/// serde's message without the string it quotes: a string where a table
/// or a number belongs may be a key put in the wrong place (`[profiles]`
/// then `api_key = "sk_..."`, the profile's name left out, reads as a
/// profile named `api_key`); the message says what was expected without it.
fn unquoted(message: &str) -> String {
    match (
        message.strip_prefix("invalid type: string "),
        message.rfind(", expected "),
    ) {
        (Some(_), Some(at)) => format!("invalid type: a string (not shown){}", &message[at..]),
        _ => message.to_owned(),
    }
}

/// `timeout = 10` or `timeout = 1.5`: read as `--timeout` reads its text.
/// Anything else (a string, a boolean, a table) is said in the flag's
/// words, never in serde's (`data did not match any variant of untagged
/// enum`).
fn seconds<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    struct Seconds;
    impl serde::de::Visitor<'_> for Seconds {
        type Value = String;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a number of seconds, e.g. 30 or 0.5")
        }
        fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<String, E> {
            Ok(n.to_string())
        }
        fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<String, E> {
            Ok(n.to_string())
        }
        fn visit_f64<E: serde::de::Error>(self, x: f64) -> Result<String, E> {
            // The shortest text that reads back as the same number: 1.5,
            // not 1.5000000000000000001; nan and inf read as nothing.
            Ok(if x.is_finite() {
                format!("{x}")
            } else {
                String::new()
            })
        }
        fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<String, E> {
            // `timeout = "30"`: a number in quotes; `"abc"` is none.
            Err(E::custom(if crate::cli::looks_like_seconds(text) {
                "timeout: a number of seconds without quotes, e.g. timeout = 30 or 0.5"
            } else {
                "timeout: not a number of seconds, e.g. 30 or 0.5"
            }))
        }
        fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<String, E> {
            Err(E::custom(
                "timeout: not a number of seconds, e.g. 30 or 0.5",
            ))
        }
    }
    let text = d.deserialize_any(Seconds).map_err(|e: D::Error| {
        // A table or an array: serde's words name the type; say the flag's.
        let message = e.to_string();
        if message.starts_with("timeout:") {
            e
        } else {
            serde::de::Error::custom("timeout: not a number of seconds, e.g. 30 or 0.5")
        }
    })?;
    crate::cli::parse_seconds(&text)
        .map(Some)
        .map_err(|reason| serde::de::Error::custom(format!("timeout: {reason}")))
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
    /// [`default_path`]), and the file (empty when the default file does
    /// not exist, or there is no default location).
    ///
    /// # Errors
    ///
    /// The file cannot be read (or an explicit one does not exist), or it is malformed.
    pub fn load(explicit: Option<&Path>) -> Result<(Option<PathBuf>, Self), ConfigError> {
        let (path, must_exist) = match explicit {
            Some(path) => (path.to_owned(), true),
            None => match default_path() {
                Some(path) => (path, false),
                None => return Ok((None, Self::default())),
            },
        };
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                let file = Self::parse(&text, &path)?;
                Ok((Some(path), file))
            }
            Err(err) if err.kind() == std::io::ErrorKind::NotFound && !must_exist => {
                Ok((Some(path), Self::default()))
            }
            Err(source) => Err(ConfigError::Read { path, source }),
        }
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
    fn choose(mut self, requested: Option<&str>, path: &Path) -> Result<Chosen, ConfigError> {
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
            }),
        }
    }
}

/// What [`ConfigFile::choose`] found.
enum Chosen {
    /// The profile and its name.
    Profile(Box<Profile>, String),
    /// No profile named and none called `default`; the file's profiles.
    None { unselected: Vec<String> },
}

/// `$XDG_CONFIG_HOME/payments/config.toml`, else
/// `$HOME/.config/payments/config.toml`; none when neither is set (to an
/// absolute path): [`config_dir`].
#[must_use]
pub fn default_path() -> Option<PathBuf> {
    let dir = config_dir(
        std::env::var_os("XDG_CONFIG_HOME").as_deref(),
        std::env::var_os("HOME").as_deref(),
    );
    // Off Unix, where `HOME` is seldom set: the platform's own place
    // (`%APPDATA%` on Windows), as etcetera says it.
    #[cfg(not(unix))]
    let dir = dir.or_else(|| {
        use etcetera::BaseStrategy as _;
        etcetera::choose_base_strategy()
            .ok()
            .map(|strategy| strategy.config_dir())
    });
    dir.map(|dir| dir.join("payments").join("config.toml"))
}

/// The config directory the XDG base directory specification gives:
/// `XDG_CONFIG_HOME`, else `HOME/.config`; a value that is empty or not
/// absolute is ignored, as the specification says. Neither: none, and no
/// default file (a uid without a passwd entry run with `env -i`, in a
/// container, has no home; the passwd entry is not asked, as the
/// specification names the variables only).
#[must_use]
pub fn config_dir(
    xdg_config_home: Option<&std::ffi::OsStr>,
    home: Option<&std::ffi::OsStr>,
) -> Option<PathBuf> {
    let absolute = |value: Option<&std::ffi::OsStr>| {
        value.map(PathBuf::from).filter(|path| path.is_absolute())
    };
    absolute(xdg_config_home).or_else(|| absolute(home).map(|home| home.join(".config")))
}

fn line_of(text: &str, byte_offset: usize) -> usize {
    let end = byte_offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// Where a setting came from, so errors can say how to change it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A flag or its environment variable (clap does not tell them apart).
    FlagOrEnv,
    /// The config file's profile.
    Profile,
}

/// A file a setting names (a certificate, a key), and where it was named,
/// so that a file that cannot be read is reported with the flag or the
/// profile key to fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingFile {
    /// The file to read: as given by a flag or the environment (from the
    /// working directory); from a profile, a relative path is taken from
    /// the config file's directory, as `ca_cert = "ca.pem"` beside the
    /// config file means.
    pub path: PathBuf,
    /// `--ca-cert or PAYMENTS_CA_CERT`, or `ca_cert of profile 'staging'
    /// in /home/me/.config/payments/config.toml`.
    pub named_by: String,
}

/// `path` from a profile of the config file at `config`: a relative one
/// is joined to the config file's directory.
fn beside(config: &Path, path: PathBuf) -> PathBuf {
    if path.is_absolute() {
        return path;
    }
    match config.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.join(path),
        _ => path,
    }
}

/// Validated global settings: the one result of flags + env + profile.
#[derive(Debug)]
pub struct Settings {
    pub base_url: Option<(String, Source)>,
    pub api_key: Option<ApiKey>,
    /// Where [`Settings::api_key`] came from, when it is set.
    pub api_key_source: Option<Source>,
    pub merchant_id: Option<Uuid>,
    pub output: OutputFormat,
    pub colour: bool,
    pub timeout: Duration,
    pub retries: u32,
    pub verbose: bool,
    /// `--ca-cert`, `PAYMENTS_CA_CERT` or the profile's `ca_cert`.
    pub ca_cert: Option<SettingFile>,
    /// `--client-cert` and `--client-key` (or their environment or
    /// profile keys), each from wherever it was given.
    pub client_cert: Option<SettingFile>,
    pub client_key: Option<SettingFile>,
    /// The config file looked at: `--config`, or the default one (which
    /// may not exist); none when there is no default location.
    pub config_path: Option<PathBuf>,
    /// The file's profiles when none was selected (none named, no
    /// `default_profile`, no profile called `default`); empty otherwise.
    pub unselected_profiles: Vec<String>,
}

impl Settings {
    /// Merges the raw global options with the config file.
    ///
    /// # Errors
    ///
    /// Config file problems (see [`ConfigFile::load`] and [`ConfigFile::choose`]).
    pub fn resolve(global: GlobalArgs) -> Result<Self, CliError> {
        let (config_path, file) = ConfigFile::load(global.config.as_deref())?;
        let chosen = match (&config_path, global.profile) {
            (Some(path), requested) => file.choose(requested.as_deref(), path)?,
            // No file to find the profile in: said, not taken as none.
            (None, Some(name)) => return Err(ConfigError::NoConfigDir(name).into()),
            (None, None) => Chosen::None {
                unselected: Vec::new(),
            },
        };
        let (profile, profile_name, unselected_profiles) = match chosen {
            Chosen::Profile(profile, name) => (*profile, name, Vec::new()),
            Chosen::None { unselected } => (Profile::default(), String::new(), unselected),
        };
        // A profile comes from a file, so it has a path.
        let config_file = config_path.as_deref().unwrap_or(Path::new(""));
        // A flag or the environment names a file from the working
        // directory; a profile from the config file's own directory.
        let file = |given: Option<PathBuf>, flag: &str, profiled: Option<PathBuf>, key: &str| {
            given
                .map(|path| SettingFile {
                    path,
                    named_by: flag.to_owned(),
                })
                .or_else(|| {
                    profiled.map(|path| SettingFile {
                        path: beside(config_file, path),
                        named_by: format!(
                            "{key} of profile '{}' in {}",
                            crate::output::printable(&profile_name),
                            config_file.display()
                        ),
                    })
                })
        };
        let ca_cert = file(
            global.ca_cert,
            "--ca-cert or PAYMENTS_CA_CERT",
            profile.ca_cert,
            "ca_cert",
        );
        let client_cert = file(
            global.client_cert,
            "--client-cert or PAYMENTS_CLIENT_CERT",
            profile.client_cert,
            "client_cert",
        );
        let client_key = file(
            global.client_key,
            "--client-key or PAYMENTS_CLIENT_KEY",
            profile.client_key,
            "client_key",
        );
        let stdout_is_terminal = std::io::stdout().is_terminal();
        let output = output_format(global.output, profile.output, stdout_is_terminal);
        let base_url = match (global.base_url, profile.base_url) {
            (Some(url), _) => Some((url, Source::FlagOrEnv)),
            (None, Some(url)) => Some((url, Source::Profile)),
            (None, None) => None,
        };
        let api_key_source = if global.api_key.is_some() {
            Some(Source::FlagOrEnv)
        } else {
            profile.api_key.as_ref().map(|_| Source::Profile)
        };
        Ok(Self {
            base_url,
            api_key: global.api_key.or(profile.api_key.map(ApiKey)),
            api_key_source,
            merchant_id: global.merchant_id.or(profile.merchant_id),
            output,
            colour: colour_wanted(
                stdout_is_terminal,
                std::env::var_os("NO_COLOR").as_deref(),
                std::env::var_os("TERM").as_deref(),
            ),
            timeout: global
                .timeout
                .or(profile.timeout)
                .unwrap_or(DEFAULT_TIMEOUT),
            retries: global
                .retries
                .or(profile.retries)
                .unwrap_or(DEFAULT_RETRIES),
            verbose: global.verbose,
            ca_cert,
            client_cert,
            client_key,
            config_path,
            unselected_profiles,
        })
    }

    /// The base URL, or a usage error that says how to give one.
    ///
    /// # Errors
    ///
    /// No base URL in flags, environment or profile.
    pub fn require_base_url(&self) -> Result<&str, CliError> {
        self.base_url
            .as_ref()
            .map(|(url, _)| url.as_str())
            .ok_or_else(|| {
                if let Some(how) = self.how_to_select_a_profile() {
                    return CliError::Usage(format!("no service URL: {how}"));
                }
                CliError::Usage(match &self.config_path {
                    Some(path) => format!(
                        "no service URL: pass --base-url URL, set PAYMENTS_BASE_URL, \
                         or add base_url to a profile in {}",
                        path.display()
                    ),
                    None => format!(
                        "no service URL: pass --base-url URL, set PAYMENTS_BASE_URL, \
                         or add base_url to a profile of a config file ({})",
                        crate::error::NO_CONFIG_DIR
                    ),
                })
            })
    }

    /// When the file has profiles but none was selected: which, and the
    /// three ways to pick one.
    fn how_to_select_a_profile(&self) -> Option<String> {
        let first = self.unselected_profiles.first()?;
        let names = self
            .unselected_profiles
            .iter()
            .map(|name| format!("'{}'", crate::output::printable(name)))
            .collect::<Vec<_>>()
            .join(", ");
        let (has, them) = if self.unselected_profiles.len() == 1 {
            ("the profile", "it")
        } else {
            ("the profiles", "one")
        };
        Some(format!(
            "{} has {has} {names} but none is selected; pick {them} with --profile {first}, \
             PAYMENTS_PROFILE={first} or default_profile = \"{first}\" in the file \
             (a profile named 'default' is used without being picked)",
            self.config_path
                .as_deref()
                .unwrap_or(Path::new(""))
                .display(),
            first = crate::output::printable(first),
        ))
    }

    /// The merchant, or a usage error that says how to give one.
    ///
    /// # Errors
    ///
    /// No merchant id in flags, environment or profile.
    pub fn require_merchant_id(&self) -> Result<Uuid, CliError> {
        self.merchant_id.ok_or_else(|| {
            if let Some(how) = self.how_to_select_a_profile() {
                return CliError::Usage(format!("no merchant: {how}"));
            }
            CliError::Usage(
                "no merchant: pass --merchant-id UUID, set PAYMENTS_MERCHANT_ID, \
                 or add merchant_id to the profile"
                    .to_owned(),
            )
        })
    }
}

/// `-o`/`PAYMENTS_OUTPUT` always; a profile's `output` only on a terminal
/// (so `payments status ID | jq` works whatever the profile says); else
/// `table` on a terminal and `json` elsewhere (COMMANDS.md).
#[must_use]
pub fn output_format(
    flag_or_env: Option<OutputFormat>,
    profile: Option<OutputFormat>,
    stdout_is_terminal: bool,
) -> OutputFormat {
    match (flag_or_env, stdout_is_terminal) {
        (Some(format), _) => format,
        (None, true) => profile.unwrap_or(OutputFormat::Table),
        (None, false) => OutputFormat::Json,
    }
}

/// Whether tables are coloured: on a terminal only, and not when
/// `NO_COLOR` is set (to anything but empty) or `TERM` is `dumb` (a
/// terminal that shows escape codes as text, where the progress bar
/// already draws nothing).
#[must_use]
pub fn colour_wanted(
    stdout_is_terminal: bool,
    no_color: Option<&std::ffi::OsStr>,
    term: Option<&std::ffi::OsStr>,
) -> bool {
    stdout_is_terminal && no_color.is_none_or(|v| v.is_empty()) && term.is_none_or(|t| t != "dumb")
}

#[cfg(test)]
mod tests;
