//! Answers about another request than the one sent (issue 32): exit 4,
//! one line naming each field with what was sent and what came back, and
//! never the refused envelope on stdout (issue 40): nothing for a single
//! call (`-v` shows it on stderr), `"envelope": null` with the answer under
//! `"received"` for many look-ups.

use wiremock::matchers::{method, path, query_param};
use wiremock::{Mock, MockServer as Stub, ResponseTemplate};

use crate::common::{MERCHANT, Sandbox, run, snapshot_settings, stderr, stdout};

const TX: &str = "01937e1c-0000-7000-8000-0000000000c1";

/// The document's example transaction, which a generated mock answered to
/// every initiate: INV-2026-0001, 150.00 MYR, TOPUP.
fn example_initiate_envelope() -> String {
    format!(
        r#"{{"isSuccess":true,"errorCode":null,"message":null,"data":{{"transactionId":"{TX}","referenceNo":"INV-2026-0001","status":"PENDING","amount":15000,"currencyCode":"MYR","productCode":"TOPUP","createdAt":"2026-11-22T08:15:30.123Z","extraProperties":null}}}}"#
    )
}

fn status_envelope(id: &str, reference: &str, amount: &str, product: &str) -> String {
    format!(
        r#"{{"isSuccess":true,"errorCode":null,"message":null,"data":{{"transactionId":"{id}","referenceNo":"{reference}","status":"PENDING","amount":{amount},"productCode":"{product}","createdAt":"2026-11-22T08:15:30.123Z","lastModifiedAt":null,"providerReference":null,"message":null,"extraProperties":null}}}}"#
    )
}

fn json(status: u16, body: String) -> ResponseTemplate {
    ResponseTemplate::new(status).set_body_raw(body, "application/json")
}

/// A stub that answers every initiate with the example, and the read-back
/// of ORDER-77 with `read_back`.
async fn lying_service(read_back: ResponseTemplate) -> Stub {
    let stub = Stub::start().await;
    Mock::given(method("POST"))
        .and(path("/api/payments/initiate"))
        .respond_with(json(200, example_initiate_envelope()))
        .expect(1)
        .mount(&stub)
        .await;
    Mock::given(method("GET"))
        .and(path("/api/payments/reference/ORDER-77/status"))
        .and(query_param("merchantId", MERCHANT))
        .respond_with(read_back)
        .mount(&stub)
        .await;
    stub
}

fn not_found() -> ResponseTemplate {
    json(
        404,
        r#"{"isSuccess":false,"errorCode":"TRANSACTION_NOT_FOUND","message":"no transaction with referenceNo ORDER-77","data":null}"#.to_owned(),
    )
}

fn initiate_order_77(sandbox: &Sandbox, base_url: &str, output: &str) -> assert_cmd::Command {
    let mut cmd = sandbox.payments();
    cmd.args([
        "--base-url",
        base_url,
        "--merchant-id",
        MERCHANT,
        "-o",
        output,
    ])
    .args([
        "initiate",
        "--reference-no",
        "ORDER-77",
        "--amount",
        "25.00",
    ])
    .args(["--product", "EWALLET", "--store-id", "S1"]);
    cmd
}

#[tokio::test(flavor = "multi_thread")]
async fn an_initiate_answered_for_another_request_exits_4_naming_each_field() {
    let stub = lying_service(not_found()).await;
    let sandbox = Sandbox::new();
    let assert = run(initiate_order_77(&sandbox, &stub.uri(), "table"))
        .await
        .code(4);
    assert_eq!(stdout(&assert), "", "nothing is shown as created");
    let err = stderr(&assert);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(
            "error: initiate of ORDER-77: the service answered for another request: \
             referenceNo sent ORDER-77, answered INV-2026-0001; amount sent 25.00, answered 150.00; \
             productCode sent EWALLET, answered TOPUP; "
        ),
        "{err}"
    );
    snapshot_settings().bind(|| insta::assert_snapshot!("answer_mismatch_initiate_stderr", err));
}

