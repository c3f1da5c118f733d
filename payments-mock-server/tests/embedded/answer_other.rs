//! An `answer-other` that had no other transaction to show (or a true
//! answer that is no success) changed nothing: the request is answered
//! truly and the fault is met nowhere (journal, rule, metrics, coverage),
//! whichever way it was asked for; what asked for it (a rule, the queue)
//! waits for a request it can misroute.

use payments_mock_server::{Endpoint, Fault, FaultRule, MockServer};
use serde_json::Value;

use super::initiate;

/// Initiates `reference` (TOPUP), with `fault` in `X-Mock-Fault`.
async fn initiated(server: &MockServer, reference: &str, fault: Option<&str>) -> (u16, Value) {
    let mut request = reqwest::Client::new()
        .post(format!("{}/api/payments/initiate", server.base_url()))
        .json(&initiate(reference, "TOPUP"));
    if let Some(fault) = fault {
        request = request.header("x-mock-fault", fault);
    }
    let response = request.send().await.expect("an answer");
    let status = response.status().as_u16();
    (status, response.json().await.expect("the envelope"))
}

/// How often the application met `answer-other` on initiate: the coverage
/// cell, and the metric when the feature serves it.
async fn counted(server: &MockServer) -> (Option<u64>, Option<u64>) {
    let cell = server.coverage().await.count("initiate answer-other");
    #[cfg(feature = "metrics")]
    let metric = {
        let text = reqwest::get(format!("{}/metrics", server.base_url()))
            .await
            .expect("an answer")
            .text()
            .await
            .expect("text");
        text.lines()
            .find(|l| {
                l.starts_with("payments_mock_faults_injected_total{")
                    && l.contains("kind=\"answer-other\"")
            })
            .and_then(|l| l.rsplit(' ').next()?.parse().ok())
    };
    // Without the feature there is no metric to read: the cell stands
    // for it.
    #[cfg(not(feature = "metrics"))]
    let metric = cell;
    (cell, metric)
}

/// Asserts the `seq`-th journal entry names `fault` (and a rule or not).
async fn journaled(server: &MockServer, seq: usize, fault: Option<&str>, rule: bool) {
    let journal = server.requests().await;
    let entry = &journal[seq];
    assert_eq!(entry.fault.as_deref(), fault, "{entry:?}");
    assert_eq!(entry.fault_rule.is_some(), rule, "{entry:?}");
}

#[tokio::test]
async fn a_rules_answer_other_with_nothing_to_show_is_met_nowhere_and_stays_armed() {
    let server = MockServer::start().await;
    let rule = FaultRule::new(Fault::AnswerOther).on(Endpoint::Initiate);
    server.add_fault_rule(rule).expect("a rule");
    let (status, body) = initiated(&server, "ONLY-1", None).await;
    assert_eq!(status, 200);
    assert_eq!(body["data"]["referenceNo"], "ONLY-1", "the true answer");
    journaled(&server, 0, None, false).await;
    let rules = server.fault_rules();
    assert_eq!((rules[0].met, rules[0].fired), (0, 0), "{rules:?}");
    assert_eq!(rules[0].remaining, Some(1));
    assert_eq!(counted(&server).await, (Some(0), Some(0)));
    let report = server.coverage().await;
    assert_eq!(
        report.uncovered(["initiate answer-other"]),
        ["\"initiate answer-other\": not exercised"]
    );

    // A duplicate answered 400 changes nothing either.
    let (status, body) = initiated(&server, "ONLY-1", None).await;
    assert_eq!(
        (status, &body["errorCode"]),
        (400, &"DUPLICATE_REFERENCE_NO".into())
    );
    journaled(&server, 1, None, false).await;
    assert_eq!(server.fault_rules()[0].fired, 0);

    // The control: with another transaction to show, the rule fires, once.
    let (status, body) = initiated(&server, "ONLY-2", None).await;
    assert_eq!(status, 200);
    assert_eq!(body["data"]["referenceNo"], "ONLY-1", "misrouted");
    journaled(&server, 2, Some("answer-other"), true).await;
    let rules = server.fault_rules();
    assert_eq!((rules[0].met, rules[0].fired), (1, 1), "{rules:?}");
    assert_eq!(rules[0].remaining, Some(0));
    assert_eq!(counted(&server).await, (Some(1), Some(1)));
    server
        .coverage()
        .await
        .assert_covered(["initiate answer-other"]);
    let (_, body) = initiated(&server, "ONLY-3", None).await;
    assert_eq!(body["data"]["referenceNo"], "ONLY-3", "the rule is spent");
    server.shutdown().await;
}

