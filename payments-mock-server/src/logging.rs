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
//! `tests` pin that both produce the same lines.

use std::cell::RefCell;
use std::fmt::{self, Write as _};
use std::time::{SystemTime, UNIX_EPOCH};

use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::fmt::format::{Format, Full, Json, Writer};
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

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
/// Lines are written by a background thread through a 64 KiB buffer: they
/// queue while requests are served and go out many to a `write` once the
/// queue is drained, instead of one `write` system call per request on
/// the serving thread. Nothing is dropped (a full queue makes the logger
/// wait). Keep the returned guard alive: dropping it flushes what is left.
///
/// Panics if a global subscriber is already installed (as
/// `tracing_subscriber`'s `init` does).
pub fn init_logging(format: LogFormat) -> tracing_appender::non_blocking::WorkerGuard {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,refinery_core=warn"));
    let (writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .lossy(false)
        .thread_name("payments-mock-server-log")
        .finish(std::io::BufWriter::with_capacity(
            64 * 1024,
            std::io::stderr(),
        ));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(writer);
    match format {
        LogFormat::Text => builder.event_format(PlainText::default()).init(),
        LogFormat::Json => builder.json().event_format(JsonLines::default()).init(),
    }
    guard
}

/// The targets of the per-request log lines, written by the fast paths: the
/// mock's request lines (`middleware.rs`, `guard.rs`) and the contract
/// proxy's exchange lines (`proxy/mod.rs`).
const FAST_TARGETS: [&str; 2] = [
    "payments_mock_server::request",
    "payments_mock_server::proxy",
];

/// Whether `target`'s lines take the fast path.
fn fast(target: &str) -> bool {
    FAST_TARGETS.contains(&target)
}

/// The text format: default output, fast request lines.
#[derive(Debug, Default)]
pub struct PlainText {
    fallback: Format<Full>,
}

impl<S, N> FormatEvent<S, N> for PlainText
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let meta = event.metadata();
        if !fast(meta.target()) || writer.has_ansi_escapes() || ctx.event_scope().is_some() {
            return self.fallback.format_event(ctx, writer, event);
        }
        let sanitize = writer.sanitizes_ansi_escapes();
        let mut unusual = false;
        with_line(&mut writer, |line| {
            write_timestamp(line)?;
            line.push_str(match *meta.level() {
                Level::TRACE => " TRACE ",
                Level::DEBUG => " DEBUG ",
                Level::INFO => "  INFO ",
                Level::WARN => "  WARN ",
                Level::ERROR => " ERROR ",
            });
            line.push_str(meta.target());
            line.push_str(": ");
            let mut fields = Fields {
                writer: line,
                first: true,
                result: Ok(()),
                sanitize,
                unusual: false,
            };
            event.record(&mut fields);
            fields.result?;
            unusual = fields.unusual;
            line.push('\n');
            Ok(!unusual)
        })?;
        if unusual {
            // A message the default escapes, or an error value: written by
            // the default formatter itself.
            return self.fallback.format_event(ctx, writer, event);
        }
        #[cfg(test)]
        tests::FAST_LINES.with(|n| n.set(n.get() + 1));
        Ok(())
    }
}

/// Builds a line in this thread's buffer with `build` (plain `String`
/// writes, no dynamic call per piece), then hands it to `writer` whole
/// when `build` says so. A `Debug` value that logs while its line is built
/// gets a buffer of its own.
fn with_line(
    writer: &mut Writer<'_>,
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

/// The JSON format: byte for byte tracing-subscriber's JSON format
/// (`fmt().json()`: timestamp, level, fields, target), with the request
/// lines written here directly, as [`PlainText`] does for text.
///
/// The JSON formatter cost ~16k instructions more per request line than
/// the text one (BENCHMARKS.md): a `serde` map per line, the timestamp
/// formatted into a fresh `String`, every `Display` field through a
/// `collect_str` adapter. Here the line is one buffer of fixed parts,
/// the cached timestamp, and each field escaped only when it needs it.
/// Every other event (and every event inside a span) goes to the default.
#[derive(Debug)]
pub struct JsonLines {
    fallback: Format<Json>,
}

impl Default for JsonLines {
    fn default() -> Self {
        Self {
            fallback: Format::default().json(),
        }
    }
}

impl<S, N> FormatEvent<S, N> for JsonLines
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let meta = event.metadata();
        if !fast(meta.target()) || ctx.event_scope().is_some() {
            return self.fallback.format_event(ctx, writer, event);
        }
        #[cfg(test)]
        tests::FAST_LINES.with(|n| n.set(n.get() + 1));
        with_line(&mut writer, |line| {
            line.push_str("{\"timestamp\":\"");
            write_timestamp(line)?;
            line.push_str(match *meta.level() {
                Level::TRACE => "\",\"level\":\"TRACE\",\"fields\":{",
                Level::DEBUG => "\",\"level\":\"DEBUG\",\"fields\":{",
                Level::INFO => "\",\"level\":\"INFO\",\"fields\":{",
                Level::WARN => "\",\"level\":\"WARN\",\"fields\":{",
                Level::ERROR => "\",\"level\":\"ERROR\",\"fields\":{",
            });
            let mut fields = JsonFieldsOut {
                writer: line,
                first: true,
                result: Ok(()),
            };
            event.record(&mut fields);
            fields.result?;
            line.push_str("},\"target\":");
            json_string(line, meta.target())?;
            line.push_str("}\n");
            Ok(true)
        })
    }
}

