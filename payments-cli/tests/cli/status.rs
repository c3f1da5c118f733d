//! `status`: by id, by reference, many at once, from a file or stdin.

use payments_mock_server::MockServer;
use predicates::str::contains;

use crate::common::{Sandbox, initiate, run, snapshot_settings, stderr, stdout};

const UNKNOWN: &str = "01937e1c-0000-7000-8000-000000000000";

fn status_cmd(sandbox: &Sandbox, base_url: &str) -> assert_cmd::Command {
    let mut cmd = sandbox.payments();
    cmd.args(["--base-url", base_url, "status"]);
    cmd
}

#[tokio::test(flavor = "multi_thread")]
async fn one_id_prints_one_row() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let id = initiate(&sandbox, &server.base_url(), "S-1", "TOPUP").await;
    let mut cmd = status_cmd(&sandbox, &server.base_url());
    cmd.args(["-o", "table", &id]);
    let assert = run(cmd).await.success();
    let out = stdout(&assert);
    assert!(
        out.contains(&id) && out.contains("INITIATED") && out.contains("10.50"),
        "{out}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn json_prints_each_envelope_in_input_order() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let base = server.base_url();
    let first = initiate(&sandbox, &base, "J-1", "TOPUP").await;
    let second = initiate(&sandbox, &base, "J-2", "TOPUP").await;
    let mut cmd = status_cmd(&sandbox, &base);
    cmd.args([&second, UNKNOWN, &first]);
    let assert = run(cmd).await.code(3);
    let lines: Vec<serde_json::Value> = stdout(&assert)
        .lines()
        .map(|line| serde_json::from_str(line).expect("each line is json"))
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(
        lines[0]["input"],
        serde_json::json!({"arg": 1, "value": second})
    );
    assert_eq!(
        lines[0]["envelope"]["data"]["transactionId"],
        second.as_str()
    );
    assert_eq!(lines[1]["input"]["arg"], 2);
    assert_eq!(lines[1]["envelope"]["errorCode"], "TRANSACTION_NOT_FOUND");
    assert!(
        lines[1]["error"]
            .as_str()
            .unwrap_or_default()
            .contains("TRANSACTION_NOT_FOUND")
    );
    assert_eq!(
        lines[2]["envelope"]["data"]["transactionId"],
        first.as_str()
    );
    assert_eq!(
        lines[0]["envelope"]["data"]["amount"].to_string(),
        "10.50",
        "amount as received"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn by_reference_finds_the_transaction() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let base = server.base_url();
    let id = initiate(&sandbox, &base, "INV/2026 0001", "TOPUP").await;
    let mut cmd = status_cmd(&sandbox, &base);
    cmd.args([
        "--merchant-id",
        crate::common::MERCHANT,
        "--reference-no",
        "INV/2026 0001",
    ]);
    run(cmd).await.success().stdout(contains(id));
}

#[tokio::test(flavor = "multi_thread")]
async fn one_unknown_id_exits_3_with_one_line() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let mut cmd = status_cmd(&sandbox, &server.base_url());
    cmd.args(["-o", "table", UNKNOWN]);
    let assert = run(cmd).await.code(3);
    assert_eq!(stdout(&assert), "");
    let err = stderr(&assert);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("TRANSACTION_NOT_FOUND") && err.contains("request id"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn from_file_reports_found_unknown_and_malformed_lines_in_order() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let base = server.base_url();
    let first = initiate(&sandbox, &base, "F-1", "TOPUP").await;
    let second = initiate(&sandbox, &base, "F-2", "DECLINED").await;
    crate::common::confirm(&sandbox, &base, &second, "F-2").await;
    let file = sandbox.write_file(
        "ids.txt",
        &format!("# today's ids\n{first}\n\n{UNKNOWN}\nnot an id\n  {second}  \n"),
    );
    let mut cmd = status_cmd(&sandbox, &base);
    // Wide enough for every column (80, blocks, is in layout.rs).
    cmd.env("COLUMNS", "250")
        .args(["-o", "table", "--concurrency", "2", "--from-file"])
        .arg(&file);
    let assert = run(cmd).await.code(3);
    let err = stderr(&assert);
    assert!(err.contains("--from-file line 5"), "{err}");
    assert!(err.contains("2 of 4 look-ups failed"), "{err}");
    snapshot_settings().bind(|| insta::assert_snapshot!("status_from_file_table", stdout(&assert)));
}

#[tokio::test(flavor = "multi_thread")]
async fn stdin_is_read_with_a_dash() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let base = server.base_url();
    initiate(&sandbox, &base, "IN-1", "TOPUP").await;
    initiate(&sandbox, &base, "IN-2", "TOPUP").await;
    let mut cmd = status_cmd(&sandbox, &base);
    cmd.args(["--merchant-id", crate::common::MERCHANT])
        .args(["--from-file", "-", "--by-reference"])
        .write_stdin("IN-2\n# skip\nIN-1\n");
    let assert = run(cmd).await.success();
    let refs: Vec<(u64, String)> = stdout(&assert)
        .lines()
        .map(|line| {
            let joined: serde_json::Value = serde_json::from_str(line).expect("json");
            let reference = joined["envelope"]["data"]["referenceNo"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            (
                joined["input"]["line"].as_u64().unwrap_or_default(),
                reference,
            )
        })
        .collect();
    assert_eq!(refs, [(1, "IN-2".to_owned()), (3, "IN-1".to_owned())]);
}

/// Before: an input of blank and comment lines (a quiet day's `grep … |
/// payments status --from-file -`) exited 2, as a broken command line does.
/// Now: zero look-ups, all succeeded: exit 0, a note on stderr, nothing on
/// stdout, nothing sent; as reconcile's ledger with only a header.
#[tokio::test(flavor = "multi_thread")]
async fn an_empty_input_exits_0_with_a_note() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let empty = sandbox.path().join("none.txt");
    std::fs::write(&empty, "# nothing today\n\n").expect("the file can be written");
    let from_file = empty.to_str().expect("a UTF-8 path").to_owned();
    for (source, stdin, said) in [
        (
            "-",
            "# nothing\n\n",
            "standard input (--from-file -)".to_owned(),
        ),
        ("-", "", "standard input (--from-file -)".to_owned()),
        (from_file.as_str(), "", format!("--from-file '{from_file}'")),
    ] {
        for output in ["json", "table"] {
            let mut cmd = status_cmd(&sandbox, &server.base_url());
            cmd.args(["-o", output, "--from-file", source, "--by-reference"])
                .write_stdin(stdin);
            let assert = run(cmd).await.code(0);
            assert_eq!(stdout(&assert), "", "{source} {output}");
            assert_eq!(
                stderr(&assert),
                format!(
                    "note: nothing to look up: {said} has no ids or references (blank \
                     lines and # comments are skipped); nothing was sent\n"
                ),
                "{source} {output}"
            );
        }
    }
    assert_eq!(server.requests().await.len(), 0, "nothing was sent");
    // The flags are still checked first: a bad --currency is exit 2.
    let mut cmd = status_cmd(&sandbox, &server.base_url());
    cmd.args(["--from-file", "-", "--currency", "XYZ"])
        .write_stdin("");
    run(cmd).await.code(2).stderr(contains("--currency"));
}

