//! The commands, and what they share: settings, the client, printing.
//!
//! Each command module turns its own flags into a request, calls the client
//! and prints through [`Context`]; none of them decides exit codes except by
//! returning an [`Exit`] or a [`CliError`].

mod completions;
mod confirm;
mod http;
mod initiate;
mod reconcile;
mod reference;
mod signals;
mod status;
mod tail;
mod trace;
mod userinfo;
mod verbose;
mod verify_return;

use std::{
    cell::RefCell,
    io::{IsTerminal as _, Write as _},
    time::Instant,
};

use payments_client::{Client, ClientBuilder, RetryPolicy};
use secrecy::ExposeSecret as _;

use crate::{
    cli::{Cli, Command, OutputFormat},
    config::{SettingFile, Settings, Source},
    error::CliError,
    exit::Exit,
    output::Style,
};

/// `--currency CODE` of the commands that read amounts without one (the
/// status and confirm answers carry none): an active ISO 4217 code, any
/// case ([`crate::amount::currency`]: a withdrawn one is refused as the
/// service refuses it, and said to be withdrawn).
///
/// # Errors
///
/// A code that is not one, as a usage error naming the flag.
pub fn currency_flag(flag: &str, code: &str) -> Result<payments_client::Currency, CliError> {
    let upper = code.trim().to_ascii_uppercase();
    match crate::amount::currency(&upper) {
        Ok((currency, _)) => Ok(currency),
        Err(crate::amount::AmountError::NoMinorUnit(_)) => Err(CliError::Usage(format!(
            "{flag} {}: {upper} has no minor unit, so no payment is in it",
            crate::usage::quote(code)
        ))),
        Err(err @ crate::amount::AmountError::WithdrawnCurrency { .. }) => {
            Err(CliError::Usage(format!("{flag} {err}")))
        }
        Err(_) => Err(CliError::Usage(format!(
            "{flag} {}: not an ISO 4217 currency code; give one such as MYR, USD or JPY",
            crate::usage::quote(code)
        ))),
    }
}

/// Whether `amount` can be an amount in `currency`: it has no more
/// significant decimal places (trailing zeros dropped) than the currency
/// has. Fewer is no evidence: the amount is a decimal number, `150.5` is
/// `150.50`, and a service may write either (the interface document says
/// "number (decimal)"); `10.505` cannot be MYR, nor `10.5` JPY.
#[must_use]
pub fn fits(amount: &payments_client::Decimal, currency: &payments_client::Currency) -> bool {
    currency
        .exponent()
        .is_some_and(|exponent| amount.normalize().scale() <= exponent)
}

/// A currency and its decimal places, as a note says them: `MYR (2
/// decimal places)`, `JPY (no decimal places)`.
#[must_use]
pub fn places_of(currency: &payments_client::Currency) -> String {
    let places = match currency.exponent().unwrap_or_default() {
        0 => "no decimal places".to_owned(),
        1 => "1 decimal place".to_owned(),
        n => format!("{n} decimal places"),
    };
    format!("{} ({places})", currency.code())
}

/// A decimal amount from the service with the currency the CLI was told
/// (`--currency`), written with that currency's decimal places (`150.5`
/// with MYR is `150.50 MYR`); `None` when the amount cannot be in it
/// ([`fits`]).
#[must_use]
pub fn amount_in(
    amount: &payments_client::Decimal,
    currency: &payments_client::Currency,
) -> Option<String> {
    let exponent = currency.exponent()?;
    if !fits(amount, currency) {
        return None;
    }
    let mut written = *amount;
    // The same value; a scale a decimal cannot hold is kept as near as it
    // can, and still shown with the code.
    written.rescale(exponent);
    crate::output::amount_in(&written, currency)
        .or_else(|| Some(format!("{written} {}", currency.code())))
}

/// Said on stderr when `--currency` does not fit an amount ([`fits`]).
#[must_use]
pub fn other_decimals_note(
    amount: &payments_client::Decimal,
    currency: &payments_client::Currency,
) -> String {
    format!(
        "note: the service wrote the amount {amount}, which cannot be in {}; amounts are shown \
         without a currency (is --currency right?)",
        places_of(currency)
    )
}

