//! PostgreSQL's side of a confirm racing the expiry: a confirm whose
//! UPDATE missed the row (its expiry had passed at that statement's now)
//! while another confirm held it, not yet committed, answers what the
//! other committed, never the row from before it.

use std::time::Duration;

use payments_mock_server::StoreSpec;
use payments_mock_server::domain::port::{Store as _, Transition};
use payments_mock_server::store::PostgresStore;

use crate::backends::{self, REPLICA};
use crate::behaviour::{MERCHANT, create, success};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_confirm_that_missed_the_row_reads_the_winners_confirmation() {
    let Some(url) = backends::postgres_database("a confirm racing an uncommitted winner").await
    else {
        return;
    };
    let spec: StoreSpec = url.parse().expect("a URL");
    let StoreSpec::Postgres(pg) = spec else {
        unreachable!("a postgres:// URL")
    };
    let store = PostgresStore::open(&pg, REPLICA).await.expect("opens");
    let record = create(&store, MERCHANT, "PG-RACE").await;
    // The winner: a confirm made before the expiry, its transaction open.
    let (winner, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .expect("connects");
    tokio::spawn(connection);
    winner
        .batch_execute(&format!(
            "BEGIN; UPDATE mock_transactions SET confirmed_at = {}, result = 'SUCCESSFUL' \
             WHERE id = '{}'",
            record.created_at.timestamp_millis(),
            record.id
        ))
        .await
        .expect("the winner holds the row");
    // The loser reaches the store after the expiry.
    let until = (record.expires_at - record.created_at)
        .to_std()
        .expect("ahead");
    store
        .advance_clock(until + Duration::from_millis(1))
        .await
        .expect("answers")
        .expect("room for it");
    let now = store.now().await.expect("now");
    let loser = tokio::spawn(async move { store.confirm(record.id, now, success(now)).await });
    // It waits for the winner (a bound, not a pause the test needs).
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        !loser.is_finished(),
        "the loser waits for the winner's commit"
    );
    winner.batch_execute("COMMIT").await.expect("committed");
    match loser.await.expect("joined").expect("answers") {
        Transition::Unmoved(r) => {
            assert!(r.confirmation.is_some(), "the winner's confirmation: {r:?}");
        }
        other => panic!("{other:?}"),
    }
}
