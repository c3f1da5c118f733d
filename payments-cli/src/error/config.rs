//! What the config file can get wrong, each said with the file and what
//! to do.

use std::path::{Path, PathBuf};

use super::shown;

/// Said where the default config file would be when there is none: no
/// `XDG_CONFIG_HOME`, no `HOME` (`config::default_path`).
pub const NO_CONFIG_DIR: &str = "no default config file: neither XDG_CONFIG_HOME nor HOME is set \
     to an absolute path; pass --config PATH or set one of them";

/// What went wrong with the config file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    #[error("cannot read config file {}: {source}", shown(.path))]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("config file {}, line {line}: {message}", shown(.path))]
    Malformed {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("{}", unknown_profile_message(.name, .path, .known, *.from_default_profile))]
    UnknownProfile {
        name: String,
        path: PathBuf,
        known: Vec<String>,
        /// The name came from the file's `default_profile`, not from
        /// `--profile` or `PAYMENTS_PROFILE`.
        from_default_profile: bool,
    },
    /// A profile named (`--profile`, `PAYMENTS_PROFILE`) while the default
    /// config file does not exist (another `HOME`, as under `sudo`).
    #[error(
        "profile {} not found: {} does not exist; create it with the profile \
         (docs/cli.md, \"Config file\") or pass --config PATH",
        crate::text::quote(.name),
        shown(.path)
    )]
    NoConfigFile { name: String, path: PathBuf },
    /// A file over [`MAX_CONFIG_BYTES`]: a ledger or a device given as the
    /// config by mistake, refused before it is parsed.
    #[error(
        "config file {} is larger than 1 MiB ({}), the limit for a config file: \
         is it the right file? check --config and PAYMENTS_CONFIG",
        shown(.path),
        match .size {
            Some(size) => format!("{size} bytes"),
            None => format!("more than {MAX_CONFIG_BYTES} bytes read"),
        }
    )]
    TooLarge {
        path: PathBuf,
        /// A regular file's length; none for another kind of file (a
        /// device, a pipe), read up to the limit.
        size: Option<u64>,
    },
    /// A profile named (`--profile`, `PAYMENTS_PROFILE`) where there is
    /// no config file to find it in: no `--config`, and no default location.
    #[error(
        "profile {} not found: {}",
        crate::text::quote(.0),
        NO_CONFIG_DIR
    )]
    NoConfigDir(String),
}

/// The most bytes a config file may have (1 MiB): a real one has a few
/// hundred.
pub const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

fn unknown_profile_message(
    name: &str,
    path: &Path,
    known: &[String],
    from_default_profile: bool,
) -> String {
    // Where the name came from, when it was the file itself.
    let named = if from_default_profile {
        " (named by default_profile in the file: correct it or remove it)"
    } else {
        ""
    };
    if known.is_empty() {
        format!(
            "profile {} not found: {} has no profiles{named}",
            crate::text::quote(name),
            shown(path)
        )
    } else {
        format!(
            "profile {} not found in {}{named}; known profiles: {}",
            crate::text::quote(name),
            shown(path),
            crate::text::cut(&known.join(", "))
        )
    }
}