/// The idiom the docs teach, `TID=$(payments -o json initiate ... | jq -r
/// .data.transactionId)`, must never yield another order's id: a refused
/// answer prints nothing on stdout (CONTRACT section 17); `-v` shows it as
/// received, on stderr.
#[tokio::test(flavor = "multi_thread")]
async fn with_json_an_answer_for_another_request_never_reaches_stdout() {
    let stub = lying_service(not_found()).await;
    let sandbox = Sandbox::new();
    let assert = run(initiate_order_77(&sandbox, &stub.uri(), "json"))
        .await
        .code(4);
    assert_eq!(stdout(&assert), "", "no envelope for a script to read");
    let err = stderr(&assert);
    assert!(
        err.contains("referenceNo sent ORDER-77, answered INV-2026-0001"),
        "{err}"
    );
    assert!(!err.contains("\"isSuccess\""), "without -v: {err}");

    let stub = lying_service(not_found()).await;
    let mut cmd = initiate_order_77(&sandbox, &stub.uri(), "json");
    cmd.arg("-v");
    let assert = run(cmd).await.code(4);
    assert_eq!(stdout(&assert), "");
    let err = stderr(&assert);
    assert!(
        err.contains(&format!(
            "< refused answer, as received: {}",
            example_initiate_envelope()
        )),
        "{err}"
    );
}

