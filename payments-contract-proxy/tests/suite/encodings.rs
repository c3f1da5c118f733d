//! Bodies whose bytes are not the JSON their text reads as. JSON between
//! systems is UTF-8 (RFC 8259 section 8.1): a body with the bytes `FF FE`
//! inside a string is not JSON, though its lossy text (U+FFFD for each bad
//! byte) reads as JSON. Nor is a string with a `\u` escape of a lone
//! surrogate (`"\ud800"`), which serde_json (this project's client's
//! reader) refuses, nor an object that names a member twice (I-JSON,
//! RFC 7493, forbids it; serde_json refuses a field given twice). The
//! scripted deviations here join the others
//! (`deviations.rs`); the tests follow an answer that is not UTF-8 live,
//! into the recording, through `check` and under `--enforce`.

use axum::http::Method;
use payments_contract_proxy::{Proxy, ProxyConfig, check_recording};
use serde_json::{Value, json};

use crate::deviant::send;
use crate::deviations::{C, CONFIRM, Deviation, INITIATE, V, by_id, get, post_bytes, with};
use crate::rig::{Rig, Setup, client, confirm_body, initiate_body, initiate_data, ok, status_data};
use crate::upstream::{Canned, Upstream};

/// `body` as JSON text with `bytes` in place of the string `"MARK"`'s
/// letters.
fn spliced(body: &Value, bytes: &[u8]) -> Vec<u8> {
    let text = body.to_string();
    let (head, tail) = text.split_once("MARK").expect("the marker");
    [head.as_bytes(), bytes, tail.as_bytes()].concat()
}

/// A status answer about `t-utf8-1` with the bytes `FF FE` in its
/// `message`: 200, `application/json`.
fn not_utf8_answer() -> Canned {
    let data = with(
        status_data("t-utf8-1", "R-utf8-1", "SUCCESSFUL", "10.50"),
        "message",
        json!("MARK"),
    );
    Canned::raw(200, spliced(&ok(data), b"\xff\xfe")).header("content-type", "application/json")
}

/// A status answer about `t-repeated-1` that names the envelope's members
/// twice: a failure's, then a success's (a reader that keeps the last
/// value sees the success; serde_json refuses it).
fn repeated_answer() -> String {
    let failure = r#""isSuccess":false,"errorCode":"INTERNAL_ERROR","message":"x","data":null"#;
    let success = ok(status_data(
        "t-repeated-1",
        "R-rep-1",
        "SUCCESSFUL",
        "10.50",
    ))
    .to_string();
    format!("{{{failure},{}", &success[1..])
}

/// The scripted deviations of bodies that are not the JSON they read as.
pub(crate) fn deviations() -> Vec<Deviation> {
    let confirm = spliced(&confirm_body("t-utf8-2", "R-MARK"), b"\xff\xfe");
    let initiate = spliced(&initiate_body("R-utf8-3-MARK", 1050), b"\xff\xfe");
    let surrogate_answer = spliced(
        &ok(status_data(
            "t-surrogate-1",
            "R-MARK",
            "SUCCESSFUL",
            "10.50",
        )),
        br"\ud800",
    );
    vec![
        Deviation::new(
            "a status answer with the bytes FF FE inside a string (not UTF-8)",
            ("envelope.shape", V),
            get(&by_id("t-utf8-1"), not_utf8_answer()),
            &["envelope.shape"],
            "violation",
        ),
        Deviation::new(
            "the application's confirm body is not UTF-8 (the service rightly refuses it)",
            ("request.invalid", C),
            post_bytes(CONFIRM, &confirm, Canned::failure(400, "VALIDATION_ERROR")),
            &["request.invalid"],
            "pass",
        ),
        Deviation::new(
            "a status answer whose referenceNo escapes a lone surrogate (\\ud800)",
            ("envelope.shape", V),
            get(
                &by_id("t-surrogate-1"),
                Canned::raw(200, surrogate_answer).header("content-type", "application/json"),
            ),
            &["envelope.shape"],
            "violation",
        ),
        Deviation::new(
            "a status answer that gives the envelope's members twice, a failure's then a success's (I-JSON forbids it, the client refuses it)",
            ("envelope.shape", V),
            get(
                &by_id("t-repeated-1"),
                Canned::raw(200, repeated_answer()).header("content-type", "application/json"),
            ),
            &["envelope.shape"],
            "violation",
        ),
        Deviation::new(
            "the application's confirm escapes a lone surrogate (the service rightly refuses it)",
            ("request.invalid", C),
            post_bytes(
                CONFIRM,
                &spliced(&confirm_body("t-surrogate-2", "R-MARK"), br"\udc00"),
                Canned::failure(400, "VALIDATION_ERROR"),
            ),
            &["request.invalid"],
            "pass",
        ),
        Deviation::new(
            "an initiate whose body is not UTF-8 answered 200",
            ("initiate.accepted-invalid", V),
            post_bytes(
                INITIATE,
                &initiate,
                Canned::ok(initiate_data("t-utf8-3", "R-utf8-3-\u{fffd}\u{fffd}", 1050)),
            ),
            &["initiate.accepted-invalid", "request.invalid"],
            "violation",
        ),
    ]
}

