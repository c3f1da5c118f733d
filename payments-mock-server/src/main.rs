//! The `payments-mock-server` binary (COMMANDS.md).

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand, ValueEnum};
use payments_contract_proxy::check_recording;
use payments_mock_server::http::{serve_app, serve_app_tls};
use payments_mock_server::seed::{SeedError, seed_from};
use payments_mock_server::state::AppState;
use payments_mock_server::{
    AdminKey, ApiKey, Catalog, Config, Durability, StoreSpec, parse_latency,
};
use payments_serve::logging::init_logging;

mod proxy_command;
mod tls_args;
use proxy_command::{ProxyArgs, proxy};
use tls_args::TlsArgs;

/// The merchant payment-transaction service for integration tests: in
/// memory, or kept in SQLite or PostgreSQL; and a contract proxy in front
/// of a real service.
#[derive(Debug, Parser)]
#[command(name = "payments-mock-server", version, about)]
struct Args {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    serve: ServeArgs,
}

/// Without a subcommand the binary serves the mock.
#[derive(Debug, Subcommand)]
enum Command {
    /// Forward /api/ to a real service and check every exchange against
    /// the interface document (CONTRACT section 16). Exits 1 at SIGINT or
    /// SIGTERM when a violation was found (with --strict, also an
    /// undocumented finding), else 0.
    Proxy(Box<ProxyArgs>),
    /// Run the proxy's checks offline on a recording (--record); the same
    /// summary and exit code.
    Check(CheckArgs),
}

