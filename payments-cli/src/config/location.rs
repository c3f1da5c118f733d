//! Where the default config file is: the XDG base directory specification.

use std::path::{Path, PathBuf};

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

/// `path` from a profile of the config file at `config`: a relative one
/// is joined to the config file's directory.
pub(super) fn beside(config: &Path, path: PathBuf) -> PathBuf {
    if path.is_absolute() {
        return path;
    }
    match config.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.join(path),
        _ => path,
    }
}
