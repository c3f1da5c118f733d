//! `kill -9` at random moments under concurrent load, then a restart on the
//! same store (CONTRACT section 15, durability): every answered change is
//! there exactly as answered, nothing is half-applied, nothing appears that
//! was never requested, and `(merchantId, referenceNo)` stays unique.
//!
//! `PAYMENTS_CRASH_ROUNDS` sets the rounds per store (default 3; the
//! 100-round run is `scripts/crash.sh`). Each store prints one summary
//! line: rounds, operations answered, answered changes lost.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rand::RngExt as _;
use serde_json::{Value, json};

use crate::backends;
use crate::mock::{Mock, get, http, initiate_body, post};

/// What the load was answered, across rounds.
#[derive(Debug, Default)]
struct Ledger {
    /// Every reference ever sent, answered or not.
    requested: BTreeSet<String>,
    /// Answered initiates: reference → the initiate's `data`.
    initiated: BTreeMap<String, Value>,
    /// Answered confirms: transactionId → (product, status answered).
    confirmed: BTreeMap<String, (String, String)>,
    /// Answered payer decisions: transactionId → status answered.
    decided: BTreeMap<String, String>,
    /// The largest clock offset an answered advance reported.
    offset: f64,
    answers: Counts,
}

#[derive(Debug, Default, Clone, Copy)]
struct Counts {
    initiates: u64,
    confirms: u64,
    decisions: u64,
    advances: u64,
}

const PRODUCTS: [&str; 3] = ["TOPUP", "DECLINED", "ONLINEBANKING"];

fn rounds() -> usize {
    std::env::var("PAYMENTS_CRASH_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3)
}

/// One worker's load until the process dies under it.
async fn worker(base: String, round: usize, worker: usize, ledger: Arc<Mutex<Ledger>>) {
    let http = http();
    let mut mine: Vec<(String, String, String)> = Vec::new(); // (id, reference, product)
    let mut pages: Vec<String> = Vec::new();
    for n in 0.. {
        let pick = rand::rng().random_range(0..10u8);
        let result = match pick {
            0..=4 => {
                let product = PRODUCTS[n % PRODUCTS.len()];
                let reference = format!("R{round}-W{worker}-{n}");
                ledger
                    .lock()
                    .expect("ledger")
                    .requested
                    .insert(reference.clone());
                let reply = post(
                    &http,
                    &format!("{base}/api/payments/initiate"),
                    &initiate_body(&reference, product, 100 + n as u64),
                )
                .await;
                reply.map(|reply| {
                    if reply.status == 200 {
                        let data = reply.data().clone();
                        let id = data["transactionId"]
                            .as_str()
                            .unwrap_or_default()
                            .to_owned();
                        mine.push((id, reference.clone(), product.to_owned()));
                        let mut ledger = ledger.lock().expect("ledger");
                        ledger.answers.initiates += 1;
                        ledger.initiated.insert(reference, data);
                    }
                })
            }
            5..=7 if !mine.is_empty() => {
                let (id, reference, product) = mine.swap_remove(0);
                let reply = post(
                    &http,
                    &format!("{base}/api/payments/confirm"),
                    &json!({ "transactionId": id, "referenceNo": reference }),
                )
                .await;
                reply.map(|reply| {
                    if reply.status == 200 {
                        let status = reply.data()["status"]
                            .as_str()
                            .unwrap_or_default()
                            .to_owned();
                        if product == "ONLINEBANKING" {
                            pages.push(id.clone());
                        }
                        let mut ledger = ledger.lock().expect("ledger");
                        ledger.answers.confirms += 1;
                        ledger.confirmed.insert(id, (product, status));
                    }
                })
            }
            8 if !pages.is_empty() => {
                let id = pages.swap_remove(0);
                let action = ["pay", "decline", "cancel"][n % 3];
                let reply = post(
                    &http,
                    &format!("{base}/_mock/transactions/{id}/payer"),
                    &json!({ "action": action }),
                )
                .await;
                reply.map(|reply| {
                    if reply.status == 200 {
                        let status = reply.data()["status"]
                            .as_str()
                            .unwrap_or_default()
                            .to_owned();
                        let mut ledger = ledger.lock().expect("ledger");
                        ledger.answers.decisions += 1;
                        ledger.decided.insert(id, status);
                    }
                })
            }
            _ => {
                let reply = post(
                    &http,
                    &format!("{base}/_mock/clock/advance"),
                    &json!({ "seconds": 0.25 }),
                )
                .await;
                reply.map(|reply| {
                    if reply.status == 200 {
                        let offset = reply.data()["offsetSeconds"].as_f64().unwrap_or(0.0);
                        let mut ledger = ledger.lock().expect("ledger");
                        ledger.answers.advances += 1;
                        ledger.offset = ledger.offset.max(offset);
                    }
                })
            }
        };
        if result.is_err() {
            // The process is gone: what was not answered is not in the ledger.
            return;
        }
    }
}

/// Every stored transaction, through the paged admin list.
async fn stored(http: &reqwest::Client, mock: &Mock) -> Vec<Value> {
    let mut items = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let url = match &after {
            Some(a) => mock.url(&format!("/_mock/transactions?limit=1000&after={a}")),
            None => mock.url("/_mock/transactions?limit=1000"),
        };
        let page = get(http, &url).await.expect("answers");
        assert_eq!(page.status, 200, "{}", page.text);
        items.extend(page.data()["items"].as_array().cloned().unwrap_or_default());
        match page.data()["next"].as_str() {
            Some(next) => after = Some(next.to_owned()),
            None => return items,
        }
    }
}

