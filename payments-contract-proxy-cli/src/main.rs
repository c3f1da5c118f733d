//! The `payments-contract-proxy` binary (COMMANDS.md): in front of a real
//! service it forwards `/api/` and judges every exchange against the
//! interface document; `check FILE` judges a recording offline. The flags
//! and the runs are the library's (`payments_contract_proxy::cli`); the
//! mock's binary offers the same as `payments-mock-server proxy` and
//! `check`.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use payments_contract_proxy::cli::{CheckArgs, ProxyArgs, run_check, run_proxy};

/// A contract proxy: forwards /api/ to a real payment service untouched
/// and checks every exchange against the interface document. Exits 1 at
/// SIGINT, SIGTERM or SIGHUP when a violation was found (with --strict, also an
/// undocumented finding), else 0.
#[derive(Debug, Parser)]
#[command(
    name = "payments-contract-proxy",
    version,
    about,
    subcommand_negates_reqs = true,
    args_conflicts_with_subcommands = true
)]
struct Args {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    serve: Box<ProxyArgs>,
}

/// Without a subcommand the binary serves the proxy.
#[derive(Debug, Subcommand)]
enum Command {
    /// Run the proxy's checks offline on a recording (--record); the same
    /// summary and exit code.
    Check(CheckArgs),
}

/// mimalloc, as the mock's binary: the proxy allocates per exchange.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let Args { command, serve } =
        payments_contract_proxy::cli::parse_hiding_secrets::<Args>(&["--admin-key"]);
    match command {
        Some(Command::Check(args)) => run_check(&args),
        // The rules do not use a catalogue: it only has to be readable.
        None => run_proxy(*serve, |path| {
            std::fs::metadata(path)
                .map(|_| ())
                .map_err(|e| format!("cannot read {}: {e}", path.display()))
        }),
    }
}
