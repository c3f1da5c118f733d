//! The proxy's command line (feature `cli`): the flags of serving
//! ([`ProxyArgs`](crate::cli::ProxyArgs)) and of `check FILE`
//! ([`CheckArgs`](crate::cli::CheckArgs)), and their runs.
//! The `payments-contract-proxy` binary is these; the mock's binary offers
//! the same as its `proxy` and `check` subcommands (aliases).
//!
//! Its own lines log under `payments_contract_proxy` (each exchange under
//! `payments_contract_proxy::exchange`); its environment names are
//! `PAYMENTS_PROXY_…` (`PAYMENTS_MOCK_ADMIN_KEY`, the name before it had a
//! binary of its own, is still read).

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use rust_decimal::Decimal;

/// The binaries' command line read without echoing a secret that starts
/// with `-` (`--admin-key -abc…`).
pub use payments_serve::cli::parse_hiding_secrets;
use payments_serve::cli::{LogFormatArg, QuietParser, Stop, TlsArgs, error_chain, runtime_logged};
use payments_serve::logging::init_logging;

use crate::{AdminKey, CONSOLE_PATH, Coverage, Proxy, ProxyConfig};

mod check;
mod host;
mod output;
mod stop;

pub use check::run_check;
use output::say_error;

/// The environment variable of `--admin-key`.
pub const ADMIN_KEY_ENV: &str = "PAYMENTS_PROXY_ADMIN_KEY";
/// Its name before the proxy had a binary of its own, still read when
/// [`ADMIN_KEY_ENV`] is not set.
pub const OLD_ADMIN_KEY_ENV: &str = "PAYMENTS_MOCK_ADMIN_KEY";

/// Forward `/api/` to a real service and check every exchange against the
/// interface document (CONTRACT section 16).
#[derive(Debug, clap::Args)]
pub struct ProxyArgs {
    /// The service to check: http or https, maybe with a path prefix.
    // An `Option` that clap requires: the binary's `check` subcommand
    // stands without it (the derive would otherwise insist on a value).
    #[arg(long, required = true, value_name = "URL", value_parser = QuietParser::<UpstreamUrl>::new("an upstream URL"))]
    upstream: Option<UpstreamUrl>,
    /// Address to listen on (an IPv6 address as `::1` or `[::1]`).
    #[arg(long, default_value = "127.0.0.1", value_parser = host::parse_host)]
    host: String,
    /// Port to listen on; 0 picks a free port.
    #[arg(long, default_value_t = 8080)]
    port: u16,
    /// Append one JSON line per exchange to FILE.
    #[arg(long, value_name = "FILE")]
    report: Option<std::path::PathBuf>,
    /// Append each exchange whole, secrets replaced, to FILE.
    #[arg(long, value_name = "FILE")]
    record: Option<std::path::PathBuf>,
    #[command(flatten)]
    evidence: EvidenceArgs,
    /// Answer an exchange with a violation 502 CONTRACT_VIOLATION instead.
    #[arg(long)]
    enforce: bool,
    /// An undocumented finding fails the run too.
    #[arg(long)]
    strict: bool,
    /// How long the upstream may take to answer, e.g. `5s` (at most a
    /// day, `24h`).
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    upstream_timeout: Duration,
    /// A product catalogue (accepted for symmetry with the mock; the rules
    /// judge by the interface document and do not use it).
    #[arg(long, value_name = "FILE")]
    catalog: Option<std::path::PathBuf>,
    /// Log format on stderr.
    #[arg(long, value_enum, default_value_t = LogFormatArg::Text)]
    log_format: LogFormatArg,
    #[command(flatten)]
    tls: TlsArgs,
    /// Also trust this CA (PEM) for an https upstream, beside Mozilla's
    /// roots.
    #[arg(long, value_name = "FILE")]
    upstream_ca: Option<std::path::PathBuf>,
    /// Present this client certificate (PEM) to the upstream (mutual
    /// TLS); needs --upstream-client-key.
    #[arg(long, value_name = "FILE", requires = "upstream_client_key")]
    upstream_client_cert: Option<std::path::PathBuf>,
    /// The private key of --upstream-client-cert (PEM).
    #[arg(long, value_name = "FILE", requires = "upstream_client_cert")]
    upstream_client_key: Option<std::path::PathBuf>,
    /// Put the proxy's own pages (the console /_proxy/ui/, the summary
    /// /_proxy/report) and /metrics behind this key, sent as
    /// `Authorization: Bearer KEY` or typed once on the console's sign-in
    /// page. Repeatable. /api/ is never affected. Without it, they are
    /// open to whoever reaches the port. Also read from
    /// PAYMENTS_MOCK_ADMIN_KEY when PAYMENTS_PROXY_ADMIN_KEY is not set
    /// (its name before the proxy had a binary of its own).
    #[arg(
        long = "admin-key",
        env = ADMIN_KEY_ENV,
        hide_env_values = true,
        value_name = "KEY",
        value_parser = QuietParser::<AdminKey>::new("an admin key")
    )]
    admin_keys: Vec<AdminKey>,
    /// Export a server span per request over OTLP/HTTP to this receiver,
    /// e.g. `http://localhost:4318` (`/v1/traces` is added unless the URL
    /// ends with it), each a child of the caller's traceparent, with a
    /// client span under it for the call upstream, whose traceparent the
    /// upstream is sent instead; batched, the last batch sent at the stop.
    #[cfg(feature = "otlp")]
    #[arg(long, value_name = "URL", value_parser = QuietParser::<payments_serve::otlp::OtlpEndpoint>::new("an OTLP endpoint"))]
    otlp_endpoint: Option<payments_serve::otlp::OtlpEndpoint>,
}

