//! A sandbox's time to live (CONTRACT section 19): counted in real time
//! (the runtime's clock), whatever its virtual clock says; renewed by each
//! request, and kept under a request that outlasts it.

use std::time::Duration;

use payments_mock_server::MockServer;
use serde_json::json;

use super::{get, make, post};
use crate::common::initiate_body;

/// A server whose sandboxes live 1 s unused.
async fn one_second_sandboxes() -> MockServer {
    let mut config = payments_mock_server::Config::default();
    config.sandbox_ttl = Duration::from_secs(1);
    MockServer::builder()
        .config(config)
        .start()
        .await
        .expect("a server")
}

#[tokio::test]
async fn a_sandbox_unused_for_its_ttl_is_gone_whatever_its_virtual_clock_says() {
    let server = one_second_sandboxes().await;
    let (_, base) = make(&server, None).await;
    // The virtual clock a day on: the sandbox lives (real time decides).
    let (status, _) = post(
        &format!("{base}/_mock/clock/advance"),
        json!({"seconds": 86400}),
        None,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(get(&format!("{base}/_mock/clock"), None).await.0, 200);
    // Real time past its time to live, unused: gone on every route. The
    // time to live is counted on the runtime's clock (Tokio's `Instant`),
    // which the test moves on instead of waiting: paused only while it is
    // moved, so the requests around it run on real time.
    tokio::time::pause();
    tokio::time::advance(Duration::from_millis(1300)).await;
    tokio::time::resume();
    for path in [
        "/_mock/clock",
        "/api/payments/reference/X/status",
        "/_mock/ui/",
    ] {
        let (status, envelope) = get(&format!("{base}{path}"), None).await;
        assert_eq!(status, 404, "{path}");
        if path != "/_mock/ui/" {
            assert_eq!(envelope["errorCode"], "SANDBOX_NOT_FOUND", "{path}");
        }
    }
    let (_, listed) = get(&format!("{}/_mock/sandboxes", server.base_url()), None).await;
    assert_eq!(listed["data"]["items"], json!([]));
}

/// A request served for longer than its sandbox's time to live (a delay
/// of 1.5 s, a time to live of 1 s) keeps the sandbox while it is served
/// and renews it as it is answered: the transaction it answered is there
/// for the next request (the sandbox was gone the moment after). On the
/// paused clock: the delay and the time to live are Tokio timers.
#[tokio::test(start_paused = true)]
async fn a_request_longer_than_the_sandboxs_ttl_keeps_it() {
    let server = one_second_sandboxes().await;
    let (_, base) = make(&server, None).await;
    let reply = reqwest::Client::new()
        .post(format!("{base}/api/payments/initiate"))
        .header("x-mock-fault", "delay=1500")
        .json(&initiate_body("SLOW-1", "TOPUP"))
        .send()
        .await
        .expect("an answer");
    assert_eq!(reply.status(), 200);
    let (status, envelope) = get(
        &format!("{base}/api/payments/reference/SLOW-1/status"),
        None,
    )
    .await;
    assert_eq!(status, 200, "{envelope}");
    // Unused for its time to live after that: gone, as ever.
    tokio::time::advance(Duration::from_millis(1100)).await;
    assert_eq!(get(&format!("{base}/_mock/clock"), None).await.0, 404);
}

/// One sample of `metric` (no labels but `replica`) in a scrape.
fn sample(scrape: &str, metric: &str) -> u64 {
    scrape
        .lines()
        .find(|l| l.starts_with(&format!("{metric}{{")))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {metric} in {scrape}"))
}

/// `payments_mock_sandboxes` and `payments_mock_sandboxes_expired_total`
/// are right at the scrape: a scrape drops the expired sandboxes first.
/// Before, two sandboxes of 1 s were live and none expired 10 s on, until
/// someone listed them.
#[tokio::test]
async fn a_scrape_counts_sandboxes_whose_time_ran_out_as_expired() {
    let server = MockServer::start().await;
    let root = server.base_url();
    for _ in 0..2 {
        let (status, envelope) = post(
            &format!("{root}/_mock/sandboxes"),
            json!({"ttlSeconds": 1}),
            None,
        )
        .await;
        assert_eq!(status, 201, "{envelope}");
    }
    let scrape = || async {
        reqwest::get(format!("{root}/metrics"))
            .await
            .expect("an answer")
            .text()
            .await
            .expect("a body")
    };
    let before = scrape().await;
    assert_eq!(sample(&before, "payments_mock_sandboxes"), 2, "{before}");
    // Past their time to live on the runtime's clock (moved, not waited).
    tokio::time::pause();
    tokio::time::advance(Duration::from_millis(1300)).await;
    tokio::time::resume();
    let after = scrape().await;
    assert_eq!(sample(&after, "payments_mock_sandboxes"), 0, "{after}");
    assert_eq!(
        sample(&after, "payments_mock_sandboxes_expired_total"),
        2,
        "{after}"
    );
    assert_eq!(
        sample(&after, "payments_mock_sandboxes_created_total"),
        2,
        "{after}"
    );
}
