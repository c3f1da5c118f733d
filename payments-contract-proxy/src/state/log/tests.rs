//! Each exchange's log line as a subscriber gets it (level, target, every
//! field: what the text and JSON formats both write): a violation and an
//! upstream that is down at WARN, with the rule ids and the reason; a pass
//! at INFO.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level as LogLevel, Metadata, Subscriber};

use super::*;
use crate::ProxyConfig;
use crate::rules::test_support::{exchange as made, failure, initiate_body, initiate_data, ok};
use crate::state::ProxyState;

/// One event: its level and fields (`message` among them).
#[derive(Debug, Clone)]
struct Line {
    level: LogLevel,
    target: String,
    fields: BTreeMap<String, String>,
}

/// Every event on this thread, kept.
#[derive(Debug, Clone, Default)]
struct Capture(Arc<Mutex<Vec<Line>>>);

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

impl Subscriber for Capture {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }

    fn record(&self, _: &Id, _: &Record<'_>) {}

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut fields = BTreeMap::new();
        event.record(&mut Fields(&mut fields));
        self.0.lock().expect("the lines").push(Line {
            level: *event.metadata().level(),
            target: event.metadata().target().to_owned(),
            fields,
        });
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}

impl Capture {
    /// The exchanges' lines so far.
    fn exchanges(&self) -> Vec<Line> {
        self.0
            .lock()
            .expect("the lines")
            .iter()
            .filter(|line| line.target == "payments_contract_proxy::exchange")
            .cloned()
            .collect()
    }
}

fn proxy_to(upstream: &str) -> ProxyState {
    ProxyState::new(ProxyConfig::new(upstream.parse().expect("a URL"))).expect("a proxy")
}

fn judged(e: Exchange) -> Line {
    let capture = Capture::default();
    let proxy = proxy_to("http://127.0.0.1:9");
    tracing::subscriber::with_default(capture.clone(), || proxy.judge(e, true));
    let mut lines = capture.exchanges();
    assert_eq!(lines.len(), 1, "{lines:?}");
    lines.remove(0)
}

#[test]
fn a_violation_is_logged_at_warn_with_its_rule_ids() {
    let line = judged(made(
        "GET",
        "/api/payments/t1/status",
        Value::Null,
        502,
        json!("<html>"),
    ));
    assert_eq!(line.level, LogLevel::WARN, "{line:?}");
    assert_eq!(line.fields["verdict"], "violation", "{line:?}");
    assert!(line.fields["rules"].contains("envelope.shape"), "{line:?}");
    assert_eq!(line.fields["status"], "502", "{line:?}");
}

#[test]
fn a_pass_and_an_undocumented_answer_stay_at_info() {
    let pass = judged(made(
        "POST",
        "/api/payments/initiate",
        initiate_body("REF-1", 1050),
        200,
        ok(initiate_data("t1", "REF-1", 1050)),
    ));
    assert_eq!(pass.level, LogLevel::INFO, "{pass:?}");
    assert_eq!(pass.fields["verdict"], "pass", "{pass:?}");
    assert!(!pass.fields.contains_key("rules"), "{pass:?}");
    let undocumented = judged(made(
        "GET",
        "/api/payments/t1/status",
        Value::Null,
        429,
        failure("RATE_LIMITED"),
    ));
    assert_eq!(undocumented.level, LogLevel::INFO, "{undocumented:?}");
    assert_eq!(undocumented.fields["verdict"], "undocumented");
}

#[test]
fn rule_ids_past_the_first_few_are_counted() {
    let finding = |rule: &'static str, level: Level| Finding {
        rule,
        level,
        message: String::new(),
    };
    let findings = [
        finding("a.one", Level::Violation),
        finding("b.two", Level::Violation),
        finding("a.one", Level::Violation),
        finding("c.undocumented", Level::Undocumented),
        finding("d.three", Level::Violation),
        finding("e.four", Level::Violation),
        finding("f.five", Level::Violation),
    ];
    assert_eq!(violated(&findings), "a.one, b.two, d.three and 2 more");
    assert_eq!(violated(&findings[..2]), "a.one, b.two");
}

/// The upstream down (a port nothing listens on): the proxy's own 502 is
/// logged at WARN with the reason its metric counts, `connect`.
#[tokio::test]
async fn an_upstream_that_is_down_is_logged_at_warn_with_its_reason() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let upstream = format!("http://{}", closed.local_addr().expect("its address"));
    drop(closed);
    let capture = Capture::default();
    let _default = tracing::subscriber::set_default(capture.clone());
    let proxy = crate::Proxy::start(ProxyConfig::new(upstream.parse().expect("a URL")))
        .await
        .expect("the proxy starts");
    let answer = reqwest::Client::new()
        .get(format!("{}/api/payments/t1/status", proxy.base_url()))
        .send()
        .await
        .expect("answered");
    assert_eq!(answer.status(), 502);
    let lines = capture.exchanges();
    assert_eq!(lines.len(), 1, "{lines:?}");
    let line = &lines[0];
    assert_eq!(line.level, LogLevel::WARN, "{line:?}");
    assert_eq!(line.fields["reason"], "connect", "{line:?}");
    assert_eq!(line.fields["verdict"], "unchecked", "{line:?}");
    assert!(
        line.fields["message"].contains("could not be connected to"),
        "{line:?}"
    );
    proxy.shutdown().await;
}

/// A path of 60,000 bytes made a line of 120 kB (the path in the field
/// and in the message): both are cut as the mock's request line is.
#[test]
fn a_long_path_is_cut_in_the_field_and_the_message() {
    let long = format!("/api/payments/{}/status", "A".repeat(60_000));
    let line = judged(made("GET", &long, Value::Null, 404, failure("NOT_FOUND")));
    let shown = format!("{}…", &long[..payments_serve::RequestLine::MAX_PATH]);
    assert_eq!(line.fields["path"], shown, "{line:?}");
    assert!(
        line.fields["message"].starts_with(&format!("GET {shown} → 404")),
        "{line:?}"
    );
    let total: usize = line.fields.values().map(String::len).sum();
    assert!(total < 1_000, "{total} bytes: {line:?}");
}