/// Run the proxy's checks offline on a recording (`--record`): the same
/// summary and exit code.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// A recording made by `--record`.
    file: std::path::PathBuf,
    /// An undocumented finding fails the check too.
    #[arg(long)]
    strict: bool,
    /// `table` (default) or `json` (the summary as JSON on stdout).
    #[arg(long, value_enum, default_value_t = CheckOutput::Table)]
    output: CheckOutput,
    /// Also print the interface coverage: the table after the summary
    /// (with `--output json`, the summary's `coverage`).
    #[arg(long)]
    coverage: bool,
    #[command(flatten)]
    evidence: EvidenceArgs,
}

/// The JUnit and SARIF files and the coverage gate, of serving and of
/// `check` alike (CONTRACT section 20).
#[derive(Debug, clap::Args)]
pub struct EvidenceArgs {
    /// Write the exchanges as JUnit XML to FILE (the proxy: at the stop):
    /// a testsuite per endpoint, a testcase per exchange, a failure per
    /// violation (with --strict, per undocumented finding too).
    #[arg(long, value_name = "FILE")]
    junit: Option<std::path::PathBuf>,
    /// Write the findings as SARIF 2.1.0 to FILE (the proxy: at the
    /// stop): a rule per rule id, a result per finding.
    #[arg(long, value_name = "FILE")]
    sarif: Option<std::path::PathBuf>,
    /// Exit 1 when the interface coverage (the share of the interface's
    /// answers and transitions seen) is below PCT percent, 0 to 100,
    /// compared exactly (7 of 49 cells, 14.2857… %, is below 14.29).
    #[arg(long, value_name = "PCT", value_parser = parse_percent)]
    min_coverage: Option<Decimal>,
}

/// `--min-coverage`: a percentage from 0 to 100 (`80`, `62.5`, `80%`),
/// kept exactly as a decimal.
fn parse_percent(text: &str) -> Result<Decimal, String> {
    let number = text.trim().trim_end_matches('%').trim_end();
    let digits = !number.is_empty()
        && number
            .bytes()
            .all(|b| b.is_ascii_digit() || b == b'.' || b == b'+');
    match number.parse::<Decimal>() {
        Ok(percent) if digits && (Decimal::ZERO..=Decimal::ONE_HUNDRED).contains(&percent) => {
            Ok(percent)
        }
        _ => Err("a percentage from 0 to 100, e.g. 80 or 62.5".to_owned()),
    }
}

/// What is said when `coverage` is below `min` (`--min-coverage`): the
/// cells seen compared exactly with the share asked for (`covered × 100 ≥
/// min × total`), never a rounded figure: a gate passes only when at
/// least that share was seen.
fn coverage_shortfall(coverage: &Coverage, min: Option<Decimal>) -> Option<String> {
    let min = min?;
    let total = coverage.cells().len();
    let covered = coverage.cells().iter().filter(|(_, n)| *n > 0).count();
    let (Ok(covered), Ok(total)) = (u64::try_from(covered), u64::try_from(total)) else {
        return Some(format!(
            "interface coverage ({covered} of {total} cells) cannot be compared with --min-coverage {min} %"
        ));
    };
    let seen = Decimal::from(covered) * Decimal::ONE_HUNDRED;
    let passes = min
        .checked_mul(Decimal::from(total))
        .is_some_and(|wanted| seen >= wanted);
    if passes {
        return None;
    }
    // Cut, not rounded: the figure shown is never one the gate passes.
    let percent = seen
        .checked_div(Decimal::from(total.max(1)))
        .unwrap_or_default()
        .round_dp_with_strategy(4, rust_decimal::RoundingStrategy::ToZero)
        .normalize();
    Some(format!(
        "interface coverage {percent} % ({covered} of {total} cells) is below --min-coverage {min} %"
    ))
}

