//! The command line read with the environment beneath it: a flag on the
//! command line beats its variable, which is then never read, so a bad or
//! empty `PAYMENTS_MERCHANT_ID` cannot break `--merchant-id UUID`; and an
//! empty variable (`PAYMENTS_API_KEY=`) counts as unset, as shells use it.
//!
//! clap reads a global option's variable for every subcommand it is copied
//! into, and checks its value there even when the flag was given: so the
//! command line is read twice, first without any variable (which flags
//! were typed), then with the variables of the others.

use clap::{CommandFactory as _, FromArgMatches as _, parser::ValueSource};

use super::Cli;

/// The variables the process's command line was read with: those that
/// gave a value (a flag typed, or an empty variable, gives none).
static READ: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();

/// Reads the process's command line and environment.
///
/// # Errors
///
/// clap's error: a bad flag, a bad variable (said with its name by
/// `usage::clap_error_line`), or help and version.
pub fn parse() -> Result<Cli, clap::Error> {
    let (cli, read) = parse_and_say_from(std::env::args_os())?;
    let _ = READ.set(read);
    Ok(cli)
}

/// The `PAYMENTS_*` variables [`parse`] took a value from (none before it
/// ran): so a profile's key they override can be said
/// (`config::Settings::resolve`).
pub fn variables_read() -> &'static [String] {
    READ.get().map_or(&[], Vec::as_slice)
}

/// [`parse`] over given arguments (the variables are the process's: clap
/// reads them itself; the binary's tests set them). Only the unit tests
/// call it: [`parse`] also keeps the variables read.
#[cfg(test)]
pub fn parse_from<I, T>(args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    parse_and_say_from(args).map(|(cli, _)| cli)
}

/// The command line read (as `parse_from` reads it), and the names of the
/// variables a value was taken from.
fn parse_and_say_from<I, T>(args: I) -> Result<(Cli, Vec<String>), clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let args: Vec<std::ffi::OsString> = args.into_iter().map(Into::into).collect();
    let without = without_env(Cli::command(), |_| true);
    let typed: Vec<clap::Id> = match without.try_get_matches_from(&args) {
        Ok(matches) => Cli::command()
            .get_arguments()
            .filter(|arg| arg.get_env().is_some())
            .map(|arg| arg.get_id().clone())
            .filter(|id| matches.value_source(id.as_str()) == Some(ValueSource::CommandLine))
            .collect(),
        // Help and version are shown with the variables' names in them.
        Err(err)
            if matches!(
                err.kind(),
                clap::error::ErrorKind::DisplayHelp
                    | clap::error::ErrorKind::DisplayVersion
                    | clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) =>
        {
            Vec::new()
        }
        Err(err) => return Err(err),
    };
    let command = without_env(Cli::command(), |arg| {
        typed.contains(arg.get_id())
            || arg
                .get_env()
                .and_then(std::env::var_os)
                .is_some_and(|value| value.is_empty())
    });
    let matches = command.try_get_matches_from(&args)?;
    let read = Cli::command()
        .get_arguments()
        .filter(|arg| matches.value_source(arg.get_id().as_str()) == Some(ValueSource::EnvVariable))
        .filter_map(|arg| {
            arg.get_env()
                .map(|name| name.to_string_lossy().into_owned())
        })
        .collect();
    let mut cli = Cli::from_arg_matches(&matches)?;
    // `status R --reference-no R3 -- ID`: the order typed, which the
    // derived struct (ids, then references) does not keep.
    if let (super::Command::Status(status), Some(("status", sub))) =
        (&mut cli.command, matches.subcommand())
    {
        let at = |id: &str| {
            sub.indices_of(id)
                .map(Iterator::collect)
                .unwrap_or_default()
        };
        status.typed_at = (at("transaction_ids"), at("reference_no"));
    }
    Ok((cli, read))
}

/// `command` with the variables of the arguments `drop` picks taken away.
fn without_env(command: clap::Command, drop: impl Fn(&clap::Arg) -> bool) -> clap::Command {
    let ids: Vec<clap::Id> = command
        .get_arguments()
        .filter(|arg| arg.get_env().is_some() && drop(arg))
        .map(|arg| arg.get_id().clone())
        .collect();
    ids.into_iter().fold(command, |command, id| {
        command.mut_arg(id, |arg| arg.env(None::<&str>))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_typed_anywhere_are_read() {
        let merchant = "6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60";
        for args in [
            vec![
                "payments",
                "--merchant-id",
                merchant,
                "-o",
                "json",
                "status",
                "X",
            ],
            vec![
                "payments",
                "status",
                "X",
                "--merchant-id",
                merchant,
                "--output=json",
            ],
            vec![
                "payments",
                "-vojson",
                "status",
                "--merchant-id",
                merchant,
                "X",
            ],
        ] {
            let cli = parse_from(&args).unwrap_or_else(|e| panic!("{args:?}: {e}"));
            assert_eq!(
                cli.global.merchant_id.map(|m| m.to_string()).as_deref(),
                Some(merchant)
            );
            assert_eq!(cli.global.output, Some(crate::cli::OutputFormat::Json));
        }
    }

    #[test]
    fn command_line_errors_and_help_are_as_before() {
        let err = parse_from(["payments", "--nope"]).expect_err("unknown");
        assert_eq!(err.kind(), clap::error::ErrorKind::UnknownArgument);
        let err = parse_from(["payments", "--help"]).expect_err("help");
        assert_eq!(err.kind(), clap::error::ErrorKind::DisplayHelp);
        let err = parse_from(["payments", "--api-key", "", "status", "X"]).expect_err("empty");
        assert_eq!(err.kind(), clap::error::ErrorKind::ValueValidation);
    }
}