/// Writes one line on stderr. A stderr that cannot be written (closed by
/// `2>&1 >/dev/null | head -1`, full as `2>/dev/full`) loses the line, not
/// the run: `eprintln!` panicked there (exit 101) instead of the command
/// exiting with its documented code.
pub(crate) fn stderr_line(line: impl std::fmt::Display) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// Queued output beyond this many bytes is written without waiting.
const QUEUE_LIMIT: usize = 64 * 1024;

/// Runs the parsed command line to its exit code.
///
/// # Errors
///
/// Whatever stopped the command; `main` prints it once.
pub fn run(cli: Cli) -> Result<Exit, CliError> {
    if let Command::Completions(args) = cli.command {
        return completions::run(&args);
    }
    let settings = Settings::resolve(cli.global)?;
    if settings.verbose {
        verbose::install();
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(CliError::Runtime)?;
    // reconcile and tail --follow take the signals themselves; the others
    // end at them, as PID 1 too.
    let takes_signals = match &cli.command {
        Command::Reconcile(_) => true,
        Command::Tail(args) => args.follow,
        _ => false,
    };
    if !takes_signals {
        signals::guard();
    }
    runtime.block_on(async move {
        let ctx = Context::new(settings)?;
        // reconcile's stdout is its rows and its summary line, tail's its
        // entries, nothing else: whatever stops them goes to stderr
        // (COMMANDS.md, "reconcile", "tail").
        let prints_failures = !matches!(cli.command, Command::Reconcile(_) | Command::Tail(_));
        let result = match cli.command {
            Command::Initiate(args) => initiate::run(&ctx, args).await,
            Command::Confirm(args) => confirm::run(&ctx, args).await,
            Command::Status(args) => status::run(&ctx, args).await,
            Command::Reconcile(args) => reconcile::run(&ctx, args).await,
            Command::VerifyReturn(args) => verify_return::run(&ctx, args).await,
            Command::Tail(args) => tail::run(&ctx, args).await,
            Command::Completions(_) => Ok(Exit::Ok),
        };
        if let Err(err) = &result {
            // A script reading json sees the service's failure envelope too;
            // never an answer the client refused (CONTRACT section 17).
            if let Some(envelope) = err
                .service_envelope()
                .filter(|_| ctx.is_json() && prints_failures)
            {
                ctx.print_line(envelope)?;
            }
        }
        result
    })
}

/// A call as `-v` follows it: when it started, and its span (a trace of
/// its own under `-v`; none otherwise), which the client's spans and its
/// `traceparent` descend from.
#[derive(Debug)]
pub struct Started {
    at: Instant,
    span: tracing::Span,
}

impl Started {
    /// The span to run the call in.
    pub fn span(&self) -> tracing::Span {
        self.span.clone()
    }

    /// How long since the call started.
    pub fn elapsed(&self) -> std::time::Duration {
        self.at.elapsed()
    }

    /// The call's trace id, when `-v` gave it one.
    fn trace_id(&self) -> Option<String> {
        use opentelemetry::trace::TraceContextExt as _;
        use tracing_opentelemetry::OpenTelemetrySpanExt as _;
        if self.span.is_none() {
            return None;
        }
        let context = self.span.context();
        let span = context.span();
        let ids = span.span_context();
        ids.is_valid().then(|| ids.trace_id().to_string())
    }
}

/// What every command needs.
#[derive(Debug)]
pub struct Context {
    pub settings: Settings,
    pub client: Client,
    /// The service's base URL, as given (with any `user:pass@`).
    pub base_url: String,
    /// The same as messages show it: userinfo as `***@`.
    pub shown_url: String,
    /// The base URL as requests go to it (parsed: surrounding spaces, a
    /// trailing `\r` and a trailing `/` gone), userinfo as `***@`: what
    /// `-v` prints before each path.
    requested_url: String,
    /// Whether the base URL has `user:pass@` (sent as `Authorization:
    /// Basic`).
    url_credentials: bool,
    /// Lines queued by [`Context::queue_line`], not yet written.
    queued: RefCell<Vec<u8>>,
    /// Whether stdout is a terminal (queued lines are then written at once).
    stdout_is_terminal: bool,
}

/// Whether stdin was closed when the process started (`main` tells it).
static STDIN_CLOSED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();

/// Notes, once, whether stdin was closed at start-up (`<&-`).
pub fn note_stdin_closed(closed: bool) {
    let _ = STDIN_CLOSED.set(closed);
}

/// What reading `-` says when stdin was closed at start-up. A closed
/// stdin is replaced by Rust's runtime with `/dev/null` opened for reading
/// and writing, which is also what `<>/dev/null` and Python's
/// `subprocess.DEVNULL` give: the two cannot be told apart, so both are
/// named.
pub(crate) const STDIN_GONE: &str =
    "it is closed, or /dev/null opened for writing too (nothing to read)";

/// Whether stdin was closed at start-up: reading `-` then is an error
/// (exit 2, `cannot read standard input: it is closed, or …`), not an
/// empty input.
pub(crate) fn stdin_was_closed() -> bool {
    STDIN_CLOSED.get().copied().unwrap_or(false)
}

/// The client's reason without the URL it repeats (said once, before it):
/// only the URL as the client quotes it (`"…"`), once, is taken out; a bare
/// `e` or an empty URL replaced every `e` or every gap of the text.
fn without_url(reason: &str, shown_url: &str) -> String {
    reason.replacen(&format!("{shown_url:?}"), "…", 1)
}

impl Context {
    fn new(settings: Settings) -> Result<Self, CliError> {
        let base_url = settings.require_base_url()?.to_owned();
        let shown_url = payments_client::redact_url(&base_url);
        if let Some(conflict) = userinfo::userinfo_and_key(&base_url, &settings) {
            return Err(conflict);
        }
        let mut builder = Client::builder(base_url.as_str())
            .timeout(settings.timeout)
            .retry_policy(RetryPolicy::default().max_retries(settings.retries))
            .user_agent(concat!("payments-cli/", env!("CARGO_PKG_VERSION")));
        if let Some(key) = &settings.api_key {
            crate::secrets::remember(key.0.expose_secret());
            builder = builder.api_key(key.0.expose_secret());
        }
        builder = tls(builder, &settings)?;
        let client = builder.build().map_err(|err| {
            // The builder also checks the key (it must fit in a header); its
            // message names the key without quoting it.
            let text = err.to_string();
            if let Some(usage) = tls_usage(&text, &settings) {
                return usage;
            }
            if text.contains("API key") {
                return CliError::Usage(format!(
                    "{text}; check --api-key, PAYMENTS_API_KEY or api_key in the profile"
                ));
            }
            let from = match settings.base_url.as_ref().map(|(_, source)| *source) {
                Some(Source::Profile) => "base_url in the profile",
                _ => "--base-url or PAYMENTS_BASE_URL",
            };
            CliError::Usage(format!(
                "invalid service URL {} (from {from}): {}",
                crate::text::quote(&shown_url),
                crate::text::cut(&without_url(&text, &shown_url))
            ))
        })?;
        let parsed = reqwest::Url::parse(base_url.trim()).ok();
        let requested_url = parsed.as_ref().map_or_else(
            || shown_url.clone(),
            |url| payments_client::redact_url(url.as_str().trim_end_matches('/')),
        );
        let url_credentials = parsed
            .as_ref()
            .is_some_and(|url| !url.username().is_empty() || url.password().is_some());
        Ok(Self {
            settings,
            client,
            base_url,
            shown_url,
            requested_url,
            url_credentials,
            queued: RefCell::new(Vec::new()),
            stdout_is_terminal: std::io::stdout().is_terminal(),
        })
    }

    /// Whether results are printed as the service's envelopes.
    pub fn is_json(&self) -> bool {
        self.settings.output == OutputFormat::Json
    }

    /// How tables are drawn.
    pub fn style(&self) -> Style {
        let terminal = if self.stdout_is_terminal {
            terminal_size::terminal_size_of(std::io::stdout()).map(|(w, _)| usize::from(w.0))
        } else {
            None
        };
        Style {
            colour: self.settings.colour,
            width: crate::output::table_width(std::env::var("COLUMNS").ok().as_deref(), terminal),
        }
    }

    /// Prints text as is (tables end with their own newline).
    pub fn print(&self, text: &str) -> Result<(), CliError> {
        let mut stdout = std::io::stdout().lock();
        stdout
            .write_all(text.as_bytes())
            .and_then(|()| stdout.flush())
            .map_err(CliError::Output)
    }

    /// Queues one line (an envelope) for stdout: many look-ups write their
    /// lines in batches, one `write` for all the results that are ready,
    /// instead of one per line (a write per line was a third of the
    /// syscalls of `--from-file`). On a terminal, or with `-v`, the line
    /// goes out at once.
    /// [`Context::flush_queued`] writes the rest; call it before waiting.
    pub fn queue_line(&self, line: &str) -> Result<(), CliError> {
        let full = {
            let mut queued = self.queued.borrow_mut();
            queued.extend_from_slice(line.as_bytes());
            queued.push(b'\n');
            queued.len() >= QUEUE_LIMIT
        };
        // With -v, request lines go to stderr as they happen; results keep
        // their place between them.
        if full || self.stdout_is_terminal || self.settings.verbose {
            self.flush_queued()?;
        }
        Ok(())
    }

    /// Writes the queued lines.
    pub fn flush_queued(&self) -> Result<(), CliError> {
        let mut queued = self.queued.borrow_mut();
        if queued.is_empty() {
            return Ok(());
        }
        let mut stdout = std::io::stdout().lock();
        stdout
            .write_all(&queued)
            .and_then(|()| stdout.flush())
            .map_err(CliError::Output)?;
        queued.clear();
        Ok(())
    }

    /// Prints one line (an envelope).
    pub fn print_line(&self, line: &str) -> Result<(), CliError> {
        // One document per line, whatever line breaks the service sent.
        let line = crate::text::one_json_line(line);
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "{line}")
            .and_then(|()| stdout.flush())
            .map_err(CliError::Output)
    }

    /// A failed call, with what was attempted and where.
    pub fn call_failed(&self, call: impl Into<String>, source: payments_client::Error) -> CliError {
        CliError::Call {
            call: call.into(),
            base_url: self.shown_url.clone(),
            base_url_from: self.settings.base_url_named_by.clone().unwrap_or_default(),
            source: Box::new(source),
            advice: None,
            trusted_ca: self.settings.ca_cert.is_some(),
        }
    }

    /// `-v`: the request line, before the call; the call's span (a new
    /// trace) to run it in.
    pub fn log_request(&self, method: &str, path: &str) -> Started {
        self.log_request_sending(method, path, self.settings.api_key.is_some())
    }

    /// [`Context::log_request`] for a request that sends the API key only
    /// when `key` (the product list does not): its `user:pass@`, if any,
    /// goes with it either way.
    pub fn log_request_sending(&self, method: &str, path: &str, key: bool) -> Started {
        let mut span = tracing::Span::none();
        if self.settings.verbose {
            let auth = if !key && self.settings.api_key.is_some() && !self.url_credentials {
                " (no authorization: the API key is not sent)"
            } else {
                verbose::auth_said(key, self.url_credentials)
            };
            verbose::say(&format!("> {method} {}{path}{auth}", self.requested_url));
            span = tracing::info_span!(target: "payments_cli", parent: None, "payments");
            trace::begin(&span);
        }
        Started {
            at: Instant::now(),
            span,
        }
    }

    /// `-v`: the response line, after the call.
    pub fn log_response(
        &self,
        started: &Started,
        outcome: Result<(u16, &str, u32), &payments_client::Error>,
    ) {
        if !self.settings.verbose {
            return;
        }
        let elapsed = started.at.elapsed().as_millis();
        let trace = started
            .trace_id()
            .map(|id| format!(", trace {id}"))
            .unwrap_or_default();
        // Each line through `verbose::say`: the reason and the envelope are
        // the service's text, which must not drive the terminal.
        match outcome {
            Ok((status, request_id, attempts)) => verbose::say(&format!(
                "< HTTP {status} in {elapsed} ms, {attempts} attempt(s), request id {request_id}{trace}"
            )),
            Err(err) => {
                let request_id = err.request_id().unwrap_or("none");
                let reason = crate::error::reason(err);
                verbose::say(&match err.http_status() {
                    Some(status) => format!(
                        "< HTTP {status} in {elapsed} ms: {reason} (request id {request_id}{trace})"
                    ),
                    None => format!(
                        "< no answer after {elapsed} ms: {reason} (request id {request_id}{trace})"
                    ),
                });
                // What came back, as it came: never on stdout, where a
                // script would take it for the service's answer.
                if let Some(envelope) = crate::error::refused_envelope(err) {
                    verbose::say(&format!("< refused answer, as received: {envelope}"));
                }
            }
        }
    }

    /// Whether progress bars and spinners may be drawn.
    pub fn stderr_is_terminal(&self) -> bool {
        std::io::stderr().is_terminal()
    }
}

