//! The raw command line: clap types only, no behaviour.
//!
//! Everything here is exactly what the user typed (or what the environment
//! supplied through `env = ...`). `config::Settings` turns it, together with
//! the config file, into validated settings once; commands never look at these
//! types for anything but their own flags.

pub mod environment;
mod help;
mod seconds;

use std::{fmt, path::PathBuf, time::Duration};

use clap::{ArgGroup, Args, Parser, Subcommand, ValueEnum};
use secrecy::SecretString;
use uuid::Uuid;

pub use help::{COMPLETIONS_HELP, EXIT_CODES_HELP, TAIL_HELP, VERIFY_RETURN_HELP};
pub use seconds::{looks_like_seconds, parse_seconds};

/// Initiate, confirm and look up payment transactions.
///
/// Options can also come from the environment and from a profile in the
/// config file ($XDG_CONFIG_HOME/payments/config.toml, or --config PATH);
/// a flag beats the environment, which beats the profile.
#[derive(Debug, Parser)]
#[command(name = "payments", version, after_help = EXIT_CODES_HELP)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,

    #[command(subcommand)]
    pub command: Command,
}

/// Options every command accepts, before or after the command name.
#[derive(Debug, Args)]
#[command(next_help_heading = "Global options")]
pub struct GlobalArgs {
    /// Base URL of the payments service, e.g. `https://payments.example.com`
    // Its value is not shown by --help: it may hold `user:password@`.
    #[arg(
        long,
        env = "PAYMENTS_BASE_URL",
        global = true,
        value_name = "URL",
        hide_env_values = true
    )]
    pub base_url: Option<String>,

    /// API key, sent as `Authorization: Bearer KEY`; never printed or logged
    #[arg(
        long,
        env = "PAYMENTS_API_KEY",
        global = true,
        value_name = "KEY",
        hide_env_values = true,
        value_parser = parse_api_key
    )]
    pub api_key: Option<ApiKey>,

    /// Default merchant for initiate and reference look-ups
    #[arg(long, env = "PAYMENTS_MERCHANT_ID", global = true, value_name = "UUID",
          value_parser = crate::usage::parse_merchant_id)]
    pub merchant_id: Option<Uuid>,

    /// Which profile of the config file to use
    #[arg(long, env = "PAYMENTS_PROFILE", global = true, value_name = "NAME")]
    pub profile: Option<String>,

    /// Config file [default: $XDG_CONFIG_HOME/payments/config.toml]
    #[arg(long, env = "PAYMENTS_CONFIG", global = true, value_name = "PATH")]
    pub config: Option<PathBuf>,

    /// Output format [default: table on a terminal, json otherwise]
    #[arg(short, long, env = "PAYMENTS_OUTPUT", global = true, value_enum)]
    pub output: Option<OutputFormat>,

    /// Per-attempt timeout in seconds [default: 30]
    #[arg(long, global = true, value_name = "SECONDS", value_parser = parse_seconds)]
    pub timeout: Option<Duration>,

    /// Retries after the first attempt [default: 2]
    #[arg(long, global = true, value_name = "N")]
    pub retries: Option<u32>,

    /// Print request and response lines on stderr (keys redacted)
    #[arg(short, long, global = true)]
    pub verbose: bool,

    /// Also trust this CA certificate (PEM) for https, e.g. a sandbox's
    /// local CA
    #[arg(long, env = "PAYMENTS_CA_CERT", global = true, value_name = "FILE")]
    pub ca_cert: Option<PathBuf>,

    /// Present this client certificate (PEM) to a service that demands
    /// one (mutual TLS); with --client-key
    #[arg(long, env = "PAYMENTS_CLIENT_CERT", global = true, value_name = "FILE")]
    pub client_cert: Option<PathBuf>,

    /// The private key (PEM) of --client-cert; never printed
    #[arg(long, env = "PAYMENTS_CLIENT_KEY", global = true, value_name = "FILE")]
    pub client_key: Option<PathBuf>,
}

