//! Seeding (`--seed-from`, `Store::seed`), the same promise for every
//! store: a whole record placed as given (its id, times, confirmation and
//! payment page) is read back exactly, found by reference, confirmable if
//! it was open, and a taken id or reference is refused, changing nothing.

use payments_mock_server::domain::port::{InsertRefusal, Store, Transition};
use payments_mock_server::domain::transaction::{ConfirmResult, Confirmation, Record};
use payments_mock_server::store::MemoryStore;
use payments_mock_server::{InitialState, Status};
use uuid::Uuid;

use crate::behaviour::{MERCHANT, MINUTE, OTHER, new, page_confirmation, token};

/// Records as another mock made them: an open one, a paid one, one
/// waiting for its payer on a payment page.
async fn elsewhere() -> (Record, Record, Record) {
    let other = MemoryStore::new("elsewhere");
    let made = |reference: &'static str| {
        let other = &other;
        async move {
            other
                .create(new(MERCHANT, reference), InitialState::Initiated, MINUTE)
                .await
                .expect("answers")
                .expect("new")
        }
    };
    let open = made("SEED-OPEN").await;
    let paid = made("SEED-PAID").await;
    let paying = made("SEED-PAYING").await;
    let at = paid.created_at;
    let confirmed = |record: &Record, confirmation: Confirmation| {
        let mut record = record.clone();
        record.confirmation = Some(Box::new(confirmation));
        record
    };
    let paid = confirmed(
        &paid,
        Confirmation {
            confirmed_at: at,
            result: ConfirmResult::Successful,
            provider_reference: Some("PRV-SEEN".to_owned()),
            extra_properties: Some("{\"pins\":[\"9\"]}".to_owned()),
        },
    );
    let paying = confirmed(&paying, page_confirmation(at, &token(7), MINUTE));
    (open, paid, paying)
}

pub async fn seed_places_whole_records_and_refuses_taken_ones<S: Store>(store: &S) {
    let (open, paid, paying) = elsewhere().await;
    for record in [&open, &paid, &paying] {
        assert_eq!(
            store.seed(record.clone()).await.expect("answers"),
            Ok(()),
            "{}",
            record.fields.reference_no
        );
        let read = store
            .with_id(record.id, None, Record::clone)
            .await
            .expect("answers");
        assert_eq!(read.as_ref(), Some(record), "every field as seeded");
        let by_reference = store
            .with_reference(&record.fields.reference_no, Some(MERCHANT), |r| r.id)
            .await
            .expect("answers");
        assert_eq!(by_reference, Ok(record.id));
    }
    assert_eq!(
        paid.view(paid.created_at).status,
        Status::Successful,
        "the paid one stays paid"
    );
    assert_eq!(store.count().await.expect("count"), 3);

    // Taken: the same id, or the merchant's reference under a new id.
    assert!(matches!(
        store.seed(open.clone()).await.expect("answers"),
        Err(InsertRefusal::Duplicate(_))
    ));
    let mut same_reference = paid.clone();
    same_reference.id = Uuid::now_v7();
    assert!(matches!(
        store.seed(same_reference.clone()).await.expect("answers"),
        Err(InsertRefusal::Duplicate(_))
    ));
    assert_eq!(
        store
            .with_id(same_reference.id, None, Record::clone)
            .await
            .expect("answers"),
        None,
        "a refused seed changes nothing"
    );
    // Another merchant's same reference is its own.
    let mut theirs = same_reference;
    theirs.fields.merchant_id = OTHER;
    assert_eq!(store.seed(theirs).await.expect("answers"), Ok(()));
    assert_eq!(store.count().await.expect("count"), 4);

    // A seeded reference is taken for creates too, and the open one is
    // confirmable as if made here.
    let again = store
        .create(new(MERCHANT, "SEED-OPEN"), InitialState::Initiated, MINUTE)
        .await
        .expect("answers");
    assert_eq!(again, Err(InsertRefusal::Duplicate(open.id)));
    let when = open.created_at;
    let moved = store
        .confirm(
            open.id,
            when,
            Confirmation {
                confirmed_at: when,
                result: ConfirmResult::Successful,
                provider_reference: Some("PRV-HERE".to_owned()),
                extra_properties: None,
            },
        )
        .await
        .expect("answers");
    assert!(matches!(moved, Transition::Moved(_)), "{moved:?}");
}
