//! Racing advances of the clock that only one fits: the check against the
//! clock's end and the add are one step of each store, so exactly one
//! moves it and the others are refused with the offset they met, moving
//! nothing (they all answered "clock advanced" when the check and the
//! add were two steps, the clock stuck at its end). On PostgreSQL the
//! racers are spread over two replicas of one database.

use std::sync::Arc;
use std::time::Duration;

use payments_mock_server::StoreSpec;
use payments_mock_server::domain::clock::NoRoom;
use payments_mock_server::domain::port::Store;
use payments_mock_server::store::PostgresStore;
use tokio::sync::Barrier;

use crate::backends::{self, REPLICA};

/// Three billion seconds: two fit in the clock, a third too, a fourth not.
const BY: Duration = Duration::from_secs(3_000_000_000);
const RACERS: usize = 8;
const ROUNDS: usize = 10;

fn nanos(by: Duration) -> i64 {
    i64::try_from(by.as_nanos()).expect("fits")
}

/// `ROUNDS` times: reset, two advances that fit, then `RACERS` at once
/// (over the stores given in turn) of which only one fits.
async fn only_one_of_the_racers_moves_the_clock<S: Store>(stores: &[Arc<S>]) {
    let first = &stores[0];
    for round in 0..ROUNDS {
        first.reset().await.expect("resets");
        for _ in 0..2 {
            first
                .advance_clock(BY)
                .await
                .expect("answers")
                .expect("room for two");
        }
        let barrier = Arc::new(Barrier::new(RACERS));
        let racers: Vec<_> = (0..RACERS)
            .map(|i| {
                let (store, barrier) = (Arc::clone(&stores[i % stores.len()]), barrier.clone());
                tokio::spawn(async move {
                    barrier.wait().await;
                    store.advance_clock(BY).await.expect("answers")
                })
            })
            .collect();
        let mut moved = 0;
        for racer in racers {
            match racer.await.expect("joined") {
                Ok(reading) => {
                    moved += 1;
                    assert_eq!(reading.offset_nanos, nanos(BY * 3));
                }
                Err(NoRoom { offset_nanos }) => assert_eq!(offset_nanos, nanos(BY * 3)),
            }
        }
        assert_eq!(moved, 1, "round {round}: exactly one racer moves the clock");
        for store in stores {
            assert_eq!(
                store.clock().await.expect("answers").offset_nanos,
                nanos(BY * 3),
                "round {round}: the refused moved nothing"
            );
        }
    }
    // Refused, with the clock one nanosecond short of its end, and past
    // what any offset holds; exactly the room left is accepted.
    first.reset().await.expect("resets");
    let room = Duration::from_nanos(u64::try_from(i64::MAX).expect("positive"));
    let refused = first.advance_clock(room + Duration::from_nanos(1)).await;
    assert_eq!(refused.expect("answers"), Err(NoRoom { offset_nanos: 0 }));
    let refused = first.advance_clock(Duration::from_secs(u64::MAX)).await;
    assert_eq!(refused.expect("answers"), Err(NoRoom { offset_nanos: 0 }));
    let full = first
        .advance_clock(room)
        .await
        .expect("answers")
        .expect("fits");
    assert_eq!(full.offset_nanos, i64::MAX);
    let refused = first.advance_clock(Duration::from_nanos(1)).await;
    assert_eq!(
        refused.expect("answers"),
        Err(NoRoom {
            offset_nanos: i64::MAX
        })
    );
    first
        .advance_clock(Duration::ZERO)
        .await
        .expect("answers")
        .expect("nothing fits");
    first.reset().await.expect("resets");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn memory_racing_advances_that_only_one_fits_move_the_clock_once() {
    let made = backends::memory().await.expect("a memory store");
    only_one_of_the_racers_moves_the_clock(std::slice::from_ref(&made.store)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_racing_advances_that_only_one_fits_move_the_clock_once() {
    let made = backends::sqlite().await.expect("a SQLite store");
    only_one_of_the_racers_moves_the_clock(std::slice::from_ref(&made.store)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_racing_advances_on_two_replicas_move_the_shared_clock_once() {
    let Some(url) = backends::postgres_database("racing advances on two replicas").await else {
        return;
    };
    let spec: StoreSpec = url.parse().expect("a URL");
    let StoreSpec::Postgres(pg) = spec else {
        unreachable!("a postgres:// URL")
    };
    let a = PostgresStore::open(&pg, REPLICA).await.expect("opens");
    let b = PostgresStore::open(&pg, "other").await.expect("opens");
    only_one_of_the_racers_moves_the_clock(&[Arc::new(a), Arc::new(b)]).await;
}
