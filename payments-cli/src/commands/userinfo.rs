//! `user:pass@` in the base URL: refused beside an API key (both would be
//! `Authorization`).

use crate::{
    config::{Settings, Source},
    error::CliError,
};

/// `user:pass@` in the base URL beside an API key: the client would send
/// both as `Authorization` (Basic and Bearer) and refuses to build (the CLI
/// has no other header to send the key in). Told here, from the settings
/// (the client's refusal is a `Config` error told apart by its wording
/// only), as the usage error it is, naming where each was given and
/// neither's value. `None` for a URL the client would refuse for another
/// reason first (not http or https), or for none that parses: the client
/// says what is wrong with it.
pub(super) fn userinfo_and_key(base_url: &str, settings: &Settings) -> Option<CliError> {
    let key_from = match settings.api_key_source? {
        Source::FlagOrEnv => "--api-key or PAYMENTS_API_KEY",
        Source::Profile => "api_key in the profile",
    };
    let url = reqwest::Url::parse(base_url.trim()).ok()?;
    let userinfo = !url.username().is_empty() || url.password().is_some();
    if !userinfo || !matches!(url.scheme(), "http" | "https") {
        return None;
    }
    let url_from = match settings.base_url.as_ref().map(|(_, source)| *source) {
        Some(Source::Profile) => "base_url in the profile",
        _ => "--base-url or PAYMENTS_BASE_URL",
    };
    Some(CliError::Usage(format!(
        "the service URL has user:pass@ (from {url_from}) and an API key is set (from \
         {key_from}): both would be sent as the Authorization header (Basic and Bearer), and \
         only one can be; remove one of them: the user:pass@ from the URL, or the API key"
    )))
}
