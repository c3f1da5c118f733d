//! A row whose own answer the client cannot use (the service's envelope,
//! but its data does not read, or it is about another transaction or
//! reference) is `unverified`, and the rows after it are judged; only a
//! failure that would fail every row stops the run.

use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer as Stub, ResponseTemplate};

use crate::common::{MERCHANT, Sandbox, run, stderr, stdout};

/// The other reconcile snapshots' settings, beside them (this file is a
/// level deeper).
fn settings() -> insta::Settings {
    let mut settings = super::settings();
    settings.set_snapshot_path("../../snapshots");
    settings
}

/// A status answer for `reference` whose amount is `amount` as written.
pub(super) fn answer(reference: &str, amount: &str) -> String {
    format!(
        r#"{{"isSuccess":true,"errorCode":null,"message":null,"data":{{"transactionId":"01937e1c-0000-7000-8000-{:012}","referenceNo":"{reference}","status":"SUCCESSFUL","amount":{amount},"productCode":"TOPUP","createdAt":"2026-11-22T08:15:30.123Z","lastModifiedAt":null,"providerReference":null,"message":null,"extraProperties":null}}}}"#,
        reference.bytes().map(u64::from).sum::<u64>()
    )
}

/// Answers `GET /api/payments/reference/{reference}/status` with `body`.
pub(super) async fn answers(stub: &Stub, reference: &str, body: String) {
    Mock::given(method("GET"))
        .and(path(format!("/api/payments/reference/{reference}/status")))
        .respond_with(ResponseTemplate::new(200).set_body_raw(body, "application/json"))
        .mount(stub)
        .await;
}

/// INV-1 matches; INV-2 is answered `"amount":null`, INV-3 `1e30` (no
/// decimal holds it), INV-4 with another reference's transaction; INV-5,
/// after them, matches.
async fn service() -> Stub {
    let stub = Stub::start().await;
    answers(&stub, "INV-1", answer("INV-1", "10.00")).await;
    answers(&stub, "INV-2", answer("INV-2", "null")).await;
    answers(&stub, "INV-3", answer("INV-3", "1e30")).await;
    answers(&stub, "INV-4", answer("INV-2026-0001", "150.00")).await;
    answers(&stub, "INV-5", answer("INV-5", "5.00")).await;
    stub
}

const LEDGER: &str =
    "referenceNo,amount\nINV-1,10.00\nINV-2,20.00\nINV-3,30.00\nINV-4,150.00\nINV-5,5.00\n";

fn reconcile(sandbox: &Sandbox, stub: &Stub, ledger: &std::path::Path) -> assert_cmd::Command {
    let mut cmd = sandbox.payments();
    cmd.args(["--base-url", &stub.uri(), "--merchant-id", MERCHANT])
        .arg("reconcile")
        .arg(ledger);
    cmd
}

/// Exit 4 "the service cannot be reached" for a whole run, at the first
/// such row, before: now each is its own row, and the run ends complete
/// with exit 6.
#[tokio::test(flavor = "multi_thread")]
async fn an_answer_the_client_cannot_use_is_unverified_and_the_run_goes_on() {
    let stub = service().await;
    let sandbox = Sandbox::new();
    let ledger = sandbox.write_file("ledger.csv", LEDGER);
    let report = sandbox.path().join("report.csv");
    let mut cmd = reconcile(&sandbox, &stub, &ledger);
    cmd.args(["-o", "json", "--report"]).arg(&report);
    let assert = run(cmd).await.code(6);
    assert_eq!(stderr(&assert), "");
    let out = stdout(&assert);
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|line| serde_json::from_str(line).expect("json"))
        .collect();
    let classes = super::classes(&lines);
    assert_eq!(
        classes,
        ["match", "unverified", "unverified", "unverified", "match"],
        "{out}"
    );
    for line in &lines[1..4] {
        assert_eq!(line["service"], serde_json::Value::Null, "{out}");
        let detail = line["detail"].as_str().expect("a detail");
        assert!(
            detail.starts_with("the service's answer for this row could not be used: ")
                && detail.ends_with("; check it by hand"),
            "{detail}"
        );
    }
    assert!(
        lines[3]["detail"]
            .as_str()
            .is_some_and(|d| d.contains("referenceNo sent INV-4, answered INV-2026-0001")),
        "{out}"
    );
    settings().bind(|| insta::assert_snapshot!("reconcile_unverified_json", out));
    let report = std::fs::read_to_string(&report).expect("a complete report");
    let classes: Vec<String> = csv::Reader::from_reader(report.as_bytes())
        .records()
        .map(|r| r.expect("a record")[2].to_owned())
        .collect();
    assert_eq!(
        classes,
        ["match", "unverified", "unverified", "unverified", "match"]
    );

    let mut cmd = reconcile(&sandbox, &stub, &ledger);
    cmd.args(["-o", "table"]).env("COLUMNS", "100");
    let assert = run(cmd).await.code(6);
    settings().bind(|| insta::assert_snapshot!("reconcile_unverified_table", stdout(&assert)));
}

/// The answer is never shown as the service's data, and a failure that
/// would fail every row still stops the run: a body that is not the
/// envelope (here a proxy's HTML page) after the unverified row.
#[tokio::test(flavor = "multi_thread")]
async fn an_answer_that_is_not_the_envelope_still_stops_the_run() {
    let stub = service().await;
    Mock::given(method("GET"))
        .and(path("/api/payments/reference/INV-6/status"))
        .respond_with(
            ResponseTemplate::new(200).set_body_raw("<html>maintenance</html>", "text/html"),
        )
        .mount(&stub)
        .await;
    let sandbox = Sandbox::new();
    let ledger = sandbox.write_file(
        "ledger.csv",
        "referenceNo,amount\nINV-4,150.00\nINV-6,1.00\nINV-1,10.00\n",
    );
    let mut cmd = reconcile(&sandbox, &stub, &ledger);
    cmd.args(["-o", "json", "--retries", "0"]);
    let assert = run(cmd).await.code(4);
    let out = stdout(&assert);
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|line| serde_json::from_str(line).expect("json"))
        .collect();
    assert_eq!(
        lines.len(),
        2,
        "the unverified row, then the summary: {out}"
    );
    assert_eq!(lines[0]["class"], "unverified", "{out}");
    assert!(
        !out.contains("\"isSuccess\""),
        "no envelope on stdout: {out}"
    );
    assert_eq!(lines[1]["summary"]["unverified"], 1, "{out}");
    assert_eq!(lines[1]["summary"]["complete"], false, "{out}");
    let err = stderr(&assert);
    assert!(err.contains("reconcile stopped at ledger line 3"), "{err}");
}