/// How results are printed on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OutputFormat {
    /// Aligned columns for people, coloured on a terminal unless NO_COLOR is set
    Table,
    /// Each response envelope exactly as received, one per line
    Json,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create a payment transaction
    Initiate(InitiateArgs),
    /// Confirm an initiated transaction
    Confirm(ConfirmArgs),
    /// Look up the status of one or many transactions
    Status(StatusArgs),
    /// Check the shop's ledger (CSV) against the service, row by row
    ///
    /// The ledger's header row names its columns, in any order: referenceNo
    /// and amount (major units, e.g. 10.50) are required; currency, status
    /// and transactionId are optional. Each row is looked up (by
    /// transactionId when the row has one, else by referenceNo) and classed:
    /// match, missing, unverified, amount, currency, status, pending,
    /// duplicate or invalid. Prints the counts per class and then every row
    /// that is not a match (-o json: one object per row and a summary line).
    /// Exit 0 when every row matches, 6 when any does not.
    Reconcile(ReconcileArgs),
    /// Check the return address a payer's browser arrived at against the service
    ///
    /// After a redirect-based payment the payer's browser comes back to the
    /// merchant's returnUrl with transactionId, referenceNo and status
    /// appended. This reads the transaction's status from the service and
    /// prints it; it exits 1 when the address's referenceNo or status
    /// disagrees with the service. The address is a convenience anyone can
    /// forge: the service is the truth.
    VerifyReturn(VerifyReturnArgs),
    /// Print the mock's request journal (or, with --proxy, the contract proxy's exchanges)
    ///
    /// The entries the server keeps (the last 1,000), newest last: a table
    /// on a terminal, one JSON object per line otherwise (or with -o json).
    /// With --follow, keeps printing new entries until Ctrl-C, SIGTERM or
    /// SIGHUP (exit 0). Use the mock's admin key, or a merchant's API key
    /// to see that merchant's requests only.
    Tail(TailArgs),
    /// Print shell completions to stdout
    Completions(CompletionsArgs),
}

/// Arguments of `payments initiate`.
#[derive(Debug, Args)]
#[command(
    group(ArgGroup::new("amount_source").required(true).args(["amount", "amount_minor"])),
    after_help = EXIT_CODES_HELP,
)]
pub struct InitiateArgs {
    /// Your reference for this payment, unique per merchant
    #[arg(long, value_name = "REF")]
    pub reference_no: String,

    /// Amount in major units, e.g. 10.50 (converted with the currency's exponent)
    #[arg(long, value_name = "AMOUNT", allow_negative_numbers = true)]
    pub amount: Option<String>,

    /// Amount in minor units, e.g. 1050 for 10.50 MYR
    #[arg(long, value_name = "MINOR", allow_negative_numbers = true)]
    pub amount_minor: Option<String>,

    /// Product code, e.g. TOPUP
    #[arg(long, value_name = "CODE")]
    pub product: String,

    /// Store that originates the payment
    #[arg(long, value_name = "ID")]
    pub store_id: String,

    /// ISO 4217 currency code
    #[arg(long, value_name = "CODE", default_value = "MYR")]
    pub currency: String,

    /// Payer: mobile number, bill account, wallet id...
    #[arg(long, value_name = "ID")]
    pub payer_id: Option<String>,

    /// Number of items (gift cards, PINs)
    #[arg(long, value_name = "N")]
    pub quantity: Option<u32>,

    /// What the payment is for
    #[arg(long, value_name = "TEXT")]
    pub description: Option<String>,

    /// ISO 3166-1 alpha-2 country code, e.g. MY
    #[arg(long, value_name = "CODE")]
    pub country: Option<String>,

    /// Terminal or device identifier
    #[arg(long, value_name = "ID")]
    pub device_id: Option<String>,

    /// Where the payer is sent after a redirect-based flow
    #[arg(long, value_name = "URL")]
    pub return_url: Option<String>,

    /// Product-specific properties, a JSON object
    #[arg(long, value_name = "JSON", value_parser = parse_extra)]
    pub extra: Option<JsonObject>,
}