#[derive(Debug, clap::Args)]
struct CheckArgs {
    /// A recording made by `proxy --record`.
    file: std::path::PathBuf,
    /// An undocumented finding fails the check too.
    #[arg(long)]
    strict: bool,
    /// `table` (default) or `json` (the summary as JSON on stdout).
    #[arg(long, value_enum, default_value_t = CheckOutput::Table)]
    output: CheckOutput,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum CheckOutput {
    Table,
    Json,
}

/// The mock's own flags.
#[derive(Debug, clap::Args)]
struct ServeArgs {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// Port to listen on; 0 picks a free port.
    #[arg(long, default_value_t = 8080)]
    port: u16,
    /// Product catalogue in TOML instead of the built-in one.
    #[arg(long, value_name = "FILE")]
    catalog: Option<std::path::PathBuf>,
    /// Expiry of unconfirmed transactions, e.g. `30s`, `15m`, `2h` [default:
    /// 15m, or what the store holds].
    #[arg(long, value_parser = humantime::parse_duration)]
    expiry: Option<Duration>,
    /// Turn authentication on with this key, optionally bound to a merchant.
    #[arg(long = "api-key", value_name = "KEY[=MERCHANT_UUID]", value_parser = QuietParser::<ApiKey>::new("an API key"))]
    api_keys: Vec<ApiKey>,
    /// Put the admin side behind this key: the console (/_mock/ui/),
    /// /metrics and every /_mock/ route except /_mock/health, which then
    /// tells a caller without a key only that the mock is up. Sent as
    /// `Authorization: Bearer KEY` or typed once on the console's sign-in
    /// page. Repeatable. A key bound to a merchant (--api-key
    /// KEY=MERCHANT) then reads that merchant's transactions and requests
    /// there, and changes nothing. Without it, the admin side is open to
    /// whoever reaches the port.
    #[arg(
        long = "admin-key",
        env = "PAYMENTS_MOCK_ADMIN_KEY",
        hide_env_values = true,
        value_name = "KEY",
        value_parser = QuietParser::<AdminKey>::new("an admin key")
    )]
    admin_keys: Vec<AdminKey>,
    /// Where state is kept: `memory` (gone with the process), `sqlite:PATH`
    /// (a file that survives restarts; one process owns it) or
    /// `postgres://USER:PASSWORD@HOST:PORT/DB` (shared by any number of
    /// replicas). A password is never printed.
    #[arg(
        long,
        env = "PAYMENTS_MOCK_STORE",
        hide_env_values = true,
        default_value = "memory",
        value_name = "memory|sqlite:PATH|postgres://…",
        value_parser = QuietParser::<StoreSpec>::new("a store")
    )]
    store: StoreSpec,
    /// SQLite only: what an answered change survives: the process dying
    /// (`process`: WAL, synchronous=NORMAL) or also a power loss (`power`:
    /// synchronous=FULL).
    #[arg(long, value_enum, default_value_t = DurabilityArg::Process)]
    durability: DurabilityArg,
    /// Empty the store (transactions, journal, clock, settings) before
    /// serving, then write this start's settings.
    #[arg(long)]
    fresh: bool,
    /// This process's name in the request journal [default: HOST:PORT as it
    /// listens].
    #[arg(long, value_name = "NAME")]
    replica_name: Option<String>,
    /// Probability (0 to 1) that an /api/ request gets a random fault.
    #[arg(long, default_value_t = 0.0, value_parser = parse_rate)]
    fail_rate: f64,
    /// Seed of the --fail-rate and --latency draws, for repeatable runs;
    /// each request's draw derives from the seed and the request itself, so
    /// the same requests get the same faults in any order. Without it a
    /// random seed is picked and logged at start.
    #[arg(long, value_name = "N")]
    fault_seed: Option<u64>,
    /// Added delay per /api/ request: `MS` or `MS..MS`.
    #[arg(long, value_name = "MS[..MS]", value_parser = parse_latency)]
    latency: Option<std::ops::RangeInclusive<Duration>>,
    /// /api/ requests per second before 429.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    rate_limit: Option<u32>,
    /// Close a connection that takes longer than this to send a request's
    /// headers, e.g. `200ms`, `30s`.
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    header_read_timeout: Duration,
    /// Base URL payment pages are announced under, when the mock is
    /// reached through another address than it listens on; default the
    /// listening address (loopback for 0.0.0.0 or ::).
    #[arg(long, value_name = "URL", value_parser = QuietParser::<payments_mock_server::PublicUrl>::new("a public URL"))]
    public_url: Option<payments_mock_server::PublicUrl>,
    /// Request log format on stderr.
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    log_format: LogFormat,
    /// Start with the transactions a proxy recording (--record) shows, each
    /// in the last state it saw.
    #[arg(long, value_name = "FILE")]
    seed_from: Option<std::path::PathBuf>,
    #[command(flatten)]
    tls: TlsArgs,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum DurabilityArg {
    Process,
    Power,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum LogFormat {
    Text,
    Json,
}

/// Parses a value with its `FromStr` (whose error never repeats the
/// value), but unlike clap's own parsers the error never quotes the value
/// either: an API key, or a store URL with a password, is still a secret
/// when it is malformed, and usage errors end up in CI logs.
#[derive(Debug)]
struct QuietParser<T> {
    what: &'static str,
    kind: std::marker::PhantomData<fn() -> T>,
}

impl<T> QuietParser<T> {
    fn new(what: &'static str) -> Self {
        Self {
            what,
            kind: std::marker::PhantomData,
        }
    }
}

impl<T> Clone for QuietParser<T> {
    fn clone(&self) -> Self {
        Self::new(self.what)
    }
}

impl<T> clap::builder::TypedValueParser for QuietParser<T>
where
    T: std::str::FromStr<Err = String> + Clone + Send + Sync + 'static,
{
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<T, clap::Error> {
        let name = arg.map_or_else(|| "the value".to_owned(), ToString::to_string);
        let reason = match value.to_str() {
            Some(text) => match text.parse::<T>() {
                Ok(parsed) => return Ok(parsed),
                Err(reason) => reason,
            },
            None => format!("{} must be valid UTF-8", self.what),
        };
        let mut cmd = cmd.clone();
        Err(cmd.error(
            clap::error::ErrorKind::ValueValidation,
            format!("invalid value for '{name}': {reason}"),
        ))
    }
}

fn parse_rate(s: &str) -> Result<f64, String> {
    s.parse::<f64>()
        .ok()
        .filter(|r| (0.0..=1.0).contains(r))
        .ok_or_else(|| format!("{s:?} is not a number between 0 and 1"))
}

/// mimalloc instead of the system allocator: a request allocates and frees
/// a few dozen small blocks, and glibc's malloc/free were a quarter of a
/// status look-up's instructions (BENCHMARKS.md, profile).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn log_format(format: LogFormat) -> payments_serve::logging::LogFormat {
    match format {
        LogFormat::Text => payments_serve::logging::LogFormat::Text,
        LogFormat::Json => payments_serve::logging::LogFormat::Json,
    }
}

