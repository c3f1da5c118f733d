//! `reconcile`: every class, the table, the json lines and the report, and
//! ledgers as they come from spreadsheets and exports (BOM, CRLF, quoted
//! commas, missing and extra columns, an empty file, a 50 MB line, bytes
//! that are not UTF-8, a column named twice), against the real mock.

use payments_client::{Client, ConfirmRequest, Currency, InitiateRequest, MinorAmount, Uuid};
use payments_mock_server::MockServer;
use predicates::str::contains;

use crate::common::{MERCHANT, Sandbox, closed_port_url, run, snapshot_settings, stderr, stdout};

/// Creates a transaction through the client (faster than the binary) and
/// confirms it when asked; returns its id.
async fn pay(
    client: &Client,
    reference: &str,
    minor: u64,
    currency: Currency,
    product: &str,
    confirm: bool,
) -> String {
    let merchant = Uuid::parse_str(MERCHANT).expect("a uuid");
    let request = InitiateRequest::builder(
        merchant,
        reference,
        MinorAmount::new(minor).expect("positive"),
        product,
        "S1",
    )
    .currency(currency)
    .payer_id("60123456789")
    .build()
    .expect("a valid request");
    let id = client
        .initiate(request)
        .await
        .expect("initiated")
        .data()
        .transaction_id
        .to_string();
    if confirm {
        let request = ConfirmRequest::builder(&id, reference)
            .build()
            .expect("a valid confirm");
        client.confirm(request).await.expect("confirmed");
    }
    id
}

/// The mock with one transaction per class:
/// INV-1001 paid 49.90, INV-1002 paid 12.00, INV-1003 declined 30.00,
/// INV-1004 initiated 15.00, INV-1005 paid 1500 JPY, INV-1006 paid 20.00,
/// INV,1007 paid 1.00, INV-1011 paid 1.505 KWD.
async fn shop() -> (MockServer, Vec<String>) {
    let server = MockServer::start().await;
    let client = Client::builder(server.base_url())
        .build()
        .expect("a client");
    let mut ids = Vec::new();
    for (reference, minor, currency, product, confirm) in [
        ("INV-1001", 4990, Currency::MYR, "TOPUP", true),
        ("INV-1002", 1200, Currency::MYR, "TOPUP", true),
        ("INV-1003", 3000, Currency::MYR, "DECLINED", true),
        ("INV-1004", 1500, Currency::MYR, "TOPUP", false),
        ("INV-1005", 1500, Currency::JPY, "TOPUP", true),
        ("INV-1006", 2000, Currency::MYR, "TOPUP", true),
        ("INV,1007", 100, Currency::MYR, "TOPUP", true),
        ("INV-1011", 1505, Currency::KWD, "TOPUP", true),
    ] {
        ids.push(pay(&client, reference, minor, currency, product, confirm).await);
    }
    (server, ids)
}

/// A ledger with every class, and a row looked up by its transactionId.
fn every_class(ids: &[String]) -> String {
    format!(
        "referenceNo,amount,currency,status,transactionId,note\n\
         INV-1001,49.90,MYR,SUCCESSFUL,,paid\n\
         INV-1002,10.00,MYR,SUCCESSFUL,,short\n\
         INV-1003,30.00,MYR,successful,,declined\n\
         INV-1004,15.00,MYR,,,not confirmed\n\
         INV-1011,1.50,MYR,SUCCESSFUL,,paid in dinar\n\
         INV-1006,20.00,,,{},by id\n\
         INV-1099,5.00,MYR,SUCCESSFUL,,never sent\n\
         INV-1001,49.90,MYR,SUCCESSFUL,,exported twice\n\
         INV-1008,10.505,MYR,SUCCESSFUL,,\n\
         \"INV-1009, gift\",abc,MYR,PAID,,\n\
         INV-1010,20.00,MYR,,{},another order's id\n",
        ids[5], ids[1]
    )
}

fn reconcile(
    sandbox: &Sandbox,
    server: &MockServer,
    ledger: &std::path::Path,
) -> assert_cmd::Command {
    let mut cmd = sandbox.payments();
    cmd.args([
        "--base-url",
        &server.base_url(),
        "--merchant-id",
        MERCHANT,
        "reconcile",
    ])
    .arg(ledger);
    cmd
}

fn settings() -> insta::Settings {
    let mut settings = snapshot_settings();
    settings.add_filter(r"PRV-[0-9A-F]{32}", "PRV-[PROVIDER-REF]");
    settings.add_filter(r"request id [0-9a-f-]{36}", "request id [REQUEST-ID]");
    settings
}