/// `--ca-cert`, `--client-cert` and `--client-key` on the client builder
/// (CONTRACT section 18). Files are read here, so a missing one is named
/// with the flag or the profile key that named it.
fn tls(mut builder: ClientBuilder, settings: &Settings) -> Result<ClientBuilder, CliError> {
    let read = read_setting_file;
    if let Some(ca) = &settings.ca_cert {
        builder = builder.add_root_certificate_pem(read(ca)?);
    }
    match (&settings.client_cert, &settings.client_key) {
        (Some(cert), Some(key)) => {
            let mut identity = read(cert)?;
            identity.push(b'\n');
            identity.extend(read(key)?);
            builder = builder.identity_pem(identity);
        }
        (None, None) => {}
        (Some(_), None) => {
            return Err(CliError::Usage(
                "--client-cert needs --client-key (PAYMENTS_CLIENT_KEY, client_key in the profile)"
                    .to_owned(),
            ));
        }
        (None, Some(_)) => {
            return Err(CliError::Usage(
                "--client-key needs --client-cert (PAYMENTS_CLIENT_CERT, client_cert in the profile)"
                    .to_owned(),
            ));
        }
    }
    Ok(builder)
}

/// The bytes of a file a setting names (a certificate, a key).
///
/// # Errors
///
/// It cannot be read: named with the flag or the profile key that named it.
pub fn read_setting_file(file: &SettingFile) -> Result<Vec<u8>, CliError> {
    std::fs::read(&file.path).map_err(|source| CliError::SettingFile {
        path: file.path.clone(),
        named_by: file.named_by.clone(),
        source,
    })
}

