//! The command line as typed, for what clap's errors leave unsaid: which
//! flag a value that starts with `-` was meant for, and which argument or
//! variable is not valid UTF-8 (clap names neither). Read losslessly, as
//! `OsString`s: `std::env::args` panics on an argument that is not UTF-8.

use std::ffi::OsString;

use clap::ValueHint;

use crate::text::quote;

/// The flags whose values are never repeated.
const SECRET_FLAGS: [&str; 2] = ["--api-key", "--code"];

/// The process's arguments after the program's name.
fn typed() -> Vec<OsString> {
    std::env::args_os().skip(1).collect()
}

/// Every flag (not a positional) of `command` and its subcommands.
fn flags(command: &clap::Command) -> impl Iterator<Item = &clap::Arg> {
    command
        .get_arguments()
        .chain(
            command
                .get_subcommands()
                .flat_map(clap::Command::get_arguments),
        )
        .filter(|arg| !arg.is_positional())
}

/// The flag `token` spells (`--reference-no`, `-o`), when it takes a
/// value: its name as `--long` (else `-s`).
fn value_flag<'a>(command: &'a clap::Command, token: &str) -> Option<&'a clap::Arg> {
    flags(command).find(|arg| {
        arg.get_action().takes_values()
            && (arg
                .get_long()
                .is_some_and(|l| token.strip_prefix("--") == Some(l))
                || arg
                    .get_short()
                    .is_some_and(|s| token.strip_prefix('-') == Some(s.encode_utf8(&mut [0; 4]))))
    })
}

fn name_of(arg: &clap::Arg) -> String {
    match (arg.get_long(), arg.get_short()) {
        (Some(long), _) => format!("--{long}"),
        (None, Some(short)) => format!("-{short}"),
        (None, None) => arg.get_id().as_str().to_owned(),
    }
}

/// `--reference-no -DASH1`: clap reads `-DASH1` as flags of its own and
/// calls `-D` unknown. When the unknown `arg` is (the start of) the
/// argument right after a flag that takes a value, the line that says how
/// to give such a value (`--reference-no=-DASH1`); the value is never
/// repeated after `--api-key` or `--code`.
pub(super) fn value_after_a_flag(arg: &str, command: &clap::Command) -> Option<String> {
    let tokens = typed();
    tokens.windows(2).find_map(|pair| {
        let (flag, value) = (pair[0].to_str()?, pair[1].to_str()?);
        if !value.starts_with('-') || !(value == arg || value.starts_with(arg)) {
            return None;
        }
        let flag = name_of(value_flag(command, flag)?);
        let hint =
            format!("{flag} needs a value; one that starts with '-' is given as {flag}=VALUE");
        Some(if SECRET_FLAGS.contains(&flag.as_str()) {
            format!("{hint} (the argument after it is not shown)")
        } else {
            format!("{hint}, e.g. {}", quote(&format!("{flag}={value}")))
        })
    })
}

/// `confirm -01a2`: an argument that starts with `-` and is no flag, where
/// the command takes a positional argument: how to give it (after `--`).
pub(super) fn positional_like_a_flag(arg: &str, command: &clap::Command) -> Option<String> {
    let tokens = typed();
    let tokens: Vec<&str> = tokens.iter().filter_map(|t| t.to_str()).collect();
    // `-0` of `-01a2`: clap reports the first letter of what it took for
    // short flags; a single unknown letter (`-x`) is only that.
    let token = tokens
        .iter()
        .find(|t| t.starts_with(arg) && !t.starts_with("--") && t.len() > arg.len())?;
    if !arg.starts_with('-') || arg.starts_with("--") {
        return None;
    }
    let (sub, name) = positional(command, &tokens)?;
    Some(format!(
        "a {name} that starts with '-' is given after `--`, e.g. `payments {sub} [OPTIONS] -- {}`",
        quote(token)
    ))
}

/// The subcommand on the command line and the name of its (first)
/// positional argument: `("confirm", "TRANSACTION_ID")`.
fn positional<'a>(command: &'a clap::Command, tokens: &[&str]) -> Option<(&'a str, String)> {
    let sub = command
        .get_subcommands()
        .find(|sub| tokens.contains(&sub.get_name()))?;
    let positional = sub.get_positionals().next()?;
    let name = positional
        .get_value_names()
        .and_then(|names| names.first())
        .map_or_else(
            || positional.get_id().as_str().to_uppercase(),
            ToString::to_string,
        );
    Some((sub.get_name(), name))
}

/// clap's "invalid UTF-8 was detected in one or more arguments", said with
/// the flag, the argument or the variable it is in; never a value.
pub(super) fn not_utf8(command: &clap::Command) -> String {
    let tokens = typed();
    let mut after_dashes = false;
    for (index, token) in tokens.iter().enumerate() {
        let Some(text) = token.to_str() else {
            let bytes = token.as_encoded_bytes();
            if !after_dashes && bytes.starts_with(b"--") {
                let flag = bytes.split(|&b| b == b'=').next().unwrap_or(bytes);
                if let Some(arg) = std::str::from_utf8(flag)
                    .ok()
                    .and_then(|flag| value_flag(command, flag))
                {
                    if is_path(arg) {
                        continue;
                    }
                    return format!("{}: the value is not valid UTF-8", name_of(arg));
                }
            }
            let before = index
                .checked_sub(1)
                .and_then(|i| tokens[i].to_str())
                .filter(|_| !after_dashes)
                .and_then(|flag| value_flag(command, flag));
            match before {
                Some(arg) if is_path(arg) => continue,
                Some(arg) => return format!("{}: the value is not valid UTF-8", name_of(arg)),
                None => {
                    let texts: Vec<&str> = tokens.iter().filter_map(|t| t.to_str()).collect();
                    let name = positional(command, &texts)
                        .map(|(_, name)| format!(" ({name})"))
                        .unwrap_or_default();
                    return format!(
                        "argument {}{name} of the command line is not valid UTF-8",
                        index + 1
                    );
                }
            }
        };
        after_dashes |= text == "--";
    }
    let variable = flags(command).find_map(|arg| {
        let name = arg.get_env()?;
        let value = std::env::var_os(name)?;
        (value.to_str().is_none() && !is_path(arg))
            .then(|| format!("{} (for {})", name.to_string_lossy(), name_of(arg)))
    });
    match variable {
        Some(variable) => format!("{variable} is not valid UTF-8"),
        None => "an argument or a variable is not valid UTF-8".to_owned(),
    }
}

/// A path is taken as the operating system gives it, UTF-8 or not.
fn is_path(arg: &clap::Arg) -> bool {
    matches!(
        arg.get_value_hint(),
        ValueHint::AnyPath | ValueHint::FilePath | ValueHint::DirPath
    )
}