/// Checks the store after a restart against everything answered so far;
/// returns how many answered changes are missing or different.
async fn check(mock: &Mock, ledger: &Ledger) -> usize {
    let http = http();
    let items = stored(&http, mock).await;
    let mut lost = 0;
    let mut seen = BTreeSet::new();
    let by_reference: BTreeMap<&str, &Value> = items
        .iter()
        .map(|t| (t["referenceNo"].as_str().unwrap_or_default(), t))
        .collect();
    for t in &items {
        let reference = t["referenceNo"].as_str().unwrap_or_default();
        assert!(
            ledger.requested.contains(reference),
            "a transaction never requested: {t}"
        );
        assert!(
            seen.insert((t["merchantId"].to_string(), reference.to_owned())),
            "(merchantId, referenceNo) twice: {t}"
        );
        // Nothing half-applied: a confirmed transaction has every part of
        // its confirmation; an unconfirmed one none.
        let status = t["status"].as_str().unwrap_or_default();
        let product = t["productCode"].as_str().unwrap_or_default();
        match status {
            "SUCCESSFUL" | "CONFIRMED" => assert!(t["providerReference"].is_string(), "{t}"),
            "INITIATED" | "PENDING" | "EXPIRED" => {
                assert!(
                    t["providerReference"].is_null() && t["extraProperties"].is_null(),
                    "{t}"
                )
            }
            "FAILED" if product == "DECLINED" => assert!(t["providerReference"].is_null(), "{t}"),
            _ => {}
        }
        if product == "ONLINEBANKING" && status == "CONFIRMED" {
            assert!(
                t["extraProperties"]
                    .as_str()
                    .is_some_and(|e| e.contains("paymentUrl")),
                "{t}"
            );
        }
    }
    for (reference, data) in &ledger.initiated {
        match by_reference.get(reference.as_str()) {
            Some(t)
                if t["transactionId"] == data["transactionId"]
                    && t["amountMinor"] == data["amount"]
                    && t["createdAt"] == data["createdAt"]
                    && t["productCode"] == data["productCode"] => {}
            other => {
                eprintln!("answered initiate {reference} {data} stored as {other:?}");
                lost += 1;
            }
        }
    }
    let by_id: BTreeMap<&str, &Value> = items
        .iter()
        .map(|t| (t["transactionId"].as_str().unwrap_or_default(), t))
        .collect();
    for (id, (product, answered)) in &ledger.confirmed {
        let now = by_id.get(id.as_str()).and_then(|t| t["status"].as_str());
        let consistent = match (product.as_str(), answered.as_str(), now) {
            (_, _, None) => false,
            ("ONLINEBANKING", "CONFIRMED", Some(s)) => {
                matches!(s, "CONFIRMED" | "SUCCESSFUL" | "FAILED")
            }
            (_, answered, Some(s)) => answered == s,
        };
        if !consistent {
            eprintln!("answered confirm {id} {answered} stored as {now:?}");
            lost += 1;
        }
    }
    for (id, answered) in &ledger.decided {
        let now = by_id.get(id.as_str()).and_then(|t| t["status"].as_str());
        if now != Some(answered.as_str()) {
            eprintln!("answered decision {id} {answered} stored as {now:?}");
            lost += 1;
        }
    }
    let clock = get(&http, &mock.url("/_mock/clock"))
        .await
        .expect("answers");
    let offset = clock.data()["offsetSeconds"].as_f64().unwrap_or(-1.0);
    if offset + 1e-9 < ledger.offset {
        eprintln!("answered clock offset {} stored as {offset}", ledger.offset);
        lost += 1;
    }
    lost
}

