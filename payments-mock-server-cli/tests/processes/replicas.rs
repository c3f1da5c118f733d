//! Three mock processes on one PostgreSQL database are one service
//! (CONTRACT section 15, replicas): racing confirms, initiates and payer
//! submits spread over the replicas have exactly one winner each; one
//! clock, one reset, one journal naming each replica; a payment page and
//! the console on any replica; and each replica's own coverage.

use serde_json::{Value, json};

use crate::backends;
use crate::mock::{Mock, Reply, get, http, initiate_body, post, post_form};

/// Three replica processes, `r1` to `r3`, on a fresh database.
pub struct Replicas {
    pub all: Vec<Mock>,
}

impl Replicas {
    pub async fn start(test: &str) -> Option<Self> {
        let url = backends::postgres_database(test).await?;
        let all = (1..=3)
            .map(|n| Mock::start(&["--store", &url, "--replica-name", &format!("r{n}")]))
            .collect();
        Some(Self { all })
    }

    /// `path` on replica `n` (modulo their number).
    pub fn url(&self, n: usize, path: &str) -> String {
        self.all[n % self.all.len()].url(path)
    }
}

async fn initiate(http: &reqwest::Client, url: &str, reference: &str, product: &str) -> String {
    let reply = post(http, url, &initiate_body(reference, product, 1050))
        .await
        .expect("answers");
    assert_eq!(reply.status, 200, "{}", reply.text);
    reply.data()["transactionId"]
        .as_str()
        .expect("an id")
        .to_owned()
}

