//! A caller's text that would forge a line or act on a viewer, in every
//! kind of line both formats write: escaped, by JSON's rules in JSON.

use super::*;

/// A caller's path that forges a line (U+2028, NEL) and acts on a
/// terminal (CSI) and a viewer (RLO), as a raw request sends it.
const FORGED: &str = "/api/payments/x\u{2028}2026-11-30T23:59:59.000000Z\u{a0}\u{a0}WARN\
    \u{a0}payments_mock_server:\u{a0}admin\u{a0}key\u{a0}accepted\u{a0}from\u{a0}10.0.0.66\
    \u{85}\u{9b}2J\u{202e}\u{2066}\u{61c}/status";

/// Five events with [`FORGED`] in a field and a message: the mock's
/// request line (written directly in text), the proxy's exchange line (a
/// fast line, and a default one with a terminal control in its message),
/// another target's, and one inside a span.
fn forged_events() {
    crate::log_request(&crate::RequestLine {
        method: "GET",
        path: &FORGED,
        status: 401,
        elapsed: std::time::Duration::from_micros(187),
        request_id: "r",
        error_code: "UNAUTHORIZED",
        fault: "",
        fault_rule: "",
    });
    tracing::info!(
        target: "payments_contract_proxy::exchange",
        seq = 29u64,
        method = %"GET",
        path = %FORGED,
        "GET {} \u{2192} 401 undocumented",
        FORGED.replace('\u{9b}', "")
    );
    tracing::info!(
        target: "payments_contract_proxy::exchange",
        path = %FORGED,
        "GET {FORGED} \u{2192} 401 undocumented"
    );
    tracing::warn!(header = %FORGED, reference = FORGED, "refused");
    let span = tracing::info_span!("outer", id = 7u64);
    let _entered = span.enter();
    tracing::info!(target: "payments_mock_server::request", path = %FORGED, "request");
}

/// What the binary's log set-up writes for [`forged_events`]: text (with
/// its direct request lines) or JSON.
fn forged_output(json: bool) -> String {
    let capture = Capture::default();
    let builder = tracing_subscriber::fmt()
        .with_ansi(false)
        .with_max_level(Level::TRACE)
        .with_writer(capture.clone());
    if json {
        let subscriber = builder.json().event_format(JsonLines::default()).finish();
        tracing::subscriber::with_default(subscriber, forged_events);
    } else {
        let subscriber = builder
            .event_format(PlainText::default())
            .finish()
            .with(direct_lines(capture.clone()));
        tracing::subscriber::with_default(subscriber, forged_events);
    }
    String::from_utf8(capture.0.lock().expect("lock").clone()).expect("utf-8")
}

#[test]
fn no_line_holds_a_callers_line_break_terminal_control_or_bidi_control() {
    for json in [false, true] {
        let out = forged_output(json);
        // Only the lines' own newlines break a line, for any viewer.
        let breaks = out.chars().filter(|&c| is_escaped(c)).collect::<String>();
        assert_eq!(breaks, "\n".repeat(5), "json: {json}\n{out}");
        for line in out.lines() {
            if json {
                // JSON's own escapes: the same path to a JSON reader.
                let value: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
                let fields = &value["fields"];
                let path = fields["path"].as_str().or(fields["header"].as_str());
                assert_eq!(path, Some(FORGED), "{line}");
                assert!(line.contains(r"x\u2028"), "{line}");
                assert!(
                    line.contains(r"\u0085\u009b2J\u202e\u2066\u061c/status"),
                    "{line}"
                );
            } else {
                assert!(line.contains(r"x\u{2028}2026-11-30"), "{line}");
                assert!(
                    line.contains(r"\u{85}\u{9b}2J\u{202e}\u{2066}\u{61c}/status")
                        || line.contains(r"\u{85}2J\u{202e}\u{2066}\u{61c}/status"),
                    "{line}"
                );
            }
        }
    }
    // In the text format, the mock's line was written directly, the
    // exchange line on the fast path: both escaped there too.
    let text = forged_output(false);
    let lines = text.lines().collect::<Vec<_>>();
    assert!(
        lines[0].contains(concat!(
            "  INFO payments_mock_server::request: request method=GET ",
            r"path=/api/payments/x\u{2028}2026-11-30T23:59:59.000000Z"
        )),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].contains(r#"seq=29 method=GET path=/api/payments/x\u{2028}"#),
        "{}",
        lines[1]
    );
}

#[test]
fn in_colour_the_paint_stays_and_the_callers_text_is_escaped() {
    let capture = Capture::default();
    let subscriber = tracing_subscriber::fmt()
        .with_ansi(true)
        .with_writer(capture.clone())
        .event_format(PlainText::default())
        .finish();
    tracing::subscriber::with_default(subscriber, forged_events);
    let text = String::from_utf8(capture.0.lock().expect("lock").clone()).expect("utf-8");
    assert_eq!(text.lines().count(), 5, "{text}");
    for line in text.lines() {
        assert!(line.contains("\x1b["), "painted: {line:?}");
        assert!(line.contains(r"x\u{2028}2026"), "{line:?}");
        assert!(
            !line.chars().any(|c| is_escaped(c) && c != '\x1b'),
            "{line:?}"
        );
    }
}