async fn crash_rounds(args: &[&str], label: &str) {
    let ledger = Arc::new(Mutex::new(Ledger::default()));
    let rounds = rounds();
    let mut lost = 0;
    for round in 0..rounds {
        let mock = Mock::start(args);
        let base = mock.base.clone();
        let workers: Vec<_> = (0..8)
            .map(|w| tokio::spawn(worker(base.clone(), round, w, ledger.clone())))
            .collect();
        // The moment: a random time after the load is being answered.
        let answered = |l: &Ledger| l.answers.initiates + l.answers.confirms;
        let before = answered(&ledger.lock().expect("ledger"));
        let started = std::time::Instant::now();
        while answered(&ledger.lock().expect("ledger")) < before + 5
            && started.elapsed() < Duration::from_secs(20)
        {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let wait = rand::rng().random_range(20..400u64);
        tokio::time::sleep(Duration::from_millis(wait)).await;
        mock.kill9();
        for w in workers {
            w.await.expect("no panic");
        }
        let after = Mock::start(args);
        // The workers are done: the ledger is read, not shared, from here.
        let answered = std::mem::take(&mut *ledger.lock().expect("ledger"));
        lost += check(&after, &answered).await;
        *ledger.lock().expect("ledger") = answered;
        after.kill9();
    }
    let ledger = ledger.lock().expect("ledger");
    let a = ledger.answers;
    eprintln!(
        "crash {label}: rounds={rounds} answered initiates={} confirms={} decisions={} advances={} stored={} lost={lost}",
        a.initiates,
        a.confirms,
        a.decisions,
        a.advances,
        ledger.initiated.len(),
    );
    assert_eq!(lost, 0, "answered changes lost after kill -9");
    assert!(a.initiates > 0 && a.confirms > 0, "the load ran: {a:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_loses_nothing_answered_to_kill_9() {
    let dir = tempfile::tempdir().expect("a directory");
    let store = format!("sqlite:{}", dir.path().join("crash.db").display());
    crash_rounds(&["--store", &store], "sqlite").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_with_power_durability_loses_nothing_answered_to_kill_9() {
    let dir = tempfile::tempdir().expect("a directory");
    let store = format!("sqlite:{}", dir.path().join("crash.db").display());
    crash_rounds(
        &["--store", &store, "--durability", "power"],
        "sqlite (power)",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_loses_nothing_answered_to_kill_9() {
    let Some(url) = backends::postgres_database("postgres_loses_nothing_answered_to_kill_9").await
    else {
        return;
    };
    crash_rounds(&["--store", &url], "postgres").await;
}