fn runtime() -> Result<tokio::runtime::Runtime, ExitCode> {
    tokio::runtime::Runtime::new().map_err(|e| {
        eprintln!("error: cannot start the runtime: {e}");
        ExitCode::FAILURE
    })
}

fn main() -> ExitCode {
    let Args { command, serve } = Args::parse();
    match command {
        None => serve_mock(serve),
        Some(Command::Proxy(args)) => proxy(*args),
        Some(Command::Check(args)) => check(&args),
    }
}

/// `check FILE`: the proxy's rules on a recording.
fn check(args: &CheckArgs) -> ExitCode {
    let file = match std::fs::File::open(&args.file) {
        Ok(file) => file,
        Err(e) => {
            eprintln!("error: cannot read {}: {e}", args.file.display());
            return ExitCode::from(2);
        }
    };
    let outcome = match check_recording(std::io::BufReader::new(file)) {
        Ok(outcome) => outcome,
        Err(e) => {
            eprintln!("error: {}: {e}", args.file.display());
            return ExitCode::from(2);
        }
    };
    for bad in &outcome.bad_lines {
        eprintln!("{}:{}: {}", args.file.display(), bad.line, bad.reason);
    }
    match args.output {
        CheckOutput::Table => print!("{}", outcome.summary.table()),
        CheckOutput::Json => match serde_json::to_string_pretty(&outcome.summary) {
            Ok(json) => println!("{json}"),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        },
    }
    ExitCode::from(outcome.summary.exit_code(args.strict))
}

