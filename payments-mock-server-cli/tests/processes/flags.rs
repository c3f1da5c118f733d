//! `--store`, `PAYMENTS_MOCK_STORE`, `--durability`, `--fresh`,
//! `--replica-name` and the settings a store keeps, by running the binary
//! (CONTRACT section 15, "Bad stores and outages"): exit codes and
//! messages as written, a refused file's bytes unchanged, no password
//! printed.

use serde_json::json;

use crate::backends;
use crate::mock::{Mock, bytes, get, http, initiate_body, post, run};

fn sqlite(dir: &tempfile::TempDir, name: &str) -> (std::path::PathBuf, String) {
    let path = dir.path().join(name);
    let spec = format!("sqlite:{}", path.display());
    (path, spec)
}

#[test]
fn an_unknown_scheme_or_an_empty_path_is_a_usage_error() {
    for (value, says) in [
        (
            "mysql://root:hunter2@db/mock",
            "unknown store scheme \"mysql\"",
        ),
        ("sqlite:", "sqlite: needs a file"),
        ("", "an empty store"),
        ("memory:", "unknown store"),
    ] {
        let (code, stderr) = run(&["--store", value], &[]);
        assert_eq!(code, Some(2), "{value}: {stderr}");
        assert!(stderr.contains(says), "{value}: {stderr}");
        assert!(!stderr.contains("hunter2"), "{stderr}");
    }
    let (code, stderr) = run(&[], &[("PAYMENTS_MOCK_STORE", "redis://u:hunter2@h")]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("unknown store scheme \"redis\""),
        "{stderr}"
    );
    assert!(!stderr.contains("hunter2"), "{stderr}");
    let (code, stderr) = run(&["--durability", "power"], &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("--durability applies to a sqlite: store only"),
        "{stderr}"
    );
    let (code, stderr) = run(&["--replica-name", "a\u{7}b"], &[]);
    assert_eq!(code, Some(2), "{stderr}");
}

/// An address that cannot be listened on is a usage error naming the
/// flags (it exited 1, like a failure of the mock); `[::1]`, as the banner
/// writes an IPv6 address, is `::1`.
#[test]
fn a_host_that_cannot_be_listened_on_exits_2_naming_the_flag() {
    let (code, stderr) = run(&["--host", "bogus..host.invalid"], &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("(--host, --port)"), "{stderr}");
    if std::net::TcpListener::bind("[::1]:0").is_ok() {
        let mock = Mock::start(&["--host", "[::1]"]);
        assert!(
            mock.url("/").starts_with("http://[::1]:"),
            "{}",
            mock.url("/")
        );
        mock.stop();
    } else {
        eprintln!("SKIPPED: [::1] (no IPv6 loopback on this machine)");
    }
}

#[test]
fn help_never_shows_the_store_from_the_environment() {
    let output = std::process::Command::new(crate::mock::BIN)
        .arg("--help")
        .env(
            "PAYMENTS_MOCK_STORE",
            "postgres://mock:hunter2@127.0.0.1:1/db",
        )
        .output()
        .expect("runs");
    let help = String::from_utf8_lossy(&output.stdout);
    assert!(help.contains("--store"), "{help}");
    assert!(help.contains("PAYMENTS_MOCK_STORE"), "{help}");
    assert!(!help.contains("hunter2"), "{help}");
}

#[test]
fn files_that_are_no_store_are_refused_and_left_as_they_were() {
    let dir = tempfile::tempdir().expect("a directory");
    let (text, text_spec) = sqlite(&dir, "notes.txt");
    std::fs::write(&text, "just some notes\n".repeat(100)).expect("written");
    let before = bytes(&text);
    let (code, stderr) = run(&["--store", &text_spec], &[]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("cannot open store {text_spec}")),
        "{stderr}"
    );
    assert!(stderr.contains("not a SQLite database"), "{stderr}");
    assert_eq!(bytes(&text), before);

    let (code, stderr) = run(
        &["--store", &format!("sqlite:{}", dir.path().display())],
        &[],
    );
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("directory"), "{stderr}");

    let (code, stderr) = run(
        &[
            "--store",
            &format!("sqlite:{}/missing/dir/m.db", dir.path().display()),
        ],
        &[],
    );
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("cannot"), "{stderr}");
}

#[tokio::test]
async fn a_truncated_database_is_refused_unchanged() {
    let dir = tempfile::tempdir().expect("a directory");
    let (path, spec) = sqlite(&dir, "m.db");
    let mock = Mock::start(&["--store", &spec]);
    let http = http();
    for n in 0..200 {
        let reply = post(
            &http,
            &mock.url("/api/payments/initiate"),
            &initiate_body(&format!("T-{n}"), "TOPUP", 100),
        )
        .await
        .expect("answers");
        assert_eq!(reply.status, 200);
    }
    let (code, _) = mock.stop();
    assert_eq!(code, Some(0));
    let whole = bytes(&path);
    std::fs::write(&path, &whole[..whole.len() / 2]).expect("cut");
    let before = bytes(&path);
    let (code, stderr) = run(&["--store", &spec], &[]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("damaged"), "{stderr}");
    assert_eq!(bytes(&path), before, "unchanged");
}

#[test]
fn a_file_another_process_holds_is_refused_naming_it() {
    let dir = tempfile::tempdir().expect("a directory");
    let (path, spec) = sqlite(&dir, "m.db");
    let first = Mock::start(&["--store", &spec]);
    let before = bytes(&path);
    let (code, stderr) = run(&["--store", &spec], &[]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("held by another process (pid "), "{stderr}");
    assert_eq!(bytes(&path), before);
    let (code, _) = first.stop();
    assert_eq!(code, Some(0));
    // Free once the owner has stopped.
    Mock::start(&["--store", &spec]).stop();
}

