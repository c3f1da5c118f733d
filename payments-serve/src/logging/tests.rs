//! Both fast formatters against tracing-subscriber's own, line for line
//! (the default's line escaped as both escape every line: `escape.rs`).

use std::io;
use std::sync::{Arc, Mutex, PoisonError};

use tracing::Level;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::fmt::format::Writer;

use super::*;

thread_local! {
    /// Lines the fast path wrote on this thread.
    pub(super) static FAST_LINES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// Request lines written directly (`request_log.rs`) on this thread.
    pub(super) static DIRECT_LINES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
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
        target: "payments_contract_proxy::exchange",
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
        target: "payments_contract_proxy::exchange",
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

/// Lines of the text format as [`PlainText`] escapes them.
fn escaped(lines: Vec<String>) -> Vec<String> {
    lines
        .into_iter()
        .map(|line| escape_text(&line).into_owned())
        .collect()
}

/// Lines of the JSON format as [`JsonLines`] escapes them.
fn json_escaped(lines: Vec<String>) -> Vec<String> {
    lines
        .into_iter()
        .map(|mut line| {
            escape::escape_line(&mut line, escape::Style::Json);
            line
        })
        .collect()
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
    assert_eq!(fast, json_escaped(json_lines(false)));
    // The default writes DEL and U+2028 raw in a string; they are escaped.
    assert!(
        fast.iter()
            .any(|l| l.contains(r#""control":"a\u0001b\u007f\u2028\\""#)),
        "{fast:#?}"
    );
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
    assert_eq!(fast, escaped(lines(false)));
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

#[test]
fn fast_targets_need_no_escaping() {
    // The JSON format writes a fast target between quotes as it is.
    for target in super::FAST_TARGETS {
        assert_eq!(
            serde_json::to_string(target).expect("a string"),
            format!("\"{target}\""),
        );
        assert!(super::fast(target));
    }
}

/// Request lines with every value the direct writer treats apart:
/// quotes, escapes, text that is not ASCII, the latency's edges (a day and
/// more goes to the event), each as `log_request` gets it.
#[allow(clippy::type_complexity)]
fn request_lines() -> Vec<(
    String,
    String,
    u16,
    std::time::Duration,
    String,
    String,
    String,
    String,
)> {
    use std::time::Duration;
    let mut lines = Vec::new();
    for (method, path) in [
        ("GET", "/api/payments/reference/R%20%22x/status"),
        (
            "POST",
            "/sandboxes/0b3f1d8e-1f0a-4c59-9b1e-1c9a3e7f2d41/api/payments/initiate",
        ),
        ("M-SEARCH", "/caf\u{e9}/\"q\"\\ \u{7}"),
        ("GET", ""),
    ] {
        for elapsed in [
            Duration::ZERO,
            Duration::from_nanos(999),
            Duration::from_micros(65_548),
            Duration::from_micros(999_999_999_999),
            Duration::from_micros(1_000_000_000_000),
            Duration::MAX,
        ] {
            // Without a fault, with one, and with one a rule injected.
            for (request_id, error_code, fault, rule) in [
                ("05c17ed9-3606-41fa-a1cf-d4e2c4f8b5fc", "", "", ""),
                ("a\"b", "TRANSACTION_NOT_FOUND", "commit-then-error", ""),
                (
                    "\u{e9}\\",
                    "a\"b\tc\u{e9}",
                    "truncate,delay=200",
                    "6f1c0f0e-8d4b-4c47-9a4e-2f4f7f9d8a10",
                ),
            ] {
                lines.push((
                    method.to_owned(),
                    path.to_owned(),
                    404,
                    elapsed,
                    request_id.to_owned(),
                    error_code.to_owned(),
                    fault.to_owned(),
                    rule.to_owned(),
                ));
            }
        }
    }
    lines
}

/// What the binary's text log (`plain`: with its direct request lines, as
/// `init_logging` sets it up; otherwise tracing-subscriber's default
/// formatter, events only) writes for `request_lines`, outside a span and
/// (`in_span`) inside one; timestamps checked for shape and cut off.
fn logged_requests(plain: bool, in_span: bool) -> Vec<String> {
    let capture = Capture::default();
    let builder = tracing_subscriber::fmt()
        .with_ansi(false)
        .with_max_level(Level::TRACE)
        .with_writer(capture.clone());
    let run = || {
        let span = tracing::info_span!("outer", id = 7u64);
        let _entered = in_span.then(|| span.enter());
        for (method, path, status, elapsed, request_id, error_code, fault, rule) in request_lines()
        {
            crate::log_request(&crate::RequestLine {
                method: &method,
                path: &path,
                status,
                elapsed,
                request_id: &request_id,
                error_code: &error_code,
                fault: &fault,
                fault_rule: &rule,
            });
        }
    };
    if plain {
        let subscriber = builder
            .event_format(PlainText::default())
            .finish()
            .with(direct_lines(capture.clone()));
        tracing::subscriber::with_default(subscriber, run);
    } else {
        tracing::subscriber::with_default(builder.finish(), run);
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
            rest.to_owned()
        })
        .collect()
}

#[test]
fn request_lines_written_directly_are_the_default_formatters_lines() {
    let count = || DIRECT_LINES.with(std::cell::Cell::get);
    let before = count();
    let direct = logged_requests(true, false);
    // All but the two latencies of 11 days and more (each with four
    // paths and three ids) were written directly.
    assert_eq!(count() - before, request_lines().len() - 2 * 4 * 3);
    assert_eq!(direct, escaped(logged_requests(false, false)));
    // The default writes a path's BEL raw.
    assert!(
        direct
            .iter()
            .any(|l| l.contains("path=/caf\u{e9}/\"q\"\\ \\u{7} ")),
        "{direct:#?}"
    );
    assert_eq!(
        direct[7],
        "  INFO payments_mock_server::request: request method=GET \
         path=/api/payments/reference/R%20%22x/status status=404 \
         latency_ms=65.548 request_id=a\"b error_code=\"TRANSACTION_NOT_FOUND\" \
         fault=\"commit-then-error\""
    );
    assert!(direct[8].ends_with(
        " fault=\"truncate,delay=200\" fault_rule=\"6f1c0f0e-8d4b-4c47-9a4e-2f4f7f9d8a10\""
    ));
    assert_eq!(
        direct[6],
        "  INFO payments_mock_server::request: request method=GET \
         path=/api/payments/reference/R%20%22x/status status=404 \
         latency_ms=65.548 request_id=05c17ed9-3606-41fa-a1cf-d4e2c4f8b5fc error_code=\"\""
    );
    // Inside a span the default writes the span's context: the event.
    let before = count();
    let in_span = logged_requests(true, true);
    assert_eq!(count(), before, "none written directly inside a span");
    assert_eq!(in_span, escaped(logged_requests(false, true)));
    assert!(in_span[0].contains("outer{id=7}"), "{}", in_span[0]);
}

#[test]
fn request_lines_follow_the_filter() {
    let capture = Capture::default();
    let subscriber = tracing_subscriber::fmt()
        .with_ansi(false)
        .with_env_filter(tracing_subscriber::EnvFilter::new(
            "info,payments_mock_server::request=warn",
        ))
        .with_writer(capture.clone())
        .event_format(PlainText::default())
        .finish()
        .with(direct_lines(capture.clone()));
    tracing::subscriber::with_default(subscriber, || {
        crate::log_request(&crate::RequestLine {
            method: "GET",
            path: &"/x",
            status: 200,
            elapsed: std::time::Duration::ZERO,
            request_id: "r",
            error_code: "",
            fault: "",
            fault_rule: "",
        });
        tracing::info!("kept");
    });
    let text = String::from_utf8(capture.0.lock().expect("lock").clone()).expect("utf-8");
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.ends_with("kept\n"), "{text}");
}

mod forged;
