//! One rule for a referenceNo across the commands: what `initiate` sends,
//! `status --reference-no` and `reconcile` can look up (no control
//! character, at most 1,024 characters); initiate refuses, naming the
//! flag, exactly what they would refuse.
//!
//! Before: initiate sent `INV<TAB>2026/11` and a 129-character reference
//! to a service that took them, and `status --reference-no` then refused
//! both (exit 2, "contains a control character", "longer than 128
//! characters"); reconcile called a 100-character reference `invalid`
//! ("longer than 64 characters", the mock's limit).

use serde_json::{Value, json};
use wiremock::matchers::{method, path, path_regex};
use wiremock::{Mock, MockServer as Stub, Request, ResponseTemplate};

use crate::common::{MERCHANT, Sandbox, run, stderr, stdout};

const TX_ID: &str = "0192f7c4-2d1e-7a10-9c55-5d3a8f7b1e01";

/// A path segment as sent, percent-decoded.
fn decoded(segment: &str) -> String {
    let bytes = segment.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8(out).expect("UTF-8")
}

fn envelope(data: Value) -> ResponseTemplate {
    let body = json!({"isSuccess": true, "errorCode": null, "message": null, "data": data});
    ResponseTemplate::new(200).set_body_raw(body.to_string(), "application/json")
}

/// A service that takes any reference: initiate echoes it, and a read by
/// reference answers a SUCCESSFUL transaction of 1.00 with it (no two
/// references of a test have one length).
async fn service() -> Stub {
    let stub = Stub::start().await;
    Mock::given(method("POST"))
        .and(path("/api/payments/initiate"))
        .respond_with(|request: &Request| {
            let sent: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
            envelope(json!({
                "transactionId": TX_ID,
                "referenceNo": sent["referenceNo"],
                "status": "INITIATED",
                "amount": sent["amount"],
                "currencyCode": "MYR",
                "productCode": sent["productCode"],
                "createdAt": "2026-11-22T08:15:30.123Z",
                "extraProperties": null,
            }))
        })
        .mount(&stub)
        .await;
    Mock::given(method("GET"))
        .and(path_regex("^/api/payments/reference/[^/]+/status$"))
        .respond_with(|request: &Request| {
            let segment = request.url.path().split('/').nth(4).unwrap_or_default();
            let reference = decoded(segment);
            // One transaction a reference (told apart by their lengths).
            let id = format!("0192f7c4-2d1e-7a10-9c55-{:012x}", reference.chars().count());
            envelope(json!({
                "transactionId": id,
                "referenceNo": reference,
                "status": "SUCCESSFUL",
                "amount": 1.00,
                "productCode": "TOPUP",
                "createdAt": "2026-11-22T08:15:30.123Z",
                "lastModifiedAt": "2026-11-22T08:15:31.123Z",
                "providerReference": null,
                "message": null,
                "extraProperties": null,
            }))
        })
        .mount(&stub)
        .await;
    stub
}

fn payments(sandbox: &Sandbox, base_url: &str) -> assert_cmd::Command {
    let mut cmd = sandbox.payments();
    cmd.args([
        "--base-url",
        base_url,
        "--merchant-id",
        MERCHANT,
        "-o",
        "json",
    ]);
    cmd
}

fn initiate(sandbox: &Sandbox, base_url: &str, reference: &str) -> assert_cmd::Command {
    let mut cmd = payments(sandbox, base_url);
    cmd.args(["initiate", "--reference-no", reference, "--amount", "1"])
        .args(["--product", "TOPUP", "--store-id", "S1"]);
    cmd
}

fn status(sandbox: &Sandbox, base_url: &str, reference: &str) -> assert_cmd::Command {
    let mut cmd = payments(sandbox, base_url);
    cmd.args(["status", "--reference-no", reference]);
    cmd
}

/// What initiate sends, status and reconcile find: 129 and 1,024
/// characters (over the mock's 64 and status's old 128), spaces and
/// slashes inside.
#[tokio::test(flavor = "multi_thread")]
async fn what_initiate_sends_status_and_reconcile_look_up() {
    let stub = service().await;
    let sandbox = Sandbox::new();
    let references = [
        "INV 2026/11".to_owned(),
        "r".repeat(100),
        "s".repeat(129),
        "é".repeat(1024),
    ];
    let mut ledger = "referenceNo,amount\n".to_owned();
    for reference in &references {
        let sent = run(initiate(&sandbox, &stub.uri(), reference)).await;
        let sent = sent.code(0);
        let printed: Value = serde_json::from_str(stdout(&sent).trim()).unwrap();
        assert_eq!(printed["data"]["referenceNo"], reference.as_str());
        let found = run(status(&sandbox, &stub.uri(), reference)).await;
        let found = found.code(0);
        let printed: Value = serde_json::from_str(stdout(&found).trim()).unwrap();
        assert_eq!(
            printed["data"]["referenceNo"],
            reference.as_str(),
            "{}",
            stderr(&found)
        );
        ledger.push_str(&format!("{reference},1.00\n"));
    }
    let file = sandbox.write_file("ledger.csv", &ledger);
    let mut cmd = payments(&sandbox, &stub.uri());
    cmd.arg("reconcile").arg(&file);
    let assert = run(cmd).await;
    let out = stdout(&assert);
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for (row, reference) in lines.iter().zip(&references) {
        assert_eq!(row["referenceNo"], reference.as_str(), "{out}");
        assert_eq!(row["class"], "match", "{row}");
    }
    assert_eq!(lines.len(), references.len() + 1, "{out}");
    assert.code(0);
}

/// What status and reconcile refuse, initiate refuses before sending
/// (exit 2, naming the flag): a control character, over 1,024 characters.
#[tokio::test(flavor = "multi_thread")]
async fn initiate_refuses_what_status_and_reconcile_refuse() {
    let stub = service().await;
    let sandbox = Sandbox::new();
    let long = "x".repeat(1025);
    for (reference, said) in [
        ("INV\t2026/11", "contains a control character"),
        ("INV\u{1b}[2J", "contains a control character"),
        (long.as_str(), "is longer than 1024 characters"),
    ] {
        let refused = run(initiate(&sandbox, &stub.uri(), reference)).await;
        let err = stderr(&refused.code(2));
        assert!(err.starts_with("error: --reference-no '"), "{err}");
        assert!(err.contains(said), "{err}");
        assert!(!err.contains('\u{1b}') && !err.contains('\t'), "{err:?}");
        let refused = run(status(&sandbox, &stub.uri(), reference)).await;
        let err = stderr(&refused.code(2));
        assert!(err.contains(said), "{err}");

        let file = sandbox.write_file(
            "one.csv",
            &format!("referenceNo,amount\n\"{reference}\",1.00\n"),
        );
        let mut cmd = payments(&sandbox, &stub.uri());
        cmd.arg("reconcile").arg(&file);
        let judged = run(cmd).await;
        let row: Value = serde_json::from_str(stdout(&judged).lines().next().unwrap()).unwrap();
        assert_eq!(row["class"], "invalid", "{row}");
        assert!(
            row["detail"]
                .as_str()
                .unwrap()
                .contains(&format!("referenceNo {said}")),
            "{row}"
        );
    }
    assert!(stub.received_requests().await.unwrap().is_empty());
}