/// How `check` prints its summary.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum CheckOutput {
    /// The table the proxy prints at stop.
    Table,
    /// The summary as JSON.
    Json,
}

/// An upstream URL whose parse error never repeats it (it may hold
/// credentials).
#[derive(Debug, Clone)]
pub struct UpstreamUrl(url::Url);

impl std::str::FromStr for UpstreamUrl {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let url = url::Url::parse(text).map_err(|e| {
            format!(
                "not a URL ({e}); an absolute http or https URL, e.g. https://staging.example.com"
            )
        })?;
        let config = ProxyConfig::new(url.clone());
        config.validate().map_err(|e| e.to_string())?;
        Ok(Self(url))
    }
}

/// The admin keys of the flags or [`ADMIN_KEY_ENV`], else of
/// [`OLD_ADMIN_KEY_ENV`]; a malformed old one is named, never shown.
fn admin_keys(given: Vec<AdminKey>) -> Result<Vec<AdminKey>, String> {
    if !given.is_empty() || std::env::var_os(ADMIN_KEY_ENV).is_some() {
        return Ok(given);
    }
    match std::env::var(OLD_ADMIN_KEY_ENV) {
        Ok(text) => text
            .parse::<AdminKey>()
            .map(|key| vec![key])
            .map_err(|reason| format!("{OLD_ADMIN_KEY_ENV}: {reason}")),
        Err(std::env::VarError::NotPresent) => Ok(Vec::new()),
        Err(std::env::VarError::NotUnicode(_)) => Err(format!(
            "{OLD_ADMIN_KEY_ENV}: an admin key must be valid UTF-8"
        )),
    }
}

