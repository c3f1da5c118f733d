//! What the two binaries' command lines share (feature `cli`): the
//! `--tls-*` flags ([`TlsArgs`]), a value parser that never quotes what it
//! refuses ([`QuietParser`]), the log format flag ([`LogFormatArg`]), the
//! runtime, the shutdown signal and the one-line error chain.
//!
//! The mock's binary (`payments-mock-server`) and the contract proxy's
//! (`payments-contract-proxy`) use these; a library a test embeds never
//! compiles them (clap comes with this feature alone).

mod env_list;
mod said;
mod stop;
mod tls_args;

use std::process::ExitCode;

pub use env_list::env_list;
pub use said::{say_error, to_stderr};
pub use stop::{Stop, StoppableRead};
pub use tls_args::TlsArgs;

use crate::logging::LogFormat;

/// Parses the process's command line as `T::parse()` does, except that an
/// argument clap does not know which follows one of `secret_flags` is never
/// repeated: a key that starts with `-` (`--api-key --abc…`) is read as an
/// argument of its own, and clap's "unexpected argument '--abc…'" would
/// print it. Exits 2 with a line naming the flag instead.
///
/// With `--log-format json` on the command line, an error (not `--help`
/// or `--version`) is said as one JSON line ([`say_error`]), its first
/// line alone.
pub fn parse_hiding_secrets<T: clap::Parser>(secret_flags: &[&str]) -> T {
    match T::try_parse() {
        Ok(parsed) => parsed,
        Err(err) => {
            let format = said::asked_format(std::env::args());
            if err.kind() == clap::error::ErrorKind::UnknownArgument
                && let Some(clap::error::ContextValue::String(arg)) =
                    err.get(clap::error::ContextKind::InvalidArg)
                && let Some(flag) = follows(secret_flags, arg, std::env::args())
            {
                say_error(
                    format,
                    &format!(
                        "{flag} needs a value; one that starts with '-' is given as \
                         {flag}=VALUE (the argument after it is not shown)"
                    ),
                );
                std::process::exit(2);
            }
            if let Some(text) = from_environment::<T>(&err, std::env::args(), |name| {
                std::env::var_os(name).is_some()
            }) {
                match format {
                    LogFormat::Text => said::to_stderr(&text),
                    LogFormat::Json => say_error(format, said::one_line(&text)),
                }
                std::process::exit(2);
            }
            if format == LogFormat::Json && err.use_stderr() {
                say_error(format, said::one_line(&err.render().to_string()));
                std::process::exit(err.exit_code());
            }
            err.exit()
        }
    }
}

/// clap's refusal of a value, naming the environment variable it came
/// from when it came from one (the flag not given in `args`): clap names
/// the flag only (`invalid value for '--admin-key <KEY>'`), which a user
/// who gave no flag cannot find. `None` for any other error.
fn from_environment<T: clap::CommandFactory>(
    err: &clap::Error,
    args: impl Iterator<Item = String>,
    is_set: impl Fn(&std::ffi::OsStr) -> bool,
) -> Option<String> {
    use clap::error::ErrorKind;
    if !matches!(
        err.kind(),
        ErrorKind::ValueValidation | ErrorKind::InvalidValue
    ) {
        return None;
    }
    // Both clap's (`invalid value 'x' for '--port <PORT>'`) and
    // [`QuietParser`]'s (`invalid value for '--admin-key <KEY>': …`)
    // name the argument so.
    let rendered = err.render().to_string();
    let start = rendered.find("for '--")? + "for '".len();
    let shown = &rendered[start..start + rendered[start..].find('\'')?];
    // `--admin-key <KEY>`: the flag is its first word.
    let flag = shown.split(' ').next()?;
    let long = flag.strip_prefix("--")?;
    let command = T::command();
    // The same flag may be a subcommand's too (the proxy's
    // `--admin-key`, read from another variable): the subcommand named in
    // `args` first, then the command's own; the first whose variable is
    // set.
    let args: Vec<String> = args.collect();
    let active = command
        .get_subcommands()
        .find(|c| args.iter().skip(1).any(|a| a == c.get_name()));
    let env = active
        .into_iter()
        .flat_map(clap::Command::get_arguments)
        .chain(command.get_arguments())
        .filter(|a| a.get_long() == Some(long))
        .filter_map(clap::Arg::get_env)
        .find(|env| is_set(env))?;
    let given = args.iter().skip(1).any(|a| {
        a == flag
            || a.strip_prefix(flag)
                .is_some_and(|rest| rest.starts_with('='))
    });
    if given {
        return None;
    }
    let quoted = format!("'{shown}'");
    Some(rendered.replacen(
        &quoted,
        &format!(
            "{quoted} (from the environment variable {})",
            env.to_string_lossy()
        ),
        1,
    ))
}