/// `text` as a JSON string, escaped as `serde_json` escapes it.
fn json_string<W: fmt::Write + ?Sized>(writer: &mut W, text: &str) -> fmt::Result {
    if text.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        writer.write_char('"')?;
        writer.write_str(text)?;
        return writer.write_char('"');
    }
    match serde_json::to_string(text) {
        Ok(escaped) => writer.write_str(&escaped),
        Err(_) => Err(fmt::Error),
    }
}

/// Writes fields as tracing-serde's map visitor does: `"name":value`,
/// strings and `Debug` values as JSON strings, numbers as numbers.
struct JsonFieldsOut<'a> {
    writer: &'a mut String,
    first: bool,
    result: fmt::Result,
}

impl JsonFieldsOut<'_> {
    /// Starts a field; false when an earlier write failed.
    fn begin(&mut self, field: &Field) -> bool {
        if self.result.is_err() {
            return false;
        }
        if !self.first {
            self.writer.push(',');
        }
        self.first = false;
        self.result = json_string(self.writer, field.name());
        self.writer.push(':');
        self.result.is_ok()
    }
}

impl Visit for JsonFieldsOut<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        if self.begin(field) {
            self.result = json_string(self.writer, value);
        }
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        if self.begin(field) {
            self.result = self.writer.write_str(if value { "true" } else { "false" });
        }
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        if self.begin(field) {
            self.result = self.writer.write_str(itoa::Buffer::new().format(value));
        }
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        if self.begin(field) {
            self.result = self.writer.write_str(itoa::Buffer::new().format(value));
        }
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        if self.begin(field) {
            self.result = match thousandths(value) {
                Some(n) => write_thousandths(self.writer, n),
                // serde_json's own text (`null` for NaN and infinities).
                None => serde_json::to_string(&value)
                    .map_err(|_| fmt::Error)
                    .and_then(|text| self.writer.write_str(&text)),
            };
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if self.begin(field) {
            // Written in place, then escaped in place when it needs it
            // (rare: a path or an id with a quote or a control character).
            let start = self.writer.len();
            self.writer.push('"');
            self.result = write!(self.writer, "{value:?}");
            let written = &self.writer[start + 1..];
            if written.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\') {
                let escaped = serde_json::to_string(written).map_err(|_| fmt::Error);
                self.writer.truncate(start);
                self.result = self
                    .result
                    .and(escaped)
                    .map(|escaped| self.writer.push_str(&escaped));
            } else {
                self.writer.push('"');
            }
        }
    }
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

/// Writes fields as the default formatter's visitor does: `message` bare,
/// the others as `name=value` with `Debug` values, one space apart.
struct Fields<'a> {
    writer: &'a mut String,
    first: bool,
    result: fmt::Result,
    /// Whether the default escapes terminal controls in messages.
    sanitize: bool,
    /// Met what the default writes differently: a message with a terminal
    /// control it escapes, or an error value (written with its sources).
    unusual: bool,
}

/// Whether the default formatter escapes something in a message: ESC,
/// BEL, BS, FF, DEL or a C1 control (tracing-subscriber's `EscapeGuard`).
fn escaped_in_messages(text: &str) -> bool {
    text.bytes()
        .any(|b| matches!(b, 0x1b | 0x07 | 0x08 | 0x0c | 0x7f | 0xc2))
        && text.chars().any(|c| {
            matches!(
                c,
                '\x1b' | '\x07' | '\x08' | '\x0c' | '\x7f' | '\u{80}'..='\u{9f}'
            )
        })
}

