//! The text format: tracing-subscriber's default (`Full`, no colours),
//! with request and exchange lines written directly, and every line's
//! controls, separators and bidi controls escaped (`escape.rs`).

use std::fmt::{self, Write as _};

use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::fmt::format::{Format, Full, Writer};
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

use super::escape::{Style, escape_line};
use super::{fast, thousandths, with_line, write_thousandths, write_timestamp};
use crate::request_log::RequestLine;

/// The text format: default output, fast request lines, and what
/// [`is_escaped`](super::is_escaped) says escaped on every line, in
/// whichever field or message it came (a caller's path, a header's value).
#[derive(Debug)]
pub struct PlainText {
    fallback: Format<Full>,
    /// The default in colour (the line is made in a buffer of ours, whose
    /// writer knows of no terminal).
    painted: Format<Full>,
}

impl Default for PlainText {
    fn default() -> Self {
        Self {
            fallback: Format::default(),
            painted: Format::default().with_ansi(true),
        }
    }
}

impl PlainText {
    /// `event` as the default formatter writes it, escaped.
    fn default_line<S, N>(
        &self,
        ctx: &FmtContext<'_, S, N>,
        writer: &mut Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result
    where
        S: Subscriber + for<'a> LookupSpan<'a>,
        N: for<'a> FormatFields<'a> + 'static,
    {
        let (format, style) = if writer.has_ansi_escapes() {
            (&self.painted, Style::Painted)
        } else {
            (&self.fallback, Style::Text)
        };
        with_line(writer, |line| {
            format.format_event(ctx, Writer::new(line), event)?;
            escape_line(line, style);
            Ok(true)
        })
    }
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
            return self.default_line(ctx, &mut writer, event);
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
            escape_line(line, Style::Text);
            Ok(!unusual)
        })?;
        if unusual {
            // A message the default escapes, or an error value: written by
            // the default formatter itself.
            return self.default_line(ctx, &mut writer, event);
        }
        #[cfg(test)]
        super::tests::FAST_LINES.with(|n| n.set(n.get() + 1));
        Ok(())
    }
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

/// A `&str` field's value as the default writes it: its `Debug`, which
/// for text with nothing to escape is the text in quotes.
fn write_str_value(writer: &mut String, value: &str) -> fmt::Result {
    let plain = value
        .bytes()
        .all(|b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\');
    if plain {
        writer.push('"');
        writer.push_str(value);
        writer.push('"');
        Ok(())
    } else {
        write!(writer, "{value:?}")
    }
}

/// The mock's request line (`request_log.rs`) as [`PlainText`] writes its
/// event outside a span, without colours, escaped; false (nothing
/// written) for a latency the event writes in another form (11 days or
/// more).
pub(super) fn write_request_line(line: &mut String, request: &RequestLine<'_>) -> bool {
    let micros = request.elapsed.as_micros();
    let Some(micros) = u64::try_from(micros)
        .ok()
        .filter(|&m| m < 1_000_000_000_000)
    else {
        return false;
    };
    let written = (|| {
        write_timestamp(line)?;
        line.push_str("  INFO payments_mock_server::request: request method=");
        line.push_str(request.method);
        line.push_str(" path=");
        write!(line, "{}", request.path)?;
        line.push_str(" status=");
        line.push_str(itoa::Buffer::new().format(request.status));
        line.push_str(" latency_ms=");
        write_thousandths(line, micros)?;
        line.push_str(" request_id=");
        line.push_str(request.request_id);
        line.push_str(" error_code=");
        write_str_value(line, request.error_code)?;
        if !request.fault.is_empty() {
            line.push_str(" fault=");
            write_str_value(line, request.fault)?;
            if !request.fault_rule.is_empty() {
                line.push_str(" fault_rule=");
                write_str_value(line, request.fault_rule)?;
            }
        }
        line.push('\n');
        escape_line(line, Style::Text);
        Ok::<(), fmt::Error>(())
    })();
    #[cfg(test)]
    super::tests::DIRECT_LINES.with(|n| n.set(n.get() + 1));
    written.is_ok()
}

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        if !self.begin(field) {
            return;
        }
        self.result = if field.name() == "message" {
            self.unusual |= self.sanitize && escaped_in_messages(value);
            self.writer.write_str(value)
        } else {
            write_str_value(self.writer, value)
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
