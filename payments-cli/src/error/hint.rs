//! What to do after a failed call: the advice `describe_call_failure`
//! adds after the reason, when the command gives none of its own.

use payments_client::error::{CertificateProblem, ConnectCause, TransportKind};
use payments_client::{Error as ClientError, ErrorCode, Outcome};

pub(super) fn hint(
    call: &str,
    error: &ClientError,
    base_url: &str,
    base_url_from: &str,
    trusted_ca: bool,
) -> Option<String> {
    // A payment call whose outcome is unknown may have been carried out:
    // running it again blindly is how a payment is made twice.
    let changes_state = call.starts_with("initiate") || call.starts_with("confirm");
    if changes_state && error.outcome() == Outcome::Unknown {
        return Some(
            "the service may have carried this out; check with `payments status` \
             (by id, or --reference-no) before trying again"
                .to_owned(),
        );
    }
    if let Some(advice) = transport_hint(error, base_url, base_url_from, trusted_ca, "the service")
    {
        return Some(advice);
    }
    match error {
        ClientError::Transport {
            kind: TransportKind::InvalidHttp,
            source: Some(source),
            ..
        } if plain_http(base_url).is_some() && answered_as_tls(source) => https_instead(base_url),
        // It answered at once: neither "in time" nor "--timeout" fits.
        ClientError::Transport {
            kind: TransportKind::InvalidHttp,
            ..
        } => Some(format!(
            "is {base_url} the payments service (not a proxy or another server)? {}",
            url_from(base_url_from)
        )),
        ClientError::Transport { .. } => Some(format!(
            "the service at {base_url} did not answer in time or dropped the connection; \
             try again, or raise --timeout"
        )),
        ClientError::UnexpectedResponse { .. } => Some(format!(
            "is {base_url} the payments service (not a proxy or web page)? {}",
            url_from(base_url_from)
        )),
        ClientError::WaitTimeout { last, .. } => Some(format!(
            "{}run it again later or raise --wait-timeout",
            last.as_ref()
                .map(|reply| format!("last seen {}; ", reply.data().status))
                .unwrap_or_default()
        )),
        // `user:pass@` in the URL is what was sent (Basic), not a key.
        ClientError::Api(api) if api.status == 401 && has_userinfo(base_url) => {
            Some(URL_CREDENTIALS_REFUSED.to_owned())
        }
        ClientError::Api(api) if api.status == 401 => Some(
            "check the API key (--api-key, PAYMENTS_API_KEY or api_key in the profile)".to_owned(),
        ),
        // Said once: a service whose message already advises a retry
        // ("...; retry later") needs no second "try again later".
        ClientError::Api(api)
            if (api.status >= 500
                || api.status == 429
                || api.code == ErrorCode::InternalError
                || matches!(api.status, 408 | 499))
                && !advises_retry(&api.message) =>
        {
            Some("the service may be having trouble; try again later".to_owned())
        }
        // The service names its JSON field; the user typed a flag.
        ClientError::Api(api)
            if call.starts_with("confirm")
                && api.code == ErrorCode::ValidationError
                && api.message.contains("confirmationCode") =>
        {
            Some("give the payer's code (the OTP) with --code OTP".to_owned())
        }
        ClientError::Api(api)
            if call.starts_with("initiate") && api.code == ErrorCode::ValidationError =>
        {
            initiate_flag(&api.message).map(|flag| format!("set it with {flag}"))
        }
        ClientError::Api(api) if api.code == ErrorCode::AmbiguousReferenceNo => Some(
            "several merchants use this reference: pass --merchant-id UUID \
             (or set PAYMENTS_MERCHANT_ID, or merchant_id in the profile)"
                .to_owned(),
        ),
        _ => None,
    }
}

/// initiate's JSON fields and the flags that set them (`productCode`'s
/// advice is the command's own: the products the service offers).
const INITIATE_FLAGS: [(&str, &str); 12] = [
    ("referenceNo", "--reference-no REF"),
    ("amount", "--amount AMOUNT"),
    ("currencyCode", "--currency CODE"),
    ("storeId", "--store-id ID"),
    ("payerId", "--payer-id ID"),
    ("quantity", "--quantity N"),
    ("description", "--description TEXT"),
    ("countryCode", "--country CODE"),
    ("deviceId", "--device-id ID"),
    ("returnUrl", "--return-url URL"),
    ("extraProperties", "--extra JSON"),
    ("merchantId", "--merchant-id UUID"),
];

