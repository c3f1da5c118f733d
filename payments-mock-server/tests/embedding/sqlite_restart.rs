use std::time::Duration;

use payments_mock_server::{MockServer, StoreSpec};

fn spec(dir: &tempfile::TempDir) -> StoreSpec {
    StoreSpec::Sqlite(dir.path().join("mock.db"))
}

/// A start on the file of a server just dropped waits for its store to
/// close, then opens it: what it held is there.
#[tokio::test(flavor = "current_thread")]
async fn a_restart_after_a_drop_opens_the_same_file_current_thread() {
    let dir = tempfile::tempdir().expect("a directory");
    let server = MockServer::builder()
        .store(spec(&dir))
        .start()
        .await
        .expect("started");
    assert_eq!(crate::initiate(&server.base_url(), "R0").await, 200);
    drop(server);
    let again = MockServer::builder()
        .store(spec(&dir))
        .start()
        .await
        .expect("the file of a dropped server is taken");
    assert_eq!(again.transactions().await.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_after_a_drop_opens_the_same_file_multi_thread() {
    let dir = tempfile::tempdir().expect("a directory");
    for round in 0..20 {
        let server = MockServer::builder()
            .store(spec(&dir))
            .start()
            .await
            .unwrap_or_else(|e| panic!("round {round}: {e}"));
        assert_eq!(
            crate::initiate(&server.base_url(), &format!("R{round}")).await,
            200
        );
        assert_eq!(server.transactions().await.len(), round + 1);
        drop(server);
    }
}

/// A server of this process still open on the file: the refusal says so,
/// and what to do, never "another process".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_this_process_still_holds_is_said_to_be_held_here() {
    let dir = tempfile::tempdir().expect("a directory");
    let first = MockServer::builder()
        .store(spec(&dir))
        .start()
        .await
        .expect("started");
    let waited = std::time::Instant::now();
    let refused = MockServer::builder()
        .store(spec(&dir))
        .start()
        .await
        .expect_err("refused while the first runs");
    assert!(waited.elapsed() < Duration::from_secs(30), "a bounded wait");
    let text = refused.to_string();
    assert!(
        text.contains("held by this process")
            && text.contains("shutdown()")
            && !text.contains("another process"),
        "{text}"
    );
    first.shutdown().await;
    let _second = MockServer::builder()
        .store(spec(&dir))
        .start()
        .await
        .expect("taken after the shutdown");
}

/// A hard link to the file of a server of this process is the same file:
/// a start on it while that server runs is told it is held here (not by
/// "another process", this one's pid), and one right after the drop waits
/// for the store to close, then opens it.
#[cfg(unix)]
#[tokio::test(flavor = "current_thread")]
async fn a_hard_link_to_a_file_held_here_is_the_same_file() {
    let dir = tempfile::tempdir().expect("a directory");
    let hard = StoreSpec::Sqlite(dir.path().join("hard.db"));
    let first = MockServer::builder()
        .store(spec(&dir))
        .start()
        .await
        .expect("started");
    assert_eq!(crate::initiate(&first.base_url(), "H0").await, 200);
    std::fs::hard_link(dir.path().join("mock.db"), dir.path().join("hard.db")).expect("a link");
    let refused = MockServer::builder()
        .store(hard.clone())
        .start()
        .await
        .expect_err("refused while the first runs");
    let text = refused.to_string();
    assert!(
        text.contains("held by this process") && !text.contains("another process"),
        "{text}"
    );
    drop(first);
    let again = MockServer::builder()
        .store(hard)
        .start()
        .await
        .expect("the file of a dropped server is taken through its hard link");
    assert_eq!(again.transactions().await.len(), 1);
}

/// A symbolic link to a file that does not exist is refused, saying so;
/// nothing is created (neither the file it names nor a lock file).
#[cfg(unix)]
#[tokio::test]
async fn a_dangling_symlink_is_refused_saying_so() {
    let dir = tempfile::tempdir().expect("a directory");
    let link = dir.path().join("dangling.db");
    std::os::unix::fs::symlink("missing.db", &link).expect("a link");
    let refused = MockServer::builder()
        .store(StoreSpec::Sqlite(link.clone()))
        .start()
        .await
        .expect_err("refused");
    let text = refused.to_string();
    assert!(
        text.contains("symbolic link")
            && text.contains("missing.db")
            && text.contains("does not exist"),
        "{text}"
    );
    let mut left: Vec<_> = std::fs::read_dir(dir.path())
        .expect("the directory")
        .map(|entry| entry.expect("an entry").file_name())
        .collect();
    left.sort();
    assert_eq!(left, ["dangling.db"], "nothing created");
}

/// A test on a paused clock (`start_paused`) starts a server on a SQLite
/// file, and a start right after a drop waits for the dropped server's
/// store to close, in real time: the paused clock no longer jumps past
/// the start's limits while SQLite's writer thread works. The server then
/// serves reads (a request that writes may still be cut short on a paused
/// clock: documented).
#[tokio::test(start_paused = true)]
async fn a_paused_clock_starts_on_sqlite_and_serves() {
    let dir = tempfile::tempdir().expect("a directory");
    for round in 0..10 {
        let server = MockServer::builder()
            .store(spec(&dir))
            .start()
            .await
            .unwrap_or_else(|e| panic!("round {round}: {e}"));
        let status = reqwest::Client::new()
            .get(format!(
                "{}/api/payments/reference/P{round}/status",
                server.base_url()
            ))
            .send()
            .await
            .expect("answered")
            .status();
        assert_eq!(status, 404, "round {round}");
        assert!(server.transactions().await.is_empty(), "round {round}");
        drop(server);
    }
}
