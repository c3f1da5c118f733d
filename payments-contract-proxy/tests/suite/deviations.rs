//! The deviant upstream's script: for every rule id, answers that break
//! (or stretch) the interface document the way a real service drifts,
//! with the clean exchanges the rules that span requests need first.

use axum::http::Method;
use bytes::Bytes;
use payments_contract_proxy::Level;
use serde_json::{Value, json};

use crate::rig::{confirm_body, confirm_data, initiate_body, initiate_data, status_data};
use crate::upstream::Canned;

/// One request the application sends and the answer the upstream gives.
#[derive(Debug, Clone)]
pub(crate) struct Step {
    pub(crate) method: Method,
    pub(crate) path: String,
    /// Raw body bytes (sent as `application/json`), if any.
    pub(crate) body: Option<Bytes>,
    pub(crate) canned: Canned,
}

pub(crate) fn get(path: &str, canned: Canned) -> Step {
    Step {
        method: Method::GET,
        path: path.to_owned(),
        body: None,
        canned,
    }
}

pub(crate) fn post(path: &str, body: &Value, canned: Canned) -> Step {
    post_raw(path, &body.to_string(), canned)
}

pub(crate) fn post_raw(path: &str, body: &str, canned: Canned) -> Step {
    post_bytes(path, body.as_bytes(), canned)
}

pub(crate) fn post_bytes(path: &str, body: &[u8], canned: Canned) -> Step {
    Step {
        method: Method::POST,
        path: path.to_owned(),
        body: Some(Bytes::copy_from_slice(body)),
        canned,
    }
}

pub(crate) const INITIATE: &str = "/api/payments/initiate";
pub(crate) const CONFIRM: &str = "/api/payments/confirm";

pub(crate) fn by_id(id: &str) -> String {
    format!("/api/payments/{id}/status")
}

pub(crate) fn by_reference(reference: &str) -> String {
    format!("/api/payments/reference/{reference}/status")
}

/// One scripted deviation: clean exchanges first (each must pass), then
/// the one that trips `rule` at `level`.
#[derive(Debug, Clone)]
pub(crate) struct Deviation {
    /// What the service did, for the failure messages.
    pub(crate) what: &'static str,
    pub(crate) rule: &'static str,
    pub(crate) level: Level,
    pub(crate) before: Vec<Step>,
    pub(crate) trip: Step,
    /// Every rule id the tripping exchange must be reported under, and no
    /// other.
    pub(crate) found: &'static [&'static str],
    /// Its `X-Contract-Verdict`.
    pub(crate) verdict: &'static str,
}

impl Deviation {
    pub(crate) fn new(
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

    pub(crate) fn after(mut self, step: Step) -> Self {
        self.before.push(step);
        self
    }
}

pub(crate) const V: Level = Level::Violation;
pub(crate) const U: Level = Level::Undocumented;
pub(crate) const C: Level = Level::Client;

pub(crate) fn with(mut data: Value, field: &str, value: Value) -> Value {
    data[field] = value;
    data
}

pub(crate) fn without(mut data: Value, field: &str) -> Value {
    data.as_object_mut()
        .expect("a data object")
        .remove(field)
        .expect("the field was there");
    data
}

/// Every scripted deviation. Transaction ids and references are unique to
/// each, so all of them can pass through one proxy without meeting.
pub(crate) fn deviations() -> Vec<Deviation> {
    let mut all = by_rule();
    // Bodies whose bytes are not the JSON their text reads as.
    all.extend(crate::encodings::deviations());
    all
}

/// The deviations of `deviations.rs`, rule by rule.
fn by_rule() -> Vec<Deviation> {
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
            "a second reference answered with the first reference's transactionId",
            ("transaction.id-reused", V),
            post(
                INITIATE,
                &initiate_body("R-reused-2", 2500),
                Canned::ok(initiate_data("t-reused", "R-reused-2", 2500)),
            ),
            &["transaction.id-reused"],
            "violation",
        )
        .after(post(
            INITIATE,
            &initiate_body("R-reused-1", 1050),
            Canned::ok(initiate_data("t-reused", "R-reused-1", 1050)),
        )),
        Deviation::new(
            "status by id of one transaction answered about another (a misrouting gateway)",
            ("answer.other", V),
            get(
                &by_id("t-asked-1"),
                Canned::ok(status_data("t-other-1", "R-other-1", "SUCCESSFUL", "10.50")),
            ),
            &["answer.other"],
            "violation",
        )
        .after(post(
            INITIATE,
            &initiate_body("R-asked-1", 1050),
            Canned::ok(initiate_data("t-asked-1", "R-asked-1", 1050)),
        )),
        Deviation::new(
            "status by reference answered about the reference in another letter case",
            ("answer.other", V),
            get(
                &by_reference("R-Asked-2"),
                Canned::ok(status_data("t-asked-2", "r-asked-2", "INITIATED", "10.50")),
            ),
            &["answer.other"],
            "violation",
        ),
        Deviation::new(
            "a confirm answered 200 about another transaction",
            ("answer.other", V),
            post(
                CONFIRM,
                &confirm_body("t-asked-3", "R-asked-3"),
                Canned::ok(confirm_data(
                    "t-other-3",
                    "R-other-3",
                    "SUCCESSFUL",
                    "10.50",
                )),
            ),
            &["answer.other"],
            "violation",
        ),
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