/// Which of `flags` the argument `arg` (or what clap cut of it: `-s` of
/// `-sk…`) follows in `args`.
fn follows<'f>(
    flags: &[&'f str],
    arg: &str,
    args: impl Iterator<Item = String>,
) -> Option<&'f str> {
    let args: Vec<String> = args.collect();
    args.windows(2).find_map(|pair| {
        let flag = flags.iter().find(|flag| pair[0] == **flag)?;
        (pair[1] == arg || pair[1].starts_with(arg)).then_some(*flag)
    })
}

/// Parses a value with its `FromStr` (whose error never repeats the
/// value), but unlike clap's own parsers the error never quotes the value
/// either: an API key, or a store URL with a password, is still a secret
/// when it is malformed, and usage errors end up in CI logs.
///
/// ```
/// use payments_serve::cli::QuietParser;
///
/// #[derive(Debug, clap::Parser)]
/// struct Args {
///     #[arg(long, value_parser = QuietParser::<u16>::new("a port"))]
///     port: u16,
/// }
/// # use clap::Parser as _;
/// let err = Args::try_parse_from(["x", "--port", "secret-70000"]).unwrap_err();
/// assert!(!err.to_string().contains("secret"));
/// ```
#[derive(Debug)]
pub struct QuietParser<T> {
    what: &'static str,
    kind: std::marker::PhantomData<fn() -> T>,
}

impl<T> QuietParser<T> {
    /// A parser of `what` (`"an API key"`), named so in its errors.
    #[must_use]
    pub fn new(what: &'static str) -> Self {
        Self {
            what,
            kind: std::marker::PhantomData,
        }
    }
}

impl<T> Clone for QuietParser<T> {
    fn clone(&self) -> Self {
        Self::new(self.what)
    }
}

impl<T, E> clap::builder::TypedValueParser for QuietParser<T>
where
    T: std::str::FromStr<Err = E> + Clone + Send + Sync + 'static,
    E: std::fmt::Display,
{
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<T, clap::Error> {
        let name = arg.map_or_else(|| "the value".to_owned(), ToString::to_string);
        let reason = match value.to_str() {
            Some(text) => match text.parse::<T>() {
                Ok(parsed) => return Ok(parsed),
                Err(reason) => reason.to_string(),
            },
            None => format!("{} must be valid UTF-8", self.what),
        };
        let mut cmd = cmd.clone();
        Err(cmd.error(
            clap::error::ErrorKind::ValueValidation,
            format!("invalid value for '{name}': {reason}"),
        ))
    }
}

/// `--log-format text|json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormatArg {
    /// One line of text per event.
    Text,
    /// One JSON object per event.
    Json,
}

impl From<LogFormatArg> for crate::logging::LogFormat {
    fn from(arg: LogFormatArg) -> Self {
        match arg {
            LogFormatArg::Text => Self::Text,
            LogFormatArg::Json => Self::Json,
        }
    }
}

/// The binaries' runtime (multi-threaded); when it cannot start, the exit
/// code after saying why on stderr.
///
/// # Errors
///
/// `ExitCode::FAILURE` when the runtime cannot be built (out of threads).
pub fn runtime() -> Result<tokio::runtime::Runtime, ExitCode> {
    runtime_logged(LogFormat::Text)
}

/// [`runtime`], its error said in the log's `format` ([`say_error`]).
///
/// # Errors
///
/// `ExitCode::FAILURE` when the runtime cannot be built (out of threads).
pub fn runtime_logged(format: LogFormat) -> Result<tokio::runtime::Runtime, ExitCode> {
    tokio::runtime::Runtime::new().map_err(|e| {
        say_error(format, &format!("cannot start the runtime: {e}"));
        ExitCode::FAILURE
    })
}