/// Arguments of `payments confirm`.
#[derive(Debug, Args)]
#[command(after_help = EXIT_CODES_HELP)]
pub struct ConfirmArgs {
    /// The id initiate returned
    #[arg(value_name = "TRANSACTION_ID")]
    pub transaction_id: String,

    /// Your reference of the transaction
    #[arg(long, value_name = "REF")]
    pub reference_no: String,

    /// Confirmation code (OTP) for products that need one
    #[arg(long, value_name = "OTP")]
    pub code: Option<String>,

    /// Additional confirmation data, a JSON object
    #[arg(long, value_name = "JSON", value_parser = parse_extra)]
    pub extra: Option<JsonObject>,

    /// The transaction's currency, shown beside the amount (the service's confirm answer carries none)
    #[arg(long, value_name = "CODE")]
    pub currency: Option<String>,
}

/// Arguments of `payments status`.
#[derive(Debug, Args)]
#[command(
    group(ArgGroup::new("source").required(true).multiple(true)
        .args(["transaction_ids", "reference_no", "from_file"])),
    after_help = EXIT_CODES_HELP,
)]
pub struct StatusArgs {
    /// Transaction ids to look up
    #[arg(value_name = "TRANSACTION_ID")]
    pub transaction_ids: Vec<String>,

    /// Look up by your reference instead (repeatable)
    #[arg(long, value_name = "REF", num_args = 1..)]
    pub reference_no: Vec<String>,

    /// Read one id per line from a file, or `-` for stdin; blank lines and `#` comments are skipped
    #[arg(long, value_name = "PATH")]
    pub from_file: Option<PathBuf>,

    /// With --from-file: each line is a reference, not a transaction id
    #[arg(long, requires = "from_file")]
    pub by_reference: bool,

    /// Where the ids and the references stand on the command line (clap's
    /// indices, set by `environment::parse_from`): they are looked up and
    /// numbered in the order typed. Empty when not known.
    #[arg(skip)]
    pub typed_at: (Vec<usize>, Vec<usize>),

    /// How many look-ups run at once
    #[arg(long, value_name = "N", default_value_t = 8,
          value_parser = clap::value_parser!(u16).range(1..=256))]
    pub concurrency: u16,

    /// The currency of the transactions, shown beside their amounts (the service's status answer carries none)
    #[arg(long, value_name = "CODE")]
    pub currency: Option<String>,

    /// Poll until the transaction is SUCCESSFUL, FAILED or EXPIRED
    #[arg(long)]
    pub wait: bool,

    /// With --wait: give up after this many seconds (exit code 5)
    #[arg(long, value_name = "SECONDS", default_value = "60", value_parser = parse_seconds,
          requires = "wait")]
    pub wait_timeout: Duration,
}

/// Arguments of `payments reconcile`.
#[derive(Debug, Args)]
#[command(after_help = RECONCILE_HELP)]
pub struct ReconcileArgs {
    /// The ledger, a CSV file with a header row; `-` reads stdin
    #[arg(value_name = "LEDGER.csv")]
    pub ledger: PathBuf,

    /// How many look-ups run at once
    #[arg(long, value_name = "N", default_value_t = 8,
          value_parser = clap::value_parser!(u16).range(1..=256))]
    pub concurrency: u16,

    /// Also write every row's result to FILE as CSV
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,

    /// The currency of rows whose currency cell is empty or absent
    #[arg(long, value_name = "CODE", default_value = "MYR")]
    pub currency: String,
}

/// The end of `payments reconcile --help`: the classes and the exit codes.
pub const RECONCILE_HELP: &str = "\
Classes (one per row, the first that applies):
  invalid    the row itself is malformed (a missing or bad referenceNo, amount,
             currency, status or transactionId; a wrong number of fields)
  duplicate  the referenceNo is on an earlier row (that row is judged as usual)
  missing    the service has no such transaction
  unverified the service answered, but its answer for this row could not be
             used (data missing or unreadable, or about another
             transaction): check it by hand
  currency   the service's amount has more decimal places than the row's
             currency allows (trailing zeros aside: 150.5 and 150.50 are the
             same MYR amount)
  amount     the amounts differ
  pending    the service's status is not final yet (PENDING, INITIATED,
             CONFIRMED)
  status     the row's status differs from the service's (any letter case)
  match      none of the above