/// The flag of the first initiate field a service's message names as a
/// word (`payerId is required`, not `payerIds` or `myamount`): the service
/// names its JSON field, the user typed a flag.
fn initiate_flag(message: &str) -> Option<&'static str> {
    let part_of_word = |c: char| c.is_alphanumeric() || c == '_';
    INITIATE_FLAGS
        .iter()
        .filter_map(|(field, flag)| {
            message
                .match_indices(field)
                .find(|(at, _)| {
                    let before = message[..*at].chars().next_back();
                    let after = message[at + field.len()..].chars().next();
                    !before.is_some_and(part_of_word) && !after.is_some_and(part_of_word)
                })
                .map(|(at, _)| (at, *flag))
        })
        .min_by_key(|(at, _)| *at)
        .map(|(_, flag)| flag)
}

/// The advice after a 401 to a request whose credentials came from the
/// base URL's `user:pass@` (`Basic`), not from an API key.
pub(crate) const URL_CREDENTIALS_REFUSED: &str = "check the user:pass@ of the service URL \
     (--base-url, PAYMENTS_BASE_URL or base_url in the profile): the credentials sent came from it";

/// Whether a base URL (as shown: `***@`) has `user:pass@`.
pub(crate) fn has_userinfo(base_url: &str) -> bool {
    reqwest::Url::parse(base_url.trim())
        .is_ok_and(|url| !url.username().is_empty() || url.password().is_some())
}

/// Where to change the base URL: where it came from (`from`, as
/// `Settings::base_url_named_by` names it: `--base-url`,
/// `PAYMENTS_BASE_URL`, or `base_url of profile 'staging' in FILE`) and
/// what overrides it; when that is not known (`""`), the two ways to give
/// one.
fn url_from(from: &str) -> String {
    match from {
        "" => "set the URL with --base-url or PAYMENTS_BASE_URL".to_owned(),
        "--base-url" => "the URL comes from --base-url".to_owned(),
        "PAYMENTS_BASE_URL" => {
            "the URL comes from PAYMENTS_BASE_URL: correct it, or override it with --base-url"
                .to_owned()
        }
        profile => format!(
            "the URL comes from {}: correct it there, or override it with --base-url or \
             PAYMENTS_BASE_URL",
            crate::text::cut(profile)
        ),
    }
}

/// The advice after a connect or TLS failure of a request to `base_url`
/// (`server` names what should answer there: `the service`, `the
/// mock`); `None` for any other failure. `base_url_from`: where the URL
/// came from, said after a failed connection (see [`url_from`]).
/// `trusted_ca`: a CA was given to trust (`--ca-cert`). The payment
/// commands and `tail` both say it.
pub(crate) fn transport_hint(
    error: &ClientError,
    base_url: &str,
    base_url_from: &str,
    trusted_ca: bool,
    server: &str,
) -> Option<String> {
    match error {
        // An alert is the service refusing us (our client certificate,
        // or none); anything else is us refusing its certificate.
        ClientError::Transport {
            kind: TransportKind::Tls,
            ..
        } if error.to_string().contains("alert") => Some(format!(
            "{server} wants a client certificate it accepts: give --client-cert FILE and \
             --client-key FILE (PAYMENTS_CLIENT_CERT, PAYMENTS_CLIENT_KEY, client_cert and \
             client_key in the profile)"
        )),
        ClientError::Transport {
            kind: TransportKind::Tls,
            ..
        } => Some(certificate_hint(error, base_url, trusted_ca)),
        ClientError::Transport {
            kind: TransportKind::Connect,
            ..
        } => Some(connect_hint(error, base_url, base_url_from, server)),
        _ => None,
    }
}

/// `; if ...` after the advice on a certificate's dates when no CA was
/// given to trust: its dates are checked before its issuer, so it may
/// also be from a CA this machine does not trust.
fn unless_trusted(trusted_ca: bool) -> &'static str {
    if trusted_ca {
        ""
    } else {
        "; if it is from a private CA, also trust that CA with --ca-cert FILE (PAYMENTS_CA_CERT, \
         ca_cert in the profile)"
    }
}

