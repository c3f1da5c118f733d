//! The admin side behind `--admin-key` through the real binary (CONTRACT
//! section 18, issue 33): the role matrix over HTTP, huge keys and cookies
//! against hyper's header limit, bad `--admin-key` values, the key from
//! the environment, the warning on a network address, a session signed in
//! and forged over HTTP, and no secret in anything the process writes or
//! answers.

use std::process::{Child, Command, Stdio};

use crate::admin_access::{ADMIN_KEY, Answer, Target, run_matrix, sign_in};
use crate::common::{MERCHANT, spawn_with_banner, terminate_expecting_success};
use crate::security::{KEY_A, KEY_B, KEY_OPEN};

const BIN: &str = env!("CARGO_BIN_EXE_payments-mock-server");

/// The flags of a guarded server: the admin key, a merchant's key, another
/// merchant's, and one bound to none.
fn guarded_args() -> Vec<String> {
    vec![
        "--port".into(),
        "0".into(),
        "--admin-key".into(),
        ADMIN_KEY.into(),
        "--api-key".into(),
        format!("{KEY_A}={MERCHANT}"),
        "--api-key".into(),
        format!("{KEY_B}={}", crate::common::OTHER_MERCHANT),
        "--api-key".into(),
        KEY_OPEN.into(),
    ]
}

fn start(args: &[String], extra: &[&str]) -> (Child, Target) {
    let (child, base) = spawn_with_banner(
        Command::new(BIN)
            .args(args)
            .args(extra)
            .env_remove("PAYMENTS_MOCK_ADMIN_KEY")
            .env("RUST_LOG", "trace")
            .stderr(Stdio::piped()),
    );
    (child, Target::http(base))
}

#[tokio::test]
async fn the_role_matrix_holds_through_the_binary() {
    let (child, target) = start(&guarded_args(), &[]);
    let table = run_matrix(&target, None).await;
    eprintln!("{table}");
    let log = terminate_expecting_success(child);
    for secret in [ADMIN_KEY, KEY_A, KEY_OPEN] {
        assert!(!log.contains(secret), "the log shows a key");
    }
}

#[tokio::test]
async fn huge_keys_and_cookies_are_refused_at_the_header_limit_without_an_echo() {
    let (child, target) = start(&guarded_args(), &[]);
    let huge_key = format!("Bearer {}", "k".repeat(100 * 1024));
    let big_key = format!("Bearer {}", "k".repeat(30 * 1024));
    let huge_cookie = format!("payments_mock_session={}", "c".repeat(100 * 1024));
    let big_cookie = format!("payments_mock_session={}", "c".repeat(30 * 1024));
    let cases: [(&str, &str, &str, u16); 6] = [
        // Over hyper's 64 KiB head: a bare 431, the connection closed.
        ("/_mock/transactions", "authorization", &huge_key, 431),
        ("/_mock/ui/", "cookie", &huge_cookie, 431),
        // Under it: the key or the session is simply wrong.
        ("/_mock/transactions", "authorization", &big_key, 401),
        ("/_mock/ui/", "authorization", &big_key, 401),
        ("/_mock/ui/", "cookie", &big_cookie, 401),
        ("/_mock/ui/", "authorization", "Bearer", 401),
    ];
    for (path, name, value, status) in cases {
        let answer: Answer = target.call("GET", path, &[(name, value)], None).await;
        assert_eq!(
            answer.status,
            status,
            "{path} with a {} byte {name}",
            value.len()
        );
        assert!(!answer.body.contains("kkkkkkkk") && !answer.body.contains("cccccccc"));
    }
    let still = target.call("GET", "/_mock/health", &[], None).await;
    assert_eq!(still.status, 200, "the server serves on");
    let log = terminate_expecting_success(child);
    assert!(!log.contains("kkkkkkkk") && !log.contains("cccccccc"));
}

#[test]
fn bad_admin_keys_stop_the_binary_without_showing_them() {
    let huge = "h".repeat(100 * 1024);
    let cases: [(Vec<&str>, &str); 5] = [
        (vec!["--admin-key", ""], "1 to 1024 characters"),
        (
            vec!["--admin-key", "adm secret with spaces"],
            "visible ASCII",
        ),
        (vec!["--admin-key", &huge], "1 to 1024 characters"),
        (
            vec![
                "--admin-key",
                "adm_twice_SECRET",
                "--admin-key",
                "adm_twice_SECRET",
            ],
            "the same admin key is given twice (admin keys #1 and #2)",
        ),
        (
            vec![
                "--admin-key",
                "adm_both_SECRET",
                "--api-key",
                "adm_both_SECRET",
            ],
            "admin key #1 is also API key #1",
        ),
    ];
    for (args, message) in cases {
        let output = Command::new(BIN)
            .args(["--port", "0"])
            .args(&args)
            .env_remove("PAYMENTS_MOCK_ADMIN_KEY")
            .output()
            .expect("run");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{stderr:.300}");
        assert!(stderr.contains(message), "{stderr:.300}");
        for shown in ["secret", "SECRET", "hhhhhhhh"] {
            assert!(!stderr.contains(shown), "{stderr:.300}");
        }
        assert!(output.stdout.is_empty());
    }
}

