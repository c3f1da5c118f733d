//! The deviant upstream: for every rule id, scripted answers that break
//! (or stretch) the interface document the way a real service drifts,
//! each sent through the proxy after whatever earlier exchanges the rules
//! that span requests need, and each reported with its exact rule id and
//! level, the exchange's `X-Contract-Verdict` and nothing else.

use std::collections::BTreeSet;

use payments_contract_proxy::{Finding, Level, rules};

use crate::deviations::{C, Deviation, Step, U, V, deviations};
use crate::rig::{Reply, Rig};

/// What one deviation gave.
#[derive(Debug)]
struct Outcome {
    /// `X-Contract-Verdict` of each earlier exchange.
    before: Vec<String>,
    /// The tripping exchange's answer.
    reply: Reply,
    /// Its findings, as the proxy recorded them.
    findings: Vec<Finding>,
}

impl Outcome {
    fn caught(&self, deviation: &Deviation) -> bool {
        self.findings
            .iter()
            .any(|f| f.rule == deviation.rule && f.level == deviation.level)
    }
}

pub(crate) async fn send(rig: &Rig, step: &Step) -> Reply {
    rig.upstream.push(step.canned.clone());
    let mut request = rig.client.request(step.method.clone(), rig.url(&step.path));
    if let Some(body) = &step.body {
        request = request
            .header("content-type", "application/json")
            .body(body.clone());
    }
    let reply = Reply::of(request.send().await.expect("the proxy answers")).await;
    assert_eq!(
        rig.upstream.unused(),
        0,
        "{} {} reached the upstream",
        step.method,
        step.path
    );
    reply
}

/// Sends a deviation's exchanges through the proxy.
async fn run(rig: &Rig, deviation: &Deviation) -> Outcome {
    let mut before = Vec::new();
    for step in &deviation.before {
        before.push(send(rig, step).await.verdict().to_owned());
    }
    let reply = send(rig, &deviation.trip).await;
    let exchanges = rig.proxy.exchanges();
    let (exchange, _, findings) = exchanges.last().expect("the proxy kept the exchange");
    assert_eq!(
        (
            exchange.request.method.as_str(),
            exchange.request.path.as_str()
        ),
        (deviation.trip.method.as_str(), deviation.trip.path.as_str()),
        "the last exchange is the tripping one"
    );
    Outcome {
        before,
        reply,
        findings: findings.clone(),
    }
}

/// Everything a deviation must show: earlier exchanges pass; the upstream's
/// status reaches the application with the verdict; the findings are
/// exactly the expected rules, each at its registry level, with a message.
fn check(deviation: &Deviation, outcome: &Outcome) {
    let what = deviation.what;
    assert!(
        outcome.before.iter().all(|v| v == "pass"),
        "{what}: the exchanges before must pass, got {:?}",
        outcome.before
    );
    assert_eq!(
        outcome.reply.status,
        deviation.trip.canned.status(),
        "{what}: the upstream's status reaches the application"
    );
    assert_eq!(
        outcome.reply.body,
        deviation.trip.canned.body(),
        "{what}: the upstream's body reaches the application"
    );
    assert_eq!(
        outcome.reply.verdict(),
        deviation.verdict,
        "{what}: X-Contract-Verdict ({:?})",
        outcome.findings
    );
    assert!(
        outcome.caught(deviation),
        "{what}: {} at {:?} not reported: {:?}",
        deviation.rule,
        deviation.level,
        outcome.findings
    );
    let rules: BTreeSet<&str> = outcome.findings.iter().map(|f| f.rule).collect();
    let expected: BTreeSet<&str> = deviation.found.iter().copied().collect();
    assert_eq!(
        rules, expected,
        "{what}: the rules reported ({:?})",
        outcome.findings
    );
    for finding in &outcome.findings {
        let registered = rules::RULES
            .iter()
            .find(|r| r.id == finding.rule)
            .expect("a finding names a registered rule");
        let replay = finding.rule == "initiate.duplicate" && finding.level == U;
        assert!(
            finding.level == registered.level || replay,
            "{what}: {} reported at {:?}, registered at {:?}",
            finding.rule,
            finding.level,
            registered.level
        );
        assert!(
            !finding.message.trim().is_empty(),
            "{what}: {} without a message",
            finding.rule
        );
    }
}

/// Runs every scripted deviation of `rule` at `level`, each on a fresh
/// proxy, and checks each; then the summary counts the rule at the level.
async fn trips(rule: &str, level: Level) {
    let mine: Vec<Deviation> = deviations()
        .into_iter()
        .filter(|d| d.rule == rule && d.level == level)
        .collect();
    assert!(!mine.is_empty(), "no scripted deviation for {rule}");
    for deviation in &mine {
        let rig = Rig::start().await;
        let outcome = run(&rig, deviation).await;
        check(deviation, &outcome);
        let summary = rig.proxy.summary();
        let count = summary
            .rules
            .get(rule)
            .unwrap_or_else(|| panic!("{}: {rule} is in the summary", deviation.what));
        assert!(
            count.levels.get(level.as_str()).copied().unwrap_or(0) >= 1,
            "{}: the summary counts {rule} at {}: {:?}",
            deviation.what,
            level.as_str(),
            count.levels
        );
        assert_eq!(
            count.first.request,
            format!("{} {}", deviation.trip.method, deviation.trip.path),
            "{}: the summary names the first exchange that tripped {rule}",
            deviation.what
        );
        assert_eq!(
            count.first.seq,
            deviation.before.len() as u64 + 1,
            "{}",
            deviation.what
        );
        let violations = u64::from(deviation.verdict == "violation");
        assert_eq!(
            summary.verdicts.get("violation").copied().unwrap_or(0),
            violations,
            "{}: {:?}",
            deviation.what,
            summary.verdicts
        );
        assert_eq!(summary.exit_code(false), u8::from(violations > 0));
        assert_eq!(
            summary.exit_code(true),
            u8::from(deviation.verdict != "pass")
        );
    }
}