/// The advice after the client refused the service's certificate: the
/// host it names, its dates, or the CA to trust.
fn certificate_hint(error: &ClientError, base_url: &str, trusted_ca: bool) -> String {
    let host = parsed(base_url)
        .and_then(|url| url.host_str().map(str::to_owned))
        .unwrap_or_default();
    let date = |at: &chrono::DateTime<chrono::Utc>| at.format("%Y-%m-%d %H:%M:%S UTC").to_string();
    match error.certificate_problem() {
        Some(CertificateProblem::WrongName { presented }) if presented.is_empty() => format!(
            "the certificate does not name {host}: use a host it names in --base-url, or a \
             certificate that names {host}"
        ),
        Some(CertificateProblem::WrongName { presented }) => format!(
            "the certificate names {}, not {host}: use a host it names in --base-url, or a \
             certificate that names {host}",
            crate::output::printable(&crate::text::cut(&presented.join(", ")))
        ),
        Some(CertificateProblem::Expired {
            not_after: Some(at),
        }) => format!(
            "the certificate expired on {}: renew it{}",
            date(&at),
            unless_trusted(trusted_ca)
        ),
        Some(CertificateProblem::Expired { .. }) => format!(
            "the certificate has expired: renew it{}",
            unless_trusted(trusted_ca)
        ),
        Some(CertificateProblem::NotValidYet {
            not_before: Some(at),
        }) => format!(
            "the certificate is not valid before {}: check this machine's clock{}",
            date(&at),
            unless_trusted(trusted_ca)
        ),
        Some(CertificateProblem::NotValidYet { .. }) => format!(
            "the certificate is not valid yet: check this machine's clock{}",
            unless_trusted(trusted_ca)
        ),
        _ => "trust the service's CA with --ca-cert FILE (PAYMENTS_CA_CERT, ca_cert in the \
              profile)"
            .to_owned(),
    }
}

/// The advice after a connect failure: the proxy's (what it did), the
/// host name's, the scheme's, or whether the server runs; the last two
/// with where the URL came from.
fn connect_hint(error: &ClientError, base_url: &str, base_url_from: &str, server: &str) -> String {
    let cause = error.connect_cause();
    if let Some(ConnectCause::PlainHttp) = cause {
        // Through a proxy too: the tunnel was open, the service answered.
        return match parsed(base_url).filter(|url| url.scheme() == "https") {
            Some(mut url) => {
                let _ = url.set_scheme("http");
                format!(
                    "{server} speaks plain HTTP: use {}",
                    payments_client::redact_url(url.as_str().trim_end_matches('/'))
                )
            }
            None => format!("{server} speaks plain HTTP: use an http:// URL"),
        };
    }
    if let Some(proxy) = payments_client::environment_proxy(base_url) {
        return proxy_hint(cause, &proxy, base_url);
    }
    match cause {
        Some(ConnectCause::UnresolvedHost) => format!(
            "check the host name of {base_url}; {}",
            url_from(base_url_from)
        ),
        _ => format!(
            "is {server} running at {base_url}? {}",
            url_from(base_url_from)
        ),
    }
}

/// The advice after a connect failure through the environment's proxy:
/// what to change, never its `user:pass@`.
fn proxy_hint(
    cause: Option<ConnectCause>,
    proxy: &payments_client::EnvironmentProxy,
    base_url: &str,
) -> String {
    let variable = proxy.variable();
    let host = parsed(base_url)
        .and_then(|url| url.host_str().map(str::to_owned))
        .unwrap_or_else(|| "the service's host".to_owned());
    match cause {
        Some(ConnectCause::ProxyAuthenticationRequired) if proxy.has_credentials() => format!(
            "the proxy did not accept the credentials in {variable}: correct its user:pass@ \
             (an @ or : in them written %40 or %3A)"
        ),
        Some(ConnectCause::ProxyAuthenticationRequired) => format!(
            "the proxy wants credentials: give them in {variable} as \
             http://USER:PASS@HOST:PORT"
        ),
        Some(ConnectCause::ProxyRefusedTunnel) => format!(
            "the proxy will not open a tunnel to {host}: ask its administrator, or list {host} in \
             NO_PROXY (the proxy comes from {variable})"
        ),
        Some(ConnectCause::ProxyClosed) => format!(
            "is {} an HTTP proxy, and working? it comes from {variable}: unset it, or list the \
             service's host in NO_PROXY",
            proxy.url()
        ),
        Some(ConnectCause::TimedOut) => format!(
            "is the proxy working? it comes from {variable}: raise --timeout, unset it, or list \
             the service's host in NO_PROXY"
        ),
        Some(ConnectCause::ClosedInHandshake) => format!(
            "the proxy opened the tunnel, then the connection closed before TLS was set up: the \
             proxy or the service ended it; check that the proxy may reach {host}, or list it in \
             NO_PROXY (the proxy comes from {variable})"
        ),
        Some(ConnectCause::UnsupportedProxyScheme) if proxy.url().starts_with("socks") => format!(
            "SOCKS proxies are not supported: unset {variable}, or name an http:// proxy in it"
        ),
        Some(ConnectCause::UnsupportedProxyScheme) => format!(
            "only http:// and https:// proxies are supported: unset {variable}, or name one in it"
        ),
        _ => format!(
            "is the proxy running? it comes from {variable}: unset it, or list the service's \
             host in NO_PROXY"
        ),
    }
}

