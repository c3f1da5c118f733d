//! What the run says about its settings on stderr before it starts: a
//! profile named explicitly whose keys `PAYMENTS_*` variables override (the
//! documented precedence, said so that a stale variable from an earlier
//! session is not mixed in silently), and a config file that holds an API
//! key other users can open.

use std::path::{Path, PathBuf};

use secrecy::ExposeSecret as _;

use super::{file::Profile, location::beside};
use crate::cli::GlobalArgs;

/// One `note:` line per key of the profile `name` (in the file `config`)
/// that a variable in `read` (as `environment::variables_read` gives them)
/// overrides with another value. Values are never said.
pub(super) fn overridden(
    global: &GlobalArgs,
    profile: &Profile,
    name: &str,
    config: &Path,
    read: &[String],
) -> Vec<String> {
    let path_differs = |given: &Option<PathBuf>, profiled: &Option<PathBuf>| {
        profiled
            .as_ref()
            .is_some_and(|path| given.as_ref() != Some(&beside(config, path.clone())))
    };
    let differs = |given: Option<&String>, profiled: Option<&String>| {
        profiled.is_some_and(|value| given != Some(value))
    };
    let keys = [
        (
            "PAYMENTS_BASE_URL",
            "base_url",
            differs(global.base_url.as_ref(), profile.base_url.as_ref()),
        ),
        (
            "PAYMENTS_API_KEY",
            "api_key",
            profile.api_key.as_ref().is_some_and(|key| {
                global.api_key.as_ref().map(|given| given.0.expose_secret())
                    != Some(key.expose_secret())
            }),
        ),
        (
            "PAYMENTS_MERCHANT_ID",
            "merchant_id",
            profile
                .merchant_id
                .is_some_and(|merchant| global.merchant_id != Some(merchant)),
        ),
        (
            "PAYMENTS_OUTPUT",
            "output",
            profile
                .output
                .is_some_and(|output| global.output != Some(output)),
        ),
        (
            "PAYMENTS_CA_CERT",
            "ca_cert",
            path_differs(&global.ca_cert, &profile.ca_cert),
        ),
        (
            "PAYMENTS_CLIENT_CERT",
            "client_cert",
            path_differs(&global.client_cert, &profile.client_cert),
        ),
        (
            "PAYMENTS_CLIENT_KEY",
            "client_key",
            path_differs(&global.client_key, &profile.client_key),
        ),
    ];
    keys.into_iter()
        .filter(|&(variable, _, differs)| differs && read.iter().any(|r| r == variable))
        .map(|(variable, key, _)| {
            format!(
                "note: {variable} overrides {key} of profile {} (the environment beats the \
                 profile; unset {variable} to use the profile's)",
                crate::text::quote(name)
            )
        })
        .collect()
}

/// Writes `lines` to stderr; a stderr that cannot be written changes
/// nothing (the run's exit code says what happened).
pub(super) fn print(lines: &[String]) {
    use std::io::Write as _;
    let mut stderr = std::io::stderr().lock();
    for line in lines {
        let _ = writeln!(stderr, "{line}");
    }
}
