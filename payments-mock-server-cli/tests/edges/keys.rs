//! `--api-key` takes a key that contains `=`: it is read up to its last
//! `=`, which is followed by the merchant's UUID or ends the key (base64
//! padding). Before, the text was split at its first `=`, and both
//! `c2VjcmV0=` and `abc==UUID` failed "the merchant after '=' is not a UUID".

use std::process::{Command, Stdio};

use crate::common::{MERCHANT, spawn_with_banner, terminate_expecting_success};

const BIN: &str = env!("CARGO_BIN_EXE_payments-mock-server");

#[tokio::test]
async fn keys_that_contain_equals_signs_are_configured_and_accepted() {
    let bound = format!("abc=={MERCHANT}");
    let (child, base) = spawn_with_banner(
        Command::new(BIN)
            .args(["--port", "0", "--api-key", "c2VjcmV0=", "--api-key", &bound])
            .stderr(Stdio::piped()),
    );
    let client = reqwest::Client::new();
    let status_of = |key: &'static str| {
        let request = client.get(format!(
            "{base}/api/payments/reference/R-1/status?merchantId={MERCHANT}"
        ));
        async move {
            request
                .bearer_auth(key)
                .send()
                .await
                .expect("an answer")
                .status()
                .as_u16()
        }
    };
    // Known keys: the look-up runs (no such reference), the wrong ones 401.
    assert_eq!(status_of("c2VjcmV0=").await, 404, "the base64 key, whole");
    assert_eq!(status_of("abc=").await, 404, "the bound key, its '=' kept");
    assert_eq!(status_of("c2VjcmV0").await, 401, "the key without its '='");
    assert_eq!(status_of("abc").await, 401);
    terminate_expecting_success(child);
}

#[test]
fn a_key_whose_last_equals_sign_is_followed_by_no_uuid_is_told_the_rule() {
    let output = Command::new(BIN)
        .args(["--port", "0", "--api-key", "sk_CANARY=PARTX=x"])
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--api-key"), "{stderr}");
    assert!(stderr.contains("last '='"), "{stderr}");
    assert!(stderr.contains("KEY=MERCHANT_UUID"), "{stderr}");
    assert!(
        !stderr.contains("CANARY") && !stderr.contains("PARTX"),
        "{stderr}"
    );
}
