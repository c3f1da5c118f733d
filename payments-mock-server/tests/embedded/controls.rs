//! The test's controls: its own look at the transactions is no coverage
//! of the application; a fault rule or a queued fault built in-process
//! has the limits `POST /_mock/faults` has, and what a rule lists is
//! taken back.

use std::time::Duration;

use payments_mock_server::{Endpoint, Fault, FaultRule, MockServer};
use serde_json::{Map, Value, json};

use super::{call, initiate};

const EXPIRED: &str = "transition INITIATED -> EXPIRED";

#[tokio::test]
async fn the_tests_own_look_at_an_expired_transaction_is_no_coverage() {
    let server = MockServer::start().await;
    let base = server.base_url();
    let client = reqwest::Client::new();
    let (status, body) = call(
        &client,
        reqwest::Method::POST,
        format!("{base}/api/payments/initiate"),
        Some(initiate("EXP-1", "TOPUP")),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let id = body["data"]["transactionId"]
        .as_str()
        .expect("an id")
        .to_owned();
    server.advance_clock(Duration::from_secs(16 * 60)).await;

    // The test looks: in-process, through /_mock/, on the console.
    assert_eq!(server.transactions().await[0].status, "EXPIRED");
    let (status, listed) = call(
        &client,
        reqwest::Method::GET,
        format!("{base}/_mock/transactions"),
        None,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(listed["data"]["items"][0]["status"], "EXPIRED", "{listed}");
    #[cfg(feature = "pages")]
    for page in [
        String::new(),
        "transactions/rows".to_owned(),
        format!("transactions/{id}"),
    ] {
        let response = client
            .get(format!("{base}/_mock/ui/{page}"))
            .send()
            .await
            .expect("an answer");
        assert_eq!(response.status(), 200, "{page}");
        assert!(
            response.text().await.expect("html").contains("EXPIRED"),
            "{page}"
        );
    }
    assert_eq!(server.coverage().await.count(EXPIRED), Some(0));
    assert_eq!(
        server.coverage().await.uncovered([EXPIRED]),
        [format!("{EXPIRED:?}: not exercised")]
    );

    // The application reads it: that counts, once.
    for _ in 0..2 {
        let (status, read) = call(
            &client,
            reqwest::Method::GET,
            format!("{base}/api/payments/{id}/status"),
            None,
        )
        .await;
        assert_eq!((status, &read["data"]["status"]), (200, &json!("EXPIRED")));
    }
    server.coverage().await.assert_covered([EXPIRED]);
    assert_eq!(server.coverage().await.count(EXPIRED), Some(1));
    server.shutdown().await;
}

/// Each rule `POST /_mock/faults` refuses, built in-process, refused too,
/// naming the same field.
#[tokio::test]
async fn in_process_rules_have_the_limits_of_http() {
    let server = MockServer::start().await;
    let rule = || FaultRule::new(Fault::Hang);
    for (what, rule, field) in [
        (
            "delay max",
            FaultRule::new(Fault::Delay(Duration::MAX)),
            "fault",
        ),
        (
            "delay 60001",
            FaultRule::new(Fault::Delay(Duration::from_millis(60_001))),
            "fault",
        ),
        (
            "delay 1ns",
            FaultRule::new(Fault::Delay(Duration::from_nanos(1))),
            "fault",
        ),
        (
            "delay 1.5ms",
            FaultRule::new(Fault::Delay(Duration::from_micros(1500))),
            "fault",
        ),
        (
            "slow max",
            FaultRule::new(Fault::SlowBody(u32::MAX)),
            "fault",
        ),
        (
            "slow 10^9",
            FaultRule::new(Fault::SlowBody(1_000_000_000)),
            "fault",
        ),
        ("slow 0", FaultRule::new(Fault::SlowBody(0)), "fault"),
        ("gateway 200", FaultRule::new(Fault::Gateway(200)), "fault"),
        ("after max", rule().after(u64::MAX), "after"),
        ("after 2^32", rule().after(1 << 32), "after"),
        ("times max", rule().times(u64::MAX), "times"),
        ("times 2^32", rule().times(1 << 32), "times"),
        ("nan", rule().probability(f64::NAN), "probability"),
        ("over 1", rule().probability(1.000_001), "probability"),
        (
            "under 0",
            rule().probability(-f64::MIN_POSITIVE),
            "probability",
        ),
        ("empty ref", rule().reference(""), "match.referenceNo"),
        (
            "65 chars",
            rule().reference("🦀".repeat(65)),
            "match.referenceNo",
        ),
    ] {
        let error = server.add_fault_rule(rule).expect_err(what);
        assert_eq!(error.field, field, "{what}: {error}");
    }
    assert!(server.fault_rules().is_empty());
    server.shutdown().await;
}

/// Every rule accepted in-process, at the edges of its limits, lists what
/// `POST /_mock/faults` takes back, and the same rule comes back.
#[tokio::test]
async fn every_accepted_rules_listing_is_taken_back() {
    let server = MockServer::start().await;
    let base = server.base_url();
    let rule = FaultRule::new;
    let max = u64::from(u32::MAX);
    let rules = [
        rule(Fault::Delay(Duration::from_millis(60_000))),
        rule(Fault::Delay(Duration::ZERO)),
        rule(Fault::Delay(Duration::from_millis(1))),
        rule(Fault::SlowBody(999_999_999)),
        rule(Fault::SlowBody(1)),
        rule(Fault::Gateway(502)),
        rule(Fault::Gateway(503)),
        rule(Fault::Gateway(504)),
        rule(Fault::InternalError).after(max).times(max),
        rule(Fault::CommitThenError).times(0).probability(-0.0),
        rule(Fault::Reset).probability(0.0),
        rule(Fault::CommitThenReset).probability(0.123_456_789),
        rule(Fault::RateLimit).probability(1.0),
        rule(Fault::AnswerOther).on(Endpoint::StatusByReference),
        rule(Fault::Hang).reference("🦀".repeat(64)),
        rule(Fault::CommitThenHang)
            .on(Endpoint::Confirm)
            .reference("ORDER-1"),
        rule(Fault::Truncate)
            .merchant(uuid(super::MERCHANT))
            .transaction(uuid("01937e1c-0000-7000-8000-0000000000c1")),
    ];
    let added = rules.len();
    for rule in rules {
        server.add_fault_rule(rule).expect("within the limits");
    }
    let listed = server.fault_rules();
    assert_eq!(listed.len(), added);
    let client = reqwest::Client::new();
    for view in listed {
        let body = serde_json::to_value(&view).expect("json");
        let Value::Object(mut body) = body else {
            panic!("an object: {body}");
        };
        for listed_only in ["id", "met", "fired", "remaining"] {
            body.remove(listed_only);
        }
        assert_ne!(body["probability"].to_string(), "-0.0", "{body:?}");
        let (status, posted) = call(
            &client,
            reqwest::Method::POST,
            format!("{base}/_mock/faults"),
            Some(Value::Object(body.clone())),
        )
        .await;
        assert_eq!(status, 201, "{body:?} -> {posted}");
        let mut again: Map<String, Value> = posted["data"].as_object().expect("a rule").clone();
        for listed_only in ["id", "met", "fired", "remaining"] {
            again.remove(listed_only);
        }
        assert_eq!(again, body, "the same rule back");
    }
    assert_eq!(server.fault_rules().len(), 2 * added);
    server.shutdown().await;
}

fn uuid(text: &str) -> uuid::Uuid {
    text.parse().expect("a UUID")
}

/// A queued fault out of a rule's limits panics, naming it, and queues
/// nothing (of the batch either).
#[tokio::test]
async fn a_queued_fault_out_of_its_limits_panics_and_queues_nothing() {
    let server = MockServer::start().await;
    for (fault, problem) in [
        (
            Fault::SlowBody(0),
            "slow-body needs at least 1 byte a second",
        ),
        (Fault::SlowBody(u32::MAX), "slow-body is at most 999999999"),
        (Fault::Gateway(200), "gateway is 502, 503 or 504"),
        (
            Fault::Delay(Duration::from_millis(60_001)),
            "delay is at most 60000 ms",
        ),
        (
            Fault::Delay(Duration::from_nanos(1)),
            "whole number of milliseconds",
        ),
    ] {
        let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            server.inject_faults([Fault::InternalError, fault.clone()]);
        }))
        .expect_err("a panic");
        let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(message.contains(problem), "{fault:?}: {message}");
        assert!(message.contains(&format!("{fault:?}")), "{message}");
    }
    // Nothing was queued: the next request meets no fault.
    let (status, _) = call(
        &reqwest::Client::new(),
        reqwest::Method::POST,
        format!("{}/api/payments/initiate", server.base_url()),
        Some(initiate("NQ-1", "TOPUP")),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(server.requests().await[0].fault, None);
    // The control: within the limits, queued and met.
    server.inject_faults([Fault::Delay(Duration::from_millis(1))]);
    let (status, _) = call(
        &reqwest::Client::new(),
        reqwest::Method::GET,
        format!("{}/api/payments/reference/NQ-1/status", server.base_url()),
        None,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(server.requests().await[1].fault.as_deref(), Some("delay=1"));
    server.shutdown().await;
}
