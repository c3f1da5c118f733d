//! `initiate` sends what the interface document allows: a product code in
//! any case or form, a long store id or description. The mock's limits
//! (CONTRACT section 1) are the mock's: it refuses them itself, with its
//! VALIDATION_ERROR, and the CLI exits 1 as for any service refusal.
//!
//! Before: `--product Topup` exited 2, `--product 'Topup': product codes
//! are upper case, e.g. TOPUP`, and a 33-character product, a 65-character
//! `--store-id` or a 256-character `--description` exited 2 too, whatever
//! the service: a provider with lower-case codes could not be reached.

use payments_mock_server::MockServer;
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer as Stub, Request, ResponseTemplate};

use crate::common::{MERCHANT, Sandbox, run, stderr, stdout};

const TX_ID: &str = "0192f7c4-2d1e-7a10-9c55-5d3a8f7b1e01";

fn initiate(sandbox: &Sandbox, base_url: &str, product: &str, store: &str) -> assert_cmd::Command {
    initiate_as(sandbox, base_url, "R1", product, store)
}

fn initiate_as(
    sandbox: &Sandbox,
    base_url: &str,
    reference: &str,
    product: &str,
    store: &str,
) -> assert_cmd::Command {
    let mut cmd = sandbox.payments();
    cmd.args([
        "--base-url",
        base_url,
        "--merchant-id",
        MERCHANT,
        "-o",
        "json",
    ])
    .args(["initiate", "--reference-no", reference, "--amount", "1"])
    .args(["--product", product, "--store-id", store]);
    cmd
}

/// A service that takes what it is sent and answers with its echo.
fn echo_initiate(request: &Request) -> ResponseTemplate {
    let sent: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
    let envelope = json!({
        "isSuccess": true,
        "errorCode": null,
        "message": null,
        "data": {
            "transactionId": TX_ID,
            "referenceNo": sent["referenceNo"],
            "status": "INITIATED",
            "amount": sent["amount"],
            "currencyCode": "MYR",
            "productCode": sent["productCode"],
            "createdAt": "2026-11-22T08:15:30.123Z",
            "extraProperties": null,
        },
    });
    ResponseTemplate::new(200).set_body_raw(envelope.to_string(), "application/json")
}

#[tokio::test(flavor = "multi_thread")]
async fn values_over_the_mocks_limits_reach_a_service_that_takes_them() {
    let stub = Stub::start().await;
    Mock::given(method("POST"))
        .and(path("/api/payments/initiate"))
        .respond_with(echo_initiate)
        .mount(&stub)
        .await;
    let sandbox = Sandbox::new();
    let store = "s".repeat(100);
    let description = "d".repeat(300);
    let product = "P".repeat(33);
    for (product, extra) in [
        ("Topup", vec![]),
        ("GIFT.CARD", vec!["--description", description.as_str()]),
        (product.as_str(), vec!["--device-id", store.as_str()]),
    ] {
        let mut cmd = initiate(&sandbox, &stub.uri(), product, &store);
        cmd.args(&extra);
        let assert = run(cmd).await;
        let assert = assert.code(0);
        let printed: Value = serde_json::from_str(stdout(&assert).trim()).unwrap();
        assert_eq!(
            printed["data"]["productCode"],
            product,
            "{}",
            stderr(&assert)
        );
    }
    let received = stub.received_requests().await.unwrap();
    let bodies: Vec<Value> = received
        .iter()
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect();
    assert_eq!(bodies.len(), 3);
    assert_eq!(bodies[0]["productCode"], "Topup");
    assert_eq!(bodies[0]["storeId"], store.as_str());
    assert_eq!(bodies[1]["productCode"], "GIFT.CARD");
    assert_eq!(bodies[1]["description"], description.as_str());
    assert_eq!(bodies[2]["productCode"], product.as_str());
    assert_eq!(bodies[2]["deviceId"], store.as_str());
}

#[tokio::test(flavor = "multi_thread")]
async fn the_mock_refuses_them_itself_and_the_cli_exits_1() {
    let server = MockServer::start().await;
    let base = server.base_url();
    let sandbox = Sandbox::new();
    let assert = run(initiate(&sandbox, &base, "Topup", "S1")).await.code(1);
    let err = stderr(&assert);
    assert!(
        err.starts_with("error: initiate failed: VALIDATION_ERROR (HTTP 400): productCode"),
        "{err}"
    );
    // The hint from the mock's published products, after its refusal.
    assert!(err.contains("did you mean TOPUP?"), "{err}");
    // The envelope is printed as the service sent it (-o json).
    let printed: Value = serde_json::from_str(stdout(&assert).trim()).unwrap();
    assert_eq!(printed["errorCode"], "VALIDATION_ERROR");

    let long_store = "s".repeat(65);
    let assert = run(initiate(&sandbox, &base, "TOPUP", &long_store))
        .await
        .code(1);
    let err = stderr(&assert);
    assert!(
        err.contains("VALIDATION_ERROR (HTTP 400): storeId"),
        "{err}"
    );
    assert!(server.transactions().await.is_empty());
}

/// What the CLI still refuses before sending: its own command-line checks,
/// and what the interface document states.
#[tokio::test(flavor = "multi_thread")]
async fn the_command_lines_own_slips_are_still_usage_errors() {
    let stub = Stub::start().await;
    let sandbox = Sandbox::new();
    let cmd = initiate_as(&sandbox, &stub.uri(), "R7 ", "TOPUP", "S1");
    let assert = run(cmd).await.code(2);
    assert_eq!(
        stderr(&assert).trim_end(),
        "error: --reference-no 'R7 ' must not start or end with whitespace"
    );
    let mut cmd = initiate(&sandbox, &stub.uri(), "TOPUP", "S1");
    cmd.args(["--country", "my"]);
    let assert = run(cmd).await.code(2);
    assert_eq!(
        stderr(&assert).trim_end(),
        "error: --country 'my': country codes are upper case, e.g. MY"
    );
    let mut cmd = initiate(&sandbox, &stub.uri(), "TOPUP", "S1");
    cmd.args(["--return-url", "/back"]);
    let assert = run(cmd).await.code(2);
    assert_eq!(
        stderr(&assert).trim_end(),
        "error: --return-url '/back': must be an absolute URL"
    );
    assert!(stub.received_requests().await.unwrap().is_empty());
}