/// A future that completes on SIGINT, SIGTERM or SIGHUP. The handlers are
/// installed here, before it is first polled, so a signal that comes right
/// after the banner (a script stopping what it just started) already stops
/// the server gracefully instead of killing it.
/// SIGHUP (a closed terminal or SSH session, logrotate's `kill -HUP`) stops
/// it as SIGTERM does: its default action would end the process with
/// nothing written (no summary, no report files, no journal flushed). It
/// reopens no file.
/// A second signal after that ends the process at once, exit code 130
/// (SIGINT), 143 (SIGTERM) or 129 (SIGHUP), in-flight requests cut off.
///
/// Its line on stderr is text; [`shutdown_signal_logged`] says it in the
/// log's format.
pub fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    shutdown_signal_logged(LogFormat::Text)
}

/// [`shutdown_signal`], the second signal's line said in the log's
/// `format` (with `--log-format json`, one JSON line, a `WARN` event).
pub fn shutdown_signal_logged(format: LogFormat) -> impl std::future::Future<Output = ()> {
    let signal = stop_signal(format);
    async move {
        signal.await;
        tracing::info!("shutting down: finishing in-flight requests");
    }
}

/// [`shutdown_signal_logged`] without its `shutting down` line: for a
/// binary that may be stopped before it serves (the mock while it opens
/// its store or reads `--seed-from`), which says itself what the stop
/// ended. The handlers are installed here, at the call (which must be
/// inside a Tokio runtime); a second signal after the first ends the
/// process at once, as there.
pub fn stop_signal(format: LogFormat) -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    let handlers = {
        use tokio::signal::unix::{SignalKind, signal};
        (
            signal(SignalKind::interrupt()).ok(),
            signal(SignalKind::terminate()).ok(),
            signal(SignalKind::hangup()).ok(),
        )
    };
    async move {
        #[cfg(unix)]
        {
            let (mut interrupt, mut terminate, mut hangup) = handlers;
            let recv = async |s: &mut Option<tokio::signal::unix::Signal>| match s {
                Some(s) => {
                    s.recv().await;
                }
                None => std::future::pending::<()>().await,
            };
            tokio::select! {
                () = recv(&mut interrupt) => {},
                () = recv(&mut terminate) => {},
                () = recv(&mut hangup) => {},
            }
            // The handlers stay installed: a second signal while requests
            // finish would be swallowed. It stops the process at once,
            // with the shell's code for the signal (130 SIGINT, 143
            // SIGTERM, 129 SIGHUP).
            tokio::spawn(async move {
                let code = tokio::select! {
                    () = recv(&mut interrupt) => 130,
                    () = recv(&mut terminate) => 143,
                    () = recv(&mut hangup) => 129,
                };
                said::say_warning(
                    format,
                    "a second signal: stopping now, without finishing in-flight requests",
                );
                // No destructor runs after this: a file still being
                // written whole would leave its temporary file behind.
                crate::unfinished::remove_all();
                std::process::exit(code);
            });
        }
        #[cfg(not(unix))]
        {
            // No second signal to say.
            let _ = format;
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

/// An error and its sources on one line, `: ` between them (ripgrep's
/// `{:#}`): what a binary prints once before it exits.
#[must_use]
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Outer(std::io::Error);

    impl std::fmt::Display for Outer {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("cannot open the store")
        }
    }

    impl std::error::Error for Outer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[derive(Debug, clap::Parser)]
    struct Keyed {
        #[arg(long, env = "PAYMENTS_TEST_KEY", value_parser = QuietParser::<u16>::new("a key"))]
        key: Option<u16>,
    }

    #[test]
    fn a_refused_value_from_the_environment_names_the_variable() {
        use clap::Parser as _;
        let err = Keyed::try_parse_from(["x", "--key", "nope"]).expect_err("refused");
        let args = |list: &[&str]| list.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>();
        let set = |_: &std::ffi::OsStr| true;
        let text = from_environment::<Keyed>(&err, args(&["x"]).into_iter(), set).expect("named");
        assert!(
            text.contains("'--key <KEY>' (from the environment variable PAYMENTS_TEST_KEY)"),
            "{text}"
        );
        assert!(!text.contains("nope"), "{text}");
        // Given as a flag (either way), or the variable not set: clap's.
        for given in [&["x", "--key", "nope"][..], &["x", "--key=nope"]] {
            assert_eq!(
                from_environment::<Keyed>(&err, args(given).into_iter(), set),
                None
            );
        }
        assert_eq!(
            from_environment::<Keyed>(&err, args(&["x"]).into_iter(), |_| false),
            None
        );
    }

    #[test]
    fn the_chain_is_one_line() {
        let outer = Outer(std::io::Error::other("disk full"));
        assert_eq!(error_chain(&outer), "cannot open the store: disk full");
    }
}
