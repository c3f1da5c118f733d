//! Chaos: thousands of payments through a mock that fails 30% of requests
//! (internal-error, commit-then-error, reset, commit-then-reset) with random
//! latency, checked afterwards against the mock's own transaction list.
//!
//! The assertions hold for every seed (`CHAOS_SEED`, default 42). The
//! number of payments (`CHAOS_PAYMENTS`, default 2000) and of concurrent
//! tasks (`CHAOS_TASKS`, default 32) can be changed too, and
//! `CHAOS_RATE_LIMIT=N` adds the mock's rate limit of N requests per second
//! (429s mixed with the other faults; `Retry-After` capped at 20 ms). Run
//! with `--nocapture` to see the counts.
//!
//! The mock derives each request's fault and latency from the seed, the
//! request itself (route, merchant and reference, or the transaction an id
//! names) and how often that request was sent before, not from the order of
//! arrival: the same `CHAOS_SEED` prints the same counts run after run,
//! whatever `CHAOS_TASKS` is (only `elapsed_ms` varies). A rate limit
//! (`CHAOS_RATE_LIMIT`) counts real time, so with it the counts vary.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use payments_client::{
    Client, ConfirmRequest, Currency, Error, InitiateRequest, MinorAmount, Outcome, Reply,
    RetryPolicy, TransactionStatus, Uuid,
};
use payments_mock_server::MockServer;

const MERCHANTS: [&str; 4] = [
    "4f9a1a8e-2c36-4d7e-9b1a-0c2a8f3d5e61",
    "b7e2c0d4-91a3-4f55-8e0b-2d6c7a1f9e30",
    "0c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f",
    "9e8d7c6b-5a49-4382-a1b0-c9d8e7f6a5b4",
];

/// A number from the environment, or `default` when unset.
fn env_number<T: std::str::FromStr>(name: &str, default: T) -> T {
    match std::env::var(name) {
        Ok(text) => text
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={text:?} is not a valid number")),
        Err(_) => default,
    }
}

/// What the client reported for one call.
#[derive(Debug, Clone)]
enum Reported {
    Done {
        transaction_id: String,
        status: TransactionStatus,
        attempts: u32,
        reconciled: bool,
    },
    Failed {
        outcome: Outcome,
        error: String,
    },
}

impl Reported {
    fn of<T>(
        result: &Result<Reply<T>, Error>,
        view: impl Fn(&T) -> (String, TransactionStatus),
    ) -> Self {
        match result {
            Ok(reply) => {
                let (transaction_id, status) = view(reply.data());
                Reported::Done {
                    transaction_id,
                    status,
                    attempts: reply.attempts(),
                    reconciled: reply.is_reconciled(),
                }
            }
            Err(e) => Reported::Failed {
                outcome: e.outcome(),
                error: e.to_string(),
            },
        }
    }
}

#[derive(Debug)]
struct Payment {
    merchant: Uuid,
    reference: String,
    initiate: Reported,
    confirm: Option<Reported>,
}

async fn pay(client: &Client, index: usize) -> Payment {
    let merchant = Uuid::parse_str(MERCHANTS[index % MERCHANTS.len()]).expect("literal uuid");
    let reference = format!("CHAOS-{index:05}");
    let minor = 100 + index as u64;
    let req = InitiateRequest::builder(
        merchant,
        reference.as_str(),
        MinorAmount::new(minor).expect("positive amount"),
        "TOPUP",
        "STORE-1",
    )
    .currency(Currency::MYR)
    .payer_id("60123456789")
    .build()
    .expect("valid request");
    let initiated = client.initiate(req).await;
    let initiate = Reported::of(&initiated, |d| {
        (d.transaction_id.to_string(), d.status.clone())
    });
    let confirm = match &initiated {
        Ok(reply) => {
            let req = ConfirmRequest::builder(&reply.data().transaction_id, reference.as_str())
                .build()
                .expect("valid request");
            let confirmed = client.confirm(req).await;
            Some(Reported::of(&confirmed, |d| {
                (d.transaction_id.to_string(), d.status.clone())
            }))
        }
        Err(_) => None,
    };
    Payment {
        merchant,
        reference,
        initiate,
        confirm,
    }
}

