//! Redaction of exchanges with many secrets: every one replaced, wherever
//! it is echoed (the reviewer's time cliffs, checked for what they show,
//! never for how long they take).

use serde_json::{Value, json};

use super::*;
use crate::rules::test_support::exchange;
use crate::state::ProxyState;

/// The `n`th of many distinct codes.
fn code(n: usize) -> String {
    format!("SECRET{n:08}")
}

/// An initiate carrying 10,000 distinct confirmation codes, answered with
/// each of them echoed (in strings, a member name, the `errorCode`, the
/// message): the recording and the report show none of them.
#[test]
pub(super) fn every_one_of_ten_thousand_distinct_secrets_is_redacted_in_the_recording_and_report() {
    const CODES: usize = 10_000;
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (record, report) = (dir.path().join("record"), dir.path().join("report"));
    let mut config = crate::ProxyConfig::new("http://127.0.0.1:9".parse().expect("a URL"));
    config.record = Some(record.clone());
    config.report = Some(report.clone());
    let proxy = ProxyState::new(config).expect("a proxy");
    let items: Vec<Value> = (0..CODES)
        .map(|n| json!({ "confirmationCode": code(n) }))
        .collect();
    let echoed: Vec<Value> = (0..CODES)
        .map(|n| json!(format!("was {}", code(n))))
        .collect();
    let e = exchange(
        "POST",
        "/api/payments/initiate",
        json!({ "referenceNo": "R1", "items": items }),
        400,
        json!({
            "isSuccess": false,
            "errorCode": code(42),
            "message": format!("{} and {}", code(0), code(CODES - 1)),
            "data": { "echo": echoed, code(7): 1 },
        }),
    );
    let (_, findings) = proxy.judge(e, true);
    assert!(!findings.is_empty(), "the answer is judged");
    for (what, path) in [("recording", &record), ("report", &report)] {
        let text = std::fs::read_to_string(path).expect("written");
        assert!(!text.contains("SECRET"), "{what}: a code shows");
        assert!(text.contains(REDACTED), "{what}: replaced, not dropped");
    }
    let recording = std::fs::read_to_string(&record).expect("written");
    assert!(
        recording.matches(REDACTED).count() >= 2 * CODES,
        "each code where it stands and where it is echoed"
    );
}

/// A cookie among 100 echoed percent-encoded (a byte of it, either case)
/// in a large body that holds other `%`: replaced, the encoded span
/// whole.
#[test]
pub(super) fn a_percent_encoded_secret_among_a_hundred_cookies_is_redacted() {
    let cookie = (0..100)
        .map(|n| format!("c{n:03}=COOKIE-VALUE-{n:04}"))
        .collect::<Vec<_>>()
        .join("; ");
    let filler = "y".repeat(1 << 20);
    let mut e = exchange(
        "POST",
        "/api/payments/initiate",
        json!({ "referenceNo": "R1" }),
        200,
        json!({
            "d": format!("100% {filler} %43OOKIE-VALUE-0042 COOKIE%2dVALUE-0099 COOKIE-VALUE-0000"),
        }),
    );
    e.request.headers = vec![("Cookie".to_owned(), cookie)];
    let redacted = Redactor::new().exchange(&e);
    let body: Value = serde_json::from_str(redacted.response.body.as_deref().expect("a body"))
        .expect("still JSON");
    let d = body["d"].as_str().expect("a string");
    assert_eq!(
        d.strip_prefix("100% ")
            .and_then(|rest| rest.strip_prefix(filler.as_str())),
        Some(" [redacted] [redacted] [redacted]"),
        "{}",
        &d[d.len().saturating_sub(80)..]
    );
    assert_eq!(
        redacted.request.headers,
        vec![("Cookie".to_owned(), REDACTED.to_owned())]
    );
}

/// A finding's message quoting values cut beside secrets, among 10,000
/// short secrets and 30 long ones: each cut beginning replaced, the
/// longest, whichever secret it begins.
#[test]
pub(super) fn a_cut_finding_beside_a_secret_is_redacted_among_many_secrets() {
    let long = |n: usize| format!("{n:03}").repeat(334);
    let mut secrets: Secrets = (0..30).map(|n| (long(n), REDACTED.to_owned())).collect();
    secrets.extend((0..10_000).map(|n| (code(n), REDACTED.to_owned())));
    let redactor = Redactor::new();
    let message = format!(
        "errorCode xx{}… and yy{}… and {} whole, {}… short",
        &long(17)[..60],
        &code(4_299)[..12],
        code(4_242),
        &code(1)[..3],
    );
    assert_eq!(
        redactor.scrub_cut(&message, &secrets),
        format!(
            "errorCode xx{REDACTED}… and yy{REDACTED}… and {REDACTED} whole, {}… short",
            &code(1)[..3]
        )
    );
    assert_eq!(
        redactor.scrub_cut("value 9999…", &secrets),
        "value 9999…",
        "no secret begins `9999`"
    );
}
