//! The binary's log: [`init_logging`] sets up stderr as the binary does,
//! and [`PlainText`] is its text format, byte for byte tracing-subscriber's
//! default (`Full`, no colours) with a cheaper path for the request line.
//!
//! The default formatter spent ~11.6k instructions on each request line
//! (23 % of a status look-up, BENCHMARKS.md): three nested `fmt` calls per
//! field to paint name and `=` (even with colours off), and a calendar
//! computation for every timestamp. Request lines (target
//! `payments_mock_server::request`, outside any span) are written here
//! directly: the timestamp's date and time are formatted once per second,
//! integers through `itoa`, each field with one write. Every other event,
//! and every event when colours are on, goes to the default formatter.
//! `text.rs` and `json.rs` hold the two formats; `tests.rs` pins that each
//! writes the same lines as tracing-subscriber's own, but for what both
//! escape on every line (`escape.rs`: controls, line separators, bidi
//! controls, which the default writes raw in a field). Shared here: the
//! line buffer, the cached timestamp and the latency's number text.

use std::cell::RefCell;
use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

use crate::request_log::DirectLines;

mod batch;
mod escape;
mod json;
mod text;

pub use batch::{BatchGuard, Batched};
pub use escape::{escape_text, is_escaped};

pub use json::JsonLines;
pub use text::PlainText;

/// The format of the log lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// One line of text per event ([`PlainText`]).
    Text,
    /// One JSON object per event (tracing-subscriber's JSON format).
    Json,
}

/// Installs the global tracing subscriber the binary uses: events at
/// `RUST_LOG` (default `info`, the migration crate's progress lines at
/// `warn`) on stderr, colours only on a terminal.
///
/// Lines are written in batches (`batch.rs`): a serving thread appends its
/// line to a shared buffer and goes on, and a background thread writes what
/// gathered every 50 ms (`batch::INTERVAL`), many lines to a `write`,
/// with no wake-up per line. Nothing is dropped. Keep the returned guard
/// alive: dropping it writes what is left.
///
/// Panics if a global subscriber is already installed (as
/// `tracing_subscriber`'s `init` does).
pub fn init_logging(format: LogFormat) -> BatchGuard<std::io::Stderr> {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,refinery_core=warn"));
    let (writer, guard) = batch::batched(std::io::stderr());
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(ansi)
        .with_writer(writer.clone());
    match format {
        // Request lines written directly (`request_log.rs`), except in
        // colour: the default paints them.
        LogFormat::Text if !ansi => builder
            .event_format(PlainText::default())
            .finish()
            .with(direct_lines(writer))
            .init(),
        LogFormat::Text => builder.event_format(PlainText::default()).init(),
        LogFormat::Json => builder.json().event_format(JsonLines::default()).init(),
    }
    guard
}

/// The layer that writes the mock's request lines to `writer` directly,
/// as the text format without colours writes their events.
fn direct_lines<M>(writer: M) -> DirectLines
where
    M: for<'a> tracing_subscriber::fmt::MakeWriter<'a> + Send + Sync + 'static,
{
    DirectLines {
        write: Box::new(move |request| {
            let mut out = writer.make_writer();
            let mut io = IoText(&mut out);
            let mut written = false;
            let result = with_line(&mut io, |line| {
                written = text::write_request_line(line, request);
                Ok(written)
            });
            // A line that could not be made is the event's to write; one
            // the log could not take is lost either way.
            written || result.is_err()
        }),
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for DirectLines {}

/// A `fmt::Write` onto an `io::Write` (the batched log).
struct IoText<'a, W: std::io::Write>(&'a mut W);

impl<W: std::io::Write> fmt::Write for IoText<'_, W> {
    fn write_str(&mut self, text: &str) -> fmt::Result {
        self.0.write_all(text.as_bytes()).map_err(|_| fmt::Error)
    }
}

/// The targets of the per-request log lines, written by the fast paths: the
/// mock's request lines (`middleware.rs`, `guard.rs`) and the contract
/// proxy's exchange lines (its `lib.rs`, under its own crate's name).
const FAST_TARGETS: [&str; 2] = [
    "payments_mock_server::request",
    "payments_contract_proxy::exchange",
];

