//! Requests under `/api/` that are none of the document's four endpoints
//! (another method, a path it does not define) are forwarded and passed
//! back, but nothing judges them: `unchecked`, never `pass`, live, in the
//! summary, the JUnit and in `check` on a recording.

use axum::http::Method;
use payments_contract_proxy::{Verdict, check_recording};

use crate::rig::{Rig, status_data};
use crate::upstream::Canned;

const ID: &str = "01a22e38-62ab-76c6-a0c5-b087c56c8a94";

/// Issue: each of these got `X-Contract-Verdict: pass` (a 405, a HEAD's
/// 500, a 404), counted as a pass under `other` and a passing JUnit
/// testcase, though no rule looked at it.
#[tokio::test]
async fn a_request_none_of_the_four_endpoints_is_unchecked_live_and_in_check() {
    let rig = Rig::start().await;
    let status = format!("/api/payments/{ID}/status");
    let cases = [
        (
            Method::OPTIONS,
            "/api/payments/initiate".to_owned(),
            Canned::failure(405, "METHOD_NOT_ALLOWED"),
        ),
        (
            Method::HEAD,
            status.clone(),
            Canned::raw(500, "").header("x-mock-fault", "error-500"),
        ),
        (
            Method::GET,
            format!("{status}/"),
            Canned::failure(404, "NOT_FOUND"),
        ),
        (
            Method::PUT,
            status.clone(),
            Canned::failure(405, "METHOD_NOT_ALLOWED"),
        ),
        (
            Method::GET,
            "/api/payments/nope".to_owned(),
            Canned::failure(404, "NOT_FOUND"),
        ),
    ];
    for (method, path, canned) in cases {
        let expected = canned.status();
        let reply = rig.exchange(&method, &path, None, canned).await;
        assert_eq!(reply.status, expected, "{method} {path}: passed back");
        assert_eq!(reply.verdict(), "unchecked", "{method} {path}");
    }
    // One of the four, for contrast: judged.
    let judged = rig
        .exchange(
            &Method::GET,
            &status,
            None,
            Canned::ok(status_data(ID, "R1", "PENDING", "10.50")),
        )
        .await;
    assert_eq!(judged.verdict(), "pass", "{:?}", judged.json());
    let summary = rig.proxy.summary();
    assert_eq!(summary.verdicts.get("unchecked"), Some(&5), "{summary:?}");
    assert_eq!(summary.verdicts.get("pass"), Some(&1), "{summary:?}");

    let junit = rig
        .client
        .get(rig.url("/_proxy/report?format=junit"))
        .send()
        .await
        .expect("the JUnit")
        .text()
        .await
        .expect("its text");
    assert_eq!(
        junit.matches("<skipped message=\"unchecked: ").count(),
        5,
        "{junit}"
    );

    // `check` agrees on the recording, and on one that said these were
    // judged (as the proxy recorded them before).
    let exchanges = rig.proxy.exchanges();
    for (exchange, verdict, _) in &exchanges {
        let expected = if exchange.request.method == "GET" && exchange.request.path == status {
            Verdict::Pass
        } else {
            Verdict::Unchecked
        };
        assert_eq!(*verdict, expected, "{exchange:?}");
    }
    for said_judged in [false, true] {
        let mut recording = String::new();
        for (exchange, _, _) in &exchanges {
            let mut exchange = exchange.clone();
            exchange.judged |= said_judged;
            recording.push_str(&serde_json::to_string(&exchange).expect("JSON"));
            recording.push('\n');
        }
        let checked = check_recording(recording.as_bytes()).expect("checked");
        assert_eq!(
            checked.summary.verdicts.get("unchecked"),
            Some(&5),
            "judged {said_judged}: {:?}",
            checked.summary
        );
        assert_eq!(checked.summary.verdicts.get("pass"), Some(&1));
    }
    rig.proxy.shutdown().await;
}