fn serve_mock(args: ServeArgs) -> ExitCode {
    // Flushes the last log lines when main returns.
    let _log = init_logging(log_format(args.log_format));
    let catalog = match &args.catalog {
        Some(path) => match Catalog::from_path(path) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("error: {}", error_chain(&e));
                return ExitCode::from(2);
            }
        },
        None => Catalog::default(),
    };
    let mut config = Config::default();
    config.given.catalog = args.catalog.is_some();
    config.given.expiry = args.expiry.is_some();
    if let Some(expiry) = args.expiry {
        config.expiry = expiry;
    }
    config.store = args.store;
    config.durability = match args.durability {
        DurabilityArg::Process => Durability::Process,
        DurabilityArg::Power => Durability::Power,
    };
    config.fresh = args.fresh;
    config.replica_name = args.replica_name;
    config.api_keys = args.api_keys;
    config.admin_keys = args.admin_keys;
    config.catalog = catalog;
    config.fail_rate = args.fail_rate;
    config.fault_seed = args.fault_seed;
    config.latency = args.latency;
    config.rate_limit = args.rate_limit;
    config.header_read_timeout = args.header_read_timeout;
    config.public_url = args.public_url;
    if let Err(e) = config.validate() {
        eprintln!("error: {}", error_chain(&e));
        return ExitCode::from(2);
    }
    let public_host = config
        .public_url
        .as_ref()
        .and_then(|u| url::Url::parse(u.as_str()).ok())
        .and_then(|u| u.host_str().map(str::to_owned));
    let tls = match args.tls.server_tls(&args.host, public_host.as_deref()) {
        Ok(tls) => tls,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    // The session cookie never travels over plain HTTP then.
    config.secure_cookies = tls.is_some();
    let runtime = match runtime() {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    runtime.block_on(serve(&args.host, args.port, config, tls, args.seed_from))
}

/// Seeds the store from a recording; the exit code when it cannot.
async fn seed(state: &AppState, path: &std::path::Path) -> Result<(), ExitCode> {
    let file = std::fs::File::open(path).map_err(|e| {
        eprintln!("error: cannot read {}: {e}", path.display());
        ExitCode::from(2)
    })?;
    let seeded = seed_from(&state.store, std::io::BufReader::new(file), state.expiry)
        .await
        .map_err(|e| {
            eprintln!("error: seeding from {}: {e}", path.display());
            match e {
                SeedError::Read(_) => ExitCode::from(2),
                _ => ExitCode::FAILURE,
            }
        })?;
    eprintln!(
        "seeded {} transactions from {}; {} the recording shows could not be placed (no initiate seen, an id that is not a UUID, a status the document does not name, or a reference already held){}",
        seeded.placed,
        path.display(),
        seeded.unplaced,
        if seeded.bad_lines > 0 {
            format!("; {} lines are no recorded exchange", seeded.bad_lines)
        } else {
            String::new()
        }
    );
    Ok(())
}

async fn serve(
    host: &str,
    port: u16,
    config: Config,
    tls: Option<payments_mock_server::tls::ServerTls>,
    seed_from: Option<std::path::PathBuf>,
) -> ExitCode {
    let https = tls.is_some();
    let scheme = if https { "https" } else { "http" };
    let listener = match tokio::net::TcpListener::bind((host, port)).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("error: cannot listen on {host}:{port}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let addr: SocketAddr = match listener.local_addr() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("error: cannot read the bound address: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Some(warning) = payments_mock_server::open_admin_warning(addr, &config) {
        tracing::warn!(listening = %addr, "{warning}");
    } else if !config.admin_keys.is_empty() {
        let keys = config.admin_keys.len();
        tracing::info!(
            admin_keys = keys,
            "the console, /metrics and every /_mock/ route except /_mock/health need an admin key: {keys} given"
        );
    }
    let header_read_timeout = config.header_read_timeout;
    let seed_given = config.fault_seed.is_some();
    let mut config = config;
    let public_url = config
        .public_url
        .get_or_insert_with(|| payments_mock_server::listening_url_with(addr, https))
        .clone();
    config.replica_name.get_or_insert_with(|| addr.to_string());
    let state = match AppState::open(config).await {
        Ok(state) => state,
        Err(e) => {
            eprintln!("error: {}", error_chain(&e));
            return ExitCode::from(e.exit_code());
        }
    };
    if let Some(path) = &seed_from
        && let Err(code) = seed(&state, path).await
    {
        return code;
    }
    let store = state.store.shown();
    tracing::info!(store = %store, replica = %state.replica, "state is kept in {store}");
    tracing::info!(public_url = %public_url, "payment pages are announced under {public_url}");
    // The console's address goes to the log: stdout keeps its one line.
    let console = format!(
        "{}{}",
        payments_mock_server::listening_url_with(addr, https),
        payments_mock_server::http::CONSOLE_PATH.trim_start_matches('/')
    );
    tracing::info!(console = %console, "web console at {console}");
    let seed = state.faults.seed();
    if seed_given {
        tracing::info!(fault_seed = seed, "fault seed {seed}");
    } else {
        tracing::info!(
            fault_seed = seed,
            "fault seed {seed} (random; pass --fault-seed {seed} to repeat this run's faults)"
        );
    }
    let stop = shutdown_signal();
    // The banner is the one line on stdout; scripts wait for it. It is
    // printed once the routes and the OpenAPI document are built: once a
    // script sees it, every request is answered without waiting.
    let banner = || println!("listening on {scheme}://{addr}");
    match tls {
        Some(tls) => serve_app_tls(listener, state, tls, header_read_timeout, banner, stop).await,
        None => serve_app(listener, state, header_read_timeout, banner, stop).await,
    }
    ExitCode::SUCCESS
}

/// A future that completes on SIGINT or SIGTERM. The handlers are
/// installed here, before it is first polled, so a signal that comes right
/// after the banner (a script stopping what it just started) already stops
/// the server gracefully instead of killing it.
fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    let handlers = {
        use tokio::signal::unix::{SignalKind, signal};
        (
            signal(SignalKind::interrupt()).ok(),
            signal(SignalKind::terminate()).ok(),
        )
    };
    async move {
        #[cfg(unix)]
        {
            let (mut interrupt, mut terminate) = handlers;
            let recv = async |s: &mut Option<tokio::signal::unix::Signal>| match s {
                Some(s) => {
                    s.recv().await;
                }
                None => std::future::pending::<()>().await,
            };
            tokio::select! {
                () = recv(&mut interrupt) => {},
                () = recv(&mut terminate) => {},
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
        }
        tracing::info!("shutting down: finishing in-flight requests");
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}