fn statuses(replies: &[Reply]) -> (usize, Vec<String>) {
    let ok = replies.iter().filter(|r| r.status == 200).count();
    let codes = replies
        .iter()
        .filter(|r| r.status != 200)
        .map(|r| r.code().to_owned())
        .collect();
    (ok, codes)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_confirms_and_initiates_have_one_winner_across_replicas() {
    let Some(replicas) = Replicas::start("racing_confirms_and_initiates").await else {
        return;
    };
    let http = http();
    let mut ids = Vec::new();
    for n in 0..20 {
        ids.push((
            initiate(
                &http,
                &replicas.url(n, "/api/payments/initiate"),
                &format!("C-{n}"),
                "TOPUP",
            )
            .await,
            format!("C-{n}"),
        ));
    }
    let mut attempts = 0;
    let mut winners = 0;
    for (id, reference) in &ids {
        let body = json!({ "transactionId": id, "referenceNo": reference });
        let racing: Vec<_> = (0..9)
            .map(|n| {
                let (http, url, body) = (
                    http.clone(),
                    replicas.url(n, "/api/payments/confirm"),
                    body.clone(),
                );
                tokio::spawn(async move { post(&http, &url, &body).await.expect("answers") })
            })
            .collect();
        let mut replies = Vec::new();
        for r in racing {
            replies.push(r.await.expect("no panic"));
        }
        let (ok, codes) = statuses(&replies);
        attempts += replies.len();
        winners += ok;
        assert_eq!(ok, 1, "{id}: {replies:?}");
        assert!(
            codes.iter().all(|c| c == "TRANSACTION_ALREADY_CONFIRMED"),
            "{codes:?}"
        );
    }
    eprintln!(
        "replicas: racing confirms attempts={attempts} winners={winners} transactions={}",
        ids.len()
    );

    let racing: Vec<_> = (0..30)
        .map(|n| {
            let (http, url) = (http.clone(), replicas.url(n, "/api/payments/initiate"));
            tokio::spawn(async move {
                post(&http, &url, &initiate_body("ONE-REF", "TOPUP", 500))
                    .await
                    .expect("answers")
            })
        })
        .collect();
    let mut replies = Vec::new();
    for r in racing {
        replies.push(r.await.expect("no panic"));
    }
    let (ok, codes) = statuses(&replies);
    eprintln!(
        "replicas: racing initiates of one reference attempts={} winners={ok}",
        replies.len()
    );
    assert_eq!(ok, 1, "{replies:?}");
    assert!(
        codes.iter().all(|c| c == "DUPLICATE_REFERENCE_NO"),
        "{codes:?}"
    );
    // Created on one replica, found on every other; taken on every other.
    for n in 0..3 {
        let found = get(
            &http,
            &replicas.url(n, "/api/payments/reference/ONE-REF/status"),
        )
        .await
        .expect("answers");
        assert_eq!(found.status, 200);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_payment_page_decides_once_on_any_replica() {
    let Some(replicas) = Replicas::start("a_payment_page_decides_once").await else {
        return;
    };
    let http = http();
    let mut pages = Vec::new();
    for n in 0..5 {
        let reference = format!("P-{n}");
        let id = initiate(
            &http,
            &replicas.url(0, "/api/payments/initiate"),
            &reference,
            "ONLINEBANKING",
        )
        .await;
        let confirmed = post(
            &http,
            &replicas.url(1, "/api/payments/confirm"),
            &json!({ "transactionId": id, "referenceNo": reference }),
        )
        .await
        .expect("answers");
        let extra: Value = serde_json::from_str(
            confirmed.data()["extraProperties"]
                .as_str()
                .expect("a page"),
        )
        .expect("JSON");
        let url = extra["paymentUrl"].as_str().expect("a URL").to_owned();
        let path = url::Url::parse(&url).expect("a URL").path().to_owned();
        pages.push((id, path));
    }
    // The page confirmed on r2 opens on r3.
    let (_, path) = &pages[0];
    let page = get(&http, &replicas.url(2, path)).await.expect("answers");
    assert_eq!(page.status, 200);
    assert!(page.text.contains("P-0"), "{}", page.text);

    // Racing form submits spread over the replicas: one decides, every
    // answer sends the browser back with that one outcome.
    let mut submits = 0;
    for (id, path) in &pages {
        let racing: Vec<_> = (0..9)
            .map(|n| {
                let (http, url) = (http.clone(), replicas.url(n, path));
                let form = ["action=pay", "action=decline", "action=cancel"][n % 3];
                tokio::spawn(async move { post_form(&http, &url, form).await.expect("answers") })
            })
            .collect();
        let mut locations = Vec::new();
        for r in racing {
            let reply = r.await.expect("no panic");
            assert_eq!(reply.status, 303, "{}", reply.text);
            locations.push(reply.location.expect("a return address"));
        }
        submits += locations.len();
        let status = |l: &str| {
            url::Url::parse(l)
                .expect("a URL")
                .query_pairs()
                .find(|(k, _)| k == "status")
                .map(|(_, v)| v.into_owned())
        };
        let first = status(&locations[0]);
        assert!(
            locations.iter().all(|l| status(l) == first),
            "{locations:?}"
        );
        let stored = get(
            &http,
            &replicas.url(2, &format!("/api/payments/{id}/status")),
        )
        .await
        .expect("answers");
        assert_eq!(stored.data()["status"].as_str(), first.as_deref());
    }
    eprintln!(
        "replicas: racing payer submits attempts={submits} pages={} decided once each",
        pages.len()
    );

    // The admin control racing on a fresh page: exactly one 200.
    let id = initiate(
        &http,
        &replicas.url(0, "/api/payments/initiate"),
        "P-ADMIN",
        "ONLINEBANKING",
    )
    .await;
    post(
        &http,
        &replicas.url(0, "/api/payments/confirm"),
        &json!({ "transactionId": id, "referenceNo": "P-ADMIN" }),
    )
    .await
    .expect("answers");
    let racing: Vec<_> = (0..9)
        .map(|n| {
            let (http, url) = (
                http.clone(),
                replicas.url(n, &format!("/_mock/transactions/{id}/payer")),
            );
            tokio::spawn(async move {
                post(&http, &url, &json!({ "action": "pay" }))
                    .await
                    .expect("answers")
            })
        })
        .collect();
    let mut replies = Vec::new();
    for r in racing {
        replies.push(r.await.expect("no panic"));
    }
    let (ok, _) = statuses(&replies);
    assert_eq!(ok, 1, "{replies:?}");
    let _ = id;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_clock_one_reset_one_journal_one_console() {
    let Some(replicas) = Replicas::start("one_clock_one_reset_one_journal").await else {
        return;
    };
    let http = http();
    let id = initiate(
        &http,
        &replicas.url(1, "/api/payments/initiate"),
        "CLOCK-1",
        "TOPUP",
    )
    .await;
    // One clock: an advance on r1 holds for r2's and r3's next request.
    let advanced = post(
        &http,
        &replicas.url(0, "/_mock/clock/advance"),
        &json!({ "seconds": 901 }),
    )
    .await
    .expect("answers");
    assert_eq!(advanced.status, 200);
    for n in 1..3 {
        let clock = get(&http, &replicas.url(n, "/_mock/clock"))
            .await
            .expect("answers");
        assert_eq!(clock.data()["offsetSeconds"], 901, "replica {n}");
    }
    let expired = get(
        &http,
        &replicas.url(2, &format!("/api/payments/{id}/status")),
    )
    .await
    .expect("answers");
    assert_eq!(expired.data()["status"], "EXPIRED");
    let refused = post(
        &http,
        &replicas.url(2, "/api/payments/confirm"),
        &json!({ "transactionId": id, "referenceNo": "CLOCK-1" }),
    )
    .await
    .expect("answers");
    assert_eq!(refused.code(), "TRANSACTION_EXPIRED");

    // The console of r3 lists what r2 created.
    let console = get(&http, &replicas.url(2, "/_mock/ui/"))
        .await
        .expect("answers");
    assert!(console.text.contains("CLOCK-1"), "{}", console.text);
    assert!(
        console.text.contains("replica <code>r3</code>"),
        "the chrome names the replica"
    );

    // One journal, each entry naming its replica; exact: the first read
    // on r1 has what r2 and r3 answered (`journal.rs` counts it).
    let journal = get(&http, &replicas.url(0, "/_mock/requests"))
        .await
        .expect("answers");
    let names: std::collections::BTreeSet<String> = journal.data()["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|e| e["replica"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(
        names.into_iter().collect::<Vec<_>>(),
        ["r2", "r3"],
        "initiate on r2, confirm on r3"
    );

    // One reset, for all.
    let reset = post(&http, &replicas.url(1, "/_mock/reset"), &json!({}))
        .await
        .expect("answers");
    assert_eq!(reset.status, 200);
    for n in 0..3 {
        let health = get(&http, &replicas.url(n, "/_mock/health"))
            .await
            .expect("answers");
        assert_eq!(health.data()["transactions"], 0);
        assert_eq!(health.data()["replica"], format!("r{}", n + 1));
        let clock = get(&http, &replicas.url(n, "/_mock/clock"))
            .await
            .expect("answers");
        assert_eq!(clock.data()["offsetSeconds"], 0);
    }
}

/// The coverage (issue 43) is each process's own: what one replica
/// answered counts there, not on the others, and a reset on one clears
/// its count while the store's reset reaches every replica.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_replica_counts_its_own_coverage() {
    let Some(replicas) = Replicas::start("each_replica_counts_its_own_coverage").await else {
        return;
    };
    let http = http();
    let id = initiate(
        &http,
        &replicas.url(0, "/api/payments/initiate"),
        "COV-1",
        "TOPUP",
    )
    .await;
    let read = get(
        &http,
        &replicas.url(1, &format!("/api/payments/{id}/status")),
    )
    .await
    .expect("answers");
    assert_eq!(read.status, 200, "{}", read.text);
    let count = async |n: usize, name: &str| -> u64 {
        let reply = get(&http, &replicas.url(n, "/_mock/coverage"))
            .await
            .expect("answers");
        assert_eq!(reply.status, 200, "{}", reply.text);
        assert_eq!(reply.data()["replica"], format!("r{}", n + 1));
        reply.data()["answers"]
            .as_array()
            .expect("answers")
            .iter()
            .find(|c| c["name"] == name)
            .and_then(|c| c["count"].as_u64())
            .expect("a cell")
    };
    assert_eq!(count(0, "initiate 200").await, 1);
    assert_eq!(count(1, "initiate 200").await, 0);
    assert_eq!(count(0, "statusById 200").await, 0);
    assert_eq!(count(1, "statusById 200").await, 1);
    assert_eq!(count(2, "statusById 200").await, 0);
    let reset = post(&http, &replicas.url(1, "/_mock/reset"), &json!({}))
        .await
        .expect("answers");
    assert_eq!(reset.status, 200, "{}", reset.text);
    assert_eq!(count(1, "statusById 200").await, 0);
    assert_eq!(
        count(0, "initiate 200").await,
        1,
        "another process's count stays"
    );
}