#[tokio::test]
async fn an_answer_that_is_not_the_envelope_is_an_envelope_shape_violation() {
    trips("envelope.shape", V).await;
}

#[tokio::test]
async fn a_success_without_data_or_a_failure_without_a_code_is_an_envelope_consistency_violation() {
    trips("envelope.consistency", V).await;
}

#[tokio::test]
async fn a_not_found_answered_400_or_a_validation_failure_answered_422_is_an_http_status_violation()
{
    trips("http.status", V).await;
}

#[tokio::test]
async fn a_field_of_the_wrong_type_or_missing_or_not_iso_8601_is_a_data_fields_violation() {
    trips("data.fields", V).await;
}

#[tokio::test]
async fn an_initiate_answer_that_does_not_echo_the_request_is_a_data_echo_violation() {
    trips("data.echo", V).await;
}

#[tokio::test]
async fn an_amount_read_back_in_minor_units_is_an_amount_units_violation() {
    trips("amount.units", V).await;
}

#[tokio::test]
async fn status_by_id_and_by_reference_disagreeing_on_the_amount_is_a_status_agree_violation() {
    trips("status.agree", V).await;
}

#[tokio::test]
async fn a_successful_transaction_read_back_as_confirmed_is_a_status_regressed_violation() {
    trips("status.regressed", V).await;
}

#[tokio::test]
async fn a_second_confirm_answered_200_is_a_confirm_twice_violation() {
    trips("confirm.twice", V).await;
}

#[tokio::test]
async fn a_reference_answered_with_another_transaction_is_an_initiate_duplicate_violation_and_with_the_same_one_undocumented()
 {
    trips("initiate.duplicate", V).await;
    trips("initiate.duplicate", U).await;
}

#[tokio::test]
async fn a_transaction_id_answered_for_a_second_reference_is_a_transaction_id_reused_violation() {
    trips("transaction.id-reused", V).await;
}

#[tokio::test]
async fn a_confirm_or_status_answered_about_another_transaction_is_an_answer_other_violation() {
    trips("answer.other", V).await;
}

#[tokio::test]
async fn an_initiate_without_a_store_or_with_amount_zero_answered_200_is_an_initiate_accepted_invalid_violation()
 {
    trips("initiate.accepted-invalid", V).await;
}

#[tokio::test]
async fn an_error_code_outside_section_7_is_code_undocumented() {
    trips("code.undocumented", U).await;
}

#[tokio::test]
async fn a_status_outside_the_documents_five_is_status_undocumented() {
    trips("status.undocumented", U).await;
}

#[tokio::test]
async fn an_http_status_the_document_does_not_list_is_http_undocumented() {
    trips("http.undocumented", U).await;
}

#[tokio::test]
async fn a_data_field_the_document_does_not_show_is_data_extra() {
    trips("data.extra", U).await;
}

#[tokio::test]
async fn an_application_request_the_document_rules_out_is_request_invalid_and_alone_still_a_pass() {
    trips("request.invalid", C).await;
}

#[tokio::test]
async fn every_rule_is_caught_by_a_scripted_deviation_through_one_proxy() {
    let rig = Rig::start().await;
    let all = deviations();
    let mut outcomes = Vec::new();
    for deviation in &all {
        outcomes.push(run(&rig, deviation).await);
    }
    let caught = all
        .iter()
        .zip(&outcomes)
        .filter(|(d, o)| o.caught(d) && o.reply.verdict() == d.verdict)
        .count();
    eprintln!(
        "deviant upstream: {} scripted deviations, {caught} caught",
        all.len()
    );
    for (deviation, outcome) in all.iter().zip(&outcomes) {
        check(deviation, outcome);
    }
    assert_eq!(caught, all.len());

    let summary = rig.proxy.summary();
    let missing: Vec<&str> = rules::RULES
        .iter()
        .map(|r| r.id)
        .filter(|id| !summary.rules.contains_key(id))
        .collect();
    assert!(
        missing.is_empty(),
        "rules no scripted deviation tripped: {missing:?}"
    );
    for rule in &rules::RULES {
        let levels = &summary.rules[rule.id].levels;
        assert!(
            levels.get(rule.level.as_str()).copied().unwrap_or(0) >= 1,
            "{} fired at its level {}: {levels:?}",
            rule.id,
            rule.level.as_str()
        );
    }
    let duplicate = &summary.rules["initiate.duplicate"].levels;
    assert_eq!(
        (duplicate.get("violation"), duplicate.get("undocumented")),
        (Some(&1), Some(&1)),
        "initiate.duplicate at both of its levels"
    );
    let sent: usize = all.iter().map(|d| d.before.len() + 1).sum();
    assert_eq!(summary.exchanges, sent as u64);
    assert_eq!(rig.upstream.count(), sent, "each request forwarded once");
    assert_eq!(
        summary.verdicts.get("pass").copied().unwrap_or(0),
        (all.iter().map(|d| d.before.len()).sum::<usize>()
            + all.iter().filter(|d| d.verdict == "pass").count()) as u64,
        "the clean exchanges pass: {:?}",
        summary.verdicts
    );
    assert_eq!(summary.exit_code(false), 1);
}
