//! The payment page at its edges, over real sockets: the page's token
//! kept out of the log however the path is spelt.

use std::process::{Command, Stdio};

use serde_json::Value;

use crate::common::{post_over_http, spawn_with_banner, terminate_expecting_success};

/// Initiates and confirms ONLINEBANKING at `base` over HTTP; the
/// transaction id and the payment page's URL.
async fn payment_page(base: &str, reference: &str) -> (String, String) {
    let body = crate::redirect::online_banking(reference);
    let initiated = post_over_http(&format!("{base}/api/payments/initiate"), &body).await;
    let id = initiated["data"]["transactionId"]
        .as_str()
        .expect("an id")
        .to_owned();
    let confirmed = post_over_http(
        &format!("{base}/api/payments/confirm"),
        &serde_json::json!({ "transactionId": id, "referenceNo": reference }),
    )
    .await;
    let extra: Value = serde_json::from_str(
        confirmed["data"]["extraProperties"]
            .as_str()
            .expect("extraProperties"),
    )
    .expect("JSON");
    let url = extra["paymentUrl"].as_str().expect("paymentUrl").to_owned();
    (id, url)
}

/// The page's token is the payer's capability: the binary's log, text or
/// JSON, never shows it, even on a path no route spells (`//pay/T` from a
/// proxy that strips a prefix badly, `/PAY/T`, `/Sandboxes/x/pay/T`).
#[tokio::test]
async fn a_token_is_never_logged_however_the_path_is_spelt() {
    for format in ["text", "json"] {
        let (child, base) = spawn_with_banner(
            Command::new(env!("CARGO_BIN_EXE_payments-mock-server"))
                .args(["--port", "0", "--log-format", format])
                .stderr(Stdio::piped()),
        );
        let (_, url) = payment_page(&base, "EDGE-LOG-1").await;
        let token = url.rsplit('/').next().expect("a token").to_owned();
        let client = reqwest::Client::new();
        let spellings = [
            format!("//pay/{token}"),
            format!("/PAY/{token}"),
            format!("/Sandboxes/x/pay/{token}"),
            format!("/pay/{token}"),
        ];
        for path in &spellings {
            let _ = client
                .get(format!("{base}{path}"))
                .send()
                .await
                .expect("answered");
        }
        let stderr = terminate_expecting_success(child);
        assert!(!stderr.contains(&token), "{format}: {stderr}");
        for shown in [
            "//pay/[redacted]",
            "/PAY/[redacted]",
            "/Sandboxes/x/pay/[redacted]",
            "path=/pay/[redacted]",
        ] {
            let shown = if format == "json" {
                shown.replace("path=", "\"path\":\"")
            } else {
                shown.to_owned()
            };
            assert!(stderr.contains(&shown), "{format}: {shown} in {stderr}");
        }
    }
}
