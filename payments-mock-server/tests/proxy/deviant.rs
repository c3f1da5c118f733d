//! The deviant upstream: for every rule id, scripted answers that break
//! (or stretch) the interface document the way a real service drifts,
//! each sent through the proxy after whatever earlier exchanges the rules
//! that span requests need, and each reported with its exact rule id and
//! level, the exchange's `X-Contract-Verdict` and nothing else.

use std::collections::BTreeSet;

use axum::http::Method;
use payments_mock_server::{Finding, Level, rules};
use serde_json::{Value, json};

use crate::upstream::{
    Canned, Reply, Rig, confirm_body, confirm_data, initiate_body, initiate_data, status_data,
};

/// One request the application sends and the answer the upstream gives.
#[derive(Debug, Clone)]
struct Step {
    method: Method,
    path: String,
    /// Raw body bytes (sent as `application/json`), if any.
    body: Option<String>,
    canned: Canned,
}

fn get(path: &str, canned: Canned) -> Step {
    Step {
        method: Method::GET,
        path: path.to_owned(),
        body: None,
        canned,
    }
}

fn post(path: &str, body: &Value, canned: Canned) -> Step {
    post_raw(path, &body.to_string(), canned)
}

fn post_raw(path: &str, body: &str, canned: Canned) -> Step {
    Step {
        method: Method::POST,
        path: path.to_owned(),
        body: Some(body.to_owned()),
        canned,
    }
}

const INITIATE: &str = "/api/payments/initiate";
const CONFIRM: &str = "/api/payments/confirm";

fn by_id(id: &str) -> String {
    format!("/api/payments/{id}/status")
}

fn by_reference(reference: &str) -> String {
    format!("/api/payments/reference/{reference}/status")
}

/// One scripted deviation: clean exchanges first (each must pass), then
/// the one that trips `rule` at `level`.
#[derive(Debug, Clone)]
struct Deviation {
    /// What the service did, for the failure messages.
    what: &'static str,
    rule: &'static str,
    level: Level,
    before: Vec<Step>,
    trip: Step,
    /// Every rule id the tripping exchange must be reported under, and no
    /// other.
    found: &'static [&'static str],
    /// Its `X-Contract-Verdict`.
    verdict: &'static str,
}

impl Deviation {
    fn new(
        what: &'static str,
        (rule, level): (&'static str, Level),
        trip: Step,
        found: &'static [&'static str],
        verdict: &'static str,
    ) -> Self {
        Self {
            what,
            rule,
            level,
            before: Vec::new(),
            trip,
            found,
            verdict,
        }
    }

    fn after(mut self, step: Step) -> Self {
        self.before.push(step);
        self
    }
}

const V: Level = Level::Violation;
const U: Level = Level::Undocumented;
const C: Level = Level::Client;

fn with(mut data: Value, field: &str, value: Value) -> Value {
    data[field] = value;
    data
}

fn without(mut data: Value, field: &str) -> Value {
    data.as_object_mut()
        .expect("a data object")
        .remove(field)
        .expect("the field was there");
    data
}

