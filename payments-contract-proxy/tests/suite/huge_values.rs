//! Values from outside quoted in findings are cut: an upstream answering
//! a 256 KiB errorCode leaves findings of a few hundred bytes in JUnit
//! and SARIF (the SARIF still valid), not a copy of the code each.

use axum::http::Method;
use serde_json::{Value, json};

use crate::consumers::assert_valid_sarif;
use crate::rig::{Rig, initiate_body};
use crate::upstream::Canned;

#[tokio::test]
async fn a_256_kib_error_code_is_quoted_cut_in_junit_and_sarif() {
    let rig = Rig::start().await;
    let code = "C".repeat(256 * 1024);
    let answer = json!({ "isSuccess": false, "errorCode": code, "message": "no", "data": null });
    for n in 0..3 {
        let reply = rig
            .exchange(
                &Method::POST,
                "/api/payments/initiate",
                Some(&initiate_body(&format!("REF-{n}"), 100)),
                Canned::json(400, &answer),
            )
            .await;
        assert_eq!(reply.verdict(), "undocumented");
    }
    let get = |format: &str| {
        rig.client
            .get(rig.url(&format!("/_proxy/report?format={format}")))
            .send()
    };
    let sarif: Value = get("sarif")
        .await
        .expect("answered")
        .json()
        .await
        .expect("JSON");
    assert_valid_sarif(&sarif, "/_proxy/report?format=sarif");
    let results = sarif["runs"][0]["results"].as_array().expect("results");
    let undocumented: Vec<&str> = results
        .iter()
        .filter(|r| r["ruleId"] == "code.undocumented")
        .map(|r| r["message"]["text"].as_str().expect("a message"))
        .collect();
    assert_eq!(undocumented.len(), 3, "{results:?}");
    for message in undocumented {
        assert!(
            message.starts_with("errorCode CCC") && message.contains("C… is not in"),
            "{message}"
        );
        assert!(message.len() < 512, "{} bytes", message.len());
    }
    let sarif_len = serde_json::to_string(&sarif).expect("JSON").len();
    assert!(sarif_len < 64 * 1024, "the SARIF is {sarif_len} bytes");
    let junit = get("junit")
        .await
        .expect("answered")
        .text()
        .await
        .expect("text");
    assert!(junit.matches("errorCode CCC").count() >= 3, "{junit}");
    assert!(
        junit.len() < 64 * 1024,
        "the JUnit is {} bytes",
        junit.len()
    );
}