#[tokio::test(flavor = "multi_thread")]
async fn every_class_in_the_table_then_the_rows_that_differ() {
    let (server, ids) = shop().await;
    let sandbox = Sandbox::new();
    let ledger = sandbox.write_file("ledger.csv", &every_class(&ids));
    let mut cmd = reconcile(&sandbox, &server, &ledger);
    cmd.args(["-o", "table"]);
    let assert = run(cmd).await.code(6);
    assert_eq!(stderr(&assert), "");
    settings().bind(|| insta::assert_snapshot!("reconcile_table", stdout(&assert)));
}

#[tokio::test(flavor = "multi_thread")]
async fn every_class_as_json_lines_and_a_summary() {
    let (server, ids) = shop().await;
    let sandbox = Sandbox::new();
    let ledger = sandbox.write_file("ledger.csv", &every_class(&ids));
    let assert = run(reconcile(&sandbox, &server, &ledger)).await.code(6);
    let out = stdout(&assert);
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|line| serde_json::from_str(line).expect("json"))
        .collect();
    let classes = classes(&lines);
    assert_eq!(
        classes,
        [
            "match",
            "amount",
            "status",
            "pending",
            "currency",
            "match",
            "missing",
            "duplicate",
            "invalid",
            "invalid",
            "missing"
        ]
    );
    assert_eq!(
        lines[0]["service"]["amount"].to_string(),
        "49.90",
        "exact, as the service wrote it"
    );
    settings().bind(|| insta::assert_snapshot!("reconcile_json", out));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_ledger_that_matches_exits_0_and_the_report_has_every_row() {
    let (server, _) = shop().await;
    let sandbox = Sandbox::new();
    let ledger = sandbox.write_file(
        "ledger.csv",
        "referenceNo,amount\nINV-1001,49.90\nINV-1006,20\n",
    );
    let report = sandbox.path().join("report.csv");
    let mut cmd = reconcile(&sandbox, &server, &ledger);
    cmd.args(["-o", "table", "--report"]).arg(&report);
    let assert = run(cmd).await.success();
    let out = stdout(&assert);
    assert!(
        out.lines()
            .any(|line| line.split_whitespace().eq(["match", "2"])),
        "{out}"
    );
    assert!(
        !sandbox.path().join("report.csv.partial").exists(),
        "a complete run's report is put in place"
    );
    let report = std::fs::read_to_string(&report).expect("the report is written");
    settings().bind(|| insta::assert_snapshot!("reconcile_report_csv", report));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_report_holds_what_the_json_lines_hold() {
    let (server, ids) = shop().await;
    let sandbox = Sandbox::new();
    let ledger = sandbox.write_file("ledger.csv", &every_class(&ids));
    let report = sandbox.path().join("report.csv");
    let mut cmd = reconcile(&sandbox, &server, &ledger);
    cmd.arg("--report").arg(&report);
    run(cmd).await.code(6);
    let mut reader = csv::Reader::from_path(&report).expect("a CSV report");
    let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.expect("a record")).collect();
    assert_eq!(rows.len(), 11);
    assert_eq!(&rows[9][1], "INV-1009, gift", "quoted as needed");
    assert_eq!(&rows[1][2], "amount");
    assert_eq!(&rows[1][10], "12.00");
}

/// A spreadsheet's "CSV UTF-8" export: byte order mark, CRLF, a quoted
/// comma in a reference, columns in another order, a column we ignore.
#[tokio::test(flavor = "multi_thread")]
async fn a_spreadsheet_export_reads_like_any_ledger() {
    let (server, _) = shop().await;
    let sandbox = Sandbox::new();
    let ledger = sandbox.write_file(
        "export.csv",
        "\u{feff}Amount,Customer,ReferenceNo\r\n1.00,\"Tan, Mei Ling\",\"INV,1007\"\r\n\
         49.90,\"Lee \"\"Ah\"\" Kow\",INV-1001\r\n\r\n",
    );
    let mut cmd = reconcile(&sandbox, &server, &ledger);
    cmd.args(["-o", "table"]);
    let assert = run(cmd).await.success();
    settings().bind(|| insta::assert_snapshot!("reconcile_spreadsheet_export", stdout(&assert)));
}

