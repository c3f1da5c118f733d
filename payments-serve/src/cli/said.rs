//! What a binary says on stderr outside its log, in the log's format: an
//! error that stops the start, the second signal's line. As text, the
//! line it always was (`error: …`); with `--log-format json`, one JSON
//! line written by the log's own JSON format ([`JsonLines`]), written at
//! once (not batched: the process ends right after).

use crate::logging::{JsonLines, LogFormat};

/// Says `message`, an error that stops the start, on stderr: `error:
/// MESSAGE` as text; as JSON, an `ERROR` event whose message it is.
///
/// ```
/// use payments_serve::cli::say_error;
/// use payments_serve::logging::LogFormat;
///
/// say_error(LogFormat::Text, "cannot listen on 127.0.0.1:8080 (--host, --port): in use");
/// ```
pub fn say_error(format: LogFormat, message: &str) {
    match format {
        LogFormat::Text => to_stderr(&format!("error: {message}\n")),
        LogFormat::Json => in_json(|| tracing::error!(target: "payments_serve::cli", "{message}")),
    }
}

/// Says `message`, a warning outside the log (the second signal's), on
/// stderr: the line as text; as JSON, a `WARN` event.
pub(super) fn say_warning(format: LogFormat, message: &str) {
    match format {
        LogFormat::Text => to_stderr(&format!("{message}\n")),
        LogFormat::Json => in_json(|| tracing::warn!(target: "payments_serve::cli", "{message}")),
    }
}

/// Writes `text` to stderr, losing it when stderr cannot be written
/// (`2> /dev/full`): `eprint!` panics there, which turned an exit code
/// the caller chose into 101.
pub fn to_stderr(text: &str) {
    use std::io::Write as _;
    let mut stderr = std::io::stderr().lock();
    let _ = stderr
        .write_all(text.as_bytes())
        .and_then(|()| stderr.flush());
}

/// Runs `say` with the log's JSON format on stderr as this thread's
/// subscriber: its event written at once, whatever the global log (none
/// yet, or batched) and its level filter.
pub(super) fn in_json(say: impl FnOnce()) {
    let subscriber = tracing_subscriber::fmt()
        .json()
        // A stderr that cannot be written loses the line; tracing's own
        // report of that failure is an `eprintln!`, which would panic.
        // (Set before the event format: it is the default format's.)
        .log_internal_errors(false)
        .event_format(JsonLines::default())
        .with_writer(std::io::stderr)
        .finish();
    tracing::subscriber::with_default(subscriber, say);
}

/// The format `--log-format` asks for in `args` (the program's name
/// first), before the command line is parsed: the parse's own errors are
/// said in it. Text unless the last `--log-format` says `json`.
pub(super) fn asked_format(args: impl Iterator<Item = String>) -> LogFormat {
    let args: Vec<String> = args.skip(1).collect();
    let mut format = LogFormat::Text;
    for (at, arg) in args.iter().enumerate() {
        let value = match arg.strip_prefix("--log-format") {
            Some("") => args.get(at + 1).map(String::as_str),
            Some(rest) => rest.strip_prefix('='),
            None => None,
        };
        match value {
            Some("json") => format = LogFormat::Json,
            Some("text") => format = LogFormat::Text,
            _ => {}
        }
    }
    format
}

/// clap's error as one message: its first line, without `error: `
/// (the usage and the `--help` hint that follow are for a terminal).
pub(super) fn one_line(rendered: &str) -> &str {
    let first = rendered.lines().next().unwrap_or_default();
    first.strip_prefix("error: ").unwrap_or(first).trim_end()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> impl Iterator<Item = String> {
        list.iter()
            .map(|a| (*a).to_owned())
            .collect::<Vec<_>>()
            .into_iter()
    }

    #[test]
    fn the_format_asked_for_is_read_before_the_parse() {
        for (given, json) in [
            (&["x", "--log-format", "json"][..], true),
            (&["x", "--log-format=json", "--port", "nope"], true),
            (
                &["x", "--log-format", "json", "--log-format", "text"],
                false,
            ),
            (&["x", "--port", "1"], false),
            (&["x", "--log-format"], false),
        ] {
            assert_eq!(
                asked_format(args(given)) == LogFormat::Json,
                json,
                "{given:?}"
            );
        }
    }

    #[test]
    fn a_clap_error_is_its_first_line() {
        let rendered = "error: invalid value for '--upstream <URL>': not a URL\n\nUsage: x\n";
        assert_eq!(
            one_line(rendered),
            "invalid value for '--upstream <URL>': not a URL"
        );
    }
}
