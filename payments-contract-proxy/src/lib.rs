//! The contract proxy: it stands between an application and the
//! provider's real service (`payments-mock-server proxy --upstream URL`, or
//! [`Proxy::start`] in a test), passes every `/api/` exchange through
//! untouched, and checks each against the interface document, including
//! the rules that span requests. A report, a recording with secrets
//! replaced, a summary and exit code, JUnit XML and SARIF 2.1.0 of the
//! verdicts ([`Trail`]), the interface coverage ([`Coverage`]: which of the
//! interface's answers and transitions the service was seen to give), a
//! web console at `/_proxy/ui/`, and [`check_recording`] for the same
//! checks offline.
//!
//! It reads the interface's vocabulary (`payments-interface`) and serves
//! with the shell the mock uses (`payments-serve`); it knows nothing of the
//! mock's rules or stores.
//!
//! # Example
//!
//! A proxy in front of the embedded mock (a verified fake: no violation):
//!
//! ```
//! use payments_contract_proxy::{Proxy, ProxyConfig};
//! use payments_mock_server::MockServer;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let mock = MockServer::start().await;
//! let proxy = Proxy::start(ProxyConfig::new(mock.base_url().parse()?)).await?;
//! let reply = reqwest::get(format!("{}/api/payments/nope/status", proxy.base_url())).await?;
//! assert_eq!(reply.status(), 404);
//! assert_eq!(reply.headers()["x-contract-verdict"], "pass");
//! let summary = proxy.shutdown().await;
//! assert_eq!(summary.exit_code(false), 0);
//! # Ok(()) }
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]

// Layout, for contributors:
// - `forward.rs` — the pass-through: headers, bodies of any size,
//   timeouts, `--enforce`.
// - `exchange.rs` — an exchange and its endpoint, parsed once;
//   `json.rs` — a body read as borrowed JSON.
// - `rules/` — the rule registry: id → level, text, function.
// - `memory.rs` — what passed through, bounded, for the rules that span
//   requests.
// - `report.rs` — report lines, the summary, the exit code.
// - `coverage.rs` — interface coverage: the cells each exchange shows, the
//   table, `/_proxy/coverage`, the `--min-coverage` gate.
// - `trail.rs` — each exchange compactly, for `junit.rs` (JUnit XML) and
//   `sarif.rs` (SARIF 2.1.0); `listing.rs` — the last exchanges, short,
//   for `GET /_proxy/exchanges` (`payments tail --proxy`).
// - `redact/` — secrets replaced before anything is recorded, reported
//   or shown; `record.rs` — reading recordings back.
// - `check.rs` — the same checks offline, on a recording.
// - `console.rs` — the exchanges in a browser, live; `access.rs` — the
//   admin key in front of it, `/_proxy/report` and `/metrics`.
// - `config.rs` — what shapes a proxy (`ProxyConfig`) and its checks.
// - `error.rs` — what keeps a proxy from starting.
// - `state.rs` — one proxy's state and the judge of its exchanges.
// - `router.rs` — its routes, and `/api/` straight to the forwarder.
// - `server.rs` — `Proxy`: started, served, stopped with its summary.
// - `cli.rs` (feature `cli`) — the binary's flags and runs.

mod access;
mod check;
/// The command line of the `payments-contract-proxy` binary (feature
/// `cli`).
#[cfg(feature = "cli")]
pub mod cli;
mod config;
mod console;
mod coverage;
mod error;
mod exchange;
mod forward;
mod json;
mod junit;
mod listing;
mod memory;
mod metrics;
mod record;
mod redact;
mod report;
mod router;
pub mod rules;
mod sarif;
mod server;
mod state;
mod trail;
mod upstream_tls;

pub use check::{CheckOutcome, check_recording};
pub use config::{DEFAULT_UPSTREAM_TIMEOUT, MAX_UPSTREAM_TIMEOUT, ProxyConfig};
pub use coverage::table as coverage_table;
pub use exchange::{Endpoint, Exchange, Message};
pub use forward::{JUDGE_LIMIT, VERDICT_HEADER, end_to_end};
pub use memory::CAPACITY as MEMORY_CAPACITY;
pub use record::{BadLine, BadLines, each as read_recording};
pub use redact::{REDACTED, Redactor};

pub use error::Error;
/// The interface's coverage matrix the proxy counts in.
pub use payments_interface::coverage::Coverage;
pub use payments_serve::admin::AdminKey;
pub use report::{ReportLine, Summary};
pub use router::CONSOLE_PATH;
pub use rules::{Finding, Level, Verdict};
pub use sarif::SARIF_SCHEMA;
pub use server::{Finished, Proxy};
pub use trail::Trail;

/// The README's examples, compiled as doc tests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
