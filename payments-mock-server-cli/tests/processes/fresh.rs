//! `--fresh` on a PostgreSQL store the replicas share: refused (exit 2,
//! nothing deleted) while another replica serves it; with none live, it
//! empties the store, logs what it deleted, and the journal numbers on
//! above what it held (`seq` only grows across the whole service).

use serde_json::{Value, json};

use crate::backends;
use crate::mock::{Mock, get, http, initiate_body, post, run};

/// What a replica's `/_mock/health` counts, its `/_mock/sandboxes` lists
/// and the highest `seq` its journal shows.
async fn contents(http: &reqwest::Client, mock: &Mock) -> (u64, usize, u64) {
    let health = get(http, &mock.url("/_mock/health"))
        .await
        .expect("answers");
    assert_eq!(health.status, 200, "{}", health.text);
    let sandboxes = get(http, &mock.url("/_mock/sandboxes"))
        .await
        .expect("answers");
    let journal = get(http, &mock.url("/_mock/requests?limit=1000"))
        .await
        .expect("answers");
    assert_eq!(journal.status, 200, "{}", journal.text);
    let top = journal.data()["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|e| e["seq"].as_u64())
        .max()
        .unwrap_or(0);
    (
        health.data()["transactions"].as_u64().expect("a count"),
        sandboxes.data()["items"].as_array().map_or(0, Vec::len),
        top,
    )
}

/// Three root transactions and a sandbox holding one, made on `mock`.
async fn fill(http: &reqwest::Client, mock: &Mock) {
    for n in 0..3 {
        let made = post(
            http,
            &mock.url("/api/payments/initiate"),
            &initiate_body(&format!("FR-{n}"), "TOPUP", 1050),
        )
        .await
        .expect("answers");
        assert_eq!(made.status, 200, "{}", made.text);
    }
    let sandbox = post(http, &mock.url("/_mock/sandboxes"), &json!({}))
        .await
        .expect("answers");
    assert_eq!(sandbox.status, 201, "{}", sandbox.text);
    let id = sandbox.data()["id"].as_str().expect("an id");
    let made = post(
        http,
        &mock.url(&format!("/sandboxes/{id}/api/payments/initiate")),
        &initiate_body("FR-S", "TOPUP", 1050),
    )
    .await
    .expect("answers");
    assert_eq!(made.status, 200, "{}", made.text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fresh_is_refused_while_another_replica_serves_and_deletes_nothing() {
    let Some(url) = backends::postgres_database("fresh_refused_while_served").await else {
        return;
    };
    let http = http();
    let live = Mock::start(&[
        "--store",
        &url,
        "--replica-name",
        "team-a",
        "--expiry",
        "15m",
    ]);
    fill(&http, &live).await;
    let before = contents(&http, &live).await;
    assert_eq!((before.0, before.1), (3, 1), "{before:?}");

    let (code, stderr) = run(
        &[
            "--store",
            &url,
            "--replica-name",
            "d",
            "--fresh",
            "--expiry",
            "30s",
        ],
        &[],
    );
    assert_eq!(code, Some(2), "{stderr}");
    for said in [
        "--fresh refused",
        "(team-a)",
        "every transaction and sandbox of the whole service",
        "stop the other replicas first",
    ] {
        assert!(stderr.contains(said), "{said:?} not in {stderr}");
    }
    assert!(!stderr.contains("deleted"), "{stderr}");

    // Nothing deleted: the transactions, the sandbox, the journal, and the
    // settings (a start with other ones is still refused, and that
    // refusal says what --fresh would delete).
    let after = contents(&http, &live).await;
    assert_eq!((after.0, after.1), (3, 1), "{after:?}");
    assert!(after.2 >= before.2, "{before:?} then {after:?}");
    let (code, stderr) = run(&["--store", &url, "--expiry", "30s"], &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("expiry: 15m in the store, 30s given"),
        "{stderr}"
    );
    assert!(
        stderr.contains("--fresh to replace them, which deletes every transaction and sandbox"),
        "{stderr}"
    );
    assert_eq!(live.stop().0, Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fresh_with_no_live_replica_empties_the_store_and_numbers_on() {
    let Some(url) = backends::postgres_database("fresh_numbers_on").await else {
        return;
    };
    let http = http();
    let first = Mock::start(&["--store", &url, "--replica-name", "first"]);
    fill(&http, &first).await;
    let (_, _, top) = contents(&http, &first).await;
    assert!(top >= 3, "{top}");
    // A clean stop removes its replica's row: none is live.
    assert_eq!(first.stop().0, Some(0));

    let fresh = Mock::start(&[
        "--store",
        &url,
        "--replica-name",
        "second",
        "--fresh",
        "--expiry",
        "30s",
    ]);
    assert!(
        fresh.logged(
            "--fresh deleted 3 transactions, 1 sandbox (holding 1 transaction)",
            std::time::Duration::from_secs(5)
        ),
        "{}",
        fresh.log()
    );
    let log = fresh.log();
    assert!(log.contains("INFO"), "{log}");
    let (transactions, sandboxes, _) = contents(&http, &fresh).await;
    assert_eq!((transactions, sandboxes), (0, 0));
    let made = post(
        &http,
        &fresh.url("/api/payments/initiate"),
        &initiate_body("FR-0", "TOPUP", 1050),
    )
    .await
    .expect("answers");
    assert_eq!(
        made.status, 200,
        "the reference is free again: {}",
        made.text
    );
    let journal = get(&http, &fresh.url("/_mock/requests?limit=1000"))
        .await
        .expect("answers");
    let seqs: Vec<u64> = journal.data()["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|e: &Value| e["seq"].as_u64())
        .collect();
    assert!(!seqs.is_empty(), "{}", journal.text);
    assert!(
        seqs.iter().all(|&s| s > top),
        "after --fresh the journal numbers on above {top}: {seqs:?}"
    );
    // A poller that had reached the old top sees what came since.
    let polled = get(&http, &fresh.url(&format!("/_mock/requests?after={top}")))
        .await
        .expect("answers");
    assert!(
        !polled.data()["items"].as_array().expect("items").is_empty(),
        "{}",
        polled.text
    );
    assert_eq!(fresh.stop().0, Some(0));
}