impl Fields<'_> {
    /// Starts a field; false when the field is not written.
    fn begin(&mut self, field: &Field) -> bool {
        let name = field.name();
        if self.result.is_err() || name.starts_with("log.") {
            return false;
        }
        if !self.first {
            self.writer.push(' ');
        }
        self.first = false;
        if name != "message" {
            self.writer
                .push_str(name.strip_prefix("r#").unwrap_or(name));
            self.writer.push('=');
        }
        true
    }
}

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        if !self.begin(field) {
            return;
        }
        let plain = value
            .bytes()
            .all(|b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\');
        self.result = match (field.name() == "message", plain) {
            (true, _) => {
                self.unusual |= self.sanitize && escaped_in_messages(value);
                self.writer.write_str(value)
            }
            (false, true) => self
                .writer
                .write_char('"')
                .and_then(|()| self.writer.write_str(value))
                .and_then(|()| self.writer.write_char('"')),
            (false, false) => write!(self.writer, "{value:?}"),
        };
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        if self.begin(field) {
            self.result = self.writer.write_str(itoa::Buffer::new().format(value));
        }
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        if self.begin(field) {
            self.result = self.writer.write_str(itoa::Buffer::new().format(value));
        }
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        if self.begin(field) {
            self.result = match thousandths(value) {
                Some(n) => write_thousandths(self.writer, n),
                None => write!(self.writer, "{value:?}"),
            };
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if self.begin(field) {
            let start = self.writer.len();
            self.result = write!(self.writer, "{value:?}");
            if field.name() == "message" && self.sanitize {
                self.unusual |= escaped_in_messages(&self.writer[start..]);
            }
        }
    }

    fn record_error(&mut self, _field: &Field, _value: &(dyn std::error::Error + 'static)) {
        self.unusual = true;
    }
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
mod tests {
    use std::io;
    use std::sync::{Arc, Mutex, PoisonError};

    use tracing_subscriber::fmt::MakeWriter;

    use super::*;

    thread_local! {
        /// Lines the fast path wrote on this thread.
        pub(super) static FAST_LINES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    #[derive(Clone, Default)]
    struct Capture(Arc<Mutex<Vec<u8>>>);

    impl io::Write for Capture {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl<'a> MakeWriter<'a> for Capture {
        type Writer = Capture;
        fn make_writer(&'a self) -> Self::Writer {
            self.clone()
        }
    }

    fn events() {
        tracing::info!(
            target: "payments_mock_server::request",
            method = %"GET",
            path = %"/api/payments/reference/R%20%22x/status",
            status = 404u16,
            latency_ms = 0.065_548_000_000_000_01_f64,
            request_id = %"a\"b",
            error_code = "TRANSACTION_NOT_FOUND",
            "request"
        );
        tracing::info!(
            target: "payments_mock_server::request",
            request_id = %"r",
            error_code = "",
            quoted = "say \"hi\"\tand\u{7}é",
            negative = -3i64,
            flag = true,
            latency_ms = 12.5_f64,
            whole = 3.0_f64,
            tiny = 0.001_f64,
            "request"
        );
        tracing::error!(target: "payments_mock_server::request", "handler panicked");
        tracing::warn!(target: "payments_mock_server::request", n = 1u64, r#type = "x", "with {} args", 2);
        tracing::info!(fault_seed = 42u64, "fault seed 42");
        tracing::info!(
            target: "payments_mock_server::proxy",
            seq = 7u64,
            method = %"POST",
            path = %"/api/payments/initiate",
            status = 200u16,
            verdict = "pass",
            findings = 0usize,
            "{} {} → {} {}",
            "POST",
            "/api/payments/initiate",
            200,
            "pass"
        );
        // What the default escapes in a message (terminal controls), as
        // format arguments and as a plain string; an error with a source.
        tracing::info!(
            target: "payments_mock_server::proxy",
            "{} {}",
            "GET",
            "/p\u{1b}[2J\u{9b}\u{7f}"
        );
        tracing::info!(target: "payments_mock_server::request", message = "bell\u{7}\u{8}\u{c}");
        let error = std::io::Error::other(Outer(std::io::Error::other("inner \u{1b}[31m")));
        tracing::warn!(
            target: "payments_mock_server::request",
            error = &error as &(dyn std::error::Error + 'static),
            "request"
        );
        let span = tracing::info_span!("outer", id = 7u64);
        let _entered = span.enter();
        tracing::info!(target: "payments_mock_server::request", status = 200u16, "request");
    }

    /// An error with a source.
    #[derive(Debug)]
    struct Outer(std::io::Error);

    impl std::fmt::Display for Outer {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("outer")
        }
    }

    impl std::error::Error for Outer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    /// What a subscriber with this formatter writes for `events`, with the
    /// timestamps cut off (checked separately for shape).
    fn lines(plain: bool) -> Vec<String> {
        let capture = Capture::default();
        let builder = tracing_subscriber::fmt()
            .with_ansi(false)
            .with_max_level(Level::TRACE)
            .with_writer(capture.clone());
        if plain {
            tracing::subscriber::with_default(
                builder.event_format(PlainText::default()).finish(),
                events,
            );
        } else {
            tracing::subscriber::with_default(builder.finish(), events);
        }
        let text = String::from_utf8(capture.0.lock().expect("lock").clone()).expect("utf-8");
        text.lines()
            .map(|line| {
                let (stamp, rest) = line.split_at(27);
                let b = stamp.as_bytes();
                assert!(
                    b[4] == b'-' && b[10] == b'T' && b[19] == b'.' && b[26] == b'Z',
                    "{line}"
                );
                assert!(b[20..26].iter().all(u8::is_ascii_digit), "{line}");
                rest.to_owned()
            })
            .collect()
    }

    /// What a JSON subscriber writes for `events`, timestamps replaced.
    fn json_lines(fast: bool) -> Vec<String> {
        let capture = Capture::default();
        let builder = tracing_subscriber::fmt()
            .with_ansi(false)
            .with_max_level(Level::TRACE)
            .with_writer(capture.clone())
            .json();
        if fast {
            tracing::subscriber::with_default(
                builder.event_format(JsonLines::default()).finish(),
                || {
                    events();
                    json_events();
                },
            );
        } else {
            tracing::subscriber::with_default(builder.finish(), || {
                events();
                json_events();
            });
        }
        let text = String::from_utf8(capture.0.lock().expect("lock").clone()).expect("utf-8");
        text.lines()
            .map(|line| {
                let value: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
                let stamp = value["timestamp"].as_str().expect("a timestamp");
                assert_eq!(stamp.len(), 27, "{line}");
                line.replace(stamp, "T")
            })
            .collect()
    }

    /// Values only the JSON format writes differently.
    fn json_events() {
        tracing::info!(
            target: "payments_mock_server::request",
            control = "a\u{1}b\u{7f}\u{2028}\\",
            nan = f64::NAN,
            huge = 1e300_f64,
            small = 1e-7_f64,
            debugged = ?Some("x\"y"),
            "request"
        );
    }

    #[test]
    fn json_lines_are_the_json_formatters_lines() {
        let before = FAST_LINES.with(std::cell::Cell::get);
        let fast = json_lines(true);
        // JSON escapes what a terminal would act on itself: all nine
        // lines outside a span are fast.
        assert_eq!(FAST_LINES.with(std::cell::Cell::get) - before, 9);
        assert_eq!(fast, json_lines(false));
        assert_eq!(
            fast[0],
            r#"{"timestamp":"T","level":"INFO","fields":{"message":"request","method":"GET","path":"/api/payments/reference/R%20%22x/status","status":404,"latency_ms":0.06554800000000001,"request_id":"a\"b","error_code":"TRANSACTION_NOT_FOUND"},"target":"payments_mock_server::request"}"#
        );
    }

    fn thousandths_text(n: u64) -> String {
        let mut text = String::new();
        write_thousandths(&mut Writer::new(&mut text), n).expect("written");
        text
    }

    #[test]
    fn whole_microseconds_are_written_as_debug_writes_them() {
        for n in [
            0,
            1,
            10,
            100,
            1000,
            1001,
            1010,
            1100,
            65_548,
            999_999_999_999,
        ] {
            #[allow(clippy::cast_precision_loss)]
            let value = n as f64 / 1000.0;
            assert_eq!(thousandths(value), Some(n));
            assert_eq!(thousandths_text(n), format!("{value:?}"), "{n}");
        }
        for value in [
            0.065_548_000_000_000_01,
            -1.0,
            -0.0,
            1e9,
            f64::NAN,
            f64::INFINITY,
            1e-4,
        ] {
            assert_eq!(thousandths(value), None, "{value}");
        }
    }

    proptest::proptest! {
        #[test]
        fn any_whole_microsecond_latency_is_written_as_debug_writes_it(n in 0u64..1_000_000_000_000) {
            #[allow(clippy::cast_precision_loss)]
            let value = n as f64 / 1000.0;
            proptest::prop_assert_eq!(thousandths(value), Some(n));
            proptest::prop_assert_eq!(thousandths_text(n), format!("{value:?}"));
        }
    }

    #[test]
    fn lines_are_the_default_formatters_lines() {
        let fast = lines(true);
        assert_eq!(fast.len(), 10);
        // Four request lines and the proxy's line outside a span took the
        // fast path; the fault seed line, the one inside a span, the two
        // messages with terminal controls and the error went to the default.
        assert_eq!(FAST_LINES.with(std::cell::Cell::get), 5);
        assert_eq!(fast, lines(false));
        assert!(
            fast.iter().any(|l| l.ends_with(r"GET /p\x1b[2J\u{9b}\x7f")),
            "{fast:#?}"
        );
        assert!(
            fast.iter().any(|l| l.contains("error.sources=[")),
            "{fast:#?}"
        );
        assert_eq!(
            fast[0],
            "  INFO payments_mock_server::request: request method=GET \
             path=/api/payments/reference/R%20%22x/status status=404 \
             latency_ms=0.06554800000000001 request_id=a\"b error_code=\"TRANSACTION_NOT_FOUND\""
        );
    }
}