/// A bad value from the environment names the variable, not only the flag
/// the user never gave (the proxy's subcommand too); never the value.
#[test]
fn a_bad_admin_key_from_the_environment_names_the_variable() {
    for (args, variable) in [
        (&["--port", "0"][..], "PAYMENTS_MOCK_ADMIN_KEY"),
        (
            &["proxy", "--upstream", "http://127.0.0.1:9", "--port", "0"],
            "PAYMENTS_PROXY_ADMIN_KEY",
        ),
    ] {
        for value in ["", "adm secret with spaces"] {
            let output = Command::new(BIN)
                .args(args)
                .env_remove("PAYMENTS_MOCK_ADMIN_KEY")
                .env_remove("PAYMENTS_PROXY_ADMIN_KEY")
                .env(variable, value)
                .output()
                .expect("run");
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert_eq!(output.status.code(), Some(2), "{stderr:.300}");
            assert!(
                stderr.contains(&format!(
                    "'--admin-key <KEY>' (from the environment variable {variable})"
                )),
                "{args:?} {value:?}: {stderr:.300}"
            );
            assert!(!stderr.contains("secret"), "{stderr:.300}");
        }
    }
}

/// The aliases read none of the mock's own variables: an empty or
/// malformed `PAYMENTS_MOCK_STORE` or `PAYMENTS_MOCK_ADMIN_KEY` (a CI's
/// missing secret) stops neither `proxy` (its own variable set) nor
/// `check`, as it stops neither command of `payments-contract-proxy`; an
/// empty `PAYMENTS_PROXY_ADMIN_KEY` is named as the value refused.
#[test]
fn the_aliases_never_read_the_mocks_own_variables() {
    let dir = tempfile::tempdir().expect("a directory");
    let recording = dir.path().join("run.jsonl");
    std::fs::write(&recording, "").expect("an empty recording");
    let check = Command::new(BIN)
        .arg("check")
        .arg(&recording)
        .env("PAYMENTS_MOCK_STORE", "")
        .env("PAYMENTS_MOCK_ADMIN_KEY", "")
        .output()
        .expect("run");
    // Past its flags: it read the (empty) recording, as
    // `payments-contract-proxy check` does.
    let stderr = String::from_utf8_lossy(&check.stderr);
    assert!(stderr.contains("the recording is empty"), "{stderr:.300}");
    assert!(!stderr.contains("environment"), "{stderr:.300}");
    let mut proxy = Command::new(BIN);
    proxy
        .args(["proxy", "--upstream", "http://127.0.0.1:9", "--port", "0"])
        .env("PAYMENTS_MOCK_ADMIN_KEY", "")
        .env("PAYMENTS_MOCK_STORE", "mysql://u:p@h/db")
        .env("PAYMENTS_PROXY_ADMIN_KEY", ADMIN_KEY);
    let (child, _base) = spawn_with_banner(proxy.stderr(Stdio::piped()));
    terminate_expecting_success(child);
    let output = Command::new(BIN)
        .args(["proxy", "--upstream", "http://127.0.0.1:9", "--port", "0"])
        .env("PAYMENTS_PROXY_ADMIN_KEY", "")
        .env("PAYMENTS_MOCK_ADMIN_KEY", ADMIN_KEY)
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr:.300}");
    assert!(
        stderr.contains("(from the environment variable PAYMENTS_PROXY_ADMIN_KEY)"),
        "{stderr:.300}"
    );
}