/// Whether `target`'s lines take the fast path.
fn fast(target: &str) -> bool {
    FAST_TARGETS.contains(&target)
}

/// Builds a line in this thread's buffer with `build` (plain `String`
/// writes, no dynamic call per piece), then hands it to `writer` whole
/// when `build` says so. A `Debug` value that logs while its line is built
/// gets a buffer of its own.
fn with_line<W: fmt::Write + ?Sized>(
    writer: &mut W,
    build: impl FnOnce(&mut String) -> Result<bool, fmt::Error>,
) -> fmt::Result {
    thread_local! {
        static LINE: RefCell<String> = const { RefCell::new(String::new()) };
    }
    LINE.with(|line| match line.try_borrow_mut() {
        Ok(mut line) => {
            line.clear();
            if build(&mut line)? {
                writer.write_str(&line)?;
            }
            Ok(())
        }
        Err(_) => {
            let mut line = String::new();
            if build(&mut line)? {
                writer.write_str(&line)?;
            }
            Ok(())
        }
    })
}

/// `2026-11-23T13:41:55.074002Z`, as tracing-subscriber's `SystemTime`
/// writes it; the part up to the seconds is cached per second.
fn write_timestamp<W: fmt::Write + ?Sized>(writer: &mut W) -> fmt::Result {
    thread_local! {
        static SECOND: RefCell<(u64, String)> = const { RefCell::new((u64::MAX, String::new())) };
    }
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let seconds = since.as_secs();
    SECOND.with(|cached| {
        let mut cached = cached.borrow_mut();
        if cached.0 != seconds {
            let at = i64::try_from(seconds)
                .ok()
                .and_then(|s| chrono::DateTime::from_timestamp(s, 0))
                .unwrap_or_default();
            cached.1 = at.format("%Y-%m-%dT%H:%M:%S").to_string();
            cached.0 = seconds;
        }
        writer.write_str(&cached.1)
    })?;
    let micros = since.subsec_micros();
    let mut digits = itoa::Buffer::new();
    let digits = digits.format(micros);
    writer.write_char('.')?;
    for _ in digits.len()..6 {
        writer.write_char('0')?;
    }
    writer.write_str(digits)?;
    writer.write_char('Z')
}

/// `n` when `value` is the `f64` nearest to `n / 1000` and below 10^9: the
/// request line's `latency_ms`, which is whole microseconds.
fn thousandths(value: f64) -> Option<u64> {
    // `-0.0` is in the range but `Debug` writes it with its sign.
    if !(0.0..1e9).contains(&value) || value.is_sign_negative() {
        return None;
    }
    // In range, so the conversion is exact and cannot saturate.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let n = (value * 1000.0).round() as u64;
    #[allow(clippy::cast_precision_loss)]
    let exact = n as f64 / 1000.0 == value;
    exact.then_some(n)
}

/// `n / 1000` as `f64`'s `Debug` writes it: for such a value below 10^9 the
/// shortest round-tripping text is the decimal itself with trailing zeros
/// dropped (any shorter decimal is at least 0.001 away, far more than the
/// spacing of `f64` there), and a whole number keeps `.0`.
fn write_thousandths<W: fmt::Write + ?Sized>(writer: &mut W, n: u64) -> fmt::Result {
    let mut itoa = itoa::Buffer::new();
    writer.write_str(itoa.format(n / 1000))?;
    writer.write_char('.')?;
    let fraction = n % 1000;
    if fraction == 0 {
        return writer.write_char('0');
    }
    let digits = [fraction / 100, fraction / 10 % 10, fraction % 10];
    let used = if !fraction.is_multiple_of(10) {
        3
    } else if !fraction.is_multiple_of(100) {
        2
    } else {
        1
    };
    for d in &digits[..used] {
        // A single decimal digit.
        writer.write_char(char::from(b'0' + *d as u8))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