/// Counts of one kind of call.
#[derive(Debug, Default)]
struct CallCounts {
    first_try: usize,
    retried: usize,
    reconciled: usize,
    not_carried_out: usize,
    unknown: usize,
}

impl CallCounts {
    fn add(&mut self, r: &Reported) {
        match r {
            Reported::Done {
                reconciled: true, ..
            } => self.reconciled += 1,
            Reported::Done { attempts: 1, .. } => self.first_try += 1,
            Reported::Done { .. } => self.retried += 1,
            Reported::Failed {
                outcome: Outcome::NotCarriedOut,
                ..
            } => self.not_carried_out += 1,
            Reported::Failed { .. } => self.unknown += 1,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_payments_are_never_duplicated_lost_or_misreported() {
    let seed: u64 = env_number("CHAOS_SEED", 42);
    let payments: usize = env_number("CHAOS_PAYMENTS", 2000);
    let tasks: usize = env_number("CHAOS_TASKS", 32).max(1);
    let rate_limit: u32 = env_number("CHAOS_RATE_LIMIT", 0);

    let mut builder = MockServer::builder()
        .fail_rate(0.3)
        .fault_seed(seed)
        .latency(Duration::ZERO..=Duration::from_millis(3));
    if rate_limit > 0 {
        builder = builder.rate_limit(rate_limit);
    }
    let server = builder.start().await.expect("mock starts");
    let client = Client::builder(server.base_url())
        .retry_policy(
            RetryPolicy::default()
                .max_retries(5)
                .base_delay(Duration::from_millis(1))
                .max_delay(Duration::from_millis(20))
                .max_retry_after(Duration::from_millis(20)),
        )
        .timeout(Duration::from_secs(10))
        .build()
        .expect("valid client");

    let started = Instant::now();
    let next = Arc::new(AtomicUsize::new(0));
    let workers: Vec<_> = (0..tasks)
        .map(|_| {
            let client = client.clone();
            let next = next.clone();
            tokio::spawn(async move {
                let mut done = Vec::new();
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    if index >= payments {
                        return done;
                    }
                    done.push(pay(&client, index).await);
                }
            })
        })
        .collect();
    let mut results = Vec::with_capacity(payments);
    for worker in workers {
        results.extend(worker.await.expect("worker task"));
    }
    let elapsed = started.elapsed();
    assert_eq!(results.len(), payments);

    // The mock's view, keyed like the client's.
    let stored = server.transactions().await;
    let mut held: HashMap<(Uuid, String), Vec<_>> = HashMap::new();
    for t in &stored {
        held.entry((t.merchant_id, t.reference_no.clone()))
            .or_default()
            .push(t);
    }
    let duplicates = held.values().filter(|v| v.len() > 1).count();
    let ours: std::collections::HashSet<_> = results
        .iter()
        .map(|p| (p.merchant, p.reference.clone()))
        .collect();
    let strays = held.keys().filter(|k| !ours.contains(*k)).count();

    let mut initiate = CallCounts::default();
    let mut confirm = CallCounts::default();
    let mut not_carried_out_but_held = 0;
    let mut reported_but_not_held = 0;
    let mut unknown_initiate_held = 0;
    let mut unknown_confirm_successful = 0;
    let mut successful = 0;
    let mut problems = Vec::new();
    for p in &results {
        let found = held
            .get(&(p.merchant, p.reference.clone()))
            .and_then(|v| v.first().copied());
        initiate.add(&p.initiate);
        match (&p.initiate, found) {
            (Reported::Done { transaction_id, .. }, Some(t))
                if *transaction_id == t.transaction_id => {}
            (Reported::Done { .. }, _) => {
                reported_but_not_held += 1;
                problems.push(format!("initiated but not held: {p:?} vs {found:?}"));
            }
            (
                Reported::Failed {
                    outcome: Outcome::NotCarriedOut,
                    ..
                },
                Some(_),
            ) => {
                not_carried_out_but_held += 1;
                problems.push(format!("not carried out but held: {p:?} vs {found:?}"));
            }
            (
                Reported::Failed {
                    outcome: Outcome::NotCarriedOut,
                    ..
                },
                None,
            ) => {}
            (Reported::Failed { .. }, held) => unknown_initiate_held += usize::from(held.is_some()),
        }
        let Some(confirmed) = &p.confirm else {
            continue;
        };
        confirm.add(confirmed);
        let stored_status = found.map(|t| t.status.as_str());
        match confirmed {
            Reported::Done {
                status,
                transaction_id,
                ..
            } => {
                let same = found.is_some_and(|t| t.transaction_id == *transaction_id);
                if *status == TransactionStatus::Successful
                    && same
                    && stored_status == Some("SUCCESSFUL")
                {
                    successful += 1;
                } else {
                    reported_but_not_held += 1;
                    problems.push(format!("confirmed but not held so: {p:?} vs {found:?}"));
                }
            }
            Reported::Failed {
                outcome: Outcome::NotCarriedOut,
                ..
            } => {
                if stored_status != Some("INITIATED") {
                    not_carried_out_but_held += 1;
                    problems.push(format!(
                        "confirm not carried out but held as {stored_status:?}: {p:?}"
                    ));
                }
            }
            Reported::Failed { .. } => {
                unknown_confirm_successful += usize::from(stored_status == Some("SUCCESSFUL"));
            }
        }
    }
    let reconciled = initiate.reconciled + confirm.reconciled;
    let unknown = initiate.unknown + confirm.unknown;

    println!(
        "chaos seed={seed} payments={payments} tasks={tasks} rate_limit={rate_limit} elapsed_ms={} \
         mock_transactions={} successful={successful} duplicates={duplicates} strays={strays} \
         not_carried_out_but_held={not_carried_out_but_held} reported_but_not_held={reported_but_not_held} \
         reconciled={reconciled} unknown={unknown} \
         initiate[first_try={} retried={} reconciled={} not_carried_out={} unknown={} unknown_held={unknown_initiate_held}] \
         confirm[first_try={} retried={} reconciled={} not_carried_out={} unknown={} unknown_successful={unknown_confirm_successful}]",
        elapsed.as_millis(),
        stored.len(),
        initiate.first_try,
        initiate.retried,
        initiate.reconciled,
        initiate.not_carried_out,
        initiate.unknown,
        confirm.first_try,
        confirm.retried,
        confirm.reconciled,
        confirm.not_carried_out,
        confirm.unknown,
    );
    for line in problems.iter().take(10) {
        println!("chaos problem: {line}");
    }
    for p in &results {
        for (call, reported) in [
            ("initiate", Some(&p.initiate)),
            ("confirm", p.confirm.as_ref()),
        ] {
            if let Some(Reported::Failed {
                outcome: Outcome::Unknown,
                error,
            }) = reported
            {
                println!("chaos unknown: {} {call}: {error}", p.reference);
            }
        }
    }

    assert_eq!(duplicates, 0, "duplicate transactions");
    assert_eq!(strays, 0, "transactions the test never asked for");
    assert_eq!(
        not_carried_out_but_held, 0,
        "reported not carried out, yet held"
    );
    assert_eq!(
        reported_but_not_held, 0,
        "reported done, yet not held in that state"
    );
    // Every payment is accounted for: successful, or a failure whose
    // outcome is classified (and, when unknown, checked against the mock).
    let initiated = payments - initiate.not_carried_out - initiate.unknown;
    assert_eq!(
        initiated,
        results.iter().filter(|p| p.confirm.is_some()).count()
    );
    assert_eq!(
        successful + confirm.not_carried_out + confirm.unknown,
        initiated,
        "every initiated payment ends successful or with a classified failure"
    );
    assert_eq!(
        stored.len(),
        initiated + unknown_initiate_held,
        "the mock holds exactly the initiated payments plus the unknown ones it carried out"
    );
    if payments >= 100 {
        assert!(
            reconciled > 0,
            "a 30% fail rate produces reconciled results"
        );
    }
}
