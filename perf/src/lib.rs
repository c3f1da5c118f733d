//! Measurement tools for issue #7; the figures and the commands that produce
//! them are in `BENCHMARKS.md` at the repository root.
//!
//! # Layout
//!
//! - `lib.rs` — what the tools share: flag parsing, `VmRSS`, the request log.
//! - `bin/control.rs` — `perf-control`: the control server of `scripts/load.sh`.
//! - `bin/scale.rs` — `perf-scale`: the mock pre-loaded with N transactions.
//! - `bin/startup.rs` — `perf-startup`: process start to first health answer.
//! - `bin/preload.rs` — `perf-preload`: initiates a confirm pool over HTTP.
//! - `bin/fill_store.rs` — `perf-fill-store`: N transactions into a store.
//! - `bin/latency.rs` — `perf-latency`: latency percentiles at a fixed rate.
//! - `bin/forwarder.rs` — `perf-forwarder`: a bare forwarder, the proxy's control.
//! - `bin/reconcile.rs` — `perf-reconcile`: `payments reconcile` of a large ledger.
//!
//! The tools print machine-readable `key=value` lines that the scripts parse;
//! they are measurement harnesses, not products, so flags are minimal.

use std::collections::HashMap;

/// `--name value` flags, every one optional, with defaults at the call site.
#[derive(Debug, Default)]
pub struct Flags(HashMap<String, String>);

impl Flags {
    /// Reads `--name value` pairs from the process arguments.
    ///
    /// # Errors
    ///
    /// A message naming the argument that is not a `--name value` pair.
    pub fn from_env() -> Result<Self, String> {
        let mut map = HashMap::new();
        let mut args = std::env::args().skip(1);
        while let Some(name) = args.next() {
            let key = name
                .strip_prefix("--")
                .ok_or_else(|| format!("expected --name value, got {name:?}"))?;
            let value = args
                .next()
                .ok_or_else(|| format!("--{key} needs a value"))?;
            map.insert(key.to_owned(), value);
        }
        Ok(Self(map))
    }

    /// The text of `--name`, if given.
    pub fn text(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }

    /// `--name` parsed, or `default` when absent.
    ///
    /// # Errors
    ///
    /// A message when the value does not parse.
    pub fn parsed<T: std::str::FromStr>(&self, name: &str, default: T) -> Result<T, String> {
        match self.text(name) {
            None => Ok(default),
            Some(v) => v
                .replace('_', "")
                .parse()
                .map_err(|_| format!("--{name}: cannot parse {v:?}")),
        }
    }
}

/// Resident set size of a process in KiB, from `/proc/PID/status` (`self`
/// for this process).
pub fn vm_rss_kib(pid: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// The request log exactly as the mock binary sets it up (text, `info`, on
/// stderr), so in-process measurements pay the same logging cost.
pub fn init_request_log() -> payments_serve::logging::BatchGuard<std::io::Stderr> {
    payments_serve::logging::init_logging(payments_serve::logging::LogFormat::Text)
}

/// Completes on SIGINT or SIGTERM (how the scripts stop a server).
pub async fn stop_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
}