/// Serves until SIGINT, SIGTERM or SIGHUP, then prints the summary and exits by
/// it: 1 when a violation was found (with `--strict` also an undocumented
/// finding), else 0; 2 when it cannot start. `check_catalog` judges
/// `--catalog` (the mock's binary parses it as a catalogue; alone, the
/// proxy reads it).
pub fn run_proxy(
    args: ProxyArgs,
    check_catalog: impl FnOnce(&Path) -> Result<(), String>,
) -> ExitCode {
    let log_format = args.log_format.into();
    // Dropped (its last lines written) before the summary at the stop.
    let log = init_logging(log_format);
    if let Some(path) = &args.catalog
        && let Err(e) = check_catalog(path)
    {
        say_error(log_format, &e);
        return ExitCode::from(2);
    }
    let admin_keys = match admin_keys(args.admin_keys) {
        Ok(keys) => keys,
        Err(e) => {
            say_error(log_format, &e);
            return ExitCode::from(2);
        }
    };
    let Some(upstream) = args.upstream else {
        say_error(
            log_format,
            "the service to check is missing: give --upstream URL",
        );
        return ExitCode::from(2);
    };
    let mut config = ProxyConfig::new(upstream.0);
    config.report = args.report;
    config.record = args.record;
    config.junit = args.evidence.junit;
    config.sarif = args.evidence.sarif;
    let min_coverage = args.evidence.min_coverage;
    config.enforce = args.enforce;
    config.strict = args.strict;
    config.upstream_timeout = args.upstream_timeout;
    config.upstream_ca = args.upstream_ca;
    config.upstream_identity = args.upstream_client_cert.zip(args.upstream_client_key);
    config.admin_keys = admin_keys;
    // A name (not an address) is what the console is announced under, and
    // what the proxy's own pages then answer to.
    config.host_name = (args.host.parse::<std::net::IpAddr>().is_err()).then(|| args.host.clone());
    #[cfg(feature = "otlp")]
    {
        config.otlp_endpoint = args.otlp_endpoint;
    }
    let runtime = match runtime_logged(log_format) {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    runtime.block_on(async move {
        // The handlers first: `--tls-self-signed` may wait up to 30 s for
        // another process's turn at its directory, and a stop meanwhile
        // ends the start (exit 0) once the files are written whole, as the
        // mock's does (PID 1 in a container ignores a signal without a
        // handler).
        let stop = Stop::watch(log_format);
        let (tls_args, host) = (args.tls.clone(), args.host.clone());
        let tls = stop
            .unless_stopped(tokio::task::spawn_blocking(move || {
                tls_args.server_tls_logged(&host, None, log_format)
            }))
            .await;
        config.tls = match tls {
            None => return Stop::said_before_serving("setting up TLS"),
            Some(Ok(Ok(tls))) => tls,
            Some(Ok(Err(e))) => {
                say_error(log_format, &e);
                return ExitCode::from(2);
            }
            Some(Err(e)) => {
                say_error(log_format, &format!("setting up TLS stopped: {e}"));
                return ExitCode::from(2);
            }
        };
        let scheme = if config.tls.is_some() {
            "https"
        } else {
            "http"
        };
        if let Err(e) = config.validate() {
            say_error(log_format, &error_chain(&e));
            return ExitCode::from(2);
        }
        let strict = config.strict;
        let admin_keys = config.admin_keys.len();
        let listener = match std::net::TcpListener::bind((args.host.as_str(), args.port)) {
            Ok(l) => l,
            Err(e) => {
                // Not 1: that is the proxy's "a violation was seen".
                say_error(
                    log_format,
                    &format!(
                        "cannot listen on {}:{} (--host, --port): {e}",
                        args.host, args.port
                    ),
                );
                return ExitCode::from(2);
            }
        };
        let proxy = match Proxy::start_on(listener, config).await {
            Ok(proxy) => proxy,
            Err(e) => {
                // Whatever kept it from starting: 2, as 1 is the verdict.
                say_error(log_format, &error_chain(&e));
                return ExitCode::from(2);
            }
        };
        let addr = proxy.addr();
        if admin_keys == 0 && !addr.ip().is_loopback() {
            tracing::warn!(
                listening = %addr,
                "listening on {addr} without --admin-key: anyone who reaches this address can read the exchanges (secrets replaced), the summary and the metrics (/_proxy/, /metrics); give --admin-key KEY to put them behind a key"
            );
        } else if admin_keys > 0 {
            tracing::info!(
                admin_keys,
                "the proxy's own pages (/_proxy/, /metrics) need an admin key: {admin_keys} given"
            );
        }
        // The console's address goes to the log, as the mock's does:
        // stdout keeps its one line.
        let console = format!("{}{CONSOLE_PATH}", announced(scheme, &args.host, addr));
        tracing::info!(console = %console, "web console at {console}");
        // The banner a script waits for. A stdout that cannot be written
        // (`> /dev/full`) loses it, not the proxy, as with the mock: a
        // warning in the log, and it serves on (the evidence files and the
        // summary are what the run is judged by).
        if let Err(e) = output::to_stdout(&format!("listening on {scheme}://{addr}\n")) {
            tracing::warn!(
                listening = %addr,
                "cannot write the banner to stdout ({e}); serving anyway on {scheme}://{addr}"
            );
        }
        stop.stopped().await;
        tracing::info!("shutting down: finishing in-flight requests");
        let finished = proxy.finish().await;
        // The log's lines so far (`shutting down`, the evidence files)
        // before the summary: the log writes in batches, behind; from here
        // on, each line as it comes.
        drop(log);
        stop::say_finished(log_format, &finished.summary, &finished.coverage);
        let verdict = finished.summary.exit_code(strict);
        let shortfall = coverage_shortfall(&finished.coverage, min_coverage);
        if let Some(shortfall) = &shortfall {
            stop::say_shortfall(log_format, shortfall);
        }
        stop::say_lacking(log_format, &finished.lacking, finished.summary.exchanges);
        let covered = shortfall.is_none();
        // Evidence asked for and not written, or written in part (lines
        // of the report or the recording lost): 2, as a file that cannot
        // be opened at the start (a CI job must not pass without it).
        let whole = finished.unwritten.is_empty() && finished.lacking.is_empty();
        let written = if whole { 0 } else { 2 };
        ExitCode::from(verdict.max(u8::from(!covered)).max(written))
    })
}

/// Where the proxy is announced (the console's address in the log): at
/// `--host` when it is a name (`localhost`, `proxy.internal.example`: the
/// certificate of `--tls-self-signed` names it, an address it resolves to
/// may not be named), at the loopback address when it is unspecified
/// (`0.0.0.0` or `::`, the address of no machine: on the machine itself,
/// named by the certificate), else at the address it listens on.
fn announced(scheme: &str, host: &str, addr: std::net::SocketAddr) -> String {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    match bare.parse::<std::net::IpAddr>() {
        Ok(ip) if ip.is_unspecified() => {
            let loopback: std::net::IpAddr = if ip.is_ipv4() {
                std::net::Ipv4Addr::LOCALHOST.into()
            } else {
                std::net::Ipv6Addr::LOCALHOST.into()
            };
            format!(
                "{scheme}://{}",
                std::net::SocketAddr::new(loopback, addr.port())
            )
        }
        Ok(_) => format!("{scheme}://{addr}"),
        Err(_) => format!("{scheme}://{bare}:{}", addr.port()),
    }
}

#[cfg(test)]
mod tests;