#[tokio::test(flavor = "multi_thread")]
async fn many_look_ups_exit_with_the_highest_code() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let base = server.base_url();
    let id = initiate(&sandbox, &base, "H-1", "TOPUP").await;
    // found (0) + malformed (2) + unknown (3) = 3
    let mut cmd = status_cmd(&sandbox, &base);
    cmd.args(["--from-file", "-"])
        .write_stdin(format!("{id}\nbad line\n{UNKNOWN}\n"));
    run(cmd).await.code(3);
    // found (0) + malformed (2) = 2
    let mut cmd = status_cmd(&sandbox, &base);
    cmd.args(["--from-file", "-"])
        .write_stdin(format!("{id}\nbad line\n"));
    run(cmd).await.code(2);
    // a reference two merchants use, asked without a merchant, is a rejection (1)
    let mut cmd = sandbox.payments();
    cmd.args([
        "--base-url",
        &base,
        "--merchant-id",
        "22222222-2222-4222-8222-222222222222",
    ])
    .args([
        "initiate",
        "--reference-no",
        "H-1",
        "--amount",
        "1",
        "--product",
        "TOPUP",
    ])
    .args(["--store-id", "S1", "--payer-id", "P"]);
    run(cmd).await.success();
    let mut cmd = status_cmd(&sandbox, &base);
    cmd.args(["--reference-no", "H-1"]);
    run(cmd)
        .await
        .code(1)
        .stderr(contains("AMBIGUOUS_REFERENCE_NO"));
    // ...and with an unknown id as well the highest code wins (3)
    let mut cmd = status_cmd(&sandbox, &base);
    cmd.args([UNKNOWN, "--reference-no", "H-1"]);
    run(cmd).await.code(3);
}

