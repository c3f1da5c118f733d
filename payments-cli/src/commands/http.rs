//! The CLI's own `reqwest` clients, for the requests it sends beside the
//! payments client's (`tail`'s journal pages, `initiate`'s product list):
//! one function builds them all, with the same TLS settings (`--ca-cert`,
//! `--client-cert`, `--client-key`) and the same proxy rule as the
//! payments client ([`payments_client::skips_environment_proxy`]: a
//! loopback service is never reached through the environment's proxy,
//! which would see the API key of every request).

use std::time::Duration;

use super::Context;
use crate::error::CliError;

/// A `reqwest::Client` for the CLI's service: rustls, `--ca-cert`, the
/// client certificate, no redirects, the CLI's user agent, requests cut
/// after `timeout`, and no environment proxy for a loopback base URL.
///
/// # Errors
///
/// A certificate or key that cannot be read or used (the payments client
/// already refused them by now, so this is a file that changed).
pub fn client(ctx: &Context, timeout: Duration) -> Result<reqwest::Client, CliError> {
    let settings = &ctx.settings;
    // rustls, as the payments client: its PEM identity is rustls's, and a
    // build with reqwest's native-tls too (`--all-features`) would pick
    // OpenSSL and refuse it ("incompatible TLS identity type").
    let mut builder = reqwest::Client::builder()
        .use_rustls_tls()
        .connect_timeout(Duration::from_secs(10).min(timeout))
        .timeout(timeout)
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("payments-cli/", env!("CARGO_PKG_VERSION")));
    // The payments client's rule, not a copy of it.
    if payments_client::skips_environment_proxy(&ctx.base_url) {
        builder = builder.no_proxy();
    }
    if let Some(ca) = &settings.ca_cert {
        let pem = super::read_setting_file(ca)?;
        let roots = reqwest::Certificate::from_pem_bundle(&pem).map_err(|_| {
            CliError::Usage(format!(
                "--ca-cert {}: not a PEM certificate (-----BEGIN CERTIFICATE-----)",
                ca.path.display()
            ))
        })?;
        for root in roots {
            builder = builder.add_root_certificate(root);
        }
    }
    if let (Some(cert), Some(key)) = (&settings.client_cert, &settings.client_key) {
        let mut identity = super::read_setting_file(cert)?;
        identity.push(b'\n');
        identity.extend(super::read_setting_file(key)?);
        let identity = reqwest::Identity::from_pem(&identity).map_err(|_| {
            CliError::Usage(format!(
                "--client-cert {} and --client-key {}: not a PEM certificate and its PEM \
                 private key",
                cert.path.display(),
                key.path.display()
            ))
        })?;
        builder = builder.identity(identity);
    }
    builder
        .build()
        .map_err(|e| CliError::Usage(format!("cannot create the HTTP client: {e}")))
}
