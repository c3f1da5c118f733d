//! What the console keeps of an exchange with large bodies.

use super::*;
use crate::rules::test_support::exchange;

/// A body of 4 MiB each way is kept as its first 64 KiB in an allocation
/// of about that size: a cut that kept the whole buffer held 8 MiB per
/// exchange (4 GB for the console's 500, 16 MiB bodies 16 GB).
#[test]
fn the_console_keeps_a_large_bodys_first_64_kib_and_frees_the_rest() {
    let proxy = ProxyState::new(ProxyConfig::new(
        "http://127.0.0.1:9".parse().expect("a URL"),
    ))
    .expect("a proxy");
    let mut e = exchange(
        "POST",
        "/api/payments/initiate",
        serde_json::Value::Null,
        400,
        serde_json::Value::Null,
    );
    let large = format!("é{}", "x".repeat(4 << 20));
    e.request.keep_body(large.as_bytes());
    e.response.keep_body(large.as_bytes());
    proxy.judge(e, true);
    let mut small = exchange(
        "GET",
        "/api/payments/x/status",
        serde_json::Value::Null,
        404,
        serde_json::Value::Null,
    );
    small.seq = 2;
    small.response.keep_body(b"short");
    proxy.judge(small, true);
    let judge = proxy.lock();
    let kept = &judge.recent[0].exchange;
    let note = "… (the console keeps the first 64 KiB)";
    for (side, message) in [("request", &kept.request), ("response", &kept.response)] {
        let body = message.body.as_deref().expect("a body");
        assert!(body.starts_with('é') && body.ends_with(note), "{side}");
        assert!(body.len() <= CONSOLE_BODY + note.len(), "{side}");
        let capacity = message.body.as_ref().map_or(0, String::capacity);
        assert!(
            capacity <= CONSOLE_BODY + note.len() + 64,
            "{side}: {capacity} bytes held for a 64 KiB cut"
        );
    }
    let short = &judge.recent[1].exchange.response;
    assert_eq!(short.body.as_deref(), Some("short"), "a short body whole");
}
