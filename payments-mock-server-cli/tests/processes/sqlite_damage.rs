//! A SQLite store the mock cannot keep changes in (CONTRACT section 15),
//! by running the binary: a read-only file stops the start with exit 1
//! and one line; a file removed while serving refuses every change with
//! 503 (restart the mock), health says so, the log says it once.

use std::os::unix::fs::PermissionsExt as _;
use std::process::Command;

use crate::mock::{BIN, Mock, bytes, get, http, initiate_body, post, run_as};

/// Whether this test runs as root (who ignores a file's mode bits).
fn root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// Runs the binary on `spec` as a user the file's mode bits bind (as
/// root: `nobody`, through `setpriv`), to its refusal: exit code, stderr.
fn run_unprivileged(spec: &str) -> Option<(Option<i32>, String)> {
    let command = if root() {
        let found = Command::new("setpriv").arg("--version").output().is_ok();
        if !found {
            if std::env::var("CI").is_ok_and(|v| v == "true") {
                panic!("CI=true, running as root and no setpriv to drop to nobody");
            }
            eprintln!("SKIPPED a_read_only_sqlite_file: root ignores mode bits, and no setpriv");
            return None;
        }
        let mut command = Command::new("setpriv");
        command.args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--",
            BIN,
        ]);
        command
    } else {
        Command::new(BIN)
    };
    Some(run_as(command, &["--store", spec], &[]))
}

#[test]
fn a_read_only_sqlite_file_stops_the_start_with_one_line() {
    let dir = tempfile::tempdir().expect("a directory");
    // Open to the unprivileged user (the lock file is made beside it).
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).expect("chmod");
    let path = dir.path().join("m.db");
    let spec = format!("sqlite:{}", path.display());
    let (code, stderr) = Mock::start(&["--store", &spec]).stop();
    assert_eq!(code, Some(0), "{stderr}");
    // Control: the file writable (to that user too), it starts.
    for file in [path.clone(), dir.path().join("m.db.lock")] {
        std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o666)).expect("chmod");
    }
    let Some((code, stderr)) = run_unprivileged(&spec) else {
        return;
    };
    assert_ne!(code, Some(1), "a writable file starts: {stderr}");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).expect("chmod");
    let before = bytes(&path);
    let Some((code, stderr)) = run_unprivileged(&spec) else {
        return;
    };
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");
    assert!(stderr.contains(&spec), "names the store: {stderr}");
    assert!(stderr.contains("cannot be written"), "{stderr}");
    assert_eq!(bytes(&path), before, "unchanged");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sqlite_file_removed_while_serving_refuses_changes_and_says_so_once() {
    let dir = tempfile::tempdir().expect("a directory");
    let path = dir.path().join("m.db");
    let mock = Mock::start(&["--store", &format!("sqlite:{}", path.display())]);
    let http = http();
    let initiate = |reference: &str| {
        let (http, url, body) = (
            http.clone(),
            mock.url("/api/payments/initiate"),
            initiate_body(reference, "ONLINEBANKING", 100),
        );
        async move { post(&http, &url, &body).await.expect("answers") }
    };
    assert_eq!(initiate("BEFORE").await.status, 200, "control");
    let health = get(&http, &mock.url("/_mock/health"))
        .await
        .expect("answers");
    assert_eq!(health.status, 200, "control: {}", health.text);
    for suffix in ["", "-wal", "-shm"] {
        std::fs::remove_file(format!("{}{suffix}", path.display())).expect("removed");
    }
    for n in 0..5 {
        let reply = initiate(&format!("AFTER-{n}")).await;
        assert_eq!(reply.status, 503, "{}", reply.text);
        assert_eq!(reply.code(), "STORE_UNAVAILABLE");
        let message = reply.body["message"].as_str().unwrap_or_default();
        assert!(message.contains("was removed"), "{message}");
        assert!(message.contains("restart the mock"), "{message}");
        assert!(
            !message.contains("retry later"),
            "no retry mends it: {message}"
        );
    }
    let health = get(&http, &mock.url("/_mock/health"))
        .await
        .expect("answers");
    assert_eq!(health.status, 503, "{}", health.text);
    assert_eq!(health.code(), "STORE_UNAVAILABLE");
    // The log is written behind: wait for the health request's line.
    assert!(
        mock.logged(
            "path=/_mock/health status=503",
            std::time::Duration::from_secs(5)
        ),
        "{}",
        mock.log()
    );
    let said = mock
        .log()
        .matches("changes are refused until the mock is restarted")
        .count();
    assert_eq!(said, 1, "one warning, not one per request: {}", mock.log());
}