#[tokio::test]
async fn an_answer_that_is_not_utf8_is_a_violation_live_in_the_recording_and_in_check() {
    let dir = tempfile::tempdir().expect("a directory");
    let upstream = Upstream::start().await;
    let mut config = ProxyConfig::new(upstream.url().parse().expect("a URL"));
    config.record = Some(dir.path().join("run.jsonl"));
    let proxy = Proxy::start(config).await.expect("the proxy starts");
    let rig = Rig {
        upstream,
        proxy,
        client: client(),
    };
    let trip = get(&by_id("t-utf8-1"), not_utf8_answer());
    let reply = send(&rig, &trip).await;
    assert_eq!(reply.verdict(), "violation");
    assert_eq!(
        &reply.body,
        trip.canned.body(),
        "the bytes reach the client"
    );
    // Control: the same answer in UTF-8 (U+FFFD written out) is the
    // envelope, and passes.
    let text = String::from_utf8_lossy(trip.canned.body()).into_owned();
    let control = get(
        &by_id("t-utf8-1"),
        Canned::raw(200, text).header("content-type", "application/json"),
    );
    assert_eq!(send(&rig, &control).await.verdict(), "pass");
    let exchanges = rig.proxy.exchanges();
    let findings = &exchanges[0].2;
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(findings[0].rule, "envelope.shape");
    assert!(findings[0].message.contains("not UTF-8"), "{findings:?}");
    rig.proxy.finish().await;

    let recording = std::fs::read_to_string(dir.path().join("run.jsonl")).expect("recorded");
    let lines: Vec<Value> = recording
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["response"]["bodyNotUtf8"], json!(true));
    assert_eq!(
        lines[0]["response"]["bodyBytes"],
        json!(trip.canned.body().len())
    );
    assert!(
        lines[1]["response"].get("bodyNotUtf8").is_none(),
        "written only when true"
    );
    assert!(lines[0]["request"].get("bodyNotUtf8").is_none());
    let outcome = check_recording(recording.as_bytes()).expect("a recording");
    assert_eq!(outcome.summary.verdicts.get("violation"), Some(&1));
    assert_eq!(outcome.summary.verdicts.get("pass"), Some(&1));
}

#[tokio::test]
async fn with_enforce_an_answer_that_is_not_utf8_is_replaced_by_502() {
    let rig = Rig::with(Setup {
        enforce: true,
        ..Setup::default()
    })
    .await;
    rig.upstream.push(not_utf8_answer());
    let reply = rig.send(&Method::GET, &by_id("t-utf8-1"), None).await;
    assert_eq!(
        (reply.status, reply.code()),
        (502, "CONTRACT_VIOLATION".to_owned())
    );
    assert!(
        reply.json()["message"]
            .as_str()
            .is_some_and(|m| m.contains("not UTF-8"))
    );
    // A request body that is not UTF-8 is the application's: forwarded,
    // and the service's refusal answered as it came.
    let step = post_bytes(
        CONFIRM,
        &spliced(&confirm_body("t-utf8-2", "R-MARK"), b"\xff"),
        Canned::failure(400, "VALIDATION_ERROR"),
    );
    let reply = send(&rig, &step).await;
    assert_eq!((reply.status, reply.verdict()), (400, "pass"));
    assert_eq!(
        rig.upstream.received().last().map(|r| r.body.clone()),
        step.body,
        "forwarded byte for byte"
    );
}