/// Lines are written in batches, but never held back while the CLI waits:
/// the first envelope reaches a reader while a later look-up is still
/// outstanding (its stub answers only after a minute; the test ends long
/// before that, killing the process).
#[tokio::test(flavor = "multi_thread")]
async fn a_ready_line_is_written_while_a_later_look_up_is_outstanding() {
    use std::io::{BufRead as _, BufReader};
    use std::process::Stdio;
    use std::time::Duration;

    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer as Stub, ResponseTemplate};

    const FAST: &str = "01937e1c-0000-7000-8000-00000000000a";
    const SLOW: &str = "01937e1c-0000-7000-8000-00000000000b";
    let stub = Stub::start().await;
    let envelope = format!(
        r#"{{"isSuccess":true,"errorCode":null,"message":null,"data":{{"transactionId":"{FAST}","referenceNo":"R","status":"INITIATED","amount":10.50,"productCode":"TOPUP","createdAt":"2026-11-23T08:00:00.000Z","lastModifiedAt":null,"providerReference":null,"message":null,"extraProperties":null}}}}"#
    );
    Mock::given(method("GET"))
        .and(path(format!("/api/payments/{FAST}/status")))
        .respond_with(ResponseTemplate::new(200).set_body_raw(envelope.clone(), "application/json"))
        .mount(&stub)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("/api/payments/{SLOW}/status")))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw(envelope.replace(FAST, SLOW), "application/json")
                .set_delay(Duration::from_secs(60)),
        )
        .mount(&stub)
        .await;
    let sandbox = Sandbox::new();
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_payments"));
    cmd.env_clear()
        .env("XDG_CONFIG_HOME", sandbox.path())
        .env("HOME", sandbox.path())
        .args(["--base-url", &stub.uri(), "-o", "json", "--timeout", "120"])
        .args(["status", FAST, SLOW])
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().expect("payments starts");
    let stdout = child.stdout.take().expect("piped");
    let first = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).map(|_| line)
    });
    let first = tokio::time::timeout(Duration::from_secs(30), first).await;
    let still_running = child.try_wait().expect("status").is_none();
    let _ = child.kill();
    let _ = child.wait();
    let first = first
        .expect("the first line arrives before the slow look-up ends")
        .expect("reader")
        .expect("read");
    assert_eq!(
        first.trim_end(),
        format!(r#"{{"input":{{"arg":1,"value":"{FAST}"}},"envelope":{envelope},"error":null}}"#)
    );
    assert!(still_running, "the slow look-up was still outstanding");
}

/// Issue 34: 51 lines in gave 50 JSON lines out, and a not-found envelope
/// named no id. Now every line that holds something gives one JSON line, in
/// order, naming its input; a line never sent has a null envelope and an
/// error.
#[tokio::test(flavor = "multi_thread")]
async fn from_file_json_gives_one_line_per_input_that_names_it() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let base = server.base_url();
    let found = initiate(&sandbox, &base, "JOIN-1", "TOPUP").await;
    let mut file = format!("# ids\n{found}\n{UNKNOWN}\nnot an id\n\n").into_bytes();
    file.extend(b"caf\xe9\n");
    file.extend("x".repeat(300).as_bytes());
    file.push(b'\n');
    let path = sandbox.path().join("ids.txt");
    std::fs::write(&path, file).expect("written");
    let mut cmd = status_cmd(&sandbox, &base);
    cmd.arg("--from-file").arg(&path);
    let assert = run(cmd).await.code(3);
    let out = stdout(&assert);
    let inputs: Vec<u64> = out
        .lines()
        .map(|line| {
            let joined: serde_json::Value = serde_json::from_str(line).expect("json");
            joined["input"]["line"].as_u64().expect("a line number")
        })
        .collect();
    assert_eq!(inputs, [2, 3, 4, 6, 7]);
    let mut settings = snapshot_settings();
    settings.add_filter(r"request id [0-9a-f-]{36}", "request id [REQUEST-ID]");
    settings.bind(|| insta::assert_snapshot!("status_from_file_json", out));
}

/// A single look-up still prints the envelope alone, as received.
#[tokio::test(flavor = "multi_thread")]
async fn one_look_up_prints_the_bare_envelope() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let mut cmd = status_cmd(&sandbox, &server.base_url());
    cmd.arg(UNKNOWN);
    let assert = run(cmd).await.code(3);
    let envelope: serde_json::Value =
        serde_json::from_str(stdout(&assert).trim()).expect("one envelope");
    assert_eq!(envelope["errorCode"], "TRANSACTION_NOT_FOUND");
}

