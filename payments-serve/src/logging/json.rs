//! The JSON format: tracing-subscriber's `fmt().json()`, with request and
//! exchange lines written directly, and every line's controls, separators
//! and bidi controls written as JSON's `\uXXXX` escapes (`escape.rs`).

use std::fmt::{self, Write as _};

use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::fmt::format::{Format, Json, Writer};
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

use super::escape::{Style, escape_line};
use super::{fast, thousandths, with_line, write_thousandths, write_timestamp};

/// The JSON format: byte for byte tracing-subscriber's JSON format
/// (`fmt().json()`: timestamp, level, fields, target), with the request
/// lines written here directly, as [`PlainText`](super::PlainText) does for text.
///
/// The JSON formatter cost ~16k instructions more per request line than
/// the text one (BENCHMARKS.md): a `serde` map per line, the timestamp
/// formatted into a fresh `String`, every `Display` field through a
/// `collect_str` adapter. Here the line is one buffer of fixed parts,
/// the cached timestamp, and each field escaped only when it needs it.
/// Every other event (and every event inside a span) goes to the default.
///
/// Unlike the default, no line holds a raw U+2028, NEL, C1 control or
/// bidi control (valid in a JSON string, but a viewer acts on them): each
/// is its `\uXXXX` escape, the same string to a JSON reader.
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
            return with_line(&mut writer, |line| {
                self.fallback.format_event(ctx, Writer::new(line), event)?;
                escape_line(line, Style::Json);
                Ok(true)
            });
        }
        #[cfg(test)]
        super::tests::FAST_LINES.with(|n| n.set(n.get() + 1));
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
            // A fast target is one of two constants with nothing to
            // escape (`fast_targets_need_no_escaping`).
            line.push_str("},\"target\":\"");
            line.push_str(meta.target());
            line.push_str("\"}\n");
            escape_line(line, Style::Json);
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
