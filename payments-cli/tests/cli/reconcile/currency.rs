//! The `currency` class and the ledger's currency cells: fewer decimal
//! places than a currency has are no evidence (a number is a number), a
//! code the service refuses is never judged.

use wiremock::MockServer as Stub;

use super::unverified::{answer, answers};
use crate::common::{MERCHANT, Sandbox, run, stdout};

fn reconcile(sandbox: &Sandbox, stub: &Stub, ledger: &std::path::Path) -> assert_cmd::Command {
    let mut cmd = sandbox.payments();
    cmd.args(["--base-url", &stub.uri(), "--merchant-id", MERCHANT])
        .args(["-o", "json", "reconcile"])
        .arg(ledger);
    cmd
}

/// The json lines' classes and details, the summary left out.
fn judged(out: &str) -> Vec<(String, String)> {
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|line| serde_json::from_str(line).expect("json"))
        .collect();
    lines[..lines.len() - 1]
        .iter()
        .map(|line| {
            (
                line["class"].as_str().expect("a class").to_owned(),
                line["detail"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// A service that writes amounts with fewer decimal places than their
/// currency has (`150.5`, `150`: JavaScript's numbers, Java's
/// `stripTrailingZeros`) is not answering in another currency: `150.5` is
/// 150.50 MYR, compared by value. It was `currency` ("with 1 decimal
/// places; MYR has 2") and exit 6. Only more significant decimal places
/// than the row's currency has are `currency`; an amount that differs is
/// `amount`, the service's amount shown as it wrote it, without a code.
#[tokio::test(flavor = "multi_thread")]
async fn minimal_decimals_are_compared_by_value() {
    let stub = Stub::start().await;
    answers(&stub, "INV-1", answer("INV-1", "150.5")).await;
    answers(&stub, "INV-2", answer("INV-2", "150")).await;
    answers(&stub, "INV-3", answer("INV-3", "1500.0")).await;
    let sandbox = Sandbox::new();
    let ledger = sandbox.write_file(
        "ledger.csv",
        "referenceNo,amount,currency\nINV-1,150.50,MYR\nINV-2,150.00,MYR\nINV-3,1500,JPY\n",
    );
    let out = stdout(&run(reconcile(&sandbox, &stub, &ledger)).await.success());
    assert_eq!(
        judged(&out),
        [
            ("match".to_owned(), String::new()),
            ("match".to_owned(), String::new()),
            ("match".to_owned(), String::new()),
        ],
        "{out}"
    );

    let stub = Stub::start().await;
    answers(&stub, "INV-1", answer("INV-1", "10.5")).await;
    answers(&stub, "INV-2", answer("INV-2", "10.505")).await;
    answers(&stub, "INV-3", answer("INV-3", "10.5")).await;
    let ledger = sandbox.write_file(
        "ledger.csv",
        "referenceNo,amount,currency\nINV-1,99.00,MYR\nINV-2,10.50,MYR\nINV-3,10,JPY\n",
    );
    let out = stdout(&run(reconcile(&sandbox, &stub, &ledger)).await.code(6));
    assert_eq!(
        judged(&out),
        [
            (
                "amount".to_owned(),
                "ledger 99.00 MYR, service 10.5".to_owned()
            ),
            (
                "currency".to_owned(),
                "the service's amount 10.505 cannot be in MYR (2 decimal places); ledger 10.50 MYR"
                    .to_owned()
            ),
            (
                "currency".to_owned(),
                "the service's amount 10.5 cannot be in JPY (no decimal places); ledger 10 JPY"
                    .to_owned()
            ),
        ],
        "{out}"
    );
}

/// `payments status ID --currency MYR` answered `"amount":150` warned
/// "wrote the amount 150 with 0 decimal places ... (is --currency
/// right?)" and dropped the currency: 150 is 150.00 MYR. Only an amount
/// that cannot be in the currency (`10.505` for MYR) gets the note.
#[tokio::test(flavor = "multi_thread")]
async fn status_shows_a_minimal_decimals_amount_in_the_currency() {
    let stub = Stub::start().await;
    answers(&stub, "INV-1", answer("INV-1", "150")).await;
    answers(&stub, "INV-2", answer("INV-2", "10.505")).await;
    let sandbox = Sandbox::new();
    let status = |reference: &str| {
        let mut cmd = sandbox.payments();
        cmd.args(["--base-url", &stub.uri(), "-o", "table", "status"])
            .args(["--reference-no", reference, "--currency", "MYR"]);
        cmd
    };
    let assert = run(status("INV-1")).await.success();
    let (out, err) = (stdout(&assert), crate::common::stderr(&assert));
    assert!(out.contains("150.00 MYR"), "{out}");
    assert_eq!(err, "");
    let assert = run(status("INV-2")).await.success();
    let (out, err) = (stdout(&assert), crate::common::stderr(&assert));
    assert!(out.contains("10.505") && !out.contains("MYR"), "{out}");
    assert!(
        err.contains(
            "note: the service wrote the amount 10.505, which cannot be in MYR (2 decimal \
             places); amounts are shown without a currency (is --currency right?)"
        ),
        "{err}"
    );
}

/// What docs/cli.md says of `service`: the data as read, written again,
/// the amount a JSON number with the decimal places the service wrote; an
/// exponent or a numeric string is not kept.
#[tokio::test(flavor = "multi_thread")]
async fn the_service_object_holds_the_amount_as_a_number_with_its_decimal_places() {
    let stub = Stub::start().await;
    answers(&stub, "INV-1", answer("INV-1", "49.90")).await;
    answers(&stub, "INV-2", answer("INV-2", "\"49.90\"")).await;
    answers(&stub, "INV-3", answer("INV-3", "1e2")).await;
    let sandbox = Sandbox::new();
    let ledger = sandbox.write_file(
        "ledger.csv",
        "referenceNo,amount\nINV-1,49.90\nINV-2,49.90\nINV-3,100.00\n",
    );
    let out = stdout(&run(reconcile(&sandbox, &stub, &ledger)).await.success());
    let amounts: Vec<String> = out
        .lines()
        .filter_map(|line| {
            let line: serde_json::Value = serde_json::from_str(line).expect("json");
            line.get("service").map(|s| s["amount"].to_string())
        })
        .collect();
    assert_eq!(amounts, ["49.90", "49.90", "100"], "{out}");
}

/// Withdrawn codes (HRK, CUC, SLL, BGN), which the service refuses: a
/// ledger row in HRK was judged against a MYR transaction (a `match`), and
/// `--currency` took them. Now the row is `invalid` and the flags are
/// usage errors (exit 2), said to be withdrawn ISO 4217 codes with the code
/// that replaced them (they were told "not an ISO 4217 code", which they
/// are); an unknown code keeps its message.
#[tokio::test(flavor = "multi_thread")]
async fn withdrawn_currencies_are_refused_as_withdrawn_codes() {
    let stub = Stub::start().await;
    answers(&stub, "INV-1", answer("INV-1", "10.00")).await;
    answers(&stub, "INV-2", answer("INV-2", "10.00")).await;
    let sandbox = Sandbox::new();
    let ledger = sandbox.write_file(
        "ledger.csv",
        "referenceNo,amount,currency\nINV-1,10.00,HRK\nINV-2,10.00,myr\nINV-3,10.00,cuc\nINV-4,10.00,XYZ\n",
    );
    let out = stdout(&run(reconcile(&sandbox, &stub, &ledger)).await.code(6));
    assert_eq!(
        judged(&out),
        [
            (
                "invalid".to_owned(),
                "currency 'HRK' is a withdrawn ISO 4217 code (replaced by EUR): the service \
                 takes only active ones"
                    .to_owned()
            ),
            ("match".to_owned(), String::new()),
            (
                "invalid".to_owned(),
                "currency 'CUC' is a withdrawn ISO 4217 code (replaced by CUP): the service \
                 takes only active ones"
                    .to_owned()
            ),
            (
                "invalid".to_owned(),
                "currency 'XYZ' is not an ISO 4217 code such as MYR".to_owned()
            ),
        ],
        "{out}"
    );
    for (code, successor) in [("HRK", "EUR"), ("sll", "SLE"), ("BGN", "EUR")] {
        let said = format!(
            "--currency '{}' is a withdrawn ISO 4217 code (replaced by {successor}): the \
             service takes only active ones",
            code.to_ascii_uppercase()
        );
        let mut cmd = reconcile(&sandbox, &stub, &ledger);
        cmd.args(["--currency", code]);
        let assert = run(cmd).await.code(2);
        let err = crate::common::stderr(&assert);
        assert!(err.contains(&said), "{err}");
        let mut cmd = sandbox.payments();
        cmd.args([
            "--base-url",
            &stub.uri(),
            "status",
            "--reference-no",
            "INV-1",
        ])
        .args(["--currency", code]);
        let assert = run(cmd).await.code(2);
        let err = crate::common::stderr(&assert);
        assert!(err.contains(&said), "{err}");
    }
    let mut cmd = reconcile(&sandbox, &stub, &ledger);
    cmd.args(["--currency", "xyz"]);
    let err = crate::common::stderr(&run(cmd).await.code(2));
    assert!(
        err.contains("--currency 'xyz': not an ISO 4217 currency code; give one such as MYR"),
        "{err}"
    );
}