/// A builder error about a certificate, as a usage error naming the file.
fn tls_usage(text: &str, settings: &Settings) -> Option<CliError> {
    let shown = |p: &Option<SettingFile>| {
        p.as_ref().map_or_else(String::new, |p| {
            crate::text::cut(&p.path.display().to_string())
        })
    };
    if text.contains("root certificate") {
        return Some(CliError::Usage(format!(
            "--ca-cert {}: not a PEM certificate (-----BEGIN CERTIFICATE-----)",
            shown(&settings.ca_cert)
        )));
    }
    if settings.client_cert.is_some()
        && (text.contains("KeyMismatch") || text.contains("keys may not be consistent"))
    {
        return Some(CliError::Usage(format!(
            "--client-cert {} and --client-key {}: the private key is not the certificate's",
            shown(&settings.client_cert),
            shown(&settings.client_key)
        )));
    }
    if text.contains("client identity") {
        return Some(CliError::Usage(format!(
            "--client-cert {} and --client-key {}: not a PEM certificate and its PEM private key",
            shown(&settings.client_cert),
            shown(&settings.client_key)
        )));
    }
    // PEM that the TLS stack refuses (an X.509 v1 certificate, as `openssl
    // x509 -req` makes one without extensions) was blamed on the URL. No
    // connection is made while building, so a certificate is the client's.
    if settings.client_cert.is_some() && text.contains("certificate") {
        let named = |file: &Option<SettingFile>| {
            file.as_ref().map_or_else(String::new, |file| {
                format!(" ({})", crate::text::cut(&file.named_by))
            })
        };
        let reason = text.rsplit_once("builder error: ").map_or(text, |(_, r)| r);
        let hint = if reason.contains("UnsupportedCertVersion") {
            "; it is an X.509 v1 certificate, and TLS takes v3 only \
             (`openssl x509 -req` makes v3 given `-extfile` with extensions)"
        } else {
            ""
        };
        return Some(CliError::Usage(format!(
            "the client certificate {}{} with the key {}{} cannot be used: {}{hint}",
            shown(&settings.client_cert),
            named(&settings.client_cert),
            shown(&settings.client_key),
            named(&settings.client_key),
            crate::text::cut(reason)
        )));
    }
    None
}
