//! `payments tail` (issue 44): the mock's journal (the admin key's, a
//! merchant's own part, a sandbox's), each filter, JSON lines and the
//! table at 80 columns, `--follow` until Ctrl-C (exit 0) or until the
//! server goes away (exit 4), refused keys (exit 1), usage errors (exit
//! 2), and `--proxy` against a contract proxy in front of the mock.

/// Filters: each narrows the journal; bad values are usage errors.
mod filters;
/// `--follow`: later entries as they come, Ctrl-C, a server that goes away.
mod follow;
/// What could be missed: entries dropped, a journal started again, the
/// proxy's order, a method too wide.
mod losses;
/// Paths sent percent-encoded: decoded for reading in the table, as sent
/// in the JSON lines.
mod paths;
/// `--proxy`: the contract proxy's exchanges and verdicts.
mod proxy;
/// `--proxy --follow` and exchanges the proxy no longer keeps by the
/// next poll: said once, with how many.
mod proxy_losses;
/// `--proxy --follow` across a proxy restarted past the last exchange
/// read, and without one: each exchange once.
mod proxy_restart;
/// `--follow` across a mock restarted past the last entry read, and
/// without one: each entry once.
mod restart;

use payments_mock_server::MockServer;
use serde_json::{Value, json};
use unicode_width::UnicodeWidthStr as _;

use crate::common::{MERCHANT, Sandbox, closed_port_url, run, snapshot_settings, stderr, stdout};

const ADMIN: &str = "adm_tail_0f3e9a7c51d2";
const KEY_A: &str = "sk_tail_merchant_a_7f1c";
const KEY_B: &str = "sk_tail_merchant_b_29d4";
/// An API key bound to no merchant: its requests are the merchant's they
/// name.
const KEY_UNBOUND: &str = "sk_tail_unbound_5e81";
const MERCHANT_B: &str = "9b2d5c3e-4a1f-4e6b-8c7d-0e1f2a3b4c5d";
const PROXY_KEY: &str = "adm_proxy_tail_5e8b";
const UNKNOWN: &str = "01a20813-0000-7000-8000-000000000000";

/// A mock with an admin key and two merchants' keys.
async fn mock() -> MockServer {
    mock_on(std::net::TcpListener::bind("127.0.0.1:0").expect("loopback")).await
}

/// [`mock`], serving on `listener` (the address of one that stopped).
async fn mock_on(listener: std::net::TcpListener) -> MockServer {
    MockServer::builder()
        .listener(listener)
        .admin_key(ADMIN)
        .api_key(KEY_A, Some(MERCHANT.parse().expect("a UUID")))
        .api_key(KEY_B, Some(MERCHANT_B.parse().expect("a UUID")))
        .api_key(KEY_UNBOUND, None)
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
    read_unknown(base).await;
    initiate(base, KEY_B, MERCHANT_B, "INV-B1").await;
    id
}

/// A status read of [`UNKNOWN`] with merchant A's key: a 404 entry.
async fn read_unknown(base: &str) -> Value {
    api(
        base,
        KEY_A,
        "GET",
        &format!("/api/payments/{UNKNOWN}/status"),
        None,
    )
    .await
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
    // Everything A's key sent (the look-up of a transaction nobody holds
    // too), not B's initiate.
    assert_eq!(seqs(&a), [1, 2, 3, 4, 5, 6]);
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

/// `-v` prints each page's trace id, as every other command's call, and
/// the page's request carries it as the W3C `traceparent`; without `-v`,
/// none is sent.
#[tokio::test(flavor = "multi_thread")]
async fn verbose_prints_each_pages_trace_id_it_sent() {
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer as Stub, ResponseTemplate};
    let stub = Stub::start().await;
    Mock::given(method("GET"))
        .and(path("/_mock/requests"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "isSuccess": true, "data": {"items": []}
        })))
        .mount(&stub)
        .await;
    let sandbox = Sandbox::new();
    let mut cmd = tail(&sandbox, &stub.uri(), ADMIN, "json", &[]);
    cmd.arg("-v");
    let err = stderr(&run(cmd).await.success());
    let trace = err
        .lines()
        .find(|line| line.starts_with("< HTTP 200"))
        .and_then(|line| line.split(", trace ").nth(1))
        .unwrap_or_else(|| panic!("a response line with its trace id: {err}"))
        .to_owned();
    assert_eq!(trace.len(), 32, "{trace}");
    assert!(trace.bytes().all(|b| b.is_ascii_hexdigit()), "{trace}");
    let sent = stub.received_requests().await.expect("recorded");
    let header = sent[0]
        .headers
        .get("traceparent")
        .and_then(|v| v.to_str().ok())
        .expect("a traceparent")
        .to_owned();
    let parts: Vec<&str> = header.split('-').collect();
    assert_eq!(parts.len(), 4, "{header}");
    assert_eq!((parts[0], parts[1], parts[3]), ("00", trace.as_str(), "01"));
    assert_eq!(parts[2].len(), 16, "{header}");
    // Without -v: no header.
    stub.reset().await;
    Mock::given(method("GET"))
        .and(path("/_mock/requests"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "isSuccess": true, "data": {"items": []}
        })))
        .mount(&stub)
        .await;
    let quiet = run(tail(&sandbox, &stub.uri(), ADMIN, "json", &[])).await;
    assert!(!stderr(&quiet.success()).contains("trace"));
    let sent = stub.received_requests().await.expect("recorded");
    assert!(sent[0].headers.get("traceparent").is_none());
}