/// A connect failure's reason with the environment's proxy named (never
/// its `user:pass@`) and the variable that named it, when the environment
/// puts one between the CLI and the service; `None` otherwise, and for a
/// service that answered in plain HTTP through it (the client's own
/// reason says it). Only a proxy that could not be reached (refused, a
/// name that does not resolve, a scheme that cannot be used) is "could
/// not connect to the proxy"; one that was reached is named for what it
/// did.
pub(crate) fn through_proxy(error: &ClientError, reason: &str, base_url: &str) -> Option<String> {
    let connect = matches!(
        error,
        ClientError::Transport {
            kind: TransportKind::Connect,
            ..
        }
    );
    let proxy = payments_client::environment_proxy(base_url).filter(|_| connect)?;
    let named = format!("{} (from {})", proxy.url(), proxy.variable());
    let cause = error.connect_cause();
    let (said, instead) = match cause {
        Some(ConnectCause::PlainHttp) => return None,
        Some(ConnectCause::TimedOut) => (
            format!("{CONNECT_FAILED}: {}", ConnectCause::TimedOut),
            format!("timed out waiting for the proxy {named}"),
        ),
        Some(
            ConnectCause::ProxyAuthenticationRequired
            | ConnectCause::ProxyRefusedTunnel
            | ConnectCause::ProxyClosed
            | ConnectCause::ClosedInHandshake,
        ) => (
            CONNECT_FAILED.to_owned(),
            format!("{CONNECT_FAILED} through the proxy {named}"),
        ),
        _ => (
            CONNECT_FAILED.to_owned(),
            format!("could not connect to the proxy {named}"),
        ),
    };
    Some(reason.replacen(&said, &instead, 1))
}

/// The client's words for a connect failure.
const CONNECT_FAILED: &str = "could not connect to the service";

/// The base URL parsed, as the client takes it (trimmed).
fn parsed(base_url: &str) -> Option<reqwest::Url> {
    reqwest::Url::parse(base_url.trim()).ok()
}

/// Whether a service's message already tells the caller to retry.
fn advises_retry(message: &str) -> bool {
    let message = message.to_ascii_lowercase();
    ["retry", "try again", "retry-after"]
        .iter()
        .any(|advice| message.contains(advice))
}

/// hyper's whole message for an answer that does not begin with
/// `HTTP/1.x` (its `Parse(Version)` error kind).
const NOT_AN_HTTP_ANSWER: &str = "invalid HTTP version parsed";

/// Whether a failed request got bytes back that are no HTTP answer at all:
/// what a TLS server writes to a plain-HTTP request (one alert record,
/// `15 03 03 00 02 02 32`, then it closes; docs/mock-server.md, "Plain
/// HTTP on the HTTPS port"). The failure comes at once, so "raise
/// --timeout" would be the wrong advice.
///
/// The client calls any answer hyper cannot parse
/// [`TransportKind::InvalidHttp`]; this one kind of it is hyper's
/// `Parse(Version)`, which hyper has no test of its own for (and this
/// crate does not depend on hyper): so that one error of the chain is
/// recognised by its message, hyper's fixed text for that kind, compared
/// whole (never a part of a joined chain, which would also take a URL or a
/// server's words).
fn answered_as_tls(error: &reqwest::Error) -> bool {
    if !error.is_request() || error.is_connect() || error.is_timeout() {
        return false;
    }
    let mut current: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(cause) = current {
        if cause.to_string() == NOT_AN_HTTP_ANSWER {
            return true;
        }
        current = cause.source();
    }
    false
}

/// What follows `http://` in a base URL (any letter case), if it is one.
fn plain_http(base_url: &str) -> Option<&str> {
    let scheme = "http://";
    base_url
        .get(..scheme.len())
        .filter(|head| head.eq_ignore_ascii_case(scheme))
        .and_then(|_| base_url.get(scheme.len()..))
}

/// The advice for an `http://` base URL whose service speaks TLS: the same
/// URL with `https://`, and the CA to trust.
pub(crate) fn https_instead(base_url: &str) -> Option<String> {
    plain_http(base_url).map(|rest| {
        format!(
            "the service at {base_url} seems to speak HTTPS: use https://{rest} \
             (and --ca-cert FILE if its certificate is from a private CA)"
        )
    })
}

#[cfg(test)]
mod tests;