/// Every scripted deviation. Transaction ids and references are unique to
/// each, so all of them can pass through one proxy without meeting.
fn deviations() -> Vec<Deviation> {
    let html = "<html><head><title>502 Bad Gateway</title></head>\
                <body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>";
    vec![
        Deviation::new(
            "answered {\"ok\":true}",
            ("envelope.shape", V),
            get(
                &by_id("t-shape-1"),
                Canned::json(200, &json!({ "ok": true })),
            ),
            &["envelope.shape"],
            "violation",
        ),
        Deviation::new(
            "a load balancer's HTML 502 page",
            ("envelope.shape", V),
            get(
                &by_id("t-shape-2"),
                Canned::raw(502, html).header("content-type", "text/html"),
            ),
            &["envelope.shape", "http.undocumented"],
            "violation",
        ),
        Deviation::new(
            "an empty 504",
            ("envelope.shape", V),
            get(&by_reference("R-shape-3"), Canned::raw(504, "")),
            &["envelope.shape", "http.undocumented"],
            "violation",
        ),
        Deviation::new(
            "a status read with isSuccess true and data null",
            ("envelope.consistency", V),
            get(
                &by_id("t-consistency-1"),
                Canned::json(
                    200,
                    &json!({"isSuccess": true, "errorCode": null, "message": null, "data": null}),
                ),
            ),
            &["envelope.consistency"],
            "violation",
        ),
        Deviation::new(
            "a failure without errorCode or message",
            ("envelope.consistency", V),
            post(
                INITIATE,
                &initiate_body("R-consistency-2", 500),
                Canned::json(
                    400,
                    &json!({"isSuccess": false, "errorCode": null, "message": null, "data": null}),
                ),
            ),
            &["envelope.consistency"],
            "violation",
        ),
        Deviation::new(
            "an unknown id answered 400 TRANSACTION_NOT_FOUND",
            ("http.status", V),
            get(
                &by_id("t-unknown"),
                Canned::failure(400, "TRANSACTION_NOT_FOUND"),
            ),
            &["http.status"],
            "violation",
        ),
        Deviation::new(
            "a validation failure answered 422",
            ("http.status", V),
            post(
                INITIATE,
                &with(initiate_body("R-status-422", 100), "amount", json!("100")),
                Canned::failure(422, "VALIDATION_ERROR"),
            ),
            &["http.status", "http.undocumented", "request.invalid"],
            "violation",
        ),
        Deviation::new(
            "a status amount sent as the string \"10.50\"",
            ("data.fields", V),
            get(
                &by_id("t-fields-1"),
                Canned::ok(with(
                    status_data("t-fields-1", "R-fields-1", "INITIATED", "1"),
                    "amount",
                    json!("10.50"),
                )),
            ),
            &["data.fields"],
            "violation",
        ),
        Deviation::new(
            "createdAt as \"22/11/2026 08:15\"",
            ("data.fields", V),
            get(
                &by_id("t-fields-2"),
                Canned::ok(with(
                    status_data("t-fields-2", "R-fields-2", "INITIATED", "10.50"),
                    "createdAt",
                    json!("22/11/2026 08:15"),
                )),
            ),
            &["data.fields"],
            "violation",
        ),
        Deviation::new(
            "a confirm without confirmedAt",
            ("data.fields", V),
            post(
                CONFIRM,
                &confirm_body("t-fields-3", "R-fields-3"),
                Canned::ok(without(
                    confirm_data("t-fields-3", "R-fields-3", "SUCCESSFUL", "10.50"),
                    "confirmedAt",
                )),
            ),
            &["data.fields"],
            "violation",
        ),
        Deviation::new(
            "an initiate without currencyCode answered in USD",
            ("data.echo", V),
            post(
                INITIATE,
                &initiate_body("R-echo-1", 1050),
                Canned::ok(with(
                    initiate_data("t-echo-1", "R-echo-1", 1050),
                    "currencyCode",
                    json!("USD"),
                )),
            ),
            &["data.echo"],
            "violation",
        ),
        Deviation::new(
            "an initiate of 1050 answered with amount 10.5",
            ("data.echo", V),
            post(
                INITIATE,
                &initiate_body("R-echo-2", 1050),
                Canned::ok(with(
                    initiate_data("t-echo-2", "R-echo-2", 1050),
                    "amount",
                    json!(10.5),
                )),
            ),
            &["data.echo", "data.fields"],
            "violation",
        ),
        Deviation::new(
            "1050 MYR cents read back by status as 1050",
            ("amount.units", V),
            get(
                &by_id("t-units-1"),
                Canned::ok(status_data("t-units-1", "R-units-1", "INITIATED", "1050")),
            ),
            &["amount.units"],
            "violation",
        )
        .after(post(
            INITIATE,
            &initiate_body("R-units-1", 1050),
            Canned::ok(initiate_data("t-units-1", "R-units-1", 1050)),
        )),
        Deviation::new(
            "1050 MYR cents confirmed as 105.0",
            ("amount.units", V),
            post(
                CONFIRM,
                &confirm_body("t-units-2", "R-units-2"),
                Canned::ok(confirm_data(
                    "t-units-2",
                    "R-units-2",
                    "SUCCESSFUL",
                    "105.0",
                )),
            ),
            &["amount.units"],
            "violation",
        )
        .after(post(
            INITIATE,
            &initiate_body("R-units-2", 1050),
            Canned::ok(initiate_data("t-units-2", "R-units-2", 1050)),
        )),
        Deviation::new(
            "by id 10.50, by reference 105.00",
            ("status.agree", V),
            get(
                &by_reference("R-agree"),
                Canned::ok(status_data("t-agree", "R-agree", "INITIATED", "105.00")),
            ),
            &["status.agree"],
            "violation",
        )
        .after(get(
            &by_id("t-agree"),
            Canned::ok(status_data("t-agree", "R-agree", "INITIATED", "10.50")),
        )),
        Deviation::new(
            "a transaction read SUCCESSFUL, later read CONFIRMED",
            ("status.regressed", V),
            get(
                &by_id("t-regressed"),
                Canned::ok(status_data(
                    "t-regressed",
                    "R-regressed",
                    "CONFIRMED",
                    "10.50",
                )),
            ),
            &["status.regressed"],
            "violation",
        )
        .after(get(
            &by_id("t-regressed"),
            Canned::ok(status_data(
                "t-regressed",
                "R-regressed",
                "SUCCESSFUL",
                "10.50",
            )),
        )),
        Deviation::new(
            "the same transaction confirmed twice, both 200",
            ("confirm.twice", V),
            post(
                CONFIRM,
                &confirm_body("t-twice", "R-twice"),
                Canned::ok(confirm_data("t-twice", "R-twice", "SUCCESSFUL", "10.50")),
            ),
            &["confirm.twice"],
            "violation",
        )
        .after(post(
            CONFIRM,
            &confirm_body("t-twice", "R-twice"),
            Canned::ok(confirm_data("t-twice", "R-twice", "SUCCESSFUL", "10.50")),
        )),
        Deviation::new(
            "one merchant's reference initiated twice, two transactionIds",
            ("initiate.duplicate", V),
            post(
                INITIATE,
                &initiate_body("R-duplicate", 1050),
                Canned::ok(initiate_data("t-duplicate-2", "R-duplicate", 1050)),
            ),
            &["initiate.duplicate"],
            "violation",
        )
        .after(post(
            INITIATE,
            &initiate_body("R-duplicate", 1050),
            Canned::ok(initiate_data("t-duplicate-1", "R-duplicate", 1050)),
        )),
        Deviation::new(
            "one merchant's reference initiated twice, the same transactionId",
            ("initiate.duplicate", U),
            post(
                INITIATE,
                &initiate_body("R-replay", 1050),
                Canned::ok(initiate_data("t-replay", "R-replay", 1050)),
            ),
            &["initiate.duplicate"],
            "undocumented",
        )
        .after(post(
            INITIATE,
            &initiate_body("R-replay", 1050),
            Canned::ok(initiate_data("t-replay", "R-replay", 1050)),
        )),
        Deviation::new(
            "an initiate without storeId answered 200",
            ("initiate.accepted-invalid", V),
            post(
                INITIATE,
                &without(initiate_body("R-no-store", 1050), "storeId"),
                Canned::ok(initiate_data("t-no-store", "R-no-store", 1050)),
            ),
            &["initiate.accepted-invalid", "request.invalid"],
            "violation",
        ),
        Deviation::new(
            "an initiate with amount 0 answered 200",
            ("initiate.accepted-invalid", V),
            post(
                INITIATE,
                &initiate_body("R-zero", 0),
                Canned::ok(initiate_data("t-zero", "R-zero", 0)),
            ),
            &["initiate.accepted-invalid", "request.invalid"],
            "violation",
        ),
        Deviation::new(
            "DUPLICATE_REFERENCE_NO",
            ("code.undocumented", U),
            post(
                INITIATE,
                &initiate_body("R-code", 1050),
                Canned::failure(400, "DUPLICATE_REFERENCE_NO"),
            ),
            &["code.undocumented"],
            "undocumented",
        ),
        Deviation::new(
            "a status EXPIRED",
            ("status.undocumented", U),
            get(
                &by_id("t-expired"),
                Canned::ok(status_data("t-expired", "R-expired", "EXPIRED", "10.50")),
            ),
            &["status.undocumented"],
            "undocumented",
        ),
        Deviation::new(
            "a status read answered 429 RATE_LIMITED",
            ("http.undocumented", U),
            get(&by_id("t-limited"), Canned::failure(429, "RATE_LIMITED")),
            &["http.undocumented", "code.undocumented"],
            "undocumented",
        ),
        Deviation::new(
            "an initiate answered 409 DUPLICATE_REFERENCE_NO",
            ("http.undocumented", U),
            post(
                INITIATE,
                &initiate_body("R-conflict", 1050),
                Canned::failure(409, "DUPLICATE_REFERENCE_NO"),
            ),
            &["http.undocumented", "code.undocumented"],
            "undocumented",
        ),
        Deviation::new(
            "currencyCode in a status data",
            ("data.extra", U),
            get(
                &by_id("t-extra-1"),
                Canned::ok(with(
                    status_data("t-extra-1", "R-extra-1", "INITIATED", "10.50"),
                    "currencyCode",
                    json!("MYR"),
                )),
            ),
            &["data.extra"],
            "undocumented",
        ),
        Deviation::new(
            "paymentUrl beside the initiate's documented fields",
            ("data.extra", U),
            post(
                INITIATE,
                &initiate_body("R-extra-2", 1050),
                Canned::ok(with(
                    initiate_data("t-extra-2", "R-extra-2", 1050),
                    "paymentUrl",
                    json!("https://pay.example/t-extra-2"),
                )),
            ),
            &["data.extra"],
            "undocumented",
        ),
        Deviation::new(
            "the application's merchantId is not a UUID (the service rightly refuses it)",
            ("request.invalid", C),
            post(
                INITIATE,
                &with(
                    initiate_body("R-not-uuid", 1050),
                    "merchantId",
                    json!("merchant-1"),
                ),
                Canned::failure(400, "VALIDATION_ERROR"),
            ),
            &["request.invalid"],
            "pass",
        ),
        Deviation::new(
            "the application's confirm body is not JSON (the service rightly refuses it)",
            ("request.invalid", C),
            post_raw(
                CONFIRM,
                "{\"transactionId\": ",
                Canned::failure(400, "VALIDATION_ERROR"),
            ),
            &["request.invalid"],
            "pass",
        ),
    ]
}

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

async fn send(rig: &Rig, step: &Step) -> Reply {
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
