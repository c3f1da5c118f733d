//! The `payments-mock-server` binary (COMMANDS.md): the mock service with
//! every store, its pages, its OpenAPI document, TLS and metrics; and, as
//! aliases, the contract proxy's `proxy` and `check` (the
//! `payments-contract-proxy` binary's own commands).
//!
//! The service is the payments-mock-server library ([`Service`]); this
//! package is its flags, its log, its `--seed-from` (a proxy recording read
//! into what the library places: `recording.rs`), and its banner.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand, ValueEnum};
use payments_contract_proxy::cli::{CheckArgs, ProxyArgs, run_check, run_proxy};
use payments_mock_server::{
    AdminKey, ApiKey, Catalog, Config, Durability, Service, StoreSpec, parse_latency,
};
use payments_serve::cli::{
    LogFormatArg, QuietParser, Stop, TlsArgs, error_chain, runtime_logged, say_error,
};
use payments_serve::logging::{LogFormat, init_logging};
use payments_serve::otlp::OtlpEndpoint;

mod listen;
mod recording;

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

/// `payments-mock-server proxy|check …` alone, parsed without the mock's
/// own flags: their environment variables (`PAYMENTS_MOCK_STORE`,
/// `PAYMENTS_MOCK_ADMIN_KEY`) are not the aliases', and an empty or
/// malformed one must not stop a command that never reads it, as it does
/// not stop `payments-contract-proxy`.
#[derive(Debug, Parser)]
#[command(name = "payments-mock-server", version, about)]
struct Alias {
    #[command(subcommand)]
    command: Command,
}