#[tokio::test]
async fn the_admin_key_comes_from_the_environment_and_help_never_shows_it() {
    let (child, base) = spawn_with_banner(
        Command::new(BIN)
            .args(["--port", "0"])
            .env("PAYMENTS_MOCK_ADMIN_KEY", ADMIN_KEY)
            .stderr(Stdio::piped()),
    );
    let target = Target::http(base);
    let refused = target.call("GET", "/_mock/transactions", &[], None).await;
    assert_eq!(refused.status, 401);
    let auth = format!("Bearer {ADMIN_KEY}");
    let admitted = target
        .call(
            "GET",
            "/_mock/transactions",
            &[("authorization", &auth)],
            None,
        )
        .await;
    assert_eq!(admitted.status, 200);
    terminate_expecting_success(child);

    let help = Command::new(BIN)
        .arg("--help")
        .env("PAYMENTS_MOCK_ADMIN_KEY", ADMIN_KEY)
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&help.stdout);
    assert!(
        text.contains("--admin-key") && text.contains("PAYMENTS_MOCK_ADMIN_KEY"),
        "{text}"
    );
    assert!(!text.contains(ADMIN_KEY));
}

/// Starts the binary with `args`, and returns what it wrote to stderr.
fn stderr_of(args: &[&str]) -> String {
    let (child, _) = spawn_with_banner(
        Command::new(BIN)
            .args(["--port", "0"])
            .args(args)
            .env_remove("PAYMENTS_MOCK_ADMIN_KEY")
            .stderr(Stdio::piped()),
    );
    terminate_expecting_success(child)
}

/// Issue 40: `--admin-key`'s help read as if the console and `/metrics`
/// were exempt ("every /_mock/ route but /_mock/health, the console and
/// /metrics"), and the start-up line left `/metrics` out. Both say it the
/// right way round: the console, /metrics and /_mock/ need the key;
/// /_mock/ health alone stays open.
#[test]
fn the_admin_keys_help_and_start_up_line_name_what_it_guards() {
    let help = Command::new(BIN).arg("--help").output().expect("run");
    let text = String::from_utf8_lossy(&help.stdout);
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains(
            "Put the admin side behind this key: the console (/_mock/ui/), /metrics and every /_mock/ route except /_mock/health"
        ),
        "{text}"
    );
    assert!(
        !flat.contains("but /_mock/health, the console and /metrics"),
        "{text}"
    );
    let log = stderr_of(&["--admin-key", ADMIN_KEY]);
    assert!(
        log.contains(
            "the console, /metrics and every /_mock/ route except /_mock/health need an admin key: 1 given"
        ),
        "{log}"
    );
    assert!(!log.contains(ADMIN_KEY));
}

#[test]
fn an_open_admin_side_on_a_network_address_is_warned_about_and_loopback_is_not() {
    let warning = "anyone who reaches this address can read every merchant's transactions and requests, move the clock and reset everything";
    let open = stderr_of(&["--host", "0.0.0.0"]);
    assert!(open.contains(warning), "{open}");
    assert!(open.contains("--admin-key"), "{open}");
    let loopback = stderr_of(&["--host", "127.0.0.1"]);
    assert!(!loopback.contains(warning), "{loopback}");
    let guarded = stderr_of(&["--host", "0.0.0.0", "--admin-key", ADMIN_KEY]);
    assert!(!guarded.contains(warning), "{guarded}");
    assert!(!guarded.contains(ADMIN_KEY));
    // In the JSON log format too, as a warning.
    let json = stderr_of(&["--host", "0.0.0.0", "--log-format", "json"]);
    let line = json
        .lines()
        .find(|l| l.contains(warning))
        .unwrap_or_else(|| panic!("{json}"));
    let entry: serde_json::Value = serde_json::from_str(line).expect("a JSON log line");
    assert_eq!(entry["level"], "WARN", "{line}");
}

#[tokio::test]
async fn a_session_signed_in_over_http_ends_at_sign_out_and_a_forged_one_never_starts() {
    let (child, target) = start(&guarded_args(), &[]);
    let (cookie, set) = sign_in(&target, ADMIN_KEY).await;
    assert!(
        set.contains("HttpOnly") && set.contains("SameSite=Strict"),
        "{set}"
    );
    let page = target
        .call("GET", "/_mock/ui/requests", &[("cookie", &cookie)], None)
        .await;
    assert_eq!(page.status, 200);
    let mut forged = cookie.clone().into_bytes();
    let last = forged.len() - 1;
    forged[last] = if forged[last] == b'0' { b'1' } else { b'0' };
    let forged = String::from_utf8(forged).expect("ascii");
    let refused = target
        .call("GET", "/_mock/ui/requests", &[("cookie", &forged)], None)
        .await;
    assert_eq!(refused.status, 401);
    assert!(refused.body.contains("Sign in"));
    let out = target
        .call(
            "POST",
            "/_mock/ui/sign-out",
            &[
                ("cookie", &cookie),
                ("content-type", "application/x-www-form-urlencoded"),
            ],
            Some(""),
        )
        .await;
    assert_eq!(out.status, 303);
    let after = target
        .call("GET", "/_mock/ui/requests", &[("cookie", &cookie)], None)
        .await;
    assert_eq!(after.status, 401);
    let log = terminate_expecting_success(child);
    let id = cookie.trim_start_matches("payments_mock_session=");
    assert!(!log.contains(id), "the log shows a session id");
}

