//! The journal of three replica processes on one PostgreSQL database is
//! exact (CONTRACT section 15, issue 33): a read on any replica that starts
//! after an answer was sent by any replica includes that request; a reset
//! leaves no request answered before it on any replica; `seq` only grows
//! and `GET /_mock/requests?after=SEQ` pages by it; a replica that stops
//! keeps its last entries, and one killed holds reads back at most 1 s.
//! Each test prints its figures (attempts, misses) for BENCHMARKS.md.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::mock::{Mock, get, http, post};
use crate::replicas::Replicas;

/// The journal's items as `GET /_mock/requests` on `url` answers them.
async fn journal(http: &reqwest::Client, url: &str) -> Vec<Value> {
    let reply = get(http, url).await.expect("answers");
    assert_eq!(reply.status, 200, "{}", reply.text);
    reply.data()["items"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn paths(items: &[Value]) -> BTreeSet<String> {
    items
        .iter()
        .filter_map(|e| e["path"].as_str().map(str::to_owned))
        .collect()
}

fn seqs(items: &[Value]) -> Vec<u64> {
    items.iter().filter_map(|e| e["seq"].as_u64()).collect()
}

/// An `/api/` request that changes nothing, named by `tag` (404).
fn probe(tag: &str) -> String {
    format!("/api/payments/reference/{tag}/status")
}

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    values.get(values.len() / 2).copied().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_request_on_each_replica_is_in_an_immediate_read_on_every_replica() {
    let Some(replicas) = Replicas::start("exact_journal_reads").await else {
        return;
    };
    let http = http();
    let (mut attempts, mut misses, mut entries_missed) = (0, 0, 0);
    let mut waits = Vec::new();
    let mut after = 0;
    for round in 0..100 {
        // One request on each replica, at once; each answered.
        let sent: Vec<_> = (0..3)
            .map(|n| {
                let (http, url, path) = (
                    http.clone(),
                    replicas.url(n, &probe(&format!("RYW-{round}-{n}"))),
                    probe(&format!("RYW-{round}-{n}")),
                );
                tokio::spawn(async move {
                    let reply = get(&http, &url).await.expect("answers");
                    assert_eq!(reply.status, 404, "{}", reply.text);
                    path
                })
            })
            .collect();
        let mut wanted = BTreeSet::new();
        for s in sent {
            wanted.insert(s.await.expect("no panic"));
        }
        // Then, at once, a read on every replica: each has all three.
        let reads: Vec<_> = (0..3)
            .map(|n| {
                let (http, url) = (
                    http.clone(),
                    replicas.url(n, &format!("/_mock/requests?after={after}")),
                );
                tokio::spawn(async move {
                    let started = Instant::now();
                    let items = journal(&http, &url).await;
                    (items, started.elapsed())
                })
            })
            .collect();
        let mut newest = after;
        for read in reads {
            let (items, waited) = read.await.expect("no panic");
            waits.push(waited);
            attempts += 1;
            let found = paths(&items);
            let missing = wanted.difference(&found).count();
            if missing > 0 {
                misses += 1;
                entries_missed += missing;
            }
            assert!(seqs(&items).iter().all(|s| *s > after), "after={after}");
            newest = newest.max(seqs(&items).into_iter().max().unwrap_or(0));
        }
        after = newest;
    }
    let slowest = waits.iter().max().copied().unwrap_or_default();
    eprintln!(
        "exact journal, 3 replicas: rounds=100 reads={attempts} misses={misses} entries missed={entries_missed} read median={:?} max={slowest:?}",
        median(waits)
    );
    let warnings: Vec<String> = replicas
        .all
        .iter()
        .flat_map(|m| {
            m.log()
                .lines()
                .filter(|l| l.contains("WARN"))
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect();
    // The documented limit: a replica stalled for over a second (a loaded
    // machine's debug build) may be missing from a read, and the read says
    // so in the log. A miss the log does not own up to is the defect.
    let waited = warnings.iter().any(|w| w.contains(WAITED_IN_VAIN));
    assert!(
        (misses, entries_missed) == (0, 0) || waited,
        "every read has every request answered before it, or says which replica it gave up on: misses {misses}, entries {entries_missed}; the replicas warned: {warnings:?}"
    );
}

/// What a journal read logs when it gave up waiting for a replica.
const WAITED_IN_VAIN: &str = "the journal waited for replicas that did not write";

/// How often `replica`'s log says a read gave up waiting for a replica.
fn waits_in_vain(replica: &Mock) -> usize {
    replica.log().matches(WAITED_IN_VAIN).count()
}

/// Requests of each replica's load in a round of the reset race.
const LOAD: usize = 120;

/// A request of the load around a reset: its path, when it was sent, and
/// when its answer arrived.
struct Sent {
    path: String,
    sent: Instant,
    answered: Instant,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_reset_racing_requests_on_the_other_replicas_leaves_no_earlier_entry() {
    let Some(replicas) = Replicas::start("exact_journal_reset_race").await else {
        return;
    };
    let replicas = Arc::new(replicas);
    let http = http();
    let mut all: Vec<Sent> = Vec::new();
    let (mut earlier_found, mut later_missing, mut racing, mut racing_kept) = (0, 0, 0, 0);
    let mut checks = 0;
    for round in 0..20 {
        // Load on r2 and r3, one request after another, at most 120 each
        // (a round stays within the journal's 1,000 entries); the count
        // of answers is awaited, not slept for.
        let stop = Arc::new(AtomicBool::new(false));
        let (count, mut answers) = tokio::sync::watch::channel(0usize);
        let count = Arc::new(count);
        let load: Vec<_> = (1..3)
            .map(|n| {
                let (http, replicas, stop, count) = (
                    http.clone(),
                    Arc::clone(&replicas),
                    Arc::clone(&stop),
                    Arc::clone(&count),
                );
                tokio::spawn(async move {
                    let mut done = Vec::new();
                    let mut k = 0;
                    while !stop.load(Ordering::SeqCst) && k < LOAD {
                        let path = probe(&format!("RACE-{round}-{n}-{k}"));
                        let sent = Instant::now();
                        let reply = get(&http, &replicas.url(n, &path)).await.expect("answers");
                        assert_eq!(reply.status, 404, "{}", reply.text);
                        done.push(Sent {
                            path,
                            sent,
                            answered: Instant::now(),
                        });
                        count.send_modify(|c| *c += 1);
                        k += 1;
                    }
                    done
                })
            })
            .collect();
        answers.wait_for(|c| *c >= 10).await.expect("load runs");
        let reset_sent = Instant::now();
        let reset = post(&http, &replicas.url(0, "/_mock/reset"), &json!({}))
            .await
            .expect("answers");
        assert_eq!(reset.status, 200, "{}", reset.text);
        let reset_answered = Instant::now();
        // Right after the reset, with the load still running, and again
        // once it has stopped (every replica has then written all it will).
        let at_reset = *answers.borrow();
        let mut views = Vec::new();
        for n in 0..3 {
            views.push(paths(
                &journal(&http, &replicas.url(n, "/_mock/requests")).await,
            ));
        }
        answers
            .wait_for(|c| *c >= (at_reset + 10).min(2 * LOAD))
            .await
            .expect("load runs");
        stop.store(true, Ordering::SeqCst);
        for task in load {
            all.extend(task.await.expect("no panic"));
        }
        for n in 0..3 {
            views.push(paths(
                &journal(&http, &replicas.url(n, "/_mock/requests")).await,
            ));
        }
        let last_views = &views[3..];
        for (i, view) in views.iter().enumerate() {
            checks += 1;
            for s in &all {
                let shown = view.contains(&s.path);
                if s.answered < reset_sent && shown {
                    earlier_found += 1;
                    eprintln!("round {round}: {} answered before the reset, shown", s.path);
                }
                // Sent after the reset's answer: in every read once the
                // load has stopped (the reads right after the reset may
                // come before the request).
                if i >= 3 && s.sent > reset_answered && !shown {
                    later_missing += 1;
                    eprintln!("round {round}: {} sent after the reset, missing", s.path);
                }
            }
        }
        for s in all
            .iter()
            .filter(|s| s.answered >= reset_sent && s.sent <= reset_answered)
        {
            racing += 1;
            if last_views.iter().any(|v| v.contains(&s.path)) {
                racing_kept += 1;
            }
        }
    }
    eprintln!(
        "exact journal, reset racing requests: rounds=20 requests={} journal reads checked={checks} earlier entries found={earlier_found} later entries missing={later_missing} (requests concurrent with a reset: {racing}, of which kept: {racing_kept})",
        all.len()
    );

    assert_eq!((earlier_found, later_missing), (0, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn seq_only_grows_and_after_pages_on_every_replica() {
    let Some(replicas) = Replicas::start("exact_journal_seq").await else {
        return;
    };
    let http = http();
    let mut sent = BTreeSet::new();
    for k in 0..30 {
        let path = probe(&format!("SEQ-{k}"));
        get(&http, &replicas.url(k, &path)).await.expect("answers");
        sent.insert(path);
    }
    // Pages of 7 after the last seq seen, on each replica: the same
    // entries, each once, in one growing order.
    let mut pages_of = BTreeMap::new();
    for n in 0..3 {
        let (mut after, mut collected, mut pages) = (0, Vec::new(), 0);
        loop {
            let items = journal(
                &http,
                &replicas.url(n, &format!("/_mock/requests?after={after}&limit=7")),
            )
            .await;
            if items.is_empty() {
                break;
            }
            pages += 1;
            assert!(items.len() <= 7);
            let page = seqs(&items);
            assert!(page.iter().all(|s| *s > after), "{page:?} after {after}");
            after = page.last().copied().unwrap_or(after);
            collected.extend(items);
        }
        let all = seqs(&collected);
        assert!(all.windows(2).all(|w| w[0] < w[1]), "{all:?}");
        assert_eq!(paths(&collected), sent, "replica r{}", n + 1);
        assert_eq!(pages, 5, "30 entries, 7 a page");
        pages_of.insert(n, all);
    }
    assert_eq!(pages_of[&0], pages_of[&1]);
    assert_eq!(pages_of[&0], pages_of[&2]);
    let before = pages_of[&0].last().copied().unwrap_or(0);
    // Across a reset the numbers go on growing; after= the newest gives
    // exactly what came since, on any replica.
    let reset = post(&http, &replicas.url(1, "/_mock/reset"), &json!({}))
        .await
        .expect("answers");
    assert_eq!(reset.status, 200);
    for k in 0..3 {
        get(&http, &replicas.url(k, &probe(&format!("NEW-{k}"))))
            .await
            .expect("answers");
    }
    let items = journal(
        &http,
        &replicas.url(2, &format!("/_mock/requests?after={before}")),
    )
    .await;
    assert_eq!(items.len(), 3);
    assert!(seqs(&items).iter().all(|s| *s > before));
    assert!(seqs(&items).windows(2).all(|w| w[0] < w[1]));
    // Hostile positions are refused, on a replica as in memory.
    for bad in [
        "-1",
        "",
        "abc",
        "1.5",
        "+1",
        "%201",
        "0x10",
        "9223372036854775808",
        "99999999999999999999999999",
    ] {
        let reply = get(
            &http,
            &replicas.url(0, &format!("/_mock/requests?after={bad}")),
        )
        .await
        .expect("answers");
        assert_eq!(
            (reply.status, reply.code()),
            (400, "VALIDATION_ERROR"),
            "after={bad}"
        );
    }
    let reply = get(
        &http,
        &replicas.url(0, "/_mock/requests?after=9223372036854775807"),
    )
    .await
    .expect("answers");
    assert_eq!(reply.status, 200);
    assert_eq!(reply.data()["items"], json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_stopped_replica_keeps_its_entries_and_a_killed_one_holds_reads_at_most_a_second() {
    let Some(mut replicas) = Replicas::start("exact_journal_stop_kill").await else {
        return;
    };
    let http = http();
    // SIGTERM right after answering: what it had not written is written.
    let mut last = BTreeSet::new();
    for k in 0..5 {
        let path = probe(&format!("STOPPED-{k}"));
        get(&http, &replicas.url(2, &path)).await.expect("answers");
        last.insert(path);
    }
    let (code, stderr) = replicas.all.remove(2).stop();
    assert_eq!(code, Some(0));
    let before = waits_in_vain(&replicas.all[0]);
    let found = paths(&journal(&http, &replicas.url(0, "/_mock/requests")).await);
    assert!(last.is_subset(&found), "{found:?}; r3 said: {stderr}");
    // Not waited for: a read that waited would have said so (timing the
    // read told the two apart by 100 ms, and a loaded machine's read
    // alone took 1.6 s).
    assert_eq!(
        waits_in_vain(&replicas.all[0]),
        before,
        "a replica that stopped is not waited for: {}",
        replicas.all[0].log()
    );

    // kill -9: reads wait for it at most 1 s (then it is known gone), and
    // still list what the replica left answered just before, though the
    // killed one's watermark holds the numbering back until it is gone.
    replicas.all.remove(1).kill9();
    let mut slowest = Duration::ZERO;
    let (mut reads, mut missed) = (0, 0);
    let deadline = Instant::now() + Duration::from_secs(4);
    while Instant::now() < deadline {
        let path = probe(&format!("AFTER-KILL-{reads}"));
        get(&http, &replicas.url(0, &path)).await.expect("answers");
        let started = Instant::now();
        let found = paths(&journal(&http, &replicas.url(0, "/_mock/requests")).await);
        slowest = slowest.max(started.elapsed());
        reads += 1;
        if !found.contains(&path) {
            missed += 1;
        }
    }
    let before = waits_in_vain(&replicas.all[0]);
    let started = Instant::now();
    journal(&http, &replicas.url(0, "/_mock/requests")).await;
    let after_gone = started.elapsed();
    let waited_after_gone = waits_in_vain(&replicas.all[0]) - before;
    eprintln!(
        "exact journal, a replica killed: slowest read={slowest:?}, once it is gone={after_gone:?}; reads={reads} missing the request just answered={missed}"
    );
    assert_eq!(missed, 0, "of {reads} reads");
    // A second of waiting, and the read's own work on a busy machine: a
    // bound against a hang, not a measurement.
    assert!(slowest < Duration::from_secs(10), "{slowest:?}");
    // Once it is known gone, no read waits for it.
    assert_eq!(
        waited_after_gone,
        0,
        "{after_gone:?}: {}",
        replicas.all[0].log()
    );
}

/// Requests sent one after another in a round of the order test: two turns
/// over the three replicas.
const IN_A_ROUND: usize = 6;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn requests_answered_one_after_another_on_different_replicas_are_listed_in_that_order() {
    let Some(replicas) = Replicas::start("journal_order_across_replicas").await else {
        return;
    };
    let http = http();
    let (mut reads, mut out_of_order, mut rounds_out_of_order) = (0, 0, 0);
    let mut after = 0;
    for round in 0..100 {
        // Round-robin from a different replica each round, each request
        // answered before the next is sent: their order is causal.
        let mut sent = Vec::new();
        for k in 0..IN_A_ROUND {
            let path = probe(&format!("ORDER-{round}-{k}"));
            let reply = get(&http, &replicas.url(round + k, &path))
                .await
                .expect("answers");
            assert_eq!(reply.status, 404, "{}", reply.text);
            sent.push(path);
        }
        // Then a read on each replica, one after another: each lists them
        // in the order sent, under the same numbers.
        let mut wrong = false;
        let mut numbered: Option<Vec<u64>> = None;
        for n in 0..3 {
            let items = journal(
                &http,
                &replicas.url(n, &format!("/_mock/requests?after={after}")),
            )
            .await;
            reads += 1;
            let listed: Vec<String> = items
                .iter()
                .filter_map(|e| e["path"].as_str().map(str::to_owned))
                .collect();
            assert_eq!(
                listed.iter().collect::<BTreeSet<_>>(),
                sent.iter().collect::<BTreeSet<_>>(),
                "round {round}, read on r{}: every request, once",
                n + 1
            );
            if listed != sent {
                out_of_order += 1;
                wrong = true;
                let replicas: Vec<&str> =
                    items.iter().filter_map(|e| e["replica"].as_str()).collect();
                eprintln!(
                    "round {round}, read on r{}: listed {replicas:?} {:?}",
                    n + 1,
                    seqs(&items)
                );
            }
            let seqs = seqs(&items);
            assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");
            assert!(seqs.iter().all(|s| *s > after), "after={after}: {seqs:?}");
            match &numbered {
                Some(first) => assert_eq!(first, &seqs, "round {round}: one numbering"),
                None => numbered = Some(seqs),
            }
        }
        if wrong {
            rounds_out_of_order += 1;
        }
        after = numbered.and_then(|s| s.last().copied()).unwrap_or(after);
    }
    eprintln!(
        "journal order, 3 replicas: rounds=100 requests={} reads={reads} reads out of order={out_of_order} rounds out of order={rounds_out_of_order}",
        100 * IN_A_ROUND
    );
    assert_eq!(
        (out_of_order, rounds_out_of_order),
        (0, 0),
        "a request answered before another was sent is listed before it"
    );
}