Exit codes:
  0  every row matches (a ledger with only a header included)
  1  the service refused the look-ups (an API key it does not accept, or a
     reference several merchants use and no --merchant-id)
  2  the ledger cannot be used (no such file, empty, no header naming
     referenceNo and amount, a known column named twice, separated by ';'
     or tabs, UTF-16), or a quote in it never closes (the rows before it are
     shown), a bad flag, or a local file cannot be written: the --report
     FILE, or the table's temporary file (in TMPDIR, else /tmp)
  4  the service cannot be reached or keeps failing (after retries), or
     answers with something that is not its envelope, or none of the first
     10 rows looked up has a usable answer
  6  some rows do not match
  129, 130, 143  SIGHUP (129), Ctrl-C (SIGINT: 130) or SIGTERM (143) stopped
     the run: the rows judged so far are printed, and whole in the
     --report's FILE.partial
  141  stdout was closed before everything was written (| head): the run
     stopped there, quietly";

/// Arguments of `payments verify-return`.
#[derive(Debug, Args)]
#[command(after_help = VERIFY_RETURN_HELP)]
pub struct VerifyReturnArgs {
    /// The whole return address, e.g. `https://shop.example/back?order=17&transactionId=...&referenceNo=...&status=SUCCESSFUL`
    #[arg(value_name = "URL")]
    pub url: String,
}

/// Arguments of `payments tail`.
#[derive(Debug, Args)]
#[command(after_help = TAIL_HELP)]
pub struct TailArgs {
    /// The contract proxy's exchanges and verdicts (/_proxy/exchanges) instead of the mock's journal
    #[arg(long, conflicts_with = "sandbox")]
    pub proxy: bool,

    /// A sandbox of the mock: its own journal (/sandboxes/ID/_mock/requests)
    #[arg(long, value_name = "ID", value_parser = parse_sandbox_id)]
    pub sandbox: Option<String>,

    /// Only requests to this path, exactly as sent, e.g. /api/payments/initiate
    #[arg(long, value_name = "P", value_parser = parse_path)]
    pub path: Option<String>,

    /// Only entries answered with this HTTP status, e.g. 404
    #[arg(long, value_name = "N", value_parser = parse_http_status,
          allow_negative_numbers = true)]
    pub status: Option<u16>,

    /// Only requests about this reference (and, on the mock, about the
    /// transaction a confirm of it named)
    #[arg(long, value_name = "REF")]
    pub reference_no: Option<String>,

    /// Only entries after this seq (the SEQ column; 0 for all)
    #[arg(long, value_name = "SEQ", value_parser = parse_seq,
          allow_negative_numbers = true)]
    pub since: Option<u64>,

    /// Keep printing new entries until Ctrl-C, SIGTERM or SIGHUP (exit 0)
    #[arg(short, long)]
    pub follow: bool,

    /// With --follow: seconds between polls
    #[arg(long, value_name = "SECONDS", default_value = "1", value_parser = parse_seconds,
          hide = true)]
    pub poll_interval: Duration,
}

/// `--sandbox`: a sandbox's id, a UUID as its baseUrl writes it.
fn parse_sandbox_id(text: &str) -> Result<String, String> {
    match Uuid::try_parse(text.trim()) {
        Ok(id) => Ok(id.hyphenated().to_string()),
        Err(_) => Err(
            "not a sandbox id; a sandbox's id is a UUID, the last segment of its baseUrl \
             (…/sandboxes/ID)"
                .to_owned(),
        ),
    }
}

/// `--path`: a path as sent, from its leading `/`.
fn parse_path(text: &str) -> Result<String, String> {
    if !text.starts_with('/') {
        return Err("must start with /, e.g. /api/payments/initiate".to_owned());
    }
    if text.contains(['?', '#']) || text.chars().any(char::is_control) {
        return Err("a path only, without a query, a fragment or control characters".to_owned());
    }
    Ok(text.to_owned())
}