#[test]
fn a_newer_schema_is_refused_unchanged() {
    let dir = tempfile::tempdir().expect("a directory");
    let (path, spec) = sqlite(&dir, "m.db");
    Mock::start(&["--store", &spec]).stop();
    rusqlite::Connection::open(&path)
        .and_then(|c| {
            c.execute(
                "INSERT INTO mock_schema_history (version, name, applied_on, checksum) VALUES (7, 'v7', '2031-01-01T00:00:00Z', '1')",
                [],
            )
        })
        .expect("a newer version recorded");
    let before = bytes(&path);
    let (code, stderr) = run(&["--store", &spec], &[]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("has schema version 7, newer than this mock's 5"),
        "{stderr}"
    );
    assert_eq!(bytes(&path), before);
}

#[test]
fn unreachable_databases_and_wrong_credentials_exit_one_without_the_password() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a port")
        .port();
    let url = format!("postgres://mock:hunter2@127.0.0.1:{port}/mock");
    let (code, stderr) = run(&["--store", &url], &[]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "cannot open store postgres://mock:***@127.0.0.1:{port}/mock"
        )),
        "{stderr}"
    );
    assert!(!stderr.contains("hunter2"), "{stderr}");
    let (code, stderr) = run(&[], &[("PAYMENTS_MOCK_STORE", &url)]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(!stderr.contains("hunter2"), "{stderr}");

    let Some(server) = backends::postgres_server("wrong credentials") else {
        return;
    };
    let mut wrong = url::Url::parse(&server).expect("a URL");
    wrong.set_password(Some("hunter2-wrong")).expect("set");
    let (code, stderr) = run(&["--store", wrong.as_str()], &[]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("password authentication failed"),
        "{stderr}"
    );
    assert!(!stderr.contains("hunter2-wrong"), "{stderr}");
}

#[tokio::test]
async fn state_survives_a_restart_and_settings_are_the_stores() {
    let dir = tempfile::tempdir().expect("a directory");
    let (_, spec) = sqlite(&dir, "m.db");
    let http = http();
    let first = Mock::start(&[
        "--store",
        &spec,
        "--expiry",
        "2m",
        "--replica-name",
        "first",
    ]);
    let created = post(
        &http,
        &first.url("/api/payments/initiate"),
        &initiate_body("KEEP", "TOPUP", 1050),
    )
    .await
    .expect("answers");
    let id = created.data()["transactionId"]
        .as_str()
        .expect("an id")
        .to_owned();
    let advanced = post(
        &http,
        &first.url("/_mock/clock/advance"),
        &json!({ "seconds": 30 }),
    )
    .await
    .expect("answers");
    assert_eq!(advanced.status, 200);
    assert_eq!(first.stop().0, Some(0));

    // No --expiry: the store's 2 minutes; the clock, the transaction and
    // the journal are as they were.
    let second = Mock::start(&["--store", &spec]);
    let health = get(&http, &second.url("/_mock/health"))
        .await
        .expect("answers");
    assert_eq!(health.data()["store"], spec.as_str());
    assert_eq!(health.data()["transactions"], 1);
    let clock = get(&http, &second.url("/_mock/clock"))
        .await
        .expect("answers");
    assert_eq!(clock.data()["offsetSeconds"], 30);
    let status = get(&http, &second.url(&format!("/api/payments/{id}/status")))
        .await
        .expect("answers");
    assert_eq!(status.data()["createdAt"], created.data()["createdAt"]);
    let journal = get(&http, &second.url("/_mock/requests"))
        .await
        .expect("answers");
    let replicas: Vec<&str> = journal.data()["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|e| e["replica"].as_str())
        .collect();
    assert!(replicas.contains(&"first"), "{replicas:?}");
    post(
        &http,
        &second.url("/_mock/clock/advance"),
        &json!({ "seconds": 91 }),
    )
    .await
    .expect("answers");
    let expired = get(&http, &second.url(&format!("/api/payments/{id}/status")))
        .await
        .expect("answers");
    assert_eq!(expired.data()["status"], "EXPIRED", "the store's 2m expiry");
    assert_eq!(second.stop().0, Some(0));

    // Other settings are refused, naming the difference; --fresh replaces.
    let (code, stderr) = run(&["--store", &spec, "--expiry", "5m"], &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("expiry: 2m in the store, 5m given"),
        "{stderr}"
    );
    let catalog = dir.path().join("catalog.toml");
    std::fs::write(
        &catalog,
        payments_mock_server::Catalog::default()
            .to_toml()
            .replace("settle_after = \"2s\"", "settle_after = \"9s\""),
    )
    .expect("written");
    let (code, stderr) = run(
        &[
            "--store",
            &spec,
            "--catalog",
            &catalog.display().to_string(),
        ],
        &[],
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("BILLPAY settle_after: \"2s\" in the store, \"9s\" given"),
        "{stderr}"
    );
    let fresh = Mock::start(&["--store", &spec, "--fresh", "--expiry", "5m"]);
    let health = get(&http, &fresh.url("/_mock/health"))
        .await
        .expect("answers");
    assert_eq!(health.data()["transactions"], 0);
    let catalog_page = get(&http, &fresh.url("/_mock/ui/catalog"))
        .await
        .expect("answers");
    assert!(catalog_page.text.contains("5m"), "the new expiry is served");
}

#[test]
fn power_durability_serves() {
    let dir = tempfile::tempdir().expect("a directory");
    let (_, spec) = sqlite(&dir, "m.db");
    let mock = Mock::start(&["--store", &spec, "--durability", "power"]);
    assert_eq!(mock.stop().0, Some(0));
}
