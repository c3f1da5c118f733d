//! `payments`: initiate, confirm and look up payment transactions from a
//! terminal or a script (COMMANDS.md is the specification).
//!
//! # Layout
//!
//! - `cli`: the clap types, i.e. the raw command line.
//! - `config`: the config file, profiles, and the one conversion of raw
//!   global options into validated `Settings`.
//! - `amount`: major/minor amount parsing with the currency's exponent.
//! - `commands`: one module per command; each builds the request, calls the
//!   client and prints.
//! - `output`: renders tables to strings.
//! - `exit`: the documented exit codes; `error`: the CLI error (and the
//!   config file's) and its one mapping to them.
//! - `usage`: usage errors said with flags, values quoted at most 200 bytes.

mod amount;
mod cli;
mod commands;
mod config;
mod error;
mod exit;
mod output;
mod secrets;
mod text;
mod usage;

use std::{io::Write as _, process::ExitCode};

use clap::CommandFactory as _;

use crate::{cli::Cli, error::CliError, exit::Exit};

/// mimalloc instead of the system allocator: a look-up allocates and frees
/// dozens of small blocks, and glibc's malloc/free were a fifth of the
/// instructions of `status --from-file` (BENCHMARKS.md, item 5).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The exit code when stdout's reader went away: 128 + SIGPIPE (13), what
/// a shell reports for a program that signal stopped.
const BROKEN_PIPE: u8 = 141;

fn main() -> ExitCode {
    let cli = match cli::environment::parse() {
        Ok(cli) => cli,
        Err(err) => {
            // Help and version go to stdout and exit 0; real errors exit 2.
            let exit = if err.use_stderr() {
                Exit::Usage
            } else {
                Exit::Ok
            };
            // A bad value is said with its flag, quoted at most 200 bytes;
            // other errors (missing arguments, help) as clap writes them.
            // Nothing useful is left to do if the terminal is gone.
            match usage::clap_error_line(&err, &Cli::command()).filter(|_| err.use_stderr()) {
                Some(line) => {
                    let _ = writeln!(std::io::stderr().lock(), "error: {line}");
                }
                None => {
                    let _ = err.print();
                }
            }
            return exit.into();
        }
    };
    match commands::run(cli) {
        Ok(exit) => exit.into(),
        // The reader went away (`| head`): stop quietly, with the code a
        // shell gives a program stopped by SIGPIPE, never 0: the run did
        // not finish, so it has no verdict to give (a `reconcile | head -1`
        // with every row missing exited 0).
        Err(err) if err.is_broken_pipe() => ExitCode::from(BROKEN_PIPE),
        Err(err) => {
            report(&err);
            err.exit_code().into()
        }
    }
}

/// Prints the error once: the envelope on stdout for scripts reading json is
/// the command's job; here it is one line on stderr.
fn report(err: &CliError) {
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "error: {}", secrets::hide(&err.to_string()));
}
