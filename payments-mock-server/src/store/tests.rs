//! Unit tests of the store: exactly-once under racing threads, views over time.
use std::sync::{Arc, Barrier};

use super::*;
use crate::domain::clock::Clock;

/// A valid MYR 1.00 TOPUP for this reference (tests elsewhere adjust it).
pub(crate) fn fields(reference: &str) -> NewTransaction {
    NewTransaction {
        merchant_id: Uuid::nil(),
        reference_no: reference.to_owned(),
        description: None,
        amount_minor: 100,
        currency_code: "MYR".to_owned(),
        currency_exponent: 2,
        product_code: "TOPUP".to_owned(),
        quantity: None,
        country_code: None,
        store_id: "S1".to_owned(),
        device_id: None,
        payer_id: Some("p".to_owned()),
        return_url: None,
        extra_properties: None,
    }
}

/// The base payment pages are announced under.
fn public_url() -> url::Url {
    url::Url::parse("http://127.0.0.1:8080").expect("a constant URL")
}

const MINUTE: Duration = Duration::from_secs(60);

/// A stored record, for tests of the containers.
pub(crate) fn sample() -> Record {
    let now = Clock::new().now();
    Store::new()
        .initiate(fields("SAMPLE"), InitialState::Initiated, now, now)
        .expect("stored")
}

#[test]
fn racing_threads_confirm_once_and_initiate_once() {
    let store = Arc::new(Store::new());
    let catalog = Arc::new(Catalog::default());
    let clock = Arc::new(Clock::new());
    let now = clock.now();
    let barrier = Arc::new(Barrier::new(32));
    let initiates: Vec<_> = (0..32)
        .map(|_| {
            let (store, barrier, clock) = (store.clone(), barrier.clone(), clock.clone());
            std::thread::spawn(move || {
                barrier.wait();
                store
                    .initiate_now(fields("R"), InitialState::Initiated, &clock, MINUTE)
                    .is_ok()
            })
        })
        .collect();
    let created = initiates
        .into_iter()
        .map(|t| t.join())
        .filter(|created| matches!(created, Ok(true)))
        .count();
    assert_eq!(created, 1);

    let id = store.all()[0].id.to_string();
    let confirms: Vec<_> = (0..32)
        .map(|_| {
            let (store, catalog, barrier, id) =
                (store.clone(), catalog.clone(), barrier.clone(), id.clone());
            std::thread::spawn(move || {
                barrier.wait();
                let attempt = ConfirmAttempt {
                    transaction_id: &id,
                    reference_no: "R",
                    confirmation_code: None,
                    scope: None,
                    public_url: &public_url(),
                };
                store.confirm(&attempt, &catalog, now)
            })
        })
        .collect();
    let results: Vec<_> = confirms.into_iter().filter_map(|t| t.join().ok()).collect();
    assert_eq!(results.iter().filter(|r| r.is_ok()).count(), 1);
    assert!(
        results
            .iter()
            .filter_map(|r| r.as_ref().err())
            .all(|e| *e == ConfirmRefusal::AlreadyConfirmed)
    );
}

#[test]
fn views_follow_the_clock_without_writes() {
    let store = Store::new();
    let clock = Clock::new();
    let record = store
        .initiate_now(fields("V"), InitialState::Pending, &clock, MINUTE)
        .expect("created");
    let now = record.created_at;
    let expiry = crate::domain::clock::add(now, MINUTE);
    assert_eq!(record.expires_at, expiry);
    assert_eq!(record.view(now).status, Status::Pending);
    let after = crate::domain::clock::add(now, MINUTE);
    let view = record.view(after);
    assert_eq!(view.status, Status::Expired);
    assert_eq!(view.last_modified_at, Some(expiry));
    assert_eq!(store.all(), vec![record]);
}

#[test]
fn only_the_issued_spelling_of_an_id_finds_the_transaction() {
    let store = Store::new();
    let clock = Clock::new();
    let record = store
        .initiate_now(fields("ID"), InitialState::Initiated, &clock, MINUTE)
        .expect("created");
    let id = record.id;
    let issued = id.to_string();
    assert_eq!(store.get(&issued, None).map(|r| r.id), Some(id));
    for other in [
        issued.to_uppercase(),
        format!("{{{issued}}}"),
        format!("urn:uuid:{issued}"),
        id.simple().to_string(),
        format!(" {issued}"),
        format!("{issued} "),
    ] {
        assert_eq!(store.get(&other, None), None, "{other}");
        let attempt = ConfirmAttempt {
            transaction_id: &other,
            reference_no: "ID",
            confirmation_code: None,
            scope: None,
            public_url: &public_url(),
        };
        let refused = store.confirm(&attempt, &Catalog::default(), clock.now());
        assert_eq!(refused, Err(ConfirmRefusal::NotFound), "{other}");
    }
    assert!(issued_id(&issued).is_some());
    assert_eq!(issued_id(""), None);
    assert_eq!(issued_id("not-a-uuid-but-36-characters-long!!"), None);
}

#[test]
fn created_at_follows_creation_order_under_racing_threads() {
    let store = Arc::new(Store::new());
    let clock = Arc::new(Clock::new());
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let (store, clock) = (store.clone(), clock.clone());
            std::thread::spawn(move || {
                for i in 0..500 {
                    let reference = format!("T{t}-{i}");
                    let _ = store.initiate_now(
                        fields(&reference),
                        InitialState::Initiated,
                        &clock,
                        MINUTE,
                    );
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("thread");
    }
    let all = store.all();
    assert_eq!(all.len(), 4000);
    for pair in all.windows(2) {
        assert!(pair[0].created_at <= pair[1].created_at, "{pair:?}");
        assert!(pair[0].id < pair[1].id);
    }
}