/// Without a subcommand the binary serves the mock.
#[derive(Debug, Subcommand)]
enum Command {
    /// Forward /api/ to a real service and check every exchange against
    /// the interface document (CONTRACT section 16). Exits 1 at SIGINT,
    /// SIGTERM or SIGHUP when a violation was found (with --strict, also an
    /// undocumented finding), else 0. The same as the
    /// payments-contract-proxy binary.
    Proxy(Box<ProxyArgs>),
    /// Run the proxy's checks offline on a recording (--record); the same
    /// summary and exit code. The same as `payments-contract-proxy check`.
    Check(CheckArgs),
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
    /// Read up to its last '=', which must be followed by the merchant's
    /// UUID or end the key: a key that ends with '=' (base64 padding) is
    /// taken whole, bound to no merchant; `abc==UUID` binds `abc=`.
    /// Repeatable. Or the environment variable PAYMENTS_MOCK_API_KEYS,
    /// keys separated by whitespace (a flag shows in the process list to
    /// every user); flags given, the variable is ignored.
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
    /// How long a sandbox (POST /_mock/sandboxes) lives unused, e.g. `10m`,
    /// `1h` (whole seconds, at most 7 days); each request to it renews it.
    #[arg(long, value_name = "DURATION", default_value = "1h", value_parser = humantime::parse_duration)]
    sandbox_ttl: Duration,
    /// At most this many sandboxes live at once; one more is 429
    /// TOO_MANY_SANDBOXES.
    #[arg(long, value_name = "N", default_value_t = payments_mock_server::DEFAULT_MAX_SANDBOXES, value_parser = clap::builder::TypedValueParser::map(clap::value_parser!(u32).range(1..=1_000_000), |n| n as usize))]
    max_sandboxes: usize,
    /// Base URL payment pages are announced under, when the mock is
    /// reached through another address than it listens on; default the
    /// listening address (loopback for 0.0.0.0 or ::).
    #[arg(long, value_name = "URL", value_parser = QuietParser::<payments_mock_server::PublicUrl>::new("a public URL"))]
    public_url: Option<payments_mock_server::PublicUrl>,
    /// Request log format on stderr.
    #[arg(long, value_enum, default_value_t = LogFormatArg::Text)]
    log_format: LogFormatArg,
    /// Export a server span per request over OTLP/HTTP to this receiver,
    /// e.g. `http://localhost:4318` (`/v1/traces` is added unless the URL
    /// ends with it), each a child of the caller's traceparent; batched,
    /// the last batch sent at the stop.
    #[arg(long, value_name = "URL", value_parser = QuietParser::<OtlpEndpoint>::new("an OTLP endpoint"))]
    otlp_endpoint: Option<OtlpEndpoint>,
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

fn main() -> ExitCode {
    const SECRET_FLAGS: &[&str] = &["--api-key", "--admin-key"];
    let first = std::env::args_os().nth(1);
    if matches!(
        first.as_ref().and_then(|a| a.to_str()),
        Some("proxy" | "check")
    ) {
        let Alias { command } = payments_serve::cli::parse_hiding_secrets::<Alias>(SECRET_FLAGS);
        return run_alias(command);
    }
    let Args { command, serve } = payments_serve::cli::parse_hiding_secrets::<Args>(SECRET_FLAGS);
    match command {
        None => serve_mock(serve),
        // `proxy` or `check` after flags (the first argument is not the
        // command, or the alias above took it): those flags are the mock's
        // own, and the proxy would silently run without them (`--port
        // 9000 proxy …` listening on the proxy's default port).
        Some(command) => {
            let name = match command {
                Command::Proxy(_) => "proxy",
                Command::Check(_) => "check",
            };
            say_error(
                serve.log_format.into(),
                &format!(
                    "the flags before `{name}` are the mock's own and would do nothing for the {name}: give them after it (payments-mock-server {name} --help)"
                ),
            );
            ExitCode::from(2)
        }
    }
}

fn run_alias(command: Command) -> ExitCode {
    match command {
        Command::Proxy(args) => run_proxy(*args, |path| {
            Catalog::from_path(path)
                .map(|_| ())
                .map_err(|e| error_chain(&e))
        }),
        Command::Check(args) => run_check(&args),
    }
}

fn serve_mock(args: ServeArgs) -> ExitCode {
    // Flushes the last log lines when main returns.
    let format: LogFormat = args.log_format.into();
    let _log = init_logging(format);
    // The runtime first: the signal handlers are installed in it before
    // anything slow starts (the TLS directory, the store, --seed-from).
    let runtime = match runtime_logged(format) {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    runtime.block_on(start(args, format))
}

/// Starts the mock and serves it until a stop, which is heard from the
/// first line on: a stop while it starts ends the start (exit 0), what
/// was opened closed.
async fn start(mut args: ServeArgs, format: LogFormat) -> ExitCode {
    let stop = Stop::watch(format);
    // `[::1]`, as the banner writes an IPv6 address, is the address `::1`.
    if let Some(bare) = args
        .host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
    {
        args.host = bare.to_owned();
    }
    let catalog = match &args.catalog {
        Some(path) => match Catalog::from_path(path) {
            Ok(c) => c,
            Err(e) => {
                say_error(format, &error_chain(&e));
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
    config.api_keys = match api_keys(args.api_keys) {
        Ok(keys) => keys,
        Err(e) => {
            say_error(format, &e);
            return ExitCode::from(2);
        }
    };
    config.admin_keys = args.admin_keys;
    config.catalog = catalog;
    config.fail_rate = args.fail_rate;
    config.fault_seed = args.fault_seed;
    config.latency = args.latency;
    config.rate_limit = args.rate_limit;
    config.header_read_timeout = args.header_read_timeout;
    config.sandbox_ttl = args.sandbox_ttl;
    config.max_sandboxes = args.max_sandboxes;
    config.public_url = args.public_url;
    config.otlp_endpoint = args.otlp_endpoint;
    if let Err(e) = config.validate() {
        say_error(format, &error_chain(&e));
        return ExitCode::from(2);
    }
    let public_host = config
        .public_url
        .as_ref()
        .and_then(|u| url::Url::parse(u.as_str()).ok())
        .and_then(|u| u.host_str().map(str::to_owned));
    // Off the runtime (it may wait for another process's turn at the
    // directory): a stop meanwhile ends the start once its files are
    // written whole.
    let (tls_args, host) = (args.tls.clone(), args.host.clone());
    let tls = stop
        .unless_stopped(tokio::task::spawn_blocking(move || {
            tls_args.server_tls_logged(&host, public_host.as_deref(), format)
        }))
        .await;
    let tls = match tls {
        None => return Stop::said_before_serving("setting up TLS"),
        Some(Ok(Ok(tls))) => tls,
        Some(Ok(Err(e))) => {
            say_error(format, &e);
            return ExitCode::from(2);
        }
        Some(Err(e)) => {
            say_error(format, &format!("setting up TLS stopped: {e}"));
            return ExitCode::FAILURE;
        }
    };
    // The session cookie never travels over plain HTTP then.
    config.secure_cookies = tls.is_some();
    let serving = Serving {
        host: &args.host,
        port: args.port,
        format,
        stop,
    };
    serve(serving, config, tls, args.seed_from).await
}

/// Why seeding ended the start.
enum Ended {
    /// It failed: the exit code, said.
    Failed(ExitCode),
    /// A stop came while it did this.
    Stopped(&'static str),
}

/// The API keys: the flags', or else those of `PAYMENTS_MOCK_API_KEYS`
/// (never both: flags win, as `--admin-key` over its variable).
fn api_keys(flags: Vec<ApiKey>) -> Result<Vec<ApiKey>, String> {
    const VARIABLE: &str = "PAYMENTS_MOCK_API_KEYS";
    if flags.is_empty() {
        return payments_serve::cli::env_list(VARIABLE, "an API key");
    }
    if std::env::var_os(VARIABLE).is_some_and(|v| !v.to_string_lossy().trim().is_empty()) {
        tracing::warn!(
            "{VARIABLE} is ignored: --api-key is given, and the flags' keys are the keys"
        );
    }
    Ok(flags)
}

/// Seeds the service from a recording; the exit code when it cannot, or
/// the stop that came meanwhile (the recording is read off the runtime
/// and placed one transaction at a time, both ended by the stop).
async fn seed(
    service: &Service,
    path: &std::path::Path,
    format: LogFormat,
    stop: &Stop,
) -> Result<(), Ended> {
    let file = std::fs::File::open(path).map_err(|e| {
        say_error(format, &format!("cannot read {}: {e}", path.display()));
        Ended::Failed(ExitCode::from(2))
    })?;
    tracing::info!(seed_from = %path.display(), "seeding from {}", path.display());
    let reader = stop.reader(file);
    let read =
        tokio::task::spawn_blocking(move || recording::sightings(std::io::BufReader::new(reader)))
            .await;
    if stop.is_stopped() {
        return Err(Ended::Stopped("reading --seed-from"));
    }
    let read = read
        .map_err(|e| std::io::Error::other(e.to_string()))
        .and_then(|r| r);
    let (sightings, bad_lines) = read.map_err(|e| {
        say_error(
            format,
            &format!(
                "seeding from {}: cannot read the recording: {e}",
                path.display()
            ),
        );
        Ended::Failed(ExitCode::from(2))
    })?;
    let unstopped = sightings.into_iter().take_while(|_| !stop.is_stopped());
    let seeded = service.seed(unstopped).await.map_err(|e| {
        say_error(format, &format!("seeding from {}: {e}", path.display()));
        Ended::Failed(ExitCode::FAILURE)
    })?;
    if stop.is_stopped() {
        return Err(Ended::Stopped("seeding from --seed-from"));
    }
    let said = format!(
        "seeded {} transactions from {}; {} the recording shows could not be placed (no initiate seen, an id that is not a UUID, a status the document does not name, or a reference already held){}",
        seeded.placed,
        path.display(),
        seeded.unplaced,
        if bad_lines > 0 {
            format!("; {bad_lines} lines are no recorded exchange")
        } else {
            String::new()
        }
    );
    match format {
        LogFormat::Text => payments_serve::cli::to_stderr(&format!("{said}\n")),
        LogFormat::Json => tracing::info!(
            seeded = seeded.placed,
            unplaced = seeded.unplaced,
            bad_lines,
            "{said}"
        ),
    }
    Ok(())
}

/// Where the mock listens, the log's format (for what is said on stderr
/// outside the log: `say_error`), and the stop.
struct Serving<'a> {
    host: &'a str,
    port: u16,
    format: LogFormat,
    stop: Stop,
}

async fn serve(
    Serving {
        host,
        port,
        format,
        stop,
    }: Serving<'_>,
    config: Config,
    tls: Option<payments_mock_server::tls::ServerTls>,
    seed_from: Option<std::path::PathBuf>,
) -> ExitCode {
    let https = tls.is_some();
    let scheme = if https { "https" } else { "http" };
    // Bound now, listening once the store can answer (`listen.rs`).
    let socket = match listen::bind(host, port).await {
        Ok(s) => s,
        Err(e) => {
            // A usage error (2), as the proxy's: a --host that does not
            // resolve, a --port taken or not allowed.
            say_error(
                format,
                &format!("cannot listen on {host}:{port} (--host, --port): {e}"),
            );
            return ExitCode::from(2);
        }
    };
    let addr: SocketAddr = match socket.local_addr() {
        Ok(a) => a,
        Err(e) => {
            say_error(format, &format!("cannot read the bound address: {e}"));
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
    let seed_given = config.fault_seed.is_some();
    let mut config = config;
    let public_url = config
        .public_url
        .get_or_insert_with(|| payments_mock_server::listening_url_with(addr, https))
        .clone();
    config.replica_name.get_or_insert_with(|| addr.to_string());
    let service = match stop.unless_stopped(Service::open(config)).await {
        None => return Stop::said_before_serving("opening the store"),
        Some(Ok(service)) => service,
        Some(Err(e)) => {
            say_error(format, &error_chain(&e));
            return ExitCode::from(e.exit_code());
        }
    };
    if let Some(path) = &seed_from
        && let Err(ended) = seed(&service, path, format, &stop).await
    {
        // The store closed (a SQLite file's writer finishes what it was
        // given) before the stop is said.
        drop(service);
        return match ended {
            Ended::Failed(code) => code,
            Ended::Stopped(during) => Stop::said_before_serving(during),
        };
    }
    let listener = match listen::listen(socket) {
        Ok(l) => l,
        Err(e) => {
            // Another process took the port meanwhile (both bound with
            // SO_REUSEADDR, it listened first).
            say_error(
                format,
                &format!("cannot listen on {host}:{port} (--host, --port): {e}"),
            );
            return ExitCode::from(2);
        }
    };
    let store = service.store();
    let replica = service.replica();
    tracing::info!(store = %store, replica = %replica, "state is kept in {store}");
    tracing::info!(public_url = %public_url, "payment pages are announced under {public_url}");
    // The console's address goes to the log: stdout keeps its one line.
    let console = format!(
        "{}{}",
        payments_mock_server::listening_url_with(addr, https),
        payments_mock_server::CONSOLE_PATH.trim_start_matches('/')
    );
    tracing::info!(console = %console, "web console at {console}");
    let seed = service.fault_seed();
    // A string field: a seed above 2^53 would be rounded by a JSON
    // reader's f64 (jq, JavaScript), and another run repeated.
    if seed_given {
        tracing::info!(fault_seed = %seed, "fault seed {seed}");
    } else {
        tracing::info!(
            fault_seed = %seed,
            "fault seed {seed} (random; pass --fault-seed {seed} to repeat this run's faults)"
        );
    }
    let stop = async move {
        stop.stopped().await;
        tracing::info!("shutting down: finishing in-flight requests");
    };
    // The banner is the one line on stdout; scripts wait for it. It is
    // printed once the routes and the OpenAPI document are built: once a
    // script sees it, every request is answered without waiting. A stdout
    // that cannot be written (`> /dev/full`) loses it, not the server: a
    // warning in the log, and it serves on.
    let banner = || {
        use std::io::Write as _;
        let mut out = std::io::stdout().lock();
        if let Err(e) = writeln!(out, "listening on {scheme}://{addr}").and_then(|()| out.flush()) {
            tracing::warn!(
                listening = %addr,
                "cannot write the banner to stdout ({e}); serving anyway on {scheme}://{addr}"
            );
        }
    };
    match tls {
        Some(tls) => service.serve_tls(listener, tls, banner, stop).await,
        None => service.serve(listener, banner, stop).await,
    }
    ExitCode::SUCCESS
}
