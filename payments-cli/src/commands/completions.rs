//! `payments completions SHELL`: shell completion scripts on stdout.

use clap::CommandFactory as _;

use crate::{
    cli::{Cli, CompletionsArgs},
    error::CliError,
    exit::Exit,
};

/// Prints the completion script for the shell.
///
/// # Errors
///
/// Stdout cannot be written.
pub fn run(args: &CompletionsArgs) -> Result<Exit, CliError> {
    let mut command = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "payments", &mut script);
    let mut stdout = std::io::stdout().lock();
    std::io::Write::write_all(&mut stdout, &script)
        .and_then(|()| std::io::Write::flush(&mut stdout))
        .map_err(CliError::Output)?;
    Ok(Exit::Ok)
}
