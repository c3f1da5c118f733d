//! What every store promises (`Store`'s docs), one function per promise,
//! generic over the store: `main.rs` runs each against memory, SQLite and
//! PostgreSQL. The clock, the journal, settings and what a reopen keeps
//! are in `kept.rs`.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use payments_mock_server::domain::port::{
    InsertRefusal, LookupError, Order, PageQuery, PayerRefusal, PaymentPageKey, Store, Transition,
};
use payments_mock_server::domain::transaction::{
    ConfirmResult, Confirmation, NewTransaction, PaymentPage, Record,
};
use payments_mock_server::{InitialState, PayerAction, Status};
use uuid::Uuid;

pub use crate::counts::*;
pub use crate::odd_text::*;
pub use crate::races::*;

pub const MINUTE: Duration = Duration::from_secs(60);
pub const MERCHANT: Uuid = Uuid::from_u128(0x6f1c_0d3e_1b7a_4c1e_9a55_1c2b_3d4e_5f60);
pub const OTHER: Uuid = Uuid::from_u128(0x0b0c_8a9e_52a4_4c2e_8f6f_2f8f_3c4d_5e6a);

/// A valid MYR 1.00 TOPUP of `merchant` for this reference.
pub fn new(merchant: Uuid, reference: &str) -> NewTransaction {
    NewTransaction {
        merchant_id: merchant,
        reference_no: reference.to_owned(),
        description: Some("a \"quoted\" ünïcødé description".to_owned()),
        amount_minor: 9_007_199_254_740_991,
        currency_code: "KWD".to_owned(),
        currency_exponent: 3,
        product_code: "TOPUP".to_owned(),
        quantity: Some(2),
        country_code: Some("MY".to_owned()),
        store_id: "S1".to_owned(),
        device_id: None,
        payer_id: Some("60123456789".to_owned()),
        return_url: Some("https://shop.example/back?order=17#top".to_owned()),
        extra_properties: Some("{\"k\":[1,2]}".to_owned()),
    }
}

pub async fn create<S: Store>(store: &S, merchant: Uuid, reference: &str) -> Record {
    store
        .create(new(merchant, reference), InitialState::Initiated, MINUTE)
        .await
        .expect("the store answers")
        .expect("a new reference")
}

pub fn success(now: DateTime<Utc>) -> Confirmation {
    Confirmation {
        confirmed_at: now,
        result: ConfirmResult::Successful,
        provider_reference: Some("PRV-1".to_owned()),
        extra_properties: Some("{\"pins\":[\"1\"]}".to_owned()),
    }
}

pub fn page_confirmation(now: DateTime<Utc>, token: &str, window: Duration) -> Confirmation {
    Confirmation {
        confirmed_at: now,
        result: ConfirmResult::AwaitingPayer(PaymentPage {
            token: token.into(),
            deadline: now + window,
            decision: None,
            later_submits: 0,
        }),
        provider_reference: Some("PRV-2".to_owned()),
        extra_properties: Some("{\"paymentUrl\":\"http://x/pay/t\"}".to_owned()),
    }
}

pub fn token(n: u32) -> String {
    format!("{n:0>32}").replace('0', "T")
}

pub async fn all<S: Store>(store: &S) -> Vec<Record> {
    store
        .page(
            &PageQuery::oldest_first(None, usize::MAX),
            |_| true,
            Record::clone,
        )
        .await
        .expect("the store answers")
        .expect("from the start")
        .items
}