#[tokio::test]
async fn a_headers_answer_other_with_nothing_to_show_is_met_nowhere() {
    let server = MockServer::start().await;
    let (status, body) = initiated(&server, "H-1", Some("answer-other")).await;
    assert_eq!(status, 200);
    assert_eq!(body["data"]["referenceNo"], "H-1");
    journaled(&server, 0, None, false).await;
    assert_eq!(counted(&server).await, (Some(0), Some(0)));
    // With a delay too, the delay alone is met.
    let (_, body) = initiated(&server, "H-1", Some("delay=0,answer-other")).await;
    assert_eq!(body["errorCode"], "DUPLICATE_REFERENCE_NO");
    journaled(&server, 1, Some("delay=0"), false).await;
    assert_eq!(server.coverage().await.count("initiate delay"), Some(1));
    // The control: another transaction to show.
    let (_, body) = initiated(&server, "H-2", Some("answer-other")).await;
    assert_eq!(body["data"]["referenceNo"], "H-1");
    journaled(&server, 2, Some("answer-other"), false).await;
    assert_eq!(counted(&server).await, (Some(1), Some(1)));
    server.shutdown().await;
}

#[tokio::test]
async fn a_queued_answer_other_with_nothing_to_show_waits_for_the_next_request() {
    let server = MockServer::start().await;
    server.inject_faults([Fault::AnswerOther]);
    let (_, body) = initiated(&server, "Q-1", None).await;
    assert_eq!(body["data"]["referenceNo"], "Q-1");
    journaled(&server, 0, None, false).await;
    assert_eq!(counted(&server).await, (Some(0), Some(0)));
    // Still queued: the next request, that has Q-1 to show, meets it.
    let (_, body) = initiated(&server, "Q-2", None).await;
    assert_eq!(body["data"]["referenceNo"], "Q-1", "misrouted");
    journaled(&server, 1, Some("answer-other"), false).await;
    assert_eq!(counted(&server).await, (Some(1), Some(1)));
    let (_, body) = initiated(&server, "Q-3", None).await;
    assert_eq!(body["data"]["referenceNo"], "Q-3", "taken once");
    server.shutdown().await;
}

/// Requests that cannot be misrouted (duplicates) and requests that can,
/// at once, against a rule of five: what the rule fired is exactly what
/// was misrouted, journaled and counted, and it fires five in the end.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_answer_others_are_counted_exactly() {
    let server = MockServer::start().await;
    initiated(&server, "C-0", None).await;
    let rule = FaultRule::new(Fault::AnswerOther)
        .on(Endpoint::Initiate)
        .times(5);
    server.add_fault_rule(rule).expect("a rule");
    let mut tasks = Vec::new();
    for n in 0..24 {
        let reference = if n % 2 == 0 {
            "C-0".to_owned()
        } else {
            format!("C-{n}")
        };
        let base = server.base_url();
        tasks.push(tokio::spawn(async move {
            let response = reqwest::Client::new()
                .post(format!("{base}/api/payments/initiate"))
                .json(&initiate(&reference, "TOPUP"))
                .send()
                .await
                .expect("an answer");
            let status = response.status().as_u16();
            let body: Value = response.json().await.expect("json");
            (reference, status, body)
        }));
    }
    let mut misrouted = 0;
    for task in tasks {
        let (reference, status, body) = task.await.expect("joined");
        if reference == "C-0" {
            assert_eq!(
                (status, &body["errorCode"]),
                (400, &"DUPLICATE_REFERENCE_NO".into())
            );
        } else if body["data"]["referenceNo"] != reference.as_str() {
            misrouted += 1;
        }
    }
    exactly(&server, misrouted).await;
    assert!(misrouted <= 5);
    // Then one at a time until it is spent: five in all.
    let mut n = 100;
    while server.fault_rules()[0].remaining != Some(0) {
        n += 1;
        let (_, body) = initiated(&server, &format!("C-{n}"), None).await;
        assert_ne!(body["data"]["referenceNo"], format!("C-{n}").as_str());
        misrouted += 1;
    }
    assert_eq!(misrouted, 5);
    exactly(&server, 5).await;
    server.shutdown().await;
}

/// What the rule fired is what it met, what was journaled and counted.
async fn exactly(server: &MockServer, misrouted: u64) {
    let rules = server.fault_rules();
    assert_eq!(rules[0].fired, misrouted, "{rules:?}");
    assert_eq!(rules[0].met, misrouted, "{rules:?}");
    let journaled = server
        .requests()
        .await
        .iter()
        .filter(|e| e.fault.as_deref() == Some("answer-other"))
        .count() as u64;
    assert_eq!(journaled, misrouted);
    assert_eq!(counted(server).await, (Some(misrouted), Some(misrouted)));
}
