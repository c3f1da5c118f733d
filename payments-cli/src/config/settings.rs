//! The one conversion from raw arguments (flags and the environment) and
//! the chosen profile to settings, and where each setting came from.

use std::{
    io::IsTerminal,
    path::{Path, PathBuf},
    time::Duration,
};

use uuid::Uuid;

use super::{
    DEFAULT_RETRIES, DEFAULT_TIMEOUT,
    file::{Chosen, ConfigFile, Profile},
    location::beside,
};
use crate::{
    cli::{ApiKey, GlobalArgs, OutputFormat},
    error::{CliError, ConfigError},
};

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

/// Validated global settings: the one result of flags + env + profile.
#[derive(Debug)]
pub struct Settings {
    pub base_url: Option<(String, Source)>,
    /// Where [`Settings::base_url`] came from, as advice names it:
    /// `--base-url`, `PAYMENTS_BASE_URL`, or `base_url of profile 'staging'
    /// in /home/me/.config/payments/config.toml`.
    pub base_url_named_by: Option<String>,
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
        let loaded = ConfigFile::load(global.config.as_deref())?;
        let config_path = loaded.path;
        let requested = global.profile.clone();
        let chosen = match (&config_path, loaded.file, requested.clone()) {
            (Some(path), Some(file), requested) => file.choose(requested.as_deref(), path)?,
            // The default file does not exist: a profile asked for is not
            // in it, and the message says the file is missing.
            (Some(path), None, Some(name)) => {
                return Err(ConfigError::NoConfigFile {
                    name,
                    path: path.clone(),
                }
                .into());
            }
            // No file to find the profile in: said, not taken as none.
            (None, _, Some(name)) => return Err(ConfigError::NoConfigDir(name).into()),
            (_, _, None) => Chosen::None {
                unselected: Vec::new(),
            },
        };
        let (profile, profile_name, unselected_profiles) = match chosen {
            Chosen::Profile(profile, name) => (*profile, name, Vec::new()),
            Chosen::None { unselected } => (Profile::default(), String::new(), unselected),
        };
        // A profile comes from a file, so it has a path.
        let config_file = config_path.as_deref().unwrap_or(Path::new(""));
        let mut notes: Vec<String> = loaded.warning.into_iter().collect();
        // Only a profile named explicitly: the default one is no choice
        // the user just made.
        if requested.is_some() {
            notes.extend(super::notes::overridden(
                &global,
                &profile,
                &profile_name,
                config_file,
                crate::cli::environment::variables_read(),
            ));
        }
        super::notes::print(&notes);
        // `ca_cert of profile 'staging' in FILE`: the key, and where.
        let of_profile = |key: &str| {
            format!(
                "{key} of profile '{}' in {}",
                crate::output::printable(&profile_name),
                config_file.display()
            )
        };
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
                        named_by: of_profile(key),
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
        // The flag and its variable are told apart by the variables the
        // command line was read with (a typed flag reads none).
        let given_by = if crate::cli::environment::variables_read()
            .iter()
            .any(|variable| variable == "PAYMENTS_BASE_URL")
        {
            "PAYMENTS_BASE_URL"
        } else {
            "--base-url"
        };
        let (base_url, base_url_named_by) = match (global.base_url, profile.base_url) {
            (Some(url), _) => (Some((url, Source::FlagOrEnv)), Some(given_by.to_owned())),
            (None, Some(url)) => (Some((url, Source::Profile)), Some(of_profile("base_url"))),
            (None, None) => (None, None),
        };
        let api_key_source = if global.api_key.is_some() {
            Some(Source::FlagOrEnv)
        } else {
            profile.api_key.as_ref().map(|_| Source::Profile)
        };
        Ok(Self {
            base_url,
            base_url_named_by,
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
        // Pasted into a shell (`my shop`: one word, quoted) and into the
        // TOML file (a `"` or `\` escaped).
        let word = super::shell::word(&crate::output::printable(first));
        let toml = crate::output::printable(&first.replace('\\', "\\\\").replace('"', "\\\""));
        Some(format!(
            "{} has {has} {names} but none is selected; pick {them} with --profile {word}, \
             PAYMENTS_PROFILE={word} or default_profile = \"{toml}\" in the file \
             (a profile named 'default' is used without being picked)",
            self.config_path
                .as_deref()
                .unwrap_or(Path::new(""))
                .display(),
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