#[tokio::test(flavor = "multi_thread")]
async fn ledgers_that_cannot_be_reconciled_exit_2_saying_why() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let mut transcript = String::new();
    for (name, contents) in [
        ("empty", ""),
        ("only a byte order mark and blank lines", "\u{feff}\r\n\r\n"),
        ("no amount column", "referenceNo,total\nR1,1.00\n"),
        ("neither required column", "order,total\nR1,1.00\n"),
        (
            "a column named twice",
            "referenceNo,amount,note,Amount\nR1,1,x,2\n",
        ),
    ] {
        let ledger = sandbox.write_file("ledger.csv", contents);
        let assert = run(reconcile(&sandbox, &server, &ledger)).await.code(2);
        assert_eq!(stdout(&assert), "", "{name}: nothing judged");
        transcript.push_str(&format!("## {name}\n{}\n", stderr(&assert)));
    }
    let missing = sandbox.path().join("missing.csv");
    let assert = run(reconcile(&sandbox, &server, &missing)).await.code(2);
    transcript.push_str(&format!("## no such file\n{}\n", stderr(&assert)));
    let assert = run(reconcile(&sandbox, &server, sandbox.path()))
        .await
        .code(2);
    transcript.push_str(&format!("## a directory\n{}\n", stderr(&assert)));
    let sandbox_path = sandbox.path().display().to_string();
    let mut settings = settings();
    settings.add_filter(&regex_escape(&sandbox_path), "[SANDBOX]");
    settings.bind(|| insta::assert_snapshot!("reconcile_unreadable_ledgers", transcript));
}

fn regex_escape(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '/' || c == '_' {
                c.to_string()
            } else {
                format!("\\{c}")
            }
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_header_only_ledger_matches_and_exits_0() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let ledger = sandbox.write_file("ledger.csv", "referenceNo,amount\n");
    let assert = run(reconcile(&sandbox, &server, &ledger)).await.success();
    assert_eq!(
        stdout(&assert),
        "{\"summary\":{\"rows\":0,\"match\":0,\"missing\":0,\"amount\":0,\"currency\":0,\"status\":0,\
         \"pending\":0,\"duplicate\":0,\"invalid\":0,\"unverified\":0,\"defaultCurrency\":\"MYR\",\"complete\":true}}\n"
    );
}

/// A 50 MB line is one invalid row (read through, never kept), and the
/// rows after it are judged; nothing of it is repeated on stdout.
#[tokio::test(flavor = "multi_thread")]
async fn a_50_mb_line_is_an_invalid_row_and_the_next_rows_are_judged() {
    let (server, _) = shop().await;
    let sandbox = Sandbox::new();
    let mut text = b"referenceNo,amount\nINV-1001,49.90\n".to_vec();
    text.extend(std::iter::repeat_n(b'7', 50 * 1024 * 1024));
    text.extend(b",1.00\nINV-1006,20.00\n");
    let ledger = sandbox.path().join("huge.csv");
    std::fs::write(&ledger, &text).expect("written");
    drop(text);
    let mut cmd = reconcile(&sandbox, &server, &ledger);
    cmd.args(["-o", "table"]);
    let assert = run(cmd).await.code(6);
    let out = stdout(&assert);
    assert!(out.len() < 2_000, "{} bytes", out.len());
    settings().bind(|| insta::assert_snapshot!("reconcile_50_mb_line", out));
}

#[tokio::test(flavor = "multi_thread")]
async fn bytes_that_are_not_utf8_make_a_row_invalid_only_where_they_matter() {
    let (server, _) = shop().await;
    let sandbox = Sandbox::new();
    let mut text = b"referenceNo,amount,note\n".to_vec();
    text.extend(b"INV-1001,49.90,caf\xe9\nINV\xff1002,12.00,x\nINV-1006,2\xb70,y\n");
    let ledger = sandbox.path().join("latin1.csv");
    std::fs::write(&ledger, &text).expect("written");
    let mut cmd = reconcile(&sandbox, &server, &ledger);
    cmd.args(["-o", "table"]);
    let assert = run(cmd).await.code(6);
    settings().bind(|| insta::assert_snapshot!("reconcile_not_utf8", stdout(&assert)));
}

