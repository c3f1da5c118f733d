//! Sandboxes on a SQLite store (CONTRACT section 19) outlive the process:
//! what each holds (transactions, clock, journal) comes back after a
//! `kill -9` and a restart, each still its own; one removed stays removed;
//! one whose time ran out while the server was down is gone.

use serde_json::{Value, json};

use crate::mock::{Mock, get, http, initiate_body, post};

/// The ids of the sandboxes `GET /_mock/sandboxes` lists.
async fn listed(http: &reqwest::Client, mock: &Mock) -> Vec<String> {
    let reply = get(http, &mock.url("/_mock/sandboxes"))
        .await
        .expect("list");
    assert_eq!(reply.status, 200, "{}", reply.text);
    reply.data()["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|s| s["id"].as_str().map(str::to_owned))
        .collect()
}

async fn made(http: &reqwest::Client, mock: &Mock, body: Value) -> String {
    let reply = post(http, &mock.url("/_mock/sandboxes"), &body)
        .await
        .expect("made");
    assert_eq!(reply.status, 201, "{}", reply.text);
    reply.data()["id"].as_str().expect("an id").to_owned()
}

async fn clock(http: &reqwest::Client, mock: &Mock, base: &str) -> crate::mock::Reply {
    get(http, &mock.url(&format!("{base}/_mock/clock")))
        .await
        .expect("clock")
}

fn offset(reply: &crate::mock::Reply) -> f64 {
    reply.data()["offsetSeconds"].as_f64().unwrap_or(-1.0)
}

#[tokio::test]
async fn sqlite_keeps_each_sandbox_across_a_kill_and_a_restart() {
    let dir = tempfile::tempdir().expect("a directory");
    let spec = format!("sqlite:{}", dir.path().join("mock.db").display());
    let http = http();
    let mock = Mock::start(&["--store", &spec]);
    let a = made(&http, &mock, json!({"label": "job 1"})).await;
    let b = made(&http, &mock, json!({})).await;
    let removed = made(&http, &mock, json!({})).await;
    let short = made(&http, &mock, json!({"ttlSeconds": 1})).await;
    // One reference at the root and in A and B: three transactions.
    let mut ids = Vec::new();
    for base in [
        String::new(),
        format!("/sandboxes/{a}"),
        format!("/sandboxes/{b}"),
    ] {
        let reply = post(
            &http,
            &mock.url(&format!("{base}/api/payments/initiate")),
            &initiate_body("ORDER-1", "TOPUP", 1050),
        )
        .await
        .expect("initiate");
        assert_eq!(reply.status, 200, "{base}: {}", reply.text);
        ids.push(
            reply.data()["transactionId"]
                .as_str()
                .expect("id")
                .to_owned(),
        );
    }
    let moved = post(
        &http,
        &mock.url(&format!("/sandboxes/{a}/_mock/clock/advance")),
        &json!({"seconds": 901}),
    )
    .await
    .expect("advance");
    assert_eq!(moved.status, 200, "{}", moved.text);
    let gone = http
        .delete(mock.url(&format!("/_mock/sandboxes/{removed}")))
        .send()
        .await
        .expect("delete");
    assert_eq!(gone.status(), 200);
    // The journal is written behind the answers (every 250 ms), and the
    // short sandbox's second must pass.
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    mock.kill9();

    let mock = Mock::start(&["--store", &spec]);
    let mut live = listed(&http, &mock).await;
    live.sort();
    let mut expected = vec![a.clone(), b.clone()];
    expected.sort();
    assert_eq!(
        live, expected,
        "the removed and the expired ({short}) are gone"
    );
    let again = get(
        &http,
        &mock.url(&format!("/sandboxes/{removed}/_mock/clock")),
    )
    .await
    .expect("read");
    assert_eq!((again.status, again.code()), (404, "SANDBOX_NOT_FOUND"));
    // A's clock, and with it the expiry of its payment, came back; B's and
    // the root's clocks did not move.
    assert!(offset(&clock(&http, &mock, &format!("/sandboxes/{a}")).await) >= 901.0);
    assert_eq!(
        offset(&clock(&http, &mock, &format!("/sandboxes/{b}")).await),
        0.0
    );
    assert_eq!(offset(&clock(&http, &mock, "").await), 0.0);
    for (base, id, status) in [
        (String::new(), &ids[0], "INITIATED"),
        (format!("/sandboxes/{a}"), &ids[1], "EXPIRED"),
        (format!("/sandboxes/{b}"), &ids[2], "INITIATED"),
    ] {
        let read = get(
            &http,
            &mock.url(&format!("{base}/api/payments/{id}/status")),
        )
        .await
        .expect("status");
        assert_eq!(read.status, 200, "{base}: {}", read.text);
        assert_eq!(read.data()["status"], status, "{base}");
        // Each transaction is its own sandbox's only.
        for other in ids.iter().filter(|other| *other != id) {
            let read = get(
                &http,
                &mock.url(&format!("{base}/api/payments/{other}/status")),
            )
            .await
            .expect("status");
            assert_eq!(read.status, 404, "{base} sees {other}");
        }
    }
    // The reference is still taken in B, and free in a new sandbox.
    let taken = post(
        &http,
        &mock.url(&format!("/sandboxes/{b}/api/payments/initiate")),
        &initiate_body("ORDER-1", "TOPUP", 1050),
    )
    .await
    .expect("initiate");
    assert_eq!(taken.code(), "DUPLICATE_REFERENCE_NO");
    // A's journal came back with A's requests only, numbered on.
    let journal = get(&http, &mock.url(&format!("/sandboxes/{a}/_mock/requests")))
        .await
        .expect("journal");
    let items = journal.data()["items"].as_array().expect("items").clone();
    let paths: Vec<&str> = items.iter().filter_map(|e| e["path"].as_str()).collect();
    let seqs: Vec<u64> = items.iter().filter_map(|e| e["seq"].as_u64()).collect();
    // Its initiate before the kill, then the status reads since (the test
    // controls are not journaled), numbered on after what the file had
    // reserved before the kill (a gap, never a number given out twice).
    assert_eq!(paths.first(), Some(&"/api/payments/initiate"), "{paths:?}");
    assert_eq!(paths.len(), 4, "{paths:?}");
    assert_eq!(seqs[0], 1, "{items:?}");
    assert!(seqs[1] > 1, "{items:?}");
    assert_eq!(seqs[2..], [seqs[1] + 1, seqs[1] + 2], "{items:?}");
    // A reset of A after the restart empties A alone, and stays done.
    let reset = post(
        &http,
        &mock.url(&format!("/sandboxes/{a}/_mock/reset")),
        &json!({}),
    )
    .await
    .expect("reset");
    assert_eq!(reset.status, 200);
    let (code, _) = mock.stop();
    assert_eq!(code, Some(0));

    let mock = Mock::start(&["--store", &spec]);
    let read = get(
        &http,
        &mock.url(&format!("/sandboxes/{a}/api/payments/{}/status", ids[1])),
    )
    .await
    .expect("status");
    assert_eq!(read.status, 404, "reset before the restart: {}", read.text);
    assert_eq!(
        offset(&clock(&http, &mock, &format!("/sandboxes/{a}")).await),
        0.0
    );
    let read = get(
        &http,
        &mock.url(&format!("/sandboxes/{b}/api/payments/{}/status", ids[2])),
    )
    .await
    .expect("status");
    assert_eq!(read.status, 200);
    // --fresh empties the file, sandboxes and all.
    drop(mock);
    let mock = Mock::start(&["--store", &spec, "--fresh"]);
    assert_eq!(listed(&http, &mock).await, Vec::<String>::new());
}

/// A sandbox row changed outside the mock (an id that is no UUID) makes
/// the store unreadable at start: exit 1 naming the store, the file left
/// as it was; never a panic, never a sandbox made up.
#[tokio::test]
async fn a_damaged_sandbox_row_refuses_the_start_naming_the_store() {
    let dir = tempfile::tempdir().expect("a directory");
    let path = dir.path().join("mock.db");
    let spec = format!("sqlite:{}", path.display());
    let http = http();
    let mock = Mock::start(&["--store", &spec]);
    made(&http, &mock, json!({"label": "kept"})).await;
    let (code, _) = mock.stop();
    assert_eq!(code, Some(0));
    rusqlite::Connection::open(&path)
        .and_then(|c| c.execute("UPDATE mock_sandboxes SET id = x'00ff'", []))
        .expect("a damaged row");
    let before = crate::mock::bytes(&path);
    let (code, stderr) = crate::mock::run(&["--store", &spec], &[]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains(&spec), "names the store: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(crate::mock::bytes(&path), before, "left as it was");
}

/// The log line of a sandbox's request that is never answered (an
/// injected reset) shows the whole path asked, its prefix included, as an
/// answered request's line does.
#[tokio::test]
async fn a_sandboxs_reset_is_logged_with_its_whole_path() {
    let mock = Mock::start(&[]);
    let http = http();
    let id = made(&http, &mock, json!({})).await;
    let reset = http
        .get(mock.url(&format!("/sandboxes/{id}/api/payments/RESET-LOG/status")))
        .header("x-mock-fault", "reset")
        .send()
        .await;
    assert!(reset.is_err(), "no answer: {reset:?}");
    let (_, log) = mock.stop();
    let line = log
        .lines()
        .find(|line| line.contains("connection reset (injected fault)"))
        .unwrap_or_else(|| panic!("the reset's line: {log}"));
    assert!(
        line.contains(&format!("/sandboxes/{id}/api/payments/RESET-LOG/status")),
        "{line}"
    );
}

/// A restart with a lower `--max-sandboxes` than the sandboxes that came
/// back: the 429 says how many live and the limit (it said "2 sandboxes
/// live already" with 3 live and a limit of 2).
#[tokio::test]
async fn more_live_than_a_lower_limit_is_said_with_both_numbers() {
    let dir = tempfile::tempdir().expect("a directory");
    let spec = format!("sqlite:{}", dir.path().join("mock.db").display());
    let http = http();
    let mock = Mock::start(&["--store", &spec, "--max-sandboxes", "3"]);
    for _ in 0..3 {
        made(&http, &mock, json!({})).await;
    }
    let (code, _) = mock.stop();
    assert_eq!(code, Some(0));
    let mock = Mock::start(&["--store", &spec, "--max-sandboxes", "2"]);
    let reply = post(&http, &mock.url("/_mock/sandboxes"), &json!({}))
        .await
        .expect("answered");
    assert_eq!(reply.status, 429, "{}", reply.text);
    assert_eq!(reply.code(), "TOO_MANY_SANDBOXES");
    let message = reply.text.clone();
    assert!(
        message.contains("3 sandboxes live already, the limit is 2 (--max-sandboxes)"),
        "{message}"
    );
}
