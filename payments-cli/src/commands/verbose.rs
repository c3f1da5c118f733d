//! `-v`'s lines on stderr: the client's events (retries, attempts) and the
//! CLI's own request and response lines, every one of them with the
//! service's text made harmless for the terminal.
//!
//! What the service sends (an `errorCode`, a `message`, a transaction id
//! of an answer) reaches these lines through the client's events
//! (`retrying … error=service answered 503 …`) as well as through the
//! CLI's `<` lines. So escaping is not left to each line's author: the log
//! writer itself escapes every event ([`Escaped`]), and the CLI's lines go
//! through [`say`], the same rule as the final error line and the tables
//! (`text::printable`), with the secrets this run sent hidden.

use std::io::Write;

/// `-v`: the client's own events (retries, attempts) on stderr, and each
/// call in a trace of its own (CONTRACT section 21): its id is printed
/// with the response line, and the client sends it as the W3C
/// `traceparent`, so the service's journal (or the proxy's report) finds
/// the call.
///
/// The client never puts the key in an event; the filter keeps everything
/// else (reqwest, hyper) out. No span is exported: each call's span is
/// given a new trace and span id ([`Context::log_request`]), and the
/// client's spans, under OpenTelemetry's no-op tracer, carry them on.
///
/// [`Context::log_request`]: super::Context::log_request
pub(super) fn install() {
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;

    opentelemetry::global::set_text_map_propagator(super::trace::W3c);
    let log = tracing_subscriber::fmt::layer()
        .with_writer(|| Escaped::new(std::io::stderr()))
        .with_target(false)
        .without_time()
        .with_ansi(false)
        .with_filter(tracing_subscriber::EnvFilter::new("payments_client=debug"));
    let traces = tracing_opentelemetry::layer().with_filter(tracing_subscriber::EnvFilter::new(
        "payments_cli=info,payments_client=info",
    ));
    let _ = tracing_subscriber::registry()
        .with(log)
        .with(traces)
        .try_init();
}

/// Writes one `-v` line on stderr, as [`shown`] makes it.
pub(super) fn say(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{}", shown(line));
}

/// `text` as a `-v` line may show it: the secrets this run sent hidden,
/// then every control or bidirectional character escaped (`\u{1b}`), line
/// breaks between lines kept.
fn shown(text: &str) -> String {
    let hidden = crate::secrets::hide(text);
    let mut out = String::with_capacity(hidden.len());
    let mut lines = hidden.split('\n').peekable();
    while let Some(line) = lines.next() {
        out.push_str(&crate::text::printable(line));
        if lines.peek().is_some() {
            out.push('\n');
        }
    }
    out
}

/// The log's writer: gathers what the formatter writes for one event and,
/// when dropped (or flushed), writes it to `inner` as [`shown`] makes it.
/// Whole, so an escape sequence split across two writes is still seen,
/// and a character split across two writes is not broken.
struct Escaped<W: Write> {
    inner: W,
    pending: Vec<u8>,
}

impl<W: Write> Escaped<W> {
    fn new(inner: W) -> Self {
        Self {
            inner,
            pending: Vec::new(),
        }
    }
}

impl<W: Write> Write for Escaped<W> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.pending.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if !self.pending.is_empty() {
            let text = shown(&String::from_utf8_lossy(&self.pending));
            self.pending.clear();
            self.inner.write_all(text.as_bytes())?;
        }
        self.inner.flush()
    }
}

impl<W: Write> Drop for Escaped<W> {
    fn drop(&mut self) {
        // A log line that cannot be written has nowhere to be reported.
        let _ = self.flush();
    }
}

/// What `-v` says a request sends: the API key (`key`), else the base
/// URL's `user:pass@` (`url_credentials`, which reqwest sends as `Basic`),
/// else nothing; never the credentials themselves.
pub(crate) fn auth_said(key: bool, url_credentials: bool) -> &'static str {
    if key {
        " (authorization: Bearer [REDACTED])"
    } else if url_credentials {
        " (authorization: Basic [REDACTED], from the user:pass@ of the service URL)"
    } else {
        " (no API key)"
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::{Escaped, shown};

    #[test]
    fn an_event_cannot_drive_the_terminal_even_when_written_in_pieces() {
        let mut out = Vec::new();
        {
            let mut writer = Escaped::new(&mut out);
            // An escape sequence and a character, each cut in two.
            writer
                .write_all(b"error=service answered 503 X\x1b")
                .unwrap();
            writer.write_all(b"[2J: m\x1b]0;pwned\x07 \xc3").unwrap();
            writer.write_all(b"\xa9\n").unwrap();
        }
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "error=service answered 503 X\\u{1b}[2J: m\\u{1b}]0;pwned\\u{7} \u{e9}\n"
        );
    }

    #[test]
    fn line_breaks_between_lines_are_kept_and_bidi_controls_escaped() {
        assert_eq!(shown("a\u{202e}b\nc\r"), "a\\u{202e}b\nc\\r");
    }
}