/// The write-ahead log alone removed while serving, then `kill -9`: the
/// change answered 200 before the removal is still there after a restart
/// (it lived in the removed log alone; the store now copies the log,
/// still open, into its file once it finds it removed: at the next change,
/// refused, or the next health check), and the change refused is not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_log_removed_while_serving_loses_nothing_answered_to_a_kill_9() {
    let http = http();
    for noticed_by in ["a change", "health"] {
        let dir = tempfile::tempdir().expect("a directory");
        let path = dir.path().join("m.db");
        let store = format!("sqlite:{}", path.display());
        let mock = Mock::start(&["--store", &store]);
        let initiate = |reference: &str| {
            let (http, url, body) = (
                http.clone(),
                mock.url("/api/payments/initiate"),
                initiate_body(reference, "TOPUP", 100),
            );
            async move { post(&http, &url, &body).await.expect("answers") }
        };
        assert_eq!(initiate("BEFORE").await.status, 200);
        std::fs::remove_file(format!("{}-wal", path.display())).expect("removed");
        let refused = match noticed_by {
            "health" => get(&http, &mock.url("/_mock/health"))
                .await
                .expect("answers"),
            _ => initiate("AFTER").await,
        };
        assert_eq!(refused.status, 503, "{noticed_by}: {}", refused.text);
        mock.kill9();
        let mock = Mock::start(&["--store", &store]);
        let listed = get(&http, &mock.url("/_mock/transactions"))
            .await
            .expect("answers");
        assert_eq!(listed.status, 200, "{}", listed.text);
        let references: Vec<&str> = listed.data()["items"]
            .as_array()
            .expect("items")
            .iter()
            .filter_map(|t| t["referenceNo"].as_str())
            .collect();
        assert_eq!(references, ["BEFORE"], "noticed by {noticed_by}");
    }
}

/// A row changed outside the mock (a 1-byte id): listing it is 500
/// `INTERNAL_ERROR` saying the store holds a row it cannot read, not the
/// outage's 503 "retry later" (a retry never mends it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_row_the_store_cannot_read_is_500_not_an_outage() {
    let dir = tempfile::tempdir().expect("a directory");
    let path = dir.path().join("m.db");
    let store = format!("sqlite:{}", path.display());
    let http = http();
    let mock = Mock::start(&["--store", &store]);
    let body = initiate_body("GOOD", "ONLINEBANKING", 100);
    let made = post(&http, &mock.url("/api/payments/initiate"), &body)
        .await
        .expect("answers");
    assert_eq!(made.status, 200, "{}", made.text);
    let listed = get(&http, &mock.url("/_mock/transactions"))
        .await
        .expect("answers");
    assert_eq!(listed.status, 200, "control: {}", listed.text);
    let (code, log) = mock.stop();
    assert_eq!(code, Some(0), "{log}");
    rusqlite::Connection::open(&path)
        .expect("opens")
        .execute("UPDATE mock_transactions SET id = x'01'", [])
        .expect("damaged");
    let mock = Mock::start(&["--store", &store]);
    let listed = get(&http, &mock.url("/_mock/transactions"))
        .await
        .expect("answers");
    assert_eq!(listed.status, 500, "{}", listed.text);
    assert_eq!(listed.code(), "INTERNAL_ERROR");
    let message = listed.body["message"].as_str().unwrap_or_default();
    assert!(message.contains("cannot read"), "{message}");
    assert!(!message.contains("retry"), "{message}");
}