/// Two files each starting with a byte order mark, joined with `cat`: the
/// second's mark was sent as part of its id, answered TRANSACTION_NOT_FOUND
/// though the transaction exists. A format character in an id is a
/// malformed line; in a reference it is sent, and shown escaped on stderr
/// as in the table (a raw U+202E reversed the terminal's line).
#[tokio::test(flavor = "multi_thread")]
async fn marks_and_format_characters_in_a_file_are_dropped_refused_or_escaped() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let base = server.base_url();
    let first = initiate(&sandbox, &base, "BOM-1", "TOPUP").await;
    let second = initiate(&sandbox, &base, "BOM-2", "TOPUP").await;
    let joined = format!("\u{feff}{first}\r\n\u{feff}{second}\r\n");
    let mut cmd = status_cmd(&sandbox, &base);
    cmd.args(["-o", "table", "--from-file", "-"])
        .write_stdin(joined);
    let assert = run(cmd).await.success();
    let out = stdout(&assert);
    assert!(out.contains(&first) && out.contains(&second), "{out}");

    let file = sandbox.write_file("ids.txt", &format!("{first}\u{200b}\n"));
    let mut cmd = status_cmd(&sandbox, &base);
    cmd.args(["-o", "table", "--from-file"]).arg(&file);
    let err = stderr(&run(cmd).await.code(2));
    assert!(
        err.contains(
            "--from-file line 1: the transaction id contains an invisible format character (U+200B)"
        ),
        "{err}"
    );

    let mut cmd = status_cmd(&sandbox, &base);
    cmd.args(["--merchant-id", crate::common::MERCHANT])
        .args(["-o", "table", "--from-file", "-", "--by-reference"])
        .write_stdin("X\u{202e}YZ\nA\u{200b}B\n");
    let err = stderr(&run(cmd).await.code(3));
    assert!(
        err.contains("reference X\\u{202e}YZ") && err.contains("reference A\\u{200b}B"),
        "{err}"
    );
    assert!(!err.contains(['\u{202e}', '\u{200b}']), "{err}");

    // As an argument: a usage error, the character escaped.
    let mut cmd = status_cmd(&sandbox, &base);
    cmd.arg(format!("{first}\u{feff}"));
    let err = stderr(&run(cmd).await.code(2));
    assert!(
        err.contains("\\u{feff}' contains an invisible format character (U+FEFF)"),
        "{err}"
    );
}

/// A failed call's label quotes at most 200 bytes of the id or reference,
/// as usage errors do (it repeated a 1,000-character reference whole);
/// confirm refuses a TRANSACTION_ID over 128 characters locally (exit 2),
/// as status does (it sent it: exit 3).
#[tokio::test(flavor = "multi_thread")]
async fn a_long_id_or_reference_is_cut_in_the_error_line() {
    let server = MockServer::start().await;
    let base = server.base_url();
    let sandbox = Sandbox::new();
    let reference = "R".repeat(1000);
    let mut cmd = status_cmd(&sandbox, &base);
    cmd.args(["--merchant-id", crate::common::MERCHANT, "--reference-no"])
        .arg(&reference);
    let err = stderr(&run(cmd).await.code(3));
    let label = format!(
        "error: status of reference {}… (the first 200 of 1000 bytes) failed: ",
        "R".repeat(200)
    );
    assert!(err.starts_with(&label), "{err}");

    // 120 characters of 3 bytes: an id confirm sends, its label cut.
    let euros = "€".repeat(120);
    let mut cmd = sandbox.payments();
    cmd.args([
        "--base-url",
        &base,
        "confirm",
        &euros,
        "--reference-no",
        "R1",
    ]);
    let err = stderr(&run(cmd).await);
    let label = format!(
        "error: confirm of {}… (the first 198 of 360 bytes) failed: ",
        "€".repeat(66)
    );
    assert!(err.starts_with(&label), "{err}");

    let long = "a".repeat(300);
    let mut cmd = sandbox.payments();
    cmd.args([
        "--base-url",
        &base,
        "confirm",
        &long,
        "--reference-no",
        "R1",
    ]);
    let err = stderr(&run(cmd).await.code(2));
    assert_eq!(
        err,
        format!(
            "error: TRANSACTION_ID '{}…' (the first 200 of 300 bytes) is longer than 128 characters\n",
            "a".repeat(200)
        )
    );
}