/// Create stamps an id and `createdAt` from its clock, keeps every field,
/// and refuses a reference the merchant holds, naming the holder; another
/// merchant may use it.
pub async fn create_keeps_every_field_and_refuses_a_taken_reference<S: Store>(store: &S) {
    let before = store.now().await.expect("now");
    let record = create(store, MERCHANT, "INV/1 ✓ ?#%").await;
    assert!(record.created_at >= before);
    assert_eq!(record.expires_at, record.created_at + MINUTE);
    assert_eq!(record.view(record.created_at).status, Status::Initiated);
    let read = store
        .with_id(record.id, None, Record::clone)
        .await
        .expect("answers")
        .expect("stored");
    assert_eq!(read, record, "every field as created");
    let again = store
        .create(new(MERCHANT, "INV/1 ✓ ?#%"), InitialState::Pending, MINUTE)
        .await
        .expect("answers");
    assert_eq!(again, Err(InsertRefusal::Duplicate(record.id)));
    let other = create(store, OTHER, "INV/1 ✓ ?#%").await;
    assert_ne!(other.id, record.id);
    assert_eq!(store.count().await.expect("count"), 2);
    // Free text may hold a NUL (which PostgreSQL's text cannot) and
    // U+FFFF: kept as sent by every store.
    let odd = |text: &str| Some(format!("{text}\0\u{FFFF}0\u{FFFF}\u{FFFF}\0"));
    let mut nul = new(MERCHANT, "NUL");
    nul.description = odd("d");
    nul.store_id = odd("s").expect("some");
    nul.device_id = odd("");
    nul.payer_id = odd("p");
    nul.return_url = odd("https://shop.example/");
    let made = store
        .create(nul.clone(), InitialState::Initiated, MINUTE)
        .await
        .expect("answers")
        .expect("a new reference");
    let read = store
        .with_id(made.id, None, Record::clone)
        .await
        .expect("answers")
        .expect("stored");
    assert_eq!(read, made);
    assert_eq!(*read.fields.store_id, nul.store_id);
    assert_eq!(read.fields.payer_id.as_deref(), nul.payer_id.as_deref());
    let rare = read.fields.rare.as_deref().expect("rare fields");
    assert_eq!(rare.description.as_deref(), nul.description.as_deref());
    assert_eq!(rare.device_id.as_deref(), nul.device_id.as_deref());
    assert_eq!(rare.return_url.as_deref(), nul.return_url.as_deref());
}

