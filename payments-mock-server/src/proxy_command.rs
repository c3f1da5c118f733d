//! The binary's `proxy` subcommand (CONTRACT section 16): its flags and
//! its run; the proxy itself is the payments-contract-proxy crate.

use std::process::ExitCode;
use std::time::Duration;

use payments_contract_proxy::{Proxy, ProxyConfig};
use payments_mock_server::{AdminKey, Catalog};
use payments_serve::logging::init_logging;

use crate::tls_args::TlsArgs;
use crate::{LogFormat, QuietParser, error_chain, log_format, runtime, shutdown_signal};

#[derive(Debug, clap::Args)]
pub(crate) struct ProxyArgs {
    /// The service to check: http or https, maybe with a path prefix.
    #[arg(long, value_name = "URL", value_parser = QuietParser::<UpstreamUrl>::new("an upstream URL"))]
    upstream: UpstreamUrl,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
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
    /// Answer an exchange with a violation 502 CONTRACT_VIOLATION instead.
    #[arg(long)]
    enforce: bool,
    /// An undocumented finding fails the run too.
    #[arg(long)]
    strict: bool,
    /// How long the upstream may take to answer, e.g. `5s`.
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    upstream_timeout: Duration,
    /// A product catalogue (accepted for symmetry with the mock; the rules
    /// judge by the interface document and do not use it).
    #[arg(long, value_name = "FILE")]
    catalog: Option<std::path::PathBuf>,
    /// Log format on stderr.
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    log_format: LogFormat,
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
    /// open to whoever reaches the port.
    #[arg(
        long = "admin-key",
        env = "PAYMENTS_MOCK_ADMIN_KEY",
        hide_env_values = true,
        value_name = "KEY",
        value_parser = QuietParser::<AdminKey>::new("an admin key")
    )]
    admin_keys: Vec<AdminKey>,
}

/// An upstream URL whose parse error never repeats it (it may hold
/// credentials).
#[derive(Debug, Clone)]
struct UpstreamUrl(url::Url);

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

/// `proxy --upstream URL`: serves until SIGINT or SIGTERM, then prints the
/// summary and exits by it.
pub(crate) fn proxy(args: ProxyArgs) -> ExitCode {
    let _log = init_logging(log_format(args.log_format));
    if let Some(path) = &args.catalog
        && let Err(e) = Catalog::from_path(path)
    {
        eprintln!("error: {}", error_chain(&e));
        return ExitCode::from(2);
    }
    let mut config = ProxyConfig::new(args.upstream.0);
    config.report = args.report;
    config.record = args.record;
    config.enforce = args.enforce;
    config.strict = args.strict;
    config.upstream_timeout = args.upstream_timeout;
    config.upstream_ca = args.upstream_ca;
    config.upstream_identity = args.upstream_client_cert.zip(args.upstream_client_key);
    config.admin_keys = args.admin_keys;
    config.tls = match args.tls.server_tls(&args.host, None) {
        Ok(tls) => tls,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let scheme = if config.tls.is_some() {
        "https"
    } else {
        "http"
    };
    if let Err(e) = config.validate() {
        eprintln!("error: {}", error_chain(&e));
        return ExitCode::from(2);
    }
    let strict = config.strict;
    let admin_keys = config.admin_keys.len();
    let runtime = match runtime() {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    runtime.block_on(async move {
        let listener = match std::net::TcpListener::bind((args.host.as_str(), args.port)) {
            Ok(l) => l,
            Err(e) => {
                // Not 1: that is the proxy's "a violation was seen".
                eprintln!("error: cannot listen on {}:{}: {e}", args.host, args.port);
                return ExitCode::from(2);
            }
        };
        let stop = shutdown_signal();
        let proxy = match Proxy::start_on(listener, config).await {
            Ok(proxy) => proxy,
            Err(e) => {
                // Whatever kept it from starting: 2, as 1 is the verdict.
                eprintln!("error: {}", error_chain(&e));
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
        let console = format!(
            "{scheme}://{addr}{}",
            payments_contract_proxy::CONSOLE_PATH
        );
        tracing::info!(console = %console, "web console at {console}");
        println!("listening on {scheme}://{addr}");
        stop.await;
        let summary = proxy.shutdown().await;
        eprint!("{}", summary.table());
        ExitCode::from(summary.exit_code(strict))
    })
}
