//! A write whose caller stopped waiting is never run: the SQLite file
//! locked by another connection past the caller's time, then released.

use super::*;
use crate::domain::transaction::ConfirmResult;
use crate::store::test_support::fields;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
}

/// A confirm that did not start within its time answers that nothing was
/// written, and it is never written: before, it waited in the writer's
/// channel and for the lock, and committed once the lock was released,
/// after its 503 (a SUCCESSFUL transaction its merchant was told was not
/// confirmed).
#[test]
fn a_confirm_answered_not_committed_is_never_committed() {
    let dir = tempfile::tempdir().expect("a directory");
    let path = dir.path().join("held.db");
    let store = SqliteStore::open(&path, Durability::Process, "test").expect("opens");
    runtime().block_on(async {
        let created = store
            .create(
                fields("HELD"),
                InitialState::Initiated,
                Duration::from_secs(900),
            )
            .await
            .expect("the store")
            .expect("created");
        let holder = Connection::open(&path).expect("a second connection");
        holder
            .execute_batch("BEGIN IMMEDIATE")
            .expect("the write lock");
        let now = store.now_hint();
        let confirmation = Confirmation {
            confirmed_at: now,
            result: ConfirmResult::Successful,
            provider_reference: Some("P1".to_owned()),
            extra_properties: None,
        };
        let answered = store
            .send_within(Duration::from_millis(200), |reply| Job::Confirm {
                id: created.id,
                now,
                confirmation: Box::new(confirmation),
                reply,
            })
            .await
            .expect_err("the file is locked past the caller's time");
        let said = answered.to_string();
        assert!(
            said.contains("did not commit") && said.contains("nothing was written"),
            "{said}"
        );
        holder.execute_batch("ROLLBACK").expect("released");
        // A write after it: the writer has dealt with the confirm (jobs
        // run in the order sent) once this one is answered.
        store
            .create(
                fields("AFTER"),
                InitialState::Initiated,
                Duration::from_secs(900),
            )
            .await
            .expect("the store")
            .expect("created");
        let confirmed = store
            .with_id(created.id, None, |r| r.confirmation.is_some())
            .await
            .expect("read")
            .expect("found");
        assert!(
            !confirmed,
            "the confirm answered 503 was committed after it"
        );
    });
}