/// Ids sort like creation times: oldest first by id is oldest first by
/// `createdAt`, under concurrent creates too.
pub async fn ids_follow_creation_times<S: Store>(store: Arc<S>) {
    let tasks: Vec<_> = (0..8)
        .map(|t| {
            let store = store.clone();
            tokio::spawn(async move {
                for i in 0..25 {
                    create(&*store, MERCHANT, &format!("T{t}-{i}")).await;
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("no panic");
    }
    let all = all(&*store).await;
    assert_eq!(all.len(), 200);
    for pair in all.windows(2) {
        assert!(pair[0].id < pair[1].id);
        assert!(pair[0].created_at <= pair[1].created_at, "{pair:?}");
    }
}

/// A confirm at or after the expiry moves nothing; an unknown id is
/// missing; a confirmation reads back whole.
pub async fn confirm_checks_expiry_and_keeps_the_confirmation<S: Store>(store: &S) {
    let record = create(store, MERCHANT, "C-EXP").await;
    let late = record.expires_at;
    match store
        .confirm(record.id, late, success(late))
        .await
        .expect("answers")
    {
        Transition::Unmoved(r) => assert_eq!(r.view(late).status, Status::Expired),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        store
            .confirm(Uuid::now_v7(), late, success(late))
            .await
            .expect("answers"),
        Transition::Missing
    );
    let settling = Confirmation {
        confirmed_at: record.created_at,
        result: ConfirmResult::Settling {
            settles_at: record.created_at + Duration::from_secs(2),
        },
        provider_reference: Some("PRV-S".to_owned()),
        extra_properties: None,
    };
    let Transition::Moved(moved) = store
        .confirm(record.id, record.created_at, settling.clone())
        .await
        .expect("answers")
    else {
        panic!("confirmable before its expiry");
    };
    assert_eq!(moved.confirmation.as_deref(), Some(&settling));
    let read = store
        .with_id(record.id, None, Record::clone)
        .await
        .expect("answers");
    assert_eq!(read, Some(moved));
}

/// Reads by id respect the scope; by reference: scoped, the only holder,
/// or ambiguous between merchants.
pub async fn reads_by_id_and_reference_respect_the_scope<S: Store>(store: &S) {
    let mine = create(store, MERCHANT, "SHARED").await;
    let id_of = |r: &Record| r.id;
    assert_eq!(
        store
            .with_id(mine.id, Some(OTHER), id_of)
            .await
            .expect("answers"),
        None
    );
    assert_eq!(
        store
            .with_id(mine.id, Some(MERCHANT), id_of)
            .await
            .expect("answers"),
        Some(mine.id)
    );
    assert_eq!(
        store
            .with_reference("SHARED", None, id_of)
            .await
            .expect("answers"),
        Ok(mine.id)
    );
    let theirs = create(store, OTHER, "SHARED").await;
    assert_eq!(
        store
            .with_reference("SHARED", None, id_of)
            .await
            .expect("answers"),
        Err(LookupError::Ambiguous)
    );
    assert_eq!(
        store
            .with_reference("SHARED", Some(OTHER), id_of)
            .await
            .expect("answers"),
        Ok(theirs.id)
    );
    assert_eq!(
        store
            .with_reference("shared", None, id_of)
            .await
            .expect("answers"),
        Err(LookupError::NotFound)
    );
    assert_eq!(
        store
            .with_reference("SHARED", Some(Uuid::nil()), id_of)
            .await
            .expect("answers"),
        Err(LookupError::NotFound)
    );
}

/// A read by id that starts after a change was answered sees the change,
/// however often the row was read before (a store may keep copies of rows
/// it read: the SQLite store does), while other tasks keep reading it.
pub async fn reads_after_an_answer_see_it<S: Store + 'static>(store: Arc<S>) {
    let record = create(&*store, MERCHANT, "READ-AFTER").await;
    let now = store.now().await.expect("now");
    let status = |store: Arc<S>| async move {
        store
            .with_id(record.id, None, |r| r.view(now).status)
            .await
            .expect("answers")
    };
    assert_eq!(status(store.clone()).await, Some(Status::Initiated));
    // Readers hammer the row while it changes.
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let readers: Vec<_> = (0..4)
        .map(|_| {
            let (store, stop) = (store.clone(), stop.clone());
            tokio::spawn(async move {
                while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                    let _ = store.with_id(record.id, None, |r| r.view(now).status).await;
                    tokio::task::yield_now().await;
                }
            })
        })
        .collect();
    let page = token(7);
    assert!(matches!(
        store
            .confirm(record.id, now, page_confirmation(now, &page, MINUTE))
            .await
            .expect("answers"),
        Transition::Moved(_)
    ));
    assert_eq!(status(store.clone()).await, Some(Status::Confirmed));
    let decided = store
        .decide(PaymentPageKey::Token(&page), None, PayerAction::Pay, now)
        .await
        .expect("answers")
        .expect("a page");
    assert!(decided.decided_now);
    assert_eq!(status(store.clone()).await, Some(Status::Successful));
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    for reader in readers {
        reader.await.expect("no panic");
    }
    store.reset().await.expect("resets");
    assert_eq!(status(store.clone()).await, None, "gone after a reset");
}

/// Of concurrent submits on one page exactly one decides; later ones are
/// counted and change nothing; a closed window decides nothing.
pub async fn the_payer_decides_once<S: Store>(store: Arc<S>) {
    let record = create(&*store, MERCHANT, "PAGE").await;
    let now = store.now().await.expect("now");
    let page = token(1);
    assert!(matches!(
        store
            .confirm(record.id, now, page_confirmation(now, &page, MINUTE))
            .await
            .expect("answers"),
        Transition::Moved(_)
    ));
    let tasks: Vec<_> = (0..12)
        .map(|n| {
            let (store, page) = (store.clone(), page.clone());
            tokio::spawn(async move {
                let action = PayerAction::ALL[n % 3];
                let decided = store
                    .decide(PaymentPageKey::Token(&page), None, action, now)
                    .await
                    .expect("answers")
                    .expect("a page");
                (decided.decided_now, action)
            })
        })
        .collect();
    let mut winners = Vec::new();
    for task in tasks {
        let (now, action) = task.await.expect("no panic");
        if now {
            winners.push(action);
        }
    }
    assert_eq!(winners.len(), 1, "{winners:?}");
    let stored = store
        .with_payment_page(PaymentPageKey::Token(&page), |_, p| p.clone())
        .await
        .expect("answers")
        .expect("a page");
    assert_eq!(stored.decision.map(|d| d.action), Some(winners[0]));
    assert_eq!(stored.later_submits, 11);
    let id = record.id.to_string();
    let by_id = store
        .with_payment_page(PaymentPageKey::Transaction(&id), |r, _| r.id)
        .await
        .expect("answers");
    assert_eq!(by_id, Some(record.id));

    // A second page whose window has passed: nothing is decided.
    let late = create(&*store, MERCHANT, "PAGE-LATE").await;
    let second = token(2);
    store
        .confirm(late.id, now, page_confirmation(now, &second, MINUTE))
        .await
        .expect("answers");
    let after = now + MINUTE;
    let decided = store
        .decide(
            PaymentPageKey::Token(&second),
            None,
            PayerAction::Pay,
            after,
        )
        .await
        .expect("answers")
        .expect("a page");
    assert!(!decided.decided_now);
    assert_eq!(decided.record.view(after).status, Status::Failed);

    // No page: unknown tokens, other merchants, transactions without one.
    let plain = create(&*store, MERCHANT, "NO-PAGE").await;
    let plain_id = plain.id.to_string();
    for (key, scope, refusal) in [
        (
            PaymentPageKey::Token(&token(3)),
            None,
            PayerRefusal::NotFound,
        ),
        (PaymentPageKey::Token("short"), None, PayerRefusal::NotFound),
        (
            PaymentPageKey::Transaction(&id),
            Some(OTHER),
            PayerRefusal::NotFound,
        ),
        (
            PaymentPageKey::Transaction("nope"),
            None,
            PayerRefusal::NotFound,
        ),
        (
            PaymentPageKey::Transaction(&plain_id),
            None,
            PayerRefusal::NoPaymentPage,
        ),
    ] {
        let refused = store
            .decide(key, scope, PayerAction::Pay, now)
            .await
            .expect("answers");
        assert_eq!(refused.map(|d| d.decided_now), Err(refusal), "{key:?}");
    }
}

/// Pages run oldest or newest first from a cursor, filter by merchant,
/// reference and `keep`, and say whether more follow.
pub async fn pages_run_both_ways_with_filters<S: Store>(store: &S) {
    let mut ids = Vec::new();
    for i in 0..7 {
        let merchant = if i % 2 == 0 { MERCHANT } else { OTHER };
        ids.push(
            create(
                store,
                merchant,
                &format!("P-{i}-{}", if i < 4 { "low" } else { "high" }),
            )
            .await
            .id,
        );
    }
    let ids_of = |page: payments_mock_server::domain::port::Page<Uuid>| (page.items, page.more);
    let query = |order, from, limit| PageQuery {
        order,
        from,
        limit,
        merchant: None,
        reference_contains: None,
    };
    let first = store
        .page(&query(Order::OldestFirst, None, 3), |_| true, |r| r.id)
        .await
        .expect("answers")
        .expect("a page");
    assert_eq!(ids_of(first), (ids[..3].to_vec(), true));
    let last = store
        .page(
            &query(Order::OldestFirst, Some(ids[3]), 3),
            |_| true,
            |r| r.id,
        )
        .await
        .expect("answers")
        .expect("a page");
    assert_eq!(ids_of(last), (ids[4..].to_vec(), false));
    let newest = store
        .page(
            &query(Order::NewestFirst, Some(ids[5]), 10),
            |_| true,
            |r| r.id,
        )
        .await
        .expect("answers")
        .expect("a page");
    let mut older: Vec<Uuid> = ids[..5].to_vec();
    older.reverse();
    assert_eq!(ids_of(newest), (older, false));
    let filtered = PageQuery {
        merchant: Some(MERCHANT),
        reference_contains: Some("-high".to_owned()),
        ..query(Order::OldestFirst, None, 10)
    };
    let page = store
        .page(&filtered, |_| true, |r| r.id)
        .await
        .expect("answers")
        .expect("a page");
    assert_eq!(ids_of(page), (vec![ids[4], ids[6]], false));
    let kept = store
        .page(
            &query(Order::NewestFirst, None, 2),
            |r| r.fields.merchant_id == OTHER,
            |r| r.id,
        )
        .await
        .expect("answers")
        .expect("a page");
    assert_eq!(ids_of(kept), (vec![ids[5], ids[3]], true));
    let unknown = store
        .page(
            &query(Order::OldestFirst, Some(Uuid::now_v7()), 3),
            |_| true,
            |r| r.id,
        )
        .await
        .expect("answers");
    assert!(unknown.is_none());
}
