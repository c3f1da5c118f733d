//! `payments tail` (issue 44): the mock's journal (the admin key's, a
//! merchant's own part, a sandbox's), each filter, JSON lines and the
//! table at 80 columns, `--follow` until Ctrl-C (exit 0) or until the
//! server goes away (exit 4), refused keys (exit 1), usage errors (exit
//! 2), and `--proxy` against a contract proxy in front of the mock.

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command as StdCommand, Stdio};
use std::time::Duration;
use tokio::sync::mpsc;

use payments_contract_proxy::{Proxy, ProxyConfig};
use payments_mock_server::MockServer;
use serde_json::{Value, json};
use unicode_width::UnicodeWidthStr as _;

use crate::common::{MERCHANT, Sandbox, closed_port_url, run, snapshot_settings, stderr, stdout};

const ADMIN: &str = "adm_tail_0f3e9a7c51d2";
const KEY_A: &str = "sk_tail_merchant_a_7f1c";
const KEY_B: &str = "sk_tail_merchant_b_29d4";
const MERCHANT_B: &str = "9b2d5c3e-4a1f-4e6b-8c7d-0e1f2a3b4c5d";
const PROXY_KEY: &str = "adm_proxy_tail_5e8b";
const UNKNOWN: &str = "01a20813-0000-7000-8000-000000000000";

/// A mock with an admin key and two merchants' keys.
async fn mock() -> MockServer {
    MockServer::builder()
        .admin_key(ADMIN)
        .api_key(KEY_A, Some(MERCHANT.parse().expect("a UUID")))
        .api_key(KEY_B, Some(MERCHANT_B.parse().expect("a UUID")))
        .start()
        .await
        .expect("the mock starts")
}

/// One API call with `key`; the answer's envelope.
async fn api(base: &str, key: &str, method: &str, path: &str, body: Option<String>) -> Value {
    let client = reqwest::Client::new();
    let url = format!("{base}{path}");
    let mut request = match method {
        "POST" => client.post(url),
        _ => client.get(url),
    }
    .bearer_auth(key);
    if let Some(body) = body {
        request = request
            .header("content-type", "application/json")
            .body(body);
    }
    let reply = request.send().await.expect("the server answers");
    let body = reply.bytes().await.expect("a body");
    serde_json::from_slice(&body).expect("an envelope")
}

/// Initiates `reference` for `merchant` with `key`; the transaction's id.
async fn initiate(base: &str, key: &str, merchant: &str, reference: &str) -> String {
    let body = format!(
        r#"{{"merchantId":"{merchant}","referenceNo":"{reference}","amount":1050,"currencyCode":"MYR","productCode":"TOPUP","storeId":"S1","payerId":"60123456789"}}"#
    );
    let envelope = api(base, key, "POST", "/api/payments/initiate", Some(body)).await;
    envelope["data"]["transactionId"]
        .as_str()
        .unwrap_or_else(|| panic!("initiated: {envelope}"))
        .to_owned()
}

