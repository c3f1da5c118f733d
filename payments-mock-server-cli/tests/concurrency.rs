//! Exactly-once under concurrency (CONTRACT sections 4 and 6): the store's
//! single write lock per check-and-change makes these hold by construction.

use std::collections::HashSet;
use std::sync::Arc;

use tokio::sync::Barrier;

use crate::common::{
    confirm, count, get, initiate, initiate_body, initiated, records, service, status,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_hundred_simultaneous_confirms_have_exactly_one_success() {
    let (_, router) = service();
    let id = initiated(&router, "RACE-C", "TOPUP").await;
    let barrier = Arc::new(Barrier::new(200));
    let tasks: Vec<_> = (0..200)
        .map(|_| {
            let (router, id, barrier) = (router.clone(), id.clone(), barrier.clone());
            tokio::spawn(async move {
                barrier.wait().await;
                let reply = confirm(&router, &id, "RACE-C", None).await;
                (reply.status.as_u16(), reply.code().to_owned())
            })
        })
        .collect();
    let mut ok = 0;
    for task in tasks {
        match task.await.expect("task") {
            (200, _) => ok += 1,
            (400, code) => assert_eq!(code, "TRANSACTION_ALREADY_CONFIRMED"),
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(ok, 1);
    assert_eq!(status(&router, &id).await.data()["status"], "SUCCESSFUL");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_hundred_simultaneous_initiates_of_one_reference_create_one() {
    let (state, router) = service();
    let barrier = Arc::new(Barrier::new(200));
    let tasks: Vec<_> = (0..200)
        .map(|_| {
            let (router, barrier) = (router.clone(), barrier.clone());
            tokio::spawn(async move {
                barrier.wait().await;
                let reply = initiate(&router, &initiate_body("RACE-I", "TOPUP")).await;
                (reply.status.as_u16(), reply.code().to_owned())
            })
        })
        .collect();
    let mut ok = 0;
    for task in tasks {
        match task.await.expect("task") {
            (200, _) => ok += 1,
            (400, code) => assert_eq!(code, "DUPLICATE_REFERENCE_NO"),
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(ok, 1);
    assert_eq!(count(&state).await, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn ten_thousand_initiates_from_sixteen_tasks_get_distinct_readable_ids() {
    let (state, router) = service();
    let tasks: Vec<_> = (0..16)
        .map(|t| {
            let router = router.clone();
            tokio::spawn(async move {
                let mut ids = Vec::new();
                for i in 0..625 {
                    let reference = format!("BULK-{t}-{i}");
                    let reply = initiate(&router, &initiate_body(&reference, "TOPUP")).await;
                    assert_eq!(reply.status, 200, "{}", reply.body);
                    let id = reply.data()["transactionId"]
                        .as_str()
                        .expect("id")
                        .to_owned();
                    ids.push((id, reference));
                }
                ids
            })
        })
        .collect();
    let mut all = Vec::new();
    for task in tasks {
        all.extend(task.await.expect("task"));
    }
    let distinct: HashSet<_> = all.iter().map(|(id, _)| id.clone()).collect();
    assert_eq!(distinct.len(), 10_000);
    assert_eq!(count(&state).await, 10_000);

    let chunks: Vec<Vec<(String, String)>> = all.chunks(625).map(<[_]>::to_vec).collect();
    let readers: Vec<_> = chunks
        .into_iter()
        .map(|chunk| {
            let router = router.clone();
            tokio::spawn(async move {
                for (id, reference) in chunk {
                    let by_id = status(&router, &id).await;
                    assert_eq!(by_id.data()["referenceNo"], reference.as_str());
                    let by_ref = get(
                        &router,
                        &format!("/api/payments/reference/{reference}/status"),
                    )
                    .await;
                    assert_eq!(by_ref.data()["transactionId"], id.as_str());
                }
            })
        })
        .collect();
    for reader in readers {
        reader.await.expect("reader");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn created_at_follows_creation_order_under_concurrent_initiates() {
    let (state, router) = service();
    let barrier = Arc::new(Barrier::new(16));
    let tasks: Vec<_> = (0..16)
        .map(|t| {
            let (router, barrier) = (router.clone(), barrier.clone());
            tokio::spawn(async move {
                barrier.wait().await;
                for i in 0..100 {
                    let reference = format!("ORDER-{t}-{i}");
                    let reply = initiate(&router, &initiate_body(&reference, "TOPUP")).await;
                    assert_eq!(reply.status, 200, "{}", reply.body);
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("task");
    }
    // Oldest first = the order of creation under the store's lock; ids (v7)
    // and createdAt must both follow it.
    let stored = records(&state).await;
    assert_eq!(stored.len(), 1600);
    for pair in stored.windows(2) {
        assert!(pair[0].id < pair[1].id);
        assert!(
            pair[0].created_at <= pair[1].created_at,
            "{} created at {} before {} created at {}",
            pair[0].id,
            pair[0].created_at,
            pair[1].id,
            pair[1].created_at
        );
    }
}
