//! What the proxy keeps of exchanges with large bodies and values: the
//! console's bodies, the findings JUnit and SARIF are written from.

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

/// Findings quoting a 256 KiB errorCode are kept a few hundred bytes each
/// (the trail JUnit and SARIF are written from, and the console's), and a
/// secret the cut falls inside shows none of it.
#[test]
fn findings_of_huge_error_codes_stay_small_and_show_no_cut_secret() {
    let proxy = ProxyState::new(ProxyConfig::new(
        "http://127.0.0.1:9".parse().expect("a URL"),
    ))
    .expect("a proxy");
    let secret = "KEY-CANARY-0123456789";
    let exchanges = 20;
    for seq in 1..=exchanges {
        let code = format!("{}{secret}{}", "x".repeat(250), "C".repeat(256 * 1024));
        let answer = serde_json::json!({
            "isSuccess": false, "errorCode": code, "message": "no", "data": null,
        });
        let mut e = exchange(
            "POST",
            "/api/payments/initiate",
            crate::rules::test_support::initiate_body("REF-1", 100),
            400,
            answer,
        );
        e.seq = seq;
        e.request
            .headers
            .push(("Authorization".to_owned(), format!("Bearer {secret}")));
        proxy.judge(e, true);
    }
    let judge = proxy.lock();
    let kept: usize = judge
        .trail
        .cases()
        .flat_map(|case| case.findings)
        .map(|f| f.message.capacity())
        .sum();
    let cap = 512;
    assert!(
        kept < exchanges as usize * cap,
        "{kept} bytes of findings kept for {exchanges} exchanges"
    );
    let message = &judge.recent[0].findings[0].message;
    assert!(
        message.contains(&format!("x{}…", crate::REDACTED)),
        "{message}"
    );
    assert!(!message.contains("KEY-CA"), "{message}");
}