#[tokio::test(flavor = "multi_thread")]
async fn stdin_is_read_with_a_dash() {
    let (server, _) = shop().await;
    let sandbox = Sandbox::new();
    let mut cmd = sandbox.payments();
    cmd.args(["--base-url", &server.base_url(), "reconcile", "-"])
        .write_stdin("referenceNo,amount\nINV-1001,49.90\n");
    run(cmd)
        .await
        .success()
        .stdout(contains("\"class\":\"match\""));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_default_currency_applies_to_rows_without_one() {
    let (server, _) = shop().await;
    let sandbox = Sandbox::new();
    let ledger = sandbox.write_file("yen.csv", "referenceNo,amount\nINV-1005,1500\n");
    let mut cmd = reconcile(&sandbox, &server, &ledger);
    cmd.args(["--currency", "jpy"]);
    run(cmd).await.success();
    let mut cmd = reconcile(&sandbox, &server, &ledger);
    cmd.args(["--currency", "XYZ"]);
    run(cmd)
        .await
        .code(2)
        .stderr(contains("--currency 'XYZ': not an ISO 4217 currency code"));
}

/// The service gone: the run stops with exit 4; nothing is called a
/// mismatch that was never asked.
#[tokio::test(flavor = "multi_thread")]
async fn an_unreachable_service_stops_the_run_with_exit_4() {
    let sandbox = Sandbox::new();
    let ledger = sandbox.write_file(
        "ledger.csv",
        "referenceNo,amount\nINV-1,bad\nINV-2,1.00\nINV-3,1.00\n",
    );
    let mut cmd = sandbox.payments();
    cmd.args([
        "--base-url",
        &closed_port_url(),
        "--retries",
        "0",
        "reconcile",
    ])
    .arg(&ledger);
    // A report of an earlier, complete run stays as it was: the stopped
    // run's rows go to report.csv.partial, whose name says what it is.
    let report = sandbox.path().join("report.csv");
    std::fs::write(&report, "an earlier complete report\n").expect("written");
    cmd.arg("--report").arg(&report);
    let assert = run(cmd).await.code(4);
    let out = stdout(&assert);
    assert!(
        out.contains("\"line\":2") && out.contains("\"complete\":false"),
        "{out}"
    );
    assert!(!out.contains("\"line\":3"), "{out}");
    let err = stderr(&assert);
    assert!(err.contains("reconcile stopped at ledger line 3"), "{err}");
    assert!(err.contains("is the service running at"), "{err}");
    assert!(err.contains("report.csv.partial"), "{err}");
    assert_eq!(
        std::fs::read_to_string(&report).expect("still there"),
        "an earlier complete report\n"
    );
    let mut partial = csv::Reader::from_path(sandbox.path().join("report.csv.partial"))
        .expect("the partial report");
    let lines: Vec<String> = partial
        .records()
        .map(|r| r.expect("a record")[0].to_owned())
        .collect();
    assert_eq!(lines, ["2"], "the rows judged before the stop");
    // The table says its counts are not the ledger's.
    let mut cmd = sandbox.payments();
    cmd.args([
        "--base-url",
        &closed_port_url(),
        "--retries",
        "0",
        "reconcile",
        "-o",
        "table",
    ])
    .arg(&ledger);
    let table = stdout(&run(cmd).await.code(4));
    assert!(
        table.contains("incomplete: the run stopped before the end"),
        "{table}"
    );
}

/// Issue 40: a row with an unquoted comma got cascading complaints about
/// values in the wrong columns ("currency '000.00' is not an ISO 4217
/// code; status 'MYR' is not one of ..."); now one message saying why.
#[tokio::test(flavor = "multi_thread")]
async fn a_row_with_an_unquoted_comma_is_invalid_with_one_message() {
    let (server, _) = shop().await;
    let sandbox = Sandbox::new();
    let ledger = sandbox.write_file(
        "ledger.csv",
        "referenceNo,amount,currency,status\nINV-1001,1,000.00,MYR,SUCCESSFUL\nINV-1001,49.90,MYR,SUCCESSFUL\n",
    );
    let mut cmd = reconcile(&sandbox, &server, &ledger);
    cmd.args(["-o", "json"]);
    let out = stdout(&run(cmd).await.code(6));
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|line| serde_json::from_str(line).expect("json"))
        .collect();
    assert_eq!(lines[0]["class"], "invalid", "{out}");
    assert_eq!(
        lines[0]["detail"],
        "the row has 5 fields, the header 4 (a comma in a value must be quoted)"
    );
    assert_eq!(
        lines[1]["class"], "match",
        "not a duplicate of the bad row: {out}"
    );
}