/// `--status`: an HTTP status, 100 to 599.
fn parse_http_status(text: &str) -> Result<u16, String> {
    match text.parse::<u16>() {
        Ok(status) if (100..=599).contains(&status) && text.bytes().all(|b| b.is_ascii_digit()) => {
            Ok(status)
        }
        _ => Err("not an HTTP status; give a number from 100 to 599, e.g. 404".to_owned()),
    }
}

/// The largest seq the servers number with (a `BIGINT`).
pub const SEQ_MAX: u64 = i64::MAX as u64;

/// `--since`: a seq, a whole number from 0 to [`SEQ_MAX`].
fn parse_seq(text: &str) -> Result<u64, String> {
    if !text.is_empty()
        && text.bytes().all(|b| b.is_ascii_digit())
        && let Ok(seq) = text.parse::<u64>()
        && seq <= SEQ_MAX
    {
        return Ok(seq);
    }
    Err(format!(
        "not a seq; give a whole number from 0 to {SEQ_MAX} (the SEQ column of an entry)"
    ))
}

/// Arguments of `payments completions`.
#[derive(Debug, Args)]
#[command(after_help = COMPLETIONS_HELP)]
pub struct CompletionsArgs {
    /// The shell to print completions for
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// An API key; its `Debug` never shows the value.
#[derive(Clone)]
pub struct ApiKey(pub SecretString);

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey([REDACTED])")
    }
}

/// A JSON object given on the command line (`--extra`).
#[derive(Debug, Clone, PartialEq)]
pub struct JsonObject(pub serde_json::Map<String, serde_json::Value>);

fn parse_api_key(text: &str) -> Result<ApiKey, String> {
    if text.trim().is_empty() {
        return Err("the API key is empty".to_owned());
    }
    Ok(ApiKey(SecretString::from(text)))
}

/// Parses `--extra`: it must be a JSON object.
pub fn parse_extra(text: &str) -> Result<JsonObject, String> {
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::Object(map)) => Ok(JsonObject(map)),
        Ok(other) => Err(format!(
            "must be a JSON object like '{{\"key\":\"value\"}}', not {}",
            json_kind(&other)
        )),
        Err(err) => Err(format!("not valid JSON: {err}")),
    }
}

fn json_kind(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn extra_must_be_an_object() {
        assert!(parse_extra(r#"{"a":1}"#).is_ok());
        assert!(parse_extra("[1]").unwrap_err().contains("an array"));
        assert!(parse_extra("\"x\"").unwrap_err().contains("a string"));
        assert!(parse_extra("{").unwrap_err().contains("not valid JSON"));
        assert!(parse_extra("").unwrap_err().contains("not valid JSON"));
    }

    #[test]
    fn tail_flags_are_checked() {
        assert_eq!(parse_http_status("404"), Ok(404));
        for bad in ["", "99", "600", "+200", "2xx", "abc", "70000"] {
            assert!(parse_http_status(bad).is_err(), "{bad:?} accepted");
        }
        assert_eq!(parse_seq("0"), Ok(0));
        assert_eq!(parse_seq("9223372036854775807"), Ok(SEQ_MAX));
        for bad in ["", "-1", "+1", "1.0", " 1", "9223372036854775808", "x"] {
            assert!(parse_seq(bad).is_err(), "{bad:?} accepted");
        }
        assert!(parse_path("/api/payments/initiate").is_ok());
        for bad in ["api/payments", "", "/a?b=1", "/a#b", "/a\u{1b}[2J"] {
            assert!(parse_path(bad).is_err(), "{bad:?} accepted");
        }
        assert_eq!(
            parse_sandbox_id("6F1C0D3E-1B7A-4C1E-9A55-1C2B3D4E5F60").as_deref(),
            Ok("6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60")
        );
        assert!(parse_sandbox_id("sandbox-1").is_err());
    }

    #[test]
    fn api_key_debug_is_redacted() {
        let key = parse_api_key("sk_live_secret").unwrap();
        assert!(!format!("{key:?}").contains("sk_live_secret"));
    }
}