#[tokio::test]
async fn no_key_or_session_id_in_stdout_stderr_the_journal_or_the_console() {
    for format in ["text", "json"] {
        use std::io::{BufRead as _, Read as _};
        let mut child = Command::new(BIN)
            .args(guarded_args())
            .args(["--log-format", format])
            .env_remove("PAYMENTS_MOCK_ADMIN_KEY")
            .env("RUST_LOG", "trace")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        let mut stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
        let mut banner = String::new();
        stdout.read_line(&mut banner).expect("the banner");
        let base = banner
            .trim_end()
            .strip_prefix("listening on ")
            .expect("the banner's shape")
            .to_owned();
        let target = Target::http(base);
        let mut seen = String::new();
        let (cookie, _) = sign_in(&target, ADMIN_KEY).await;
        let (merchant_cookie, _) = sign_in(&target, KEY_A).await;
        let mut sessions = vec![cookie.clone(), merchant_cookie.clone()];
        let form = ("content-type", "application/x-www-form-urlencoded");
        // Keys where they belong and where they do not: /api/ with the
        // admin key, the admin side with API keys, near misses, the
        // sign-in page with each.
        let (id, _) = target.redirect_payment("SECRETS-1").await;
        for auth in [
            ADMIN_KEY,
            KEY_A,
            KEY_B,
            KEY_OPEN,
            "adm_SECRET_ADMIN_9c41e",
            "Bearer",
        ] {
            let bearer = format!("Bearer {auth}");
            for (method, path) in [
                ("GET", format!("/api/payments/{id}/status")),
                ("GET", "/_mock/transactions".to_owned()),
                ("GET", "/_mock/ui/".to_owned()),
                ("POST", "/_mock/reset".to_owned()),
            ] {
                let answer = target
                    .call(method, &path, &[("authorization", &bearer)], None)
                    .await;
                seen.push_str(&answer.body);
                seen.push_str(&format!("{:?}", answer.headers));
            }
            let body = format!("key={auth}");
            let answer = target
                .call("POST", "/_mock/ui/sign-in", &[form], Some(&body))
                .await;
            seen.push_str(&answer.body);
            if let Some(set) = answer.headers.get("set-cookie") {
                let pair = set
                    .to_str()
                    .unwrap_or_default()
                    .split(';')
                    .next()
                    .unwrap_or_default();
                sessions.push(pair.to_owned());
            }
        }
        // A browser signed in to the console sends its session with every
        // request to this host, /api/ too: the journal keeps the rest of
        // the Cookie header, never a session.
        let both = format!("theme=dark; {cookie};{merchant_cookie}");
        let answer = target
            .call(
                "GET",
                &format!("/api/payments/{id}/status"),
                &[("cookie", &both)],
                None,
            )
            .await;
        seen.push_str(&answer.body);
        // Everything the console shows, to each session; the journal.
        let (_, _) = target.redirect_payment("SECRETS-2").await;
        let seq = target.newest_seq().await;
        for session in [&cookie, &merchant_cookie] {
            for page in [
                "/_mock/ui/",
                "/_mock/ui/requests",
                &format!("/_mock/ui/requests/{seq}"),
                &format!("/_mock/ui/transactions/{id}"),
                "/_mock/ui/clock",
                "/_mock/ui/catalog",
                "/_mock/ui/requests/feed?after=0",
            ] {
                let answer = target.call("GET", page, &[("cookie", session)], None).await;
                seen.push_str(&answer.body);
            }
        }
        let bearer = format!("Bearer {ADMIN_KEY}");
        let journal = target
            .call(
                "GET",
                "/_mock/requests",
                &[("authorization", &bearer)],
                None,
            )
            .await;
        assert!(journal.body.contains("[redacted]"), "{}", journal.body);
        assert!(
            journal
                .body
                .contains("theme=dark; payments_mock_session=[redacted];"),
            "the journal keeps the other cookies: {}",
            journal.body
        );
        seen.push_str(&journal.body);
        let out = target
            .call(
                "POST",
                "/_mock/ui/sign-out",
                &[("cookie", &cookie), form],
                Some(""),
            )
            .await;
        seen.push_str(&out.body);

        let stderr = terminate_expecting_success(child);
        let mut stdout_text = banner.clone();
        stdout.read_to_string(&mut stdout_text).expect("stdout");
        let ids: Vec<String> = sessions
            .iter()
            .map(|s| s.trim_start_matches("payments_mock_session=").to_owned())
            .filter(|s| !s.is_empty())
            .collect();
        assert!(ids.len() >= 4, "{ids:?}");
        for (what, text) in [
            ("answers", &seen),
            ("stderr", &stderr),
            ("stdout", &stdout_text),
        ] {
            for secret in [ADMIN_KEY, KEY_A, KEY_B, KEY_OPEN] {
                assert!(!text.contains(secret), "{format}: {what} shows a key");
            }
            for id in &ids {
                assert!(
                    !text.contains(id.as_str()),
                    "{format}: {what} shows a session id"
                );
            }
        }
        assert!(
            stderr.contains("/_mock/ui/sign-in"),
            "the log has the requests: {stderr:.500}"
        );
    }
}