/// Every line of `reconcile -o json`'s stdout is a row or the summary:
/// what stopped the run is on stderr, never an envelope on stdout (issue 40).
fn rows_and_summary_only(out: &str) -> Vec<serde_json::Value> {
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|line| serde_json::from_str(line).expect("each line is JSON"))
        .collect();
    let (summary, rows) = lines.split_last().expect("a summary line");
    assert!(summary.get("summary").is_some(), "the last line: {out}");
    assert_eq!(summary["summary"]["complete"], false, "{out}");
    for row in rows {
        assert!(
            row.get("line").is_some() && row.get("class").is_some(),
            "not a row: {row}"
        );
    }
    for line in &lines {
        assert!(
            line.get("isSuccess").is_none(),
            "an envelope on stdout: {out}"
        );
    }
    lines
}

#[tokio::test(flavor = "multi_thread")]
async fn a_wrong_api_key_stops_the_run_on_stderr_and_stdout_keeps_rows_and_summary() {
    let server = MockServer::builder()
        .api_key("sk_right", None)
        .start()
        .await
        .expect("the mock starts");
    let sandbox = Sandbox::new();
    let ledger = sandbox.write_file(
        "ledger.csv",
        "referenceNo,amount
INV-1,bad
INV-2,1.00
",
    );
    let mut cmd = reconcile(&sandbox, &server, &ledger);
    cmd.args(["-o", "json", "--api-key", "sk_wrong"]);
    let assert = run(cmd).await.code(1);
    let lines = rows_and_summary_only(&stdout(&assert));
    assert_eq!(lines.len(), 2, "the invalid row, then the summary");
    let err = stderr(&assert);
    assert!(err.contains("UNAUTHORIZED"), "{err}");
    assert!(err.contains("reconcile stopped at ledger line 3"), "{err}");
}

/// A reference two merchants use, asked without a merchant: the service
/// refuses (exit 1) and the message says to pass --merchant-id.
#[tokio::test(flavor = "multi_thread")]
async fn an_ambiguous_reference_without_a_merchant_stops_with_exit_1() {
    let (server, _) = shop().await;
    let other = Client::builder(server.base_url())
        .build()
        .expect("a client");
    let merchant = Uuid::parse_str("22222222-2222-4222-8222-222222222222").expect("a uuid");
    let request = InitiateRequest::builder(
        merchant,
        "INV-1001",
        MinorAmount::new(1).expect("1"),
        "TOPUP",
        "S1",
    )
    .payer_id("P")
    .build()
    .expect("valid");
    other.initiate(request).await.expect("initiated");
    let sandbox = Sandbox::new();
    let ledger = sandbox.write_file("ledger.csv", "referenceNo,amount\nINV-1001,49.90\n");
    let mut cmd = sandbox.payments();
    cmd.args(["--base-url", &server.base_url(), "reconcile"])
        .arg(&ledger);
    run(cmd)
        .await
        .code(1)
        .stderr(contains("AMBIGUOUS_REFERENCE_NO"))
        .stderr(contains("pass --merchant-id UUID"));
    // With the merchant, the same ledger matches.
    run(reconcile(&sandbox, &server, &ledger)).await.success();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_report_never_overwrites_the_ledger() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let contents = "referenceNo,amount\nR1,1.00\n";
    let ledger = sandbox.write_file("ledger.csv", contents);
    let mut cmd = reconcile(&sandbox, &server, &ledger);
    cmd.arg("--report")
        .arg(sandbox.path().join(".").join("ledger.csv"));
    run(cmd)
        .await
        .code(2)
        .stderr(contains("that is the ledger itself"));
    assert_eq!(
        std::fs::read_to_string(&ledger).expect("still there"),
        contents
    );
}

/// The classes of `-o json`'s lines, in order, the summary (the last
/// line) left out.
fn classes(lines: &[serde_json::Value]) -> Vec<&str> {
    lines[..lines.len() - 1]
        .iter()
        .map(|line| line["class"].as_str().expect("a class"))
        .collect()
}

// Ledgers whose lines end another way.
mod line_breaks;
// What `--report FILE` may be, and what is left of it.
mod report;
// Ctrl-C during a run.
mod interrupt;
// The table on narrow terminals.
mod narrow;
// The report opened in a spreadsheet: no formulas, no raw controls.
mod spreadsheet;
// A row whose own answer cannot be used: `unverified`, and the run goes on.
mod unverified;
// No usable answer among the first rows looked up: the run stops (exit 4).
mod no_usable_answer;
// `currency` rows, and currency codes the service refuses.
mod currency;
// Ledgers as spreadsheets export them: open quotes, no-break spaces,
// rows of only commas, other separators, UTF-16, references as numbers.
mod exports;
// References the ledger and the service write in different Unicode
// normalization forms.
mod normalization;