/// The same story on any server: merchant A initiates INV-A1 and INV-A2,
/// confirms INV-A1 and reads it back by id and by reference; asks for an
/// unknown transaction (404); merchant B initiates INV-B1.
async fn story(base: &str) -> String {
    let id = initiate(base, KEY_A, MERCHANT, "INV-A1").await;
    initiate(base, KEY_A, MERCHANT, "INV-A2").await;
    let confirm = format!(r#"{{"transactionId":"{id}","referenceNo":"INV-A1"}}"#);
    api(base, KEY_A, "POST", "/api/payments/confirm", Some(confirm)).await;
    api(
        base,
        KEY_A,
        "GET",
        &format!("/api/payments/{id}/status"),
        None,
    )
    .await;
    api(
        base,
        KEY_A,
        "GET",
        "/api/payments/reference/INV-A1/status",
        None,
    )
    .await;
    api(
        base,
        KEY_A,
        "GET",
        &format!("/api/payments/{UNKNOWN}/status"),
        None,
    )
    .await;
    initiate(base, KEY_B, MERCHANT_B, "INV-B1").await;
    id
}

/// `payments --base-url BASE --api-key KEY -o OUTPUT tail ARGS…`.
fn tail(
    sandbox: &Sandbox,
    base: &str,
    key: &str,
    output: &str,
    args: &[&str],
) -> assert_cmd::Command {
    let mut cmd = sandbox.payments();
    cmd.args(["--base-url", base, "--api-key", key, "-o", output, "tail"])
        .args(args);
    cmd
}

/// Each line of stdout as JSON (each a whole object on one line).
fn lines(out: &str) -> Vec<Value> {
    out.lines()
        .map(|line| {
            assert!(line.starts_with('{'), "one object per line: {line}");
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"))
        })
        .collect()
}

/// Pretty JSON with every object's keys in order (whatever order
/// serde_json keeps them in this build).
fn pretty(value: &Value) -> String {
    fn sorted(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                Value::Object(
                    keys.into_iter()
                        .map(|k| (k.clone(), sorted(&map[k])))
                        .collect(),
                )
            }
            Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    serde_json::to_string_pretty(&sorted(value)).expect("JSON")
}

/// `(method, path)` of each entry.
fn requests(entries: &[Value]) -> Vec<(String, String)> {
    entries
        .iter()
        .map(|e| {
            (
                e["method"].as_str().unwrap_or_default().to_owned(),
                e["path"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

fn seqs(entries: &[Value]) -> Vec<u64> {
    entries
        .iter()
        .map(|e| e["seq"].as_u64().expect("a seq"))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_journal_as_json_lines_pinned_and_as_a_table_at_80_columns() {
    let server = mock().await;
    let base = server.base_url();
    let id = story(&base).await;
    let sandbox = Sandbox::new();

    // Not a terminal: JSON lines without -o json.
    let mut cmd = sandbox.payments();
    cmd.args(["--base-url", &base, "--api-key", ADMIN, "tail"]);
    let out = stdout(&run(cmd).await.success());
    let entries = lines(&out);
    assert_eq!(
        seqs(&entries),
        [1, 2, 3, 4, 5, 6, 7],
        "oldest first, newest last"
    );
    assert_eq!(entries[5]["status"], 404);
    assert_eq!(entries[5]["errorCode"], "TRANSACTION_NOT_FOUND");
    assert_eq!(entries[2]["path"], "/api/payments/confirm");
    // Each entry exactly as the server keeps it (the mock's journal item),
    // what changes from run to run replaced.
    let shown: Vec<String> = entries[..3]
        .iter()
        .map(|entry| {
            let mut entry = entry.clone();
            entry["at"] = json!("[at]");
            entry["requestId"] = json!("[request id]");
            entry["replica"] = json!("[replica]");
            entry["headers"]["host"] = json!("[host]");
            pretty(&entry)
        })
        .collect();
    snapshot_settings().bind(|| insta::assert_snapshot!("tail_json_lines", shown.join("\n")));

    // The table: every line within 80 columns, ids and times hidden.
    let mut cmd = tail(&sandbox, &base, ADMIN, "table", &[]);
    cmd.env("COLUMNS", "80");
    let table = stdout(&run(cmd).await.success());
    for line in table.lines() {
        assert!(line.width() <= 80, "{} columns: {line}", line.width());
    }
    assert_eq!(table.lines().count(), 8, "a header and 7 rows:\n{table}");
    let header = table.lines().next().expect("a header");
    assert!(
        header.starts_with("SEQ TIME     METHOD HTTP CODE   "),
        "{header}"
    );
    assert!(table.contains("TRANSACTION_NOT_FOUND"), "{table}");
    assert!(
        !table.contains(&id),
        "ids are shortened at 80 columns:\n{table}"
    );
    let mut settings = snapshot_settings();
    settings.add_filter(r"\d{2}:\d{2}:\d{2}", "hh:mm:ss");
    settings.add_filter(r" [0-9a-f]{8} ", " xxxxxxxx ");
    settings.add_filter(r"[0-9a-f]{8}…[0-9a-f]{4}", "xxxxxxxx…xxxx");
    settings.bind(|| insta::assert_snapshot!("tail_table_80_columns", table));

    // Wider, the paths are whole.
    let mut cmd = tail(&sandbox, &base, ADMIN, "table", &[]);
    cmd.env("COLUMNS", "200");
    let wide = stdout(&run(cmd).await.success());
    assert!(
        wide.contains(&format!("/api/payments/{id}/status")),
        "{wide}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_merchants_key_sees_only_its_own_part() {
    let server = mock().await;
    let base = server.base_url();
    story(&base).await;
    let sandbox = Sandbox::new();
    let all = lines(&stdout(
        &run(tail(&sandbox, &base, ADMIN, "json", &[]))
            .await
            .success(),
    ));
    assert_eq!(all.len(), 7);

    let a = lines(&stdout(
        &run(tail(&sandbox, &base, KEY_A, "json", &[]))
            .await
            .success(),
    ));
    // Not B's initiate, nor the look-up of a transaction nobody holds.
    assert_eq!(seqs(&a), [1, 2, 3, 4, 5]);
    let b = lines(&stdout(
        &run(tail(&sandbox, &base, KEY_B, "json", &[]))
            .await
            .success(),
    ));
    assert_eq!(seqs(&b), [7]);
    assert!(
        b[0]["body"]
            .as_str()
            .is_some_and(|body| body.contains("INV-B1"))
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sandbox_has_its_own_journal() {
    let server = mock().await;
    let base = server.base_url();
    initiate(&base, KEY_A, MERCHANT, "ROOT-1").await;
    let mine = server.sandbox();
    initiate(&mine.base_url(), KEY_A, MERCHANT, "SANDBOXED-1").await;
    initiate(&mine.base_url(), KEY_A, MERCHANT, "SANDBOXED-2").await;
    let sandbox = Sandbox::new();
    let id = mine.id().to_string();

    let entries = lines(&stdout(
        &run(tail(&sandbox, &base, ADMIN, "json", &["--sandbox", &id]))
            .await
            .success(),
    ));
    assert_eq!(entries.len(), 2, "{entries:?}");
    for entry in &entries {
        assert!(
            entry["body"]
                .as_str()
                .is_some_and(|b| b.contains("SANDBOXED")),
            "{entry}"
        );
    }
    // The root's journal has its own request only.
    let root = lines(&stdout(
        &run(tail(&sandbox, &base, ADMIN, "json", &[]))
            .await
            .success(),
    ));
    assert_eq!(root.len(), 1);
    assert!(
        root[0]["body"]
            .as_str()
            .is_some_and(|b| b.contains("ROOT-1"))
    );
    // The sandbox's base URL works as well as --sandbox.
    let same = lines(&stdout(
        &run(tail(&sandbox, &mine.base_url(), ADMIN, "json", &[]))
            .await
            .success(),
    ));
    assert_eq!(seqs(&same), seqs(&entries));
    // A sandbox that is gone: refused, exit 1, said with the flag.
    drop(mine);
    let gone = run(tail(&sandbox, &base, ADMIN, "json", &["--sandbox", &id]))
        .await
        .code(1);
    let err = stderr(&gone);
    assert!(err.contains("SANDBOX_NOT_FOUND (HTTP 404)"), "{err}");
    assert!(err.contains("is --sandbox right?"), "{err}");
    assert_eq!(stdout(&gone), "");
}

#[tokio::test(flavor = "multi_thread")]
async fn each_filter_narrows_the_journal() {
    let server = mock().await;
    let base = server.base_url();
    let id = story(&base).await;
    let sandbox = Sandbox::new();
    let json = |args: &[&str]| tail(&sandbox, &base, ADMIN, "json", args);

    let initiates = lines(&stdout(
        &run(json(&["--path", "/api/payments/initiate"]))
            .await
            .success(),
    ));
    assert_eq!(seqs(&initiates), [1, 2, 7]);

    let not_found = lines(&stdout(&run(json(&["--status", "404"])).await.success()));
    assert_eq!(seqs(&not_found), [6]);

    // INV-A1: its initiate, its confirm, and the reads of its transaction
    // from the confirm on (by id and by reference).
    let about = lines(&stdout(
        &run(json(&["--reference-no", "INV-A1"])).await.success(),
    ));
    assert_eq!(
        requests(&about),
        [
            ("POST".to_owned(), "/api/payments/initiate".to_owned()),
            ("POST".to_owned(), "/api/payments/confirm".to_owned()),
            ("GET".to_owned(), format!("/api/payments/{id}/status")),
            (
                "GET".to_owned(),
                "/api/payments/reference/INV-A1/status".to_owned()
            ),
        ]
    );

    let since = lines(&stdout(&run(json(&["--since", "5"])).await.success()));
    assert_eq!(seqs(&since), [6, 7]);

    // Together: every filter applies.
    let both = lines(&stdout(
        &run(json(&[
            "--path",
            "/api/payments/initiate",
            "--since",
            "1",
            "--status",
            "200",
        ]))
        .await
        .success(),
    ));
    assert_eq!(seqs(&both), [2, 7]);

    // Nothing left: no line, a note on stderr, exit 0.
    let none = run(json(&["--status", "503"])).await.success();
    assert_eq!(stdout(&none), "");
    assert!(
        stderr(&none).contains("no entries match --status 503 (7 read)"),
        "{}",
        stderr(&none)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_filters_are_usage_errors_naming_the_flag() {
    let sandbox = Sandbox::new();
    // Nothing listens here: a usage error is found before any call.
    let base = closed_port_url();
    for (args, says) in [
        (
            &["--status", "abc"][..],
            "--status 'abc': not an HTTP status",
        ),
        (&["--status", "99"][..], "--status '99': not an HTTP status"),
        (&["--status", "600"][..], "--status '600'"),
        (&["--since", "-1"][..], "--since '-1': not a seq"),
        (
            &["--status", "-404"][..],
            "--status '-404': not an HTTP status",
        ),
        (&["--since", "x"][..], "--since 'x': not a seq"),
        (
            &["--since", "9223372036854775808"][..],
            "--since '9223372036854775808': not a seq",
        ),
        (
            &["--path", "api/payments"][..],
            "--path 'api/payments': must start with /",
        ),
        (
            &["--sandbox", "nope"][..],
            "--sandbox 'nope': not a sandbox id",
        ),
        (
            &["--proxy", "--sandbox", UNKNOWN][..],
            "cannot be used with",
        ),
    ] {
        let assert = run(tail(&sandbox, &base, ADMIN, "json", args))
            .await
            .code(2);
        let err = stderr(&assert);
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains(ADMIN), "{args:?}: the key in {err}");
        assert_eq!(stdout(&assert), "", "{args:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_key_exits_1_with_the_servers_message_and_never_the_key() {
    let server = mock().await;
    let base = server.base_url();
    let sandbox = Sandbox::new();
    for output in ["json", "table"] {
        let mut cmd = tail(&sandbox, &base, "sk_wrong_SECRET_0123", output, &[]);
        cmd.arg("-v");
        let refused = run(cmd).await.code(1);
        let err = stderr(&refused);
        assert!(
            err.starts_with("> GET http://127.0.0.1:"),
            "-v says the request: {err}"
        );
        assert!(err.contains("Bearer [REDACTED]"), "{err}");
        assert!(
            err.contains("tail failed: cannot read the mock's journal at http://127.0.0.1:"),
            "{err}"
        );
        assert!(
            err.contains("UNAUTHORIZED (HTTP 401): "),
            "the server's words: {err}"
        );
        assert!(err.contains("give the mock's admin key"), "{err}");
        assert!(!err.contains("SECRET"), "the key: {err}");
        assert_eq!(stdout(&refused), "", "no envelope on stdout");
    }
    // No key at all.
    let mut cmd = sandbox.payments();
    cmd.args(["--base-url", &base, "tail"]);
    let err = stderr(&run(cmd).await.code(1));
    assert!(err.contains("(HTTP 401)"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_cannot_be_reached_or_is_not_the_mock_exits_4_or_1() {
    let sandbox = Sandbox::new();
    let base = closed_port_url();
    let mut cmd = tail(&sandbox, &base, ADMIN, "json", &[]);
    cmd.args(["--poll-interval", "0.05"]);
    let err = stderr(&run(cmd).await.code(4));
    assert!(err.contains("could not connect"), "{err}");
    assert!(
        err.contains("is the mock running at http://127.0.0.1:"),
        "{err}"
    );

    // The proxy has no journal of the mock's, and the mock no exchanges.
    let server = mock().await;
    let err = stderr(
        &run(tail(
            &sandbox,
            &server.base_url(),
            ADMIN,
            "json",
            &["--proxy"],
        ))
        .await
        .code(1),
    );
    assert!(err.contains("(HTTP 404)"), "{err}");
    assert!(err.contains("the contract proxy?"), "{err}");
}

/// The child's stdout, line by line, as it comes.
fn line_reader(child: &mut Child) -> mpsc::UnboundedReceiver<String> {
    let out = child.stdout.take().expect("stdout is piped");
    let (send, receive) = mpsc::unbounded_channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines() {
            let Ok(line) = line else { break };
            if send.send(line).is_err() {
                break;
            }
        }
    });
    receive
}

/// The next line, within 20 s (awaited as it comes, no polling).
async fn next_line(lines: &mut mpsc::UnboundedReceiver<String>) -> String {
    match tokio::time::timeout(Duration::from_secs(20), lines.recv()).await {
        Ok(Some(line)) => line,
        Ok(None) => panic!("stdout closed"),
        Err(_) => panic!("no line in 20 s"),
    }
}

/// `payments tail --follow` as a child process, its stdout piped.
fn follow(sandbox: &Sandbox, base: &str, key: &str, args: &[&str]) -> Child {
    StdCommand::new(env!("CARGO_BIN_EXE_payments"))
        .env_clear()
        .env("XDG_CONFIG_HOME", sandbox.path())
        .env("HOME", sandbox.path())
        .env("NO_COLOR", "1")
        .args([
            "--base-url",
            base,
            "--api-key",
            key,
            "-o",
            "json",
            "--retries",
            "1",
        ])
        .args(["tail", "--follow", "--poll-interval", "0.05"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("payments starts")
}

/// Waits for the child to exit (at most 20 s, then it is killed); its
/// code and stderr.
async fn exit_of(child: Child) -> (Option<i32>, String) {
    let pid = child.id().to_string();
    let waited = tokio::task::spawn_blocking(move || child.wait_with_output());
    match tokio::time::timeout(Duration::from_secs(20), waited).await {
        Ok(output) => {
            let output = output.expect("the wait ran").expect("an exit status");
            (
                output.status.code(),
                String::from_utf8_lossy(&output.stderr).into_owned(),
            )
        }
        Err(_) => {
            let _ = StdCommand::new("kill").args(["-KILL", &pid]).status();
            panic!("payments tail --follow did not exit");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn follow_prints_what_comes_later_and_ctrl_c_exits_0() {
    let server = mock().await;
    let base = server.base_url();
    initiate(&base, KEY_A, MERCHANT, "BEFORE-1").await;
    let sandbox = Sandbox::new();
    let mut child = follow(&sandbox, &base, ADMIN, &[]);
    let mut lines = line_reader(&mut child);
    let first: Value = serde_json::from_str(&next_line(&mut lines).await).expect("JSON");
    assert!(
        first["body"]
            .as_str()
            .is_some_and(|b| b.contains("BEFORE-1")),
        "{first}"
    );

    // Made after tail started: printed by a later poll.
    initiate(&base, KEY_A, MERCHANT, "AFTER-1").await;
    let later: Value = serde_json::from_str(&next_line(&mut lines).await).expect("JSON");
    assert_eq!(later["seq"], 2);
    assert!(
        later["body"]
            .as_str()
            .is_some_and(|b| b.contains("AFTER-1")),
        "{later}"
    );

    let interrupted = StdCommand::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(interrupted.success());
    let (code, err) = exit_of(child).await;
    assert_eq!(code, Some(0), "Ctrl-C exits 0: {err}");
    assert!(!err.contains("error"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn follow_with_filters_reads_on_past_what_they_leave_out() {
    let server = mock().await;
    let base = server.base_url();
    let sandbox = Sandbox::new();
    let mut child = follow(&sandbox, &base, ADMIN, &["--status", "404"]);
    let mut lines = line_reader(&mut child);
    // Entries it leaves out, then one it shows.
    initiate(&base, KEY_A, MERCHANT, "F-1").await;
    initiate(&base, KEY_A, MERCHANT, "F-2").await;
    api(
        &base,
        KEY_A,
        "GET",
        &format!("/api/payments/{UNKNOWN}/status"),
        None,
    )
    .await;
    let shown: Value = serde_json::from_str(&next_line(&mut lines).await).expect("JSON");
    assert_eq!(
        (shown["seq"].as_u64(), shown["status"].as_u64()),
        (Some(3), Some(404))
    );
    let _ = StdCommand::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    assert_eq!(exit_of(child).await.0, Some(0));
}

#[tokio::test(flavor = "multi_thread")]
async fn follow_says_when_the_server_goes_away_and_exits_4() {
    let server = mock().await;
    let base = server.base_url();
    initiate(&base, KEY_A, MERCHANT, "GONE-1").await;
    let sandbox = Sandbox::new();
    let mut child = follow(&sandbox, &base, ADMIN, &[]);
    let mut lines = line_reader(&mut child);
    next_line(&mut lines).await;
    server.shutdown().await;
    let (code, err) = exit_of(child).await;
    assert_eq!(code, Some(4), "{err}");
    assert!(
        err.contains("tail stopped: the mock's journal at http://127.0.0.1:"),
        "{err}"
    );
    assert!(err.contains("stopped answering"), "{err}");
    assert!(err.contains("(the last entry read: seq 1)"), "{err}");
    assert!(!err.contains(ADMIN), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_proxys_exchanges_and_verdicts() {
    let server = mock().await;
    let mut config = ProxyConfig::new(server.base_url().parse().expect("a URL"));
    config.admin_keys = vec![PROXY_KEY.parse().expect("an admin key")];
    let proxy = Proxy::start(config).await.expect("a proxy");
    let base = proxy.base_url();
    let id = story(&base).await;
    let sandbox = Sandbox::new();

    let entries = lines(&stdout(
        &run(tail(&sandbox, &base, PROXY_KEY, "json", &["--proxy"]))
            .await
            .success(),
    ));
    assert_eq!(entries.len(), 7, "{entries:?}");
    for entry in &entries {
        for field in [
            "seq",
            "time",
            "method",
            "path",
            "status",
            "durationMs",
            "verdict",
            "findings",
        ] {
            assert!(entry.get(field).is_some(), "{field} in {entry}");
        }
    }
    // The status read by id knows its reference (the proxy remembers it).
    let by_id = entries
        .iter()
        .find(|e| e["path"] == format!("/api/payments/{id}/status"))
        .expect("the read by id");
    assert_eq!(by_id["referenceNo"], "INV-A1");
    assert_eq!(by_id["verdict"], "pass");

    // --reference-no through the proxy: what the proxy ties to INV-A1.
    let about = lines(&stdout(
        &run(tail(
            &sandbox,
            &base,
            PROXY_KEY,
            "json",
            &["--proxy", "--reference-no", "INV-A1"],
        ))
        .await
        .success(),
    ));
    assert_eq!(about.len(), 4, "{about:?}");
    // --path and --status, applied here.
    let reads = lines(&stdout(
        &run(tail(
            &sandbox,
            &base,
            PROXY_KEY,
            "json",
            &[
                "--proxy",
                "--path",
                "/api/payments/initiate",
                "--since",
                "1",
            ],
        ))
        .await
        .success(),
    ));
    assert_eq!(reads.len(), 2, "{reads:?}");
    let mut cmd = tail(
        &sandbox,
        &base,
        PROXY_KEY,
        "table",
        &["--proxy", "--status", "404"],
    );
    cmd.env("COLUMNS", "80");
    let table = stdout(&run(cmd).await.success());
    assert!(
        table.starts_with("SEQ TIME     METHOD HTTP VERDICT      REQUEST  PATH"),
        "{table}"
    );
    assert_eq!(table.lines().count(), 2, "{table}");
    assert!(table.contains(" 404 pass "), "{table}");
    for line in table.lines() {
        assert!(line.width() <= 80, "{line}");
    }

    // The proxy's admin key only.
    let refused = run(tail(&sandbox, &base, ADMIN, "json", &["--proxy"]))
        .await
        .code(1);
    let err = stderr(&refused);
    assert!(
        err.contains("cannot read the contract proxy's exchanges"),
        "{err}"
    );
    assert!(err.contains("UNAUTHORIZED (HTTP 401)"), "{err}");
    assert!(err.contains("give the proxy's admin key"), "{err}");
    proxy.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn follow_through_the_proxy_shows_violations_as_they_happen() {
    // An upstream that answers a status read with an HTML page.
    let upstream = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::any())
        .respond_with(
            wiremock::ResponseTemplate::new(502)
                .insert_header("content-type", "text/html")
                .set_body_string("<html>bad gateway</html>"),
        )
        .mount(&upstream)
        .await;
    let proxy = Proxy::start(ProxyConfig::new(upstream.uri().parse().expect("a URL")))
        .await
        .expect("a proxy");
    let base = proxy.base_url();
    let sandbox = Sandbox::new();
    let mut child = follow(&sandbox, &base, "unused", &["--proxy"]);
    let mut lines = line_reader(&mut child);
    // Before or after its first read: shown either way.
    let _ = reqwest::get(format!("{base}/api/payments/{UNKNOWN}/status")).await;
    let shown: Value = serde_json::from_str(&next_line(&mut lines).await).expect("JSON");
    assert_eq!(shown["verdict"], "violation");
    assert_eq!(shown["status"], 502);
    assert!(
        shown["findings"]
            .as_array()
            .is_some_and(|f| f.contains(&json!({"rule": "envelope.shape", "level": "violation"}))),
        "{shown}"
    );
    let _ = StdCommand::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    assert_eq!(exit_of(child).await.0, Some(0));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_faulted_request_shows_its_fault() {
    let server = mock().await;
    let base = server.base_url();
    let id = initiate(&base, KEY_A, MERCHANT, "FAULT-1").await;
    // The mock resets the connection: no answer, no status.
    let reset = reqwest::Client::new()
        .post(format!("{base}/api/payments/confirm"))
        .bearer_auth(KEY_A)
        .header("x-mock-fault", "reset")
        .header("content-type", "application/json")
        .body(format!(
            r#"{{"transactionId":"{id}","referenceNo":"FAULT-1"}}"#
        ))
        .send()
        .await;
    assert!(reset.is_err(), "the connection was reset: {reset:?}");
    let sandbox = Sandbox::new();
    let entries = lines(&stdout(
        &run(tail(&sandbox, &base, ADMIN, "json", &["--since", "1"]))
            .await
            .success(),
    ));
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(entries[0]["status"], Value::Null);
    assert_eq!(entries[0]["fault"], "reset");
    let mut cmd = tail(&sandbox, &base, ADMIN, "table", &["--since", "1"]);
    cmd.env("COLUMNS", "80");
    let table = stdout(&run(cmd).await.success());
    let row = table.lines().nth(1).expect("a row");
    assert!(row.contains(" POST      - fault:reset "), "{table}");
    // The filters see no status on it.
    let none = run(tail(
        &sandbox,
        &base,
        ADMIN,
        "json",
        &["--since", "1", "--status", "200"],
    ))
    .await
    .success();
    assert_eq!(stdout(&none), "");
}
