//! What every store promises under concurrency: racing creates and
//! confirms, a reset racing creates, a confirm that read the clock before
//! another saw the expiry. Generic over the store, as `behaviour.rs`.

use std::sync::Arc;
use std::time::Duration;

use payments_mock_server::domain::port::{InsertRefusal, Store, Transition};
use payments_mock_server::{InitialState, Status};
use uuid::Uuid;

use crate::behaviour::{MERCHANT, MINUTE, create, new, success};

/// Of many concurrent creates of one reference exactly one creates; the
/// rest name it.
pub async fn racing_creates_of_one_reference_create_one<S: Store>(store: Arc<S>) {
    let tasks: Vec<_> = (0..24)
        .map(|_| {
            let store = store.clone();
            tokio::spawn(async move {
                store
                    .create(new(MERCHANT, "RACE"), InitialState::Initiated, MINUTE)
                    .await
                    .expect("answers")
            })
        })
        .collect();
    let mut created = Vec::new();
    let mut refused = Vec::new();
    for task in tasks {
        match task.await.expect("no panic") {
            Ok(record) => created.push(record.id),
            Err(InsertRefusal::Duplicate(id)) => refused.push(id),
            Err(other) => panic!("{other:?}"),
        }
    }
    assert_eq!(created.len(), 1, "{created:?}");
    assert!(refused.iter().all(|id| *id == created[0]));
    assert_eq!(store.count().await.expect("count"), 1);
}

/// Creates of a taken reference racing a reset: each creates or names the
/// holder, never "the store is full" (the holder read after the insert
/// found it was gone with the reset) and never a store failure.
pub async fn creates_racing_a_reset_create_or_name_the_holder<S: Store>(store: Arc<S>) {
    for round in 0..30 {
        create(&*store, MERCHANT, "RESET-RACE").await;
        let mut tasks: Vec<_> = (0..12)
            .map(|_| {
                let store = store.clone();
                tokio::spawn(async move {
                    store
                        .create(new(MERCHANT, "RESET-RACE"), InitialState::Initiated, MINUTE)
                        .await
                        .map(|result| result.map(|_| ()))
                })
            })
            .collect();
        let resetting = {
            let store = store.clone();
            tokio::spawn(async move { store.reset().await })
        };
        tasks.push(tokio::spawn(async move {
            resetting
                .await
                .expect("no panic")
                .map(|()| Err(InsertRefusal::Duplicate(Uuid::nil())))
        }));
        for task in tasks {
            match task.await.expect("no panic") {
                Ok(Ok(()) | Err(InsertRefusal::Duplicate(_))) => {}
                other => panic!("round {round}: {other:?}"),
            }
        }
        store.reset().await.expect("answers");
    }
}

/// Of many concurrent confirms exactly one moves the transaction; every
/// other sees it moved.
pub async fn racing_confirms_move_once<S: Store>(store: Arc<S>) {
    let record = create(&*store, MERCHANT, "C-RACE").await;
    let now = store.now().await.expect("now");
    let tasks: Vec<_> = (0..24)
        .map(|_| {
            let store = store.clone();
            tokio::spawn(async move {
                store
                    .confirm(record.id, now, success(now))
                    .await
                    .expect("answers")
            })
        })
        .collect();
    let mut moved = 0;
    for task in tasks {
        match task.await.expect("no panic") {
            Transition::Moved(r) => {
                moved += 1;
                assert_eq!(r.view(now).status, Status::Successful);
            }
            Transition::Unmoved(r) => assert!(r.confirmation.is_some()),
            Transition::Missing => panic!("the transaction vanished"),
        }
    }
    assert_eq!(moved, 1);
}

/// A confirm that read the clock before the expiry and reaches the store
/// after it (another confirm read the later clock meanwhile and was told
/// "expired") is refused: the store checks the expiry at its own now, no
/// earlier than the caller's.
pub async fn a_confirm_with_a_stale_now_is_refused_after_the_expiry<S: Store>(store: &S) {
    let record = create(store, MERCHANT, "C-STALE").await;
    let stale = store.now().await.expect("now");
    let until = (record.expires_at - stale).to_std().expect("ahead");
    store
        .advance_clock(until + Duration::from_millis(1))
        .await
        .expect("answers")
        .expect("room for it");
    match store
        .confirm(record.id, stale, success(stale))
        .await
        .expect("answers")
    {
        Transition::Unmoved(r) => assert!(r.confirmation.is_none(), "{r:?}"),
        other => panic!("confirmed after its expiry: {other:?}"),
    }
}

/// A payer's submit that read the clock before the window closed and
/// reaches the store after it (a status read meanwhile saw the window
/// closed: FAILED) decides nothing: the store judges the window at its
/// own now, no earlier than the caller's, as it does a confirm's expiry.
pub async fn a_submit_with_a_stale_now_decides_nothing_after_the_window<S: Store>(store: &S) {
    use payments_mock_server::domain::port::PaymentPageKey;
    use payments_mock_server::domain::transaction::PayerAction;
    let record = create(store, MERCHANT, "PAY-STALE").await;
    let now = store.now().await.expect("now");
    let page = crate::behaviour::token(7);
    store
        .confirm(
            record.id,
            now,
            crate::behaviour::page_confirmation(now, &page, MINUTE),
        )
        .await
        .expect("answers");
    let stale = store.now().await.expect("now");
    let deadline = now + MINUTE;
    let until = (deadline - stale).to_std().expect("ahead");
    store
        .advance_clock(until + Duration::from_millis(1))
        .await
        .expect("answers")
        .expect("room for it");
    let decided = store
        .decide(PaymentPageKey::Token(&page), None, PayerAction::Pay, stale)
        .await
        .expect("answers")
        .expect("a page");
    assert!(!decided.decided_now, "decided after the window closed");
    let stored = store
        .with_payment_page(PaymentPageKey::Token(&page), |_, p| p.clone())
        .await
        .expect("answers")
        .expect("a page");
    assert_eq!(stored.decision, None, "{stored:?}");
}

/// A payer's submit that read the clock just before the page's deadline
/// and reached the store just after it: nothing is decided, and the status
/// shown (the browser's return address carries it) is the one at the
/// store's now, FAILED, not the CONFIRMED of the stale instant (SQLite and
/// PostgreSQL sent the payer back with `status=CONFIRMED` for a payment
/// that failed).
pub async fn a_late_submit_shows_the_status_at_the_stores_now<S: Store>(store: &S) {
    use payments_mock_server::domain::lifecycle::decide_at;
    use payments_mock_server::domain::port::PaymentPageKey;
    use payments_mock_server::domain::transaction::PayerAction;
    let record = create(store, MERCHANT, "PAY-LATE").await;
    let now = store.now().await.expect("now");
    let page = crate::behaviour::token(8);
    store
        .confirm(
            record.id,
            now,
            crate::behaviour::page_confirmation(now, &page, MINUTE),
        )
        .await
        .expect("answers");
    let stale = store.now().await.expect("now");
    let until = (now + MINUTE - stale).to_std().expect("ahead");
    store
        .advance_clock(until + Duration::from_millis(1))
        .await
        .expect("answers")
        .expect("room for it");
    let (decided, shown_at) = decide_at(
        store,
        PaymentPageKey::Token(&page),
        None,
        PayerAction::Pay,
        stale,
    )
    .await
    .expect("answers")
    .expect("a page");
    assert!(!decided.decided_now, "decided after the window closed");
    assert_eq!(decided.record.view(shown_at).status, Status::Failed);
}