/// Issue 40: with `--admin-key`, an anonymous `GET /_mock/health` told
/// anyone the transaction count, the store's file path and the replica's
/// name. Anonymous (or a wrong key, or a key bound to no merchant): only
/// `{"status":"ok"}`; a merchant's key: now and its own merchant's count;
/// the admin key: everything. Without `--admin-key`, everything as before.
#[tokio::test]
async fn health_tells_each_caller_only_what_it_may_see() {
    let dir = tempfile::tempdir().expect("a directory");
    let db = dir.path().join("sandbox.db");
    let store = format!("sqlite:{}", db.display());
    let (child, target) = start(&guarded_args(), &["--store", &store]);
    for (key, merchant, reference) in [
        (KEY_A, MERCHANT, "HEALTH-1"),
        (KEY_A, MERCHANT, "HEALTH-2"),
        (KEY_B, crate::common::OTHER_MERCHANT, "HEALTH-3"),
    ] {
        let mut body = crate::common::initiate_body(reference, "TOPUP");
        body["merchantId"] = merchant.into();
        let bearer = format!("Bearer {key}");
        let answer = target
            .call(
                "POST",
                "/api/payments/initiate",
                &[
                    ("authorization", &bearer),
                    ("content-type", "application/json"),
                ],
                Some(&body.to_string()),
            )
            .await;
        assert_eq!(answer.status, 200, "{}", answer.body);
    }
    let health = |auth: Option<String>| {
        let target = target.clone();
        async move {
            let headers: Vec<(&str, &str)> = auth
                .as_deref()
                .map(|a| vec![("authorization", a)])
                .unwrap_or_default();
            let answer = target.call("GET", "/_mock/health", &headers, None).await;
            assert_eq!(answer.status, 200, "{}", answer.body);
            answer.json()["data"].clone()
        }
    };
    let anonymous = serde_json::json!({"status": "ok"});
    assert_eq!(health(None).await, anonymous);
    for who in ["adm_wrong_key", KEY_OPEN, "Bearer"] {
        assert_eq!(
            health(Some(format!("Bearer {who}"))).await,
            anonymous,
            "a key that opens nothing here is anonymous"
        );
    }
    let merchant = health(Some(format!("Bearer {KEY_A}"))).await;
    assert_eq!(merchant["transactions"], 2, "{merchant}");
    assert!(merchant["now"].is_string(), "{merchant}");
    assert!(
        merchant.get("store").is_none() && merchant.get("replica").is_none(),
        "{merchant}"
    );
    let other = health(Some(format!("Bearer {KEY_B}"))).await;
    assert_eq!(other["transactions"], 1, "{other}");
    let admin = health(Some(format!("Bearer {ADMIN_KEY}"))).await;
    assert_eq!(admin["transactions"], 3, "{admin}");
    assert_eq!(admin["store"], store.as_str(), "{admin}");
    assert!(
        admin["replica"].is_string() && admin["now"].is_string(),
        "{admin}"
    );
    terminate_expecting_success(child);

    // Without --admin-key the route tells everyone everything, as before.
    let (child, target) = start(&["--port".to_owned(), "0".to_owned()], &["--store", &store]);
    let answer = target.call("GET", "/_mock/health", &[], None).await;
    let open = answer.json()["data"].clone();
    assert_eq!(open["transactions"], 3, "{open}");
    assert_eq!(open["store"], store.as_str(), "{open}");
    terminate_expecting_success(child);
}