/// Many look-ups: the refused answer's line has a null envelope, the
/// error, and the answer as it came under `received`.
#[tokio::test(flavor = "multi_thread")]
async fn with_many_look_ups_a_refused_answer_is_received_beside_a_null_envelope() {
    let stub = Stub::start().await;
    let asked = "01937e1c-0000-7000-8000-0000000000c3";
    let lying = status_envelope(TX, "INV-1", "10.50", "TOPUP");
    Mock::given(method("GET"))
        .and(path(format!("/api/payments/{asked}/status")))
        .respond_with(json(200, lying.clone()))
        .mount(&stub)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("/api/payments/{TX}/status")))
        .respond_with(json(200, lying.clone()))
        .mount(&stub)
        .await;
    let sandbox = Sandbox::new();
    let mut cmd = sandbox.payments();
    cmd.args(["--base-url", &stub.uri(), "-o", "json", "status", TX, asked]);
    let assert = run(cmd).await.code(4);
    let out = stdout(&assert);
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|line| serde_json::from_str(line).expect("each line is JSON"))
        .collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert_eq!(lines[0]["envelope"]["data"]["transactionId"], TX);
    assert!(lines[0].get("received").is_none(), "{out}");
    assert_eq!(lines[1]["input"]["value"], asked);
    assert!(lines[1]["envelope"].is_null(), "{out}");
    let error = lines[1]["error"].as_str().expect("an error");
    assert!(
        error.contains(&format!("transactionId sent {asked}, answered {TX}")),
        "{error}"
    );
    let received: serde_json::Value = serde_json::from_str(&lying).expect("json");
    assert_eq!(lines[1]["received"], received);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_initiate_whose_read_back_shows_the_request_succeeds_and_says_so() {
    let truth = status_envelope(TX, "ORDER-77", "25.00", "EWALLET");
    let stub = lying_service(json(200, truth)).await;
    let sandbox = Sandbox::new();
    let assert = run(initiate_order_77(&sandbox, &stub.uri(), "table"))
        .await
        .code(0);
    let out = stdout(&assert);
    assert!(
        out.contains("ORDER-77") && out.contains("25.00 MYR"),
        "{out}"
    );
    assert!(
        stderr(&assert).contains("read back by its reference"),
        "{}",
        stderr(&assert)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_confirm_answered_for_another_transaction_exits_4() {
    let stub = Stub::start().await;
    let other = "01937e1c-0000-7000-8000-0000000000c2";
    Mock::given(method("POST"))
        .and(path("/api/payments/confirm"))
        .respond_with(json(
            200,
            format!(
                r#"{{"isSuccess":true,"errorCode":null,"message":null,"data":{{"transactionId":"{other}","referenceNo":"ORDER-77","status":"SUCCESSFUL","amount":25.00,"providerReference":"PRV-1","confirmedAt":"2026-11-22T08:16:00.000Z","errorMessage":null,"extraProperties":null}}}}"#
            ),
        ))
        .expect(1)
        .mount(&stub)
        .await;
    let sandbox = Sandbox::new();
    let mut cmd = sandbox.payments();
    cmd.args(["--base-url", &stub.uri(), "confirm", TX])
        .args(["--reference-no", "ORDER-77"]);
    let assert = run(cmd).await.code(4);
    let err = stderr(&assert);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!(
            "error: confirm of {TX}: the service answered for another request: \
             transactionId sent {TX}, answered {other}"
        )),
        "{err}"
    );
    assert!(err.contains("request id"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_status_answered_for_another_transaction_exits_4_and_the_rest_still_print() {
    let stub = Stub::start().await;
    let asked = "01937e1c-0000-7000-8000-0000000000c3";
    Mock::given(method("GET"))
        .and(path(format!("/api/payments/{asked}/status")))
        .respond_with(json(200, status_envelope(TX, "INV-1", "10.50", "TOPUP")))
        .mount(&stub)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("/api/payments/{TX}/status")))
        .respond_with(json(200, status_envelope(TX, "INV-1", "10.50", "TOPUP")))
        .mount(&stub)
        .await;
    let sandbox = Sandbox::new();
    let mut cmd = sandbox.payments();
    cmd.args(["--base-url", &stub.uri(), "-o", "table", "status", asked]);
    let one = run(cmd).await.code(4);
    let err = stderr(&one);
    assert!(
        err.contains(&format!(
            "status of {asked}: the service answered for another request: transactionId sent {asked}, answered {TX}"
        )),
        "{err}"
    );

    let mut cmd = sandbox.payments();
    cmd.args([
        "--base-url",
        &stub.uri(),
        "-o",
        "table",
        "status",
        TX,
        asked,
    ]);
    let many = run(cmd).await.code(4);
    let table = stdout(&many);
    assert!(
        table.contains("PENDING"),
        "the good look-up prints: {table}"
    );
    assert!(table.contains("ERROR"), "{table}");
}

/// The real mock answering about another transaction (its `answer-other`
/// fault): exit 4, the field named with what was sent and what came back,
/// and nothing on stdout.
#[tokio::test(flavor = "multi_thread")]
async fn a_real_server_answering_about_another_transaction_exits_4() {
    let server = payments_mock_server::MockServer::start().await;
    let sandbox = Sandbox::new();
    let base = server.base_url();
    let mut ids = Vec::new();
    for reference in ["ORDER-77", "ORDER-78"] {
        let mut cmd = sandbox.payments();
        cmd.args([
            "--base-url",
            &base,
            "--merchant-id",
            MERCHANT,
            "-o",
            "json",
            "initiate",
            "--reference-no",
            reference,
            "--amount",
            "25.00",
            "--product",
            "TOPUP",
            "--store-id",
            "S1",
            "--payer-id",
            "60123456789",
        ]);
        let out = stdout(&run(cmd).await.code(0));
        let envelope: serde_json::Value = serde_json::from_str(out.trim()).expect("json");
        ids.push(
            envelope["data"]["transactionId"]
                .as_str()
                .expect("an id")
                .to_owned(),
        );
    }
    server.inject_faults([payments_mock_server::Fault::AnswerOther]);
    let mut cmd = sandbox.payments();
    cmd.args(["--base-url", &base, "-o", "json", "status", &ids[1]]);
    let assert = run(cmd).await.code(4);
    let message = stderr(&assert);
    assert!(
        message.contains(&format!(
            "transactionId sent {}, answered {}",
            ids[1], ids[0]
        )),
        "{message}"
    );
    assert_eq!(stdout(&assert), "", "a refused answer never reaches stdout");
}

/// A service that pretty-prints its envelope: `-o json` still prints one
/// document per line, its strings untouched (a single look-up printed the
/// envelope over several lines, the many-look-ups form did not).
#[tokio::test(flavor = "multi_thread")]
async fn a_pretty_printed_envelope_is_printed_on_one_line() {
    let stub = Stub::start().await;
    let pretty = serde_json::to_string_pretty(
        &serde_json::from_str::<serde_json::Value>(&status_envelope(
            TX,
            "INV  two  spaces",
            "150.00",
            "TOPUP",
        ))
        .expect("json"),
    )
    .expect("pretty");
    assert!(pretty.contains('\n'));
    Mock::given(method("GET"))
        .and(path(format!("/api/payments/{TX}/status")))
        .respond_with(json(200, pretty))
        .mount(&stub)
        .await;
    let sandbox = Sandbox::new();
    let mut cmd = sandbox.payments();
    cmd.args(["--base-url", &stub.uri(), "-o", "json", "status", TX]);
    let out = stdout(&run(cmd).await.success());
    assert_eq!(out.lines().count(), 1, "{out}");
    let envelope: serde_json::Value = serde_json::from_str(out.trim()).expect("one document");
    assert_eq!(envelope["data"]["referenceNo"], "INV  two  spaces");
}

/// `status --reference-no RC1 RC2` answered with one transactionId for
/// both: one answer is false, and the client cannot tell which. The first
/// to arrive was kept and the second refused, even when the first was the
/// false one (here RC2's answer arrives first: RC1's is delayed). Now
/// neither is used: each line is an error naming the conflict.
#[tokio::test(flavor = "multi_thread")]
async fn one_transaction_answered_for_two_references_refuses_both() {
    use std::time::Duration;
    let stub = Stub::start().await;
    Mock::given(method("GET"))
        .and(path("/api/payments/reference/RC1/status"))
        .respond_with(
            json(200, status_envelope(TX, "RC1", "10.50", "TOPUP"))
                .set_delay(Duration::from_millis(400)),
        )
        .mount(&stub)
        .await;
    Mock::given(method("GET"))
        .and(path("/api/payments/reference/RC2/status"))
        .respond_with(json(200, status_envelope(TX, "RC2", "10.50", "TOPUP")))
        .mount(&stub)
        .await;
    let sandbox = Sandbox::new();
    for output in ["json", "table"] {
        let mut cmd = sandbox.payments();
        cmd.args(["--base-url", &stub.uri(), "-o", output]).args([
            "status",
            "--reference-no",
            "RC1",
            "RC2",
        ]);
        let assert = run(cmd).await.code(4);
        let err = stderr(&assert);
        for reference in ["RC1", "RC2"] {
            assert!(
                err.lines().any(|line| line.starts_with("error: ")
                    && line.contains(&format!("status of reference {reference}: "))
                    && line.contains(TX)),
                "{reference}: {err}"
            );
        }
        let out = stdout(&assert);
        if output == "json" {
            let lines: Vec<serde_json::Value> = out
                .lines()
                .map(|line| serde_json::from_str(line).expect("a json line"))
                .collect();
            assert_eq!(lines.len(), 2, "{out}");
            for line in &lines {
                assert!(line["envelope"].is_null(), "{line}");
                assert!(
                    line["error"].as_str().is_some_and(|e| e.contains(TX)),
                    "{line}"
                );
                assert_eq!(line["received"]["data"]["transactionId"], TX, "{line}");
            }
        } else {
            assert!(
                !out.contains("PENDING"),
                "no row shows either answer: {out}"
            );
            assert_eq!(out.matches("ERROR").count(), 2, "{out}");
        }
    }
}

/// A json line already written when the contradicting answer comes cannot
/// be taken back: stderr says not to use it, and the exit code is 4.
#[tokio::test(flavor = "multi_thread")]
async fn a_json_line_written_before_the_conflict_is_disowned_on_stderr() {
    use std::time::Duration;
    let stub = Stub::start().await;
    Mock::given(method("GET"))
        .and(path("/api/payments/reference/RC1/status"))
        .respond_with(json(200, status_envelope(TX, "RC1", "10.50", "TOPUP")))
        .mount(&stub)
        .await;
    Mock::given(method("GET"))
        .and(path("/api/payments/reference/RC2/status"))
        .respond_with(
            json(200, status_envelope(TX, "RC2", "10.50", "TOPUP"))
                .set_delay(Duration::from_millis(400)),
        )
        .mount(&stub)
        .await;
    let sandbox = Sandbox::new();
    let mut cmd = sandbox.payments();
    cmd.args(["--base-url", &stub.uri(), "-o", "json"]).args([
        "status",
        "--reference-no",
        "RC1",
        "RC2",
    ]);
    let assert = run(cmd).await.code(4);
    let err = stderr(&assert);
    assert!(
        err.lines().any(
            |line| line.contains("status of reference RC1: ") && line.contains("do not use it")
        ),
        "{err}"
    );
}
