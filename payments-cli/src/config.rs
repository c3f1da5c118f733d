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

use std::time::Duration;

mod fields;
mod file;
mod location;
mod notes;
mod read;
mod settings;
mod shell;

pub use settings::{SettingFile, Settings, Source};

// What the unit tests (`config/tests.rs`) read through `super::*`.
#[cfg(test)]
use {
    crate::{cli::OutputFormat, error::ConfigError},
    file::ConfigFile,
    location::config_dir,
    read::line_of,
    settings::{colour_wanted, output_format},
    std::path::{Path, PathBuf},
};

/// Per-attempt timeout when neither a flag nor the profile gives one.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// Retries when neither a flag nor the profile gives a number.
pub const DEFAULT_RETRIES: u32 = 2;
/// The profile used when none is named and the file has no `default_profile`.
pub const DEFAULT_PROFILE: &str = "default";

#[cfg(test)]
mod tests;
