//! `payments-mock-server proxy` and `check` as processes (COMMANDS.md):
//! the banner, the summary on stderr at SIGTERM and the exit code; `check`
//! on a recording made by `proxy`, broken lines, files that are no
//! recording; `--seed-from`; a malformed `--upstream`.

use std::process::Child;

use payments_mock_server::MockServer;

use crate::MERCHANT;
use crate::process::{command, spawn_listening};
use serde_json::{Value, json};

pub(crate) use crate::process::stop;

pub(crate) const BIN: &str = env!("CARGO_BIN_EXE_payments-mock-server");
/// Variables a developer's shell may hold that would change the runs.
pub(crate) const UNSET: [&str; 2] = ["PAYMENTS_MOCK_STORE", "PAYMENTS_MOCK_ADMIN_KEY"];

/// A process started with `args`, its banner read: the child and base URL.
pub(crate) fn spawn(args: &[&str]) -> (Child, String) {
    spawn_with(args, &[])
}

/// [`spawn`] with environment variables `env` set (and
/// `PAYMENTS_MOCK_STORE`, `PAYMENTS_MOCK_ADMIN_KEY` unset unless given).
pub(crate) fn spawn_with(args: &[&str], env: &[(&str, &str)]) -> (Child, String) {
    spawn_listening(&mut command(BIN, args, &UNSET, env))
}

/// `proxy --upstream UPSTREAM --port 0` and `more`.
pub(crate) fn proxy_args<'a>(upstream: &'a str, more: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["proxy", "--upstream", upstream, "--port", "0"];
    args.extend_from_slice(more);
    args
}

/// [`spawn`] of [`proxy_args`].
pub(crate) fn spawn_proxy(upstream: &str, more: &[&str]) -> (Child, String) {
    spawn(&proxy_args(upstream, more))
}

/// Runs to its end: exit code, stdout, stderr.
pub(crate) fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let output = command(BIN, args, &UNSET, &[]).output().expect("runs");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

pub(crate) async fn post(base: &str, path: &str, body: &Value) -> Value {
    reqwest::Client::new()
        .post(format!("{base}{path}"))
        .json(body)
        .send()
        .await
        .expect("answered")
        .json()
        .await
        .unwrap_or(Value::Null)
}

pub(crate) fn topup(reference: &str) -> Value {
    json!({
        "merchantId": MERCHANT, "referenceNo": reference, "amount": 1050,
        "productCode": "TOPUP", "storeId": "S1", "payerId": "60123456789",
    })
}

/// An upstream that answers every request with an HTML 502.
pub(crate) async fn broken_upstream() -> String {
    html_upstream(
        axum::http::StatusCode::BAD_GATEWAY,
        "<html><body>Bad gateway</body></html>",
    )
    .await
}

/// An upstream that answers every request `status` with the HTML `page`.
pub(crate) async fn html_upstream(status: axum::http::StatusCode, page: &'static str) -> String {
    let app = axum::Router::new()
        .fallback(move || async move { (status, [("content-type", "text/html")], page) });
    format!("http://{}", serve(app).await)
}

