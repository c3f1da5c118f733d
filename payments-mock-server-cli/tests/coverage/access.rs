//! Who may read the coverage: with `--admin-key`, the admin key alone (a
//! merchant's key is 403: the counts are the whole process's, no
//! merchant's part), anyone without one; and the same through the binary,
//! with a committed fault recovered and a reset.

use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::admin_access::{ADMIN_KEY, Target, guarded_config};
use crate::common::{
    MERCHANT, initiate_body, service_with, spawn_with_banner, terminate_expecting_success,
};
use crate::security::{KEY_A, KEY_OPEN};

const BIN: &str = env!("CARGO_BIN_EXE_payments-mock-server");

/// (caller, Authorization) of each role.
fn roles() -> [(&'static str, Option<String>); 5] {
    [
        ("no key", None),
        ("wrong key", Some("Bearer adm_wrong".to_owned())),
        ("admin key", Some(format!("Bearer {ADMIN_KEY}"))),
        ("merchant key", Some(format!("Bearer {KEY_A}"))),
        ("unbound API key", Some(format!("Bearer {KEY_OPEN}"))),
    ]
}

async fn role_statuses(target: &Target, path: &str) -> Vec<u16> {
    let mut statuses = Vec::new();
    for (_, auth) in roles() {
        let headers: Vec<(&str, &str)> =
            auth.iter().map(|a| ("authorization", a.as_str())).collect();
        statuses.push(target.call("GET", path, &headers, None).await.status);
    }
    statuses
}

#[tokio::test]
async fn the_admin_key_alone_reads_the_coverage() {
    let (_, router) = service_with(guarded_config());
    let target = Target::Router(router);
    for path in ["/_mock/coverage", "/_mock/ui/coverage"] {
        assert_eq!(
            role_statuses(&target, path).await,
            [401, 401, 200, 403, 403],
            "GET {path}"
        );
    }
    // A merchant's key is told why, and its console has no Coverage entry.
    let merchant = format!("Bearer {KEY_A}");
    let refused = target
        .call(
            "GET",
            "/_mock/coverage",
            &[("authorization", &merchant)],
            None,
        )
        .await;
    assert_eq!(refused.json()["errorCode"], "FORBIDDEN");
    assert!(
        refused.json()["message"]
            .as_str()
            .is_some_and(|m| m.contains("admin key"))
    );
    let console = target
        .call("GET", "/_mock/ui/", &[("authorization", &merchant)], None)
        .await;
    assert_eq!(console.status, 200);
    assert!(
        !console.body.contains("_mock/ui/coverage"),
        "{}",
        console.body
    );
    let admin = format!("Bearer {ADMIN_KEY}");
    let console = target
        .call("GET", "/_mock/ui/", &[("authorization", &admin)], None)
        .await;
    assert!(console.body.contains("_mock/ui/coverage\">Coverage</a>"));
    // A 401 names its scheme.
    let anonymous = target.call("GET", "/_mock/coverage", &[], None).await;
    assert_eq!(anonymous.headers["www-authenticate"], "Bearer");
}

#[tokio::test]
async fn without_an_admin_key_everyone_reads_it() {
    let mut config = guarded_config();
    config.admin_keys.clear();
    let (_, router) = service_with(config);
    let target = Target::Router(router);
    for path in ["/_mock/coverage", "/_mock/ui/coverage"] {
        assert_eq!(role_statuses(&target, path).await, [200; 5], "GET {path}");
    }
}

/// Through the binary: answers, a committed fault and its recovery, the
/// JSON to the admin key only, and a reset.
#[tokio::test]
async fn the_binary_counts_and_serves_the_coverage() {
    let (child, base) = spawn_with_banner(
        Command::new(BIN)
            .args([
                "--port",
                "0",
                "--admin-key",
                ADMIN_KEY,
                "--replica-name",
                "cov-1",
            ])
            .env_remove("PAYMENTS_MOCK_ADMIN_KEY")
            .stderr(Stdio::piped()),
    );
    let http = reqwest::Client::new();
    let admin = format!("Bearer {ADMIN_KEY}");
    let coverage = async || -> Value {
        http.get(format!("{base}/_mock/coverage"))
            .header("authorization", &admin)
            .send()
            .await
            .expect("an answer")
            .json()
            .await
            .expect("the envelope")
    };
    let initiate = |fault: Option<&'static str>| {
        let mut request = http
            .post(format!("{base}/api/payments/initiate"))
            .json(&initiate_body("BIN-1", "TOPUP"));
        if let Some(fault) = fault {
            request = request.header("x-mock-fault", fault);
        }
        request.send()
    };
    assert_eq!(
        initiate(Some("commit-then-error"))
            .await
            .expect("sent")
            .status(),
        500
    );
    assert_eq!(initiate(None).await.expect("sent").status(), 400);
    let read = http
        .get(format!(
            "{base}/api/payments/reference/BIN-1/status?merchantId={MERCHANT}"
        ))
        .send()
        .await
        .expect("sent");
    assert_eq!(read.status(), 200);
    let anonymous = http
        .get(format!("{base}/_mock/coverage"))
        .send()
        .await
        .expect("sent");
    assert_eq!(anonymous.status(), 401);

    let answer = coverage().await;
    assert_eq!(answer["isSuccess"], true, "{answer}");
    let data = &answer["data"];
    assert_eq!(data["replica"], "cov-1");
    let count = |list: &str, name: &str, field: &str| -> Value {
        data[list]
            .as_array()
            .expect("a list")
            .iter()
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("{name} in {list}"))[field]
            .clone()
    };
    assert_eq!(
        count("answers", "initiate 500 INTERNAL_ERROR", "count"),
        json!(1)
    );
    assert_eq!(
        count("answers", "initiate 400 DUPLICATE_REFERENCE_NO", "count"),
        json!(1)
    );
    assert_eq!(count("answers", "statusByReference 200", "count"), json!(1));
    assert_eq!(
        count("answers", "initiate 400 DUPLICATE_REFERENCE_NO", "source"),
        "contract"
    );
    assert_eq!(
        count("answers", "initiate 500 INTERNAL_ERROR", "source"),
        "document"
    );
    assert_eq!(
        count("transitions", "transition created -> INITIATED", "count"),
        json!(1)
    );
    assert_eq!(
        count("faults", "initiate commit-then-error", "met"),
        json!(1)
    );
    assert_eq!(
        count("faults", "initiate commit-then-error", "recovered"),
        json!(1)
    );
    assert_eq!(
        count("faults", "initiate internal-error", "recovered"),
        Value::Null
    );
    assert!(
        data["percent"]
            .as_f64()
            .is_some_and(|p| p > 0.0 && p < 100.0),
        "{data}"
    );
    assert!(
        data["faultPercent"].as_f64().is_some_and(|p| p > 0.0),
        "{data}"
    );

    let page = http
        .get(format!("{base}/_mock/ui/coverage"))
        .header("authorization", &admin)
        .send()
        .await
        .expect("sent");
    assert_eq!(page.status(), 200);
    assert!(
        page.text()
            .await
            .expect("a page")
            .contains("initiate commit-then-error")
    );

    let reset = http
        .post(format!("{base}/_mock/reset"))
        .header("authorization", &admin)
        .send()
        .await
        .expect("sent");
    assert_eq!(reset.status(), 200);
    let data = coverage().await["data"].clone();
    assert_eq!(data["covered"], json!(0), "{data}");
    assert_eq!(count_faults_met(&data), 0);
    terminate_expecting_success(child);
}

fn count_faults_met(data: &Value) -> u64 {
    data["faults"]
        .as_array()
        .expect("faults")
        .iter()
        .map(|f| f["met"].as_u64().expect("a count"))
        .sum()
}