/// Serves `app` on a loopback port of its own: its address.
pub(crate) async fn serve(app: axum::Router) -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let addr = listener.local_addr().expect("an address");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    addr
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clean_run_exits_0_and_a_violation_exits_1_with_the_summary_on_stderr() {
    let mock = MockServer::start().await;
    let (proxy, base) = spawn_proxy(&mock.base_url(), &[]);
    let answer = post(&base, "/api/payments/initiate", &topup("BIN-1")).await;
    assert_eq!(answer["isSuccess"], true);
    let (code, stderr) = stop(proxy);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("contract check: 1 exchanges (initiate 1)"),
        "{stderr}"
    );
    assert!(stderr.contains("no finding"), "{stderr}");

    let upstream = broken_upstream().await;
    let (proxy, base) = spawn_proxy(&upstream, &[]);
    let reply = reqwest::get(format!("{base}/api/payments/x/status"))
        .await
        .expect("answered");
    assert_eq!(reply.status(), 502);
    assert_eq!(reply.headers()["x-contract-verdict"], "violation");
    assert_eq!(
        reply.text().await.expect("a body"),
        "<html><body>Bad gateway</body></html>"
    );
    let (code, stderr) = stop(proxy);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("envelope.shape"), "{stderr}");
    assert!(stderr.contains("violations 1"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strict_fails_on_undocumented_and_check_repeats_the_recorded_run() {
    let mock = MockServer::start().await;
    let dir = tempfile::tempdir().expect("a directory");
    let record = dir.path().join("run.jsonl");
    let report = dir.path().join("report.jsonl");
    let (proxy, base) = spawn_proxy(
        &mock.base_url(),
        &[
            "--strict",
            "--record",
            &record.display().to_string(),
            "--report",
            &report.display().to_string(),
        ],
    );
    post(&base, "/api/payments/initiate", &topup("BIN-2")).await;
    let duplicate = post(&base, "/api/payments/initiate", &topup("BIN-2")).await;
    assert_eq!(duplicate["errorCode"], "DUPLICATE_REFERENCE_NO");
    let (code, stderr) = stop(proxy);
    assert_eq!(code, Some(1), "--strict: {stderr}");
    assert!(stderr.contains("code.undocumented"), "{stderr}");
    let report_lines: Vec<Value> = std::fs::read_to_string(&report)
        .expect("a report")
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON lines"))
        .collect();
    assert_eq!(report_lines.len(), 2);
    assert_eq!(report_lines[1]["verdict"], "undocumented");
    assert_eq!(report_lines[1]["findings"][0]["rule"], "code.undocumented");

    let file = record.display().to_string();
    let (code, stdout, _) = run(&["check", &file]);
    assert_eq!(code, Some(0), "without --strict: {stdout}");
    assert!(
        stdout.contains("contract check: 2 exchanges (initiate 2)"),
        "{stdout}"
    );
    let (code, _, _) = run(&["check", &file, "--strict"]);
    assert_eq!(code, Some(1));
    let (code, stdout, _) = run(&["check", &file, "--output", "json"]);
    assert_eq!(code, Some(0));
    let summary: Value = serde_json::from_str(&stdout).expect("JSON");
    assert_eq!(summary["exchanges"], 2);
    assert_eq!(
        summary["rules"]["code.undocumented"]["levels"]["undocumented"],
        1
    );

    // A broken line is named and the rest still checked.
    let mut text = std::fs::read_to_string(&record).expect("read");
    text.insert_str(0, "{this is not an exchange\n");
    let broken = dir.path().join("broken.jsonl");
    std::fs::write(&broken, text).expect("written");
    let (code, stdout, stderr) = run(&["check", &broken.display().to_string()]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("broken.jsonl:1: not a recorded exchange"),
        "{stderr}"
    );
    assert!(stdout.contains("2 exchanges"), "{stdout}");
}

#[test]
fn files_that_are_no_recording_and_bad_upstreams_are_refused() {
    let dir = tempfile::tempdir().expect("a directory");
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "hello\nworld\n").expect("written");
    let (code, _, stderr) = run(&["check", &text.display().to_string()]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("not a recording"), "{stderr}");
    let array = dir.path().join("array.json");
    std::fs::write(&array, "[{\"seq\":1},\n{\"seq\":2}]").expect("written");
    let (code, _, stderr) = run(&["check", &array.display().to_string()]);
    assert_eq!(code, Some(2), "{stderr}");
    let (code, _, stderr) = run(&["check", &dir.path().join("missing").display().to_string()]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("cannot read"), "{stderr}");
    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "").expect("written");
    assert_eq!(run(&["check", &empty.display().to_string()]).0, Some(2));

    for (upstream, says) in [
        ("ftp://user:hunter2@host/x", "http or https"),
        ("not a url hunter2", "not a URL"),
        ("https://user:hunter2@staging.example/?q=1", "no query"),
        ("", "not a URL"),
    ] {
        let (code, _, stderr) = run(&proxy_args(upstream, &[]));
        assert_eq!(code, Some(2), "{upstream}: {stderr}");
        assert!(stderr.contains(says), "{upstream}: {stderr}");
        assert!(!stderr.contains("hunter2"), "{stderr}");
    }
    let (code, _, stderr) = run(&[
        "proxy",
        "--upstream",
        "http://127.0.0.1:9",
        "--upstream-timeout",
        "0s",
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    let (code, _, _) = run(&["proxy"]);
    assert_eq!(code, Some(2), "--upstream is required");
    // A port already taken: 2, never 1 (which says "a violation was seen").
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let port = taken.local_addr().expect("its address").port().to_string();
    let (code, _, stderr) = run(&["proxy", "--upstream", "http://127.0.0.1:9", "--port", &port]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("cannot listen"), "{stderr}");
    assert!(
        stderr.contains("(--host, --port)"),
        "names the flags: {stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recording_seeds_a_mock_in_the_last_state_it_saw() {
    let upstream = MockServer::start().await;
    let dir = tempfile::tempdir().expect("a directory");
    let record = dir.path().join("staging.jsonl");
    let (proxy, base) = spawn_proxy(
        &upstream.base_url(),
        &["--record", &record.display().to_string()],
    );
    let paid = post(&base, "/api/payments/initiate", &topup("SEED-PAID")).await;
    let paid_id = paid["data"]["transactionId"]
        .as_str()
        .expect("an id")
        .to_owned();
    post(
        &base,
        "/api/payments/confirm",
        &json!({ "transactionId": paid_id, "referenceNo": "SEED-PAID" }),
    )
    .await;
    let open = post(&base, "/api/payments/initiate", &topup("SEED-OPEN")).await;
    let open_id = open["data"]["transactionId"]
        .as_str()
        .expect("an id")
        .to_owned();
    // Seen only by status: counted, never guessed.
    let stranger = upstream.base_url();
    let unseen = post(&stranger, "/api/payments/initiate", &topup("SEED-UNSEEN")).await;
    let unseen_id = unseen["data"]["transactionId"]
        .as_str()
        .expect("an id")
        .to_owned();
    reqwest::get(format!("{base}/api/payments/{unseen_id}/status"))
        .await
        .expect("answered");
    assert_eq!(stop(proxy).0, Some(0));

    let (mock, local) = spawn(&["--port", "0", "--seed-from", &record.display().to_string()]);
    let by_id: Value = reqwest::get(format!("{local}/api/payments/{paid_id}/status"))
        .await
        .expect("answered")
        .json()
        .await
        .expect("JSON");
    assert_eq!(by_id["data"]["status"], "SUCCESSFUL");
    assert_eq!(by_id["data"]["amount"].to_string(), "10.50");
    let by_reference: Value =
        reqwest::get(format!("{local}/api/payments/reference/SEED-OPEN/status"))
            .await
            .expect("answered")
            .json()
            .await
            .expect("JSON");
    assert_eq!(by_reference["data"]["transactionId"], open_id.as_str());
    let confirmed = post(
        &local,
        "/api/payments/confirm",
        &json!({ "transactionId": open_id, "referenceNo": "SEED-OPEN" }),
    )
    .await;
    assert_eq!(
        confirmed["data"]["status"], "SUCCESSFUL",
        "replayed locally: {confirmed}"
    );
    let missing = reqwest::get(format!("{local}/api/payments/{unseen_id}/status"))
        .await
        .expect("answered");
    assert_eq!(missing.status(), 404);
    let (code, stderr) = stop(mock);
    assert_eq!(code, Some(0));
    assert!(
        stderr.contains("seeded 2 transactions")
            && stderr.contains("1 the recording shows could not be placed"),
        "{stderr}"
    );
    let (code, _, stderr) = run(&[
        "--port",
        "0",
        "--seed-from",
        &dir.path().join("nope").display().to_string(),
    ]);
    assert_eq!(code, Some(2), "{stderr}");
}

/// Issue 40: `X-Mock-Fault: answer-other` on an initiate answered the other
/// transaction's stored `CONFIRMED` although reads already said
/// `SUCCESSFUL` (a settled BILLPAY), and the proxy then reported a false
/// `status.regressed`. The answer carries the other transaction's current
/// status, as a status read would; through the binaries, the proxy finds
/// the wrong echo (`data.echo`) and no regression.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answer_other_on_an_initiate_shows_the_others_current_status() {
    let (mock, mock_base) = spawn(&["--port", "0"]);
    let (proxy, base) = spawn_proxy(&mock_base, &[]);
    let mut bill = topup("AO-SETTLED");
    bill["productCode"] = "BILLPAY".into();
    let answer = post(&base, "/api/payments/initiate", &bill).await;
    let id = answer["data"]["transactionId"]
        .as_str()
        .expect("an id")
        .to_owned();
    let confirmed = post(
        &base,
        "/api/payments/confirm",
        &json!({"transactionId": id, "referenceNo": "AO-SETTLED"}),
    )
    .await;
    assert_eq!(confirmed["data"]["status"], "CONFIRMED", "{confirmed}");
    let advanced = post(&mock_base, "/_mock/clock/advance", &json!({"seconds": 3})).await;
    assert_eq!(advanced["isSuccess"], true, "{advanced}");
    let read: Value = reqwest::get(format!("{base}/api/payments/{id}/status"))
        .await
        .expect("answered")
        .json()
        .await
        .expect("json");
    assert_eq!(read["data"]["status"], "SUCCESSFUL", "{read}");

    let answered = reqwest::Client::new()
        .post(format!("{base}/api/payments/initiate"))
        .header("x-mock-fault", "answer-other")
        .json(&topup("AO-NEW"))
        .send()
        .await
        .expect("answered");
    let verdict = answered
        .headers()
        .get("x-contract-verdict")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let other: Value = answered.json().await.expect("json");
    assert_eq!(other["data"]["transactionId"], id.as_str(), "{other}");
    assert_eq!(
        other["data"]["status"], "SUCCESSFUL",
        "as a read shows it: {other}"
    );
    assert_eq!(verdict.as_deref(), Some("violation"));
    let (code, stderr) = stop(proxy);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("data.echo"), "{stderr}");
    assert!(!stderr.contains("status.regressed"), "{stderr}");
    stop(mock);
}

/// Issue 40: the proxy printed no console address at start, as the mock
/// does; it logs `web console at URL` (stdout keeps its one banner line).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_proxy_logs_its_console_address_at_start() {
    let mock = MockServer::start().await;
    let (proxy, base) = spawn_proxy(&mock.base_url(), &[]);
    let page = reqwest::get(format!("{base}/_proxy/ui/"))
        .await
        .expect("answered");
    assert_eq!(page.status(), 200);
    let (code, stderr) = stop(proxy);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains(&format!("web console at {base}/_proxy/ui/")),
        "{stderr}"
    );
}
