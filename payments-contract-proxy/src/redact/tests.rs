//! Canary secrets in every shape and place, and what must stay untouched.

use serde_json::{Value, json};

use super::*;
use crate::rules::test_support::exchange;

#[test]
pub(super) fn every_secret_is_replaced_and_payers_still_join() {
    let redactor = Redactor::new();
    let mut e = exchange(
        "POST",
        "/api/payments/confirm",
        json!({
            "transactionId": "t", "referenceNo": "R", "confirmationCode": "OTP-CANARY-1",
            "nested": { "payerId": "PAYER-CANARY-2", "list": [{ "confirmationCode": 9 }] },
            "extraProperties": "{\"confirmationCode\":\"OTP-CANARY-3\",\"payerId\":\"PAYER-CANARY-2\"}",
        }),
        200,
        json!({ "data": { "payerId": "PAYER-CANARY-2" } }),
    );
    e.request.headers = vec![
        ("Authorization".to_owned(), "Bearer KEY-CANARY-4".to_owned()),
        ("cookie".to_owned(), "s=COOKIE-CANARY-5".to_owned()),
    ];
    e.request.query = Some("payerId=PAYER-CANARY-2&confirmationCode=OTP-CANARY-6&x=1".to_owned());
    e.response
        .headers
        .push(("Set-Cookie".to_owned(), "s=COOKIE-CANARY-7".to_owned()));
    let redacted = redactor.exchange(&e);
    let text = serde_json::to_string(&redacted).expect("serializes");
    assert!(!text.contains("CANARY"), "{text}");
    let token = redactor.token("PAYER-CANARY-2");
    assert_eq!(
        text.matches(&token).count(),
        4,
        "the same token everywhere: {text}"
    );
    assert_ne!(
        Redactor::new().token("PAYER-CANARY-2"),
        token,
        "a key per recording"
    );
    assert_eq!(format!("{redactor:?}"), "Redactor { key: [redacted] }");
    assert!(
        redacted
            .request
            .query
            .as_deref()
            .is_some_and(|q| q.contains("x=1"))
    );
    assert_eq!(
        redactor.body("confirmationCode=OTP-CANARY"),
        "[redacted: a body that is not JSON names a secret field]"
    );
    assert_eq!(
        redactor.body("{\"a\":1}"),
        "{\"a\":1}",
        "untouched when nothing is secret"
    );
    // A key spelled with an escape is still the key.
    let hidden = redactor
        .body("{\"payer\\u0049d\":\"PAYER-CANARY-8\",\"confirmation\\u0043ode\":\"OTP-CANARY-9\"}");
    assert!(!hidden.contains("CANARY"), "{hidden}");
    // An answer that echoes a payer id or a code, plainly or escaped,
    // gets the same replacement.
    let mut echo = e.clone();
    echo.response.body =
        Some("{\"message\":\"payer PAYER-CANARY-2 and code \\u004fTP-CANARY-1\"}".to_owned());
    let (echoed, _) = redactor.redact(&echo);
    let answer = echoed.response.body.expect("a body");
    assert!(!answer.contains("CANARY"), "{answer}");
    assert!(answer.contains(&token), "{answer}");
}

#[test]
pub(super) fn short_secrets_never_damage_the_rest_and_echoed_long_ones_are_replaced() {
    let redactor = Redactor::new();
    let mut e = exchange(
        "POST",
        "/api/payments/confirm",
        json!({"transactionId": "t", "referenceNo": "R", "confirmationCode": "2026"}),
        400,
        json!({
            "isSuccess": false, "errorCode": "VALIDATION_ERROR",
            "message": "key Bearer-LONG-KEY-CANARY is not allowed for merchant true",
            "data": null, "createdAt": "2026-11-22T08:15:30Z", "flag": true,
        }),
    );
    e.request.headers = vec![
        ("cookie".to_owned(), "consent=true".to_owned()),
        (
            "authorization".to_owned(),
            "Bearer Bearer-LONG-KEY-CANARY".to_owned(),
        ),
    ];
    let (redacted, secrets) = redactor.redact(&e);
    let answer: Value = serde_json::from_str(redacted.response.body.as_deref().expect("a body"))
        .expect("still JSON");
    assert_eq!(
        answer["createdAt"], "2026-11-22T08:15:30Z",
        "a 4-digit code is not scrubbed out of dates"
    );
    assert_eq!(
        answer["flag"],
        json!(true),
        "a cookie value `true` leaves JSON alone"
    );
    assert_eq!(answer["isSuccess"], json!(false));
    let message = answer["message"].as_str().expect("a message");
    assert!(!message.contains("CANARY"), "{message}");
    assert!(message.ends_with("merchant true"), "{message}");
    let request: Value = serde_json::from_str(redacted.request.body.as_deref().expect("a body"))
        .expect("still JSON");
    assert_eq!(
        request["confirmationCode"], REDACTED,
        "replaced by its field"
    );
    assert_eq!(
        redactor.scrub("found Bearer-LONG-KEY-CANARY in 2026", &secrets),
        format!("found {REDACTED} in 2026")
    );
}

/// Each case: a request body, an answer body, and the answer's
/// headers; no `CANARY` may be left anywhere in the redacted exchange.
#[test]
pub(super) fn secrets_in_every_shape_are_replaced_wherever_they_are_echoed() {
    let redactor = Redactor::new();
    type Case<'a> = (&'a str, &'a str, &'a [(&'a str, &'a str)]);
    let cases: [Case<'_>; 9] = [
        // A key spelled with escapes inside JSON held in a string.
        (
            r#"{"extraProperties":"{\"confirmation\\u0043ode\":\"OTP-CANARY-A1\",\"payer\\u0049d\":\"PAYER-CANARY-A2\"}"}"#,
            r#"{"message":"ok"}"#,
            &[],
        ),
        // Secrets sent as numbers, echoed in a message.
        (
            r#"{"payerId":12345678901,"confirmationCode":87654321}"#,
            r#"{"message":"unknown payer 12345678901, code 87654321 expired"}"#,
            &[],
        ),
        // A code inside a structure, echoed.
        (
            r#"{"confirmationCode":{"otp":"OTP-CANARY-D"}}"#,
            r#"{"message":"code OTP-CANARY-D expired"}"#,
            &[],
        ),
        // A payer only the answer names, echoed in its message.
        (
            r#"{"transactionId":"t"}"#,
            r#"{"data":{"payerId":"PAYER-CANARY-H"},"message":"for PAYER-CANARY-H"}"#,
            &[],
        ),
        // A cookie the answer sets, echoed in its body.
        (
            "",
            r#"{"message":"session COOKIE-CANARY-I started"}"#,
            &[("set-cookie", "s=COOKIE-CANARY-I; Path=/")],
        ),
        // A quoted cookie value, echoed.
        (
            "",
            r#"{"message":"COOKIE-CANARY-Q"}"#,
            &[("set-cookie", "s=\"COOKIE-CANARY-Q\"")],
        ),
        // Form text naming a field inside a string, its value echoed.
        (
            r#"{"x":"confirmationCode=OTP-CANARY-U"}"#,
            r#"{"message":"OTP-CANARY-U is wrong"}"#,
            &[],
        ),
        // The echo written with an escape.
        (
            r#"{"confirmationCode":"OTP-CANARY-E"}"#,
            r#"{"message":"\u004fTP-CANARY-E"}"#,
            &[],
        ),
        // Nothing secret: nothing changes.
        (r#"{"a":"{\"b\\u0031\":1}"}"#, r#"{"message":"ok"}"#, &[]),
    ];
    for (request, answer, headers) in cases {
        let mut e = exchange(
            "POST",
            "/api/payments/confirm",
            json!(null),
            200,
            json!(null),
        );
        e.request.body = (!request.is_empty()).then(|| request.to_owned());
        e.response.body = Some(answer.to_owned());
        e.response.headers = headers
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        let text = serde_json::to_string(&redactor.exchange(&e)).expect("serializes");
        assert!(!text.contains("CANARY"), "{request} / {answer}: {text}");
        assert!(
            !text.contains("12345678901") && !text.contains("87654321"),
            "{text}"
        );
    }
    // A secret echoed percent-encoded in a header or the path.
    let mut e = exchange(
        "GET",
        "/api/payments/t/status",
        json!(null),
        302,
        json!(null),
    );
    e.request.headers = vec![(
        "authorization".to_owned(),
        "Bearer KEY+CANARY/Z=".to_owned(),
    )];
    e.response.headers = vec![(
        "location".to_owned(),
        "/login?key=KEY%2BCANARY%2FZ%3D".to_owned(),
    )];
    e.request.path = "/api/payments/KEY%2BCANARY%2FZ%3D/status".to_owned();
    let text = serde_json::to_string(&redactor.exchange(&e)).expect("serializes");
    assert!(!text.contains("CANARY"), "{text}");
    // A request's `Authorization` with a tab: the credential still goes.
    let mut e = exchange(
        "GET",
        "/api/payments/t/status",
        json!(null),
        404,
        json!(null),
    );
    e.request.headers = vec![(
        "authorization".to_owned(),
        "Bearer\tKEY-CANARY-T".to_owned(),
    )];
    e.response.body = Some(r#"{"message":"key KEY-CANARY-T unknown"}"#.to_owned());
    let text = serde_json::to_string(&redactor.exchange(&e)).expect("serializes");
    assert!(!text.contains("CANARY"), "{text}");
    // Unchanged when nothing is secret, escapes and all.
    let mut e = exchange(
        "GET",
        "/api/payments/t/status",
        json!(null),
        200,
        json!(null),
    );
    e.response.body = Some(r#"{"a":"{\"b\\u0031\":1}"}"#.to_owned());
    assert_eq!(redactor.exchange(&e).response.body, e.response.body);
}

/// The quick reading of a body (the usual initiate or confirm) gives what
/// walking it as a `Value` gives: the same text and the same secrets met,
/// in the same order; bodies it does not take are left to the walk.
#[test]
pub(super) fn the_quick_body_replacement_is_the_walks() {
    let redactor = Redactor::new();
    let bodies = [
        r#"{"merchantId":"6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60","referenceNo":"R-1","amount":1050,"productCode":"TOPUP","storeId":"S1","payerId":"60123456789"}"#,
        r#"{ "payerId" : "P\u00e9-1", "amount": 1E2, "z": [1, {"b": 2, "a": "x"}], "a": "t\"q", "payerId": "LAST" }"#,
        r#"{"transactionId":"t","referenceNo":"R","confirmationCode":"123456","extraProperties":"{\"k\":1}"}"#,
        r#"{"confirmationCode":123456,"payerId":null,"n":-0.50,"b":true,"u":null}"#,
        r#"{"confirmationCode":null,"payerId":null}"#,
        r#"{"payer\u0049d":"ESCAPED-KEY-1","x":1}"#,
        r#"{"extraProperties":"{\"payerId\":\"NESTED-1\"}","payerId":"OUTER-1"}"#,
        r#"{"nested":{"payerId":"DEEP-1"},"payerId":"TOP-1"}"#,
        r#"{"confirmationCode":{"code":"OBJ-1"}}"#,
        r#"{"payerId":60123456789}"#,
        r#"{"note":"confirmationCode=ABC12345"}"#,
        r#"[{"payerId":"ARRAY-1"}]"#,
        r#"not json payerId"#,
        r#"{"\u0000k":"v","payerId":"CTRL-KEY-1"}"#,
    ];
    let mut quick_taken = 0;
    for body in bodies {
        let mut walked_met = Vec::new();
        let walked = redactor.walked_body(body, Some(&mut walked_met));
        let mut quick_met = Vec::new();
        let mut found = Some(&mut quick_met);
        let read = crate::json::Body::of(body);
        let again = redactor.quick_body(body, &mut None, read.object());
        let Some(quick) = redactor.quick_body(body, &mut found, None) else {
            assert!(again.is_none(), "{body}");
            assert!(quick_met.is_empty(), "{body}: nothing met when not taken");
            continue;
        };
        quick_taken += 1;
        assert_eq!(
            again.as_ref(),
            Some(&quick),
            "{body}: from the rules' parse"
        );
        assert_eq!(quick, walked, "{body}");
        assert_eq!(quick_met, walked_met, "{body}");
    }
    assert!(quick_taken >= 6, "the usual bodies take the quick path");
}

/// A secret echoed under any percent-encoding (lower case, a letter
/// encoded that needs none), as a JSON member name, or from a request body
/// that is not JSON: replaced wherever it shows.
#[test]
pub(super) fn echoes_encoded_any_way_member_names_and_a_not_json_bodys_codes_are_replaced() {
    let redactor = Redactor::new().also("upuser:uppass");
    let mut e = exchange(
        "GET",
        "/api/payments/reference/sk_LEAKCHECK%2f%2b%3dx:y/status",
        json!(null),
        200,
        json!({ "data": { "sk_LEAKCHECK/+=x:y": 1, "upuser:uppass": 3, "a": "sk_LEAKCHECK%2F%2B%3Dx:y" } }),
    );
    e.request.headers = vec![(
        "Authorization".to_owned(),
        "Bearer sk_LEAKCHECK/+=x:y".to_owned(),
    )];
    e.request.query = Some("x=sk%5FLEAKCHECK%2f%2B%3dx%3Ay".to_owned());
    e.response.headers.push((
        "Location".to_owned(),
        "/r?k=sk_LEAKCHECK%2f%2b%3dx%3ay&p=%73k_LEAKCHECK/+=x:y".to_owned(),
    ));
    let (redacted, secrets) = redactor.redact(&e);
    let text = serde_json::to_string(&redacted).expect("serializes");
    assert!(!text.contains("LEAKCHECK"), "{text}");
    assert!(!text.contains("uppass"), "{text}");
    assert_eq!(
        redacted.request.path,
        "/api/payments/reference/[redacted]/status"
    );
    let body: Value =
        serde_json::from_str(redacted.response.body.as_deref().expect("a body")).expect("JSON");
    let members = body["data"].as_object().expect("an object");
    assert_eq!(members.len(), 3, "no member lost: {body}");
    assert!(members.contains_key("[redacted]") && members.contains_key("[redacted] (2)"));
    assert_eq!(
        redactor.scrub("path %73k_LEAKCHECK%2F%2b%3Dx:y", &secrets),
        "path [redacted]"
    );

    // A confirmationCode's value used as a member name of the same body.
    let mut e = exchange(
        "POST",
        "/api/payments/confirm",
        json!({ "transactionId": "t", "referenceNo": "R",
                "confirmationCode": "otp_LEAKCHECK_key", "otp_LEAKCHECK_key": 1 }),
        200,
        json!({ "data": { "otp_LEAKCHECK_key": true } }),
    );
    let text = serde_json::to_string(&redactor.exchange(&e)).expect("serializes");
    assert!(!text.contains("LEAKCHECK"), "{text}");

    // A request body that is not JSON (a byte order mark first) names the
    // code: replaced whole, and its value is replaced where the answer
    // echoes it (plain and encoded).
    e.request.body = Some(
        "\u{feff}{\"transactionId\":\"t\",\"confirmationCode\":\"otp_LEAKCHECK_bom\",\"payerId\":\"PAYER_LEAKCHECK_bom\"}"
            .to_owned(),
    );
    e.response.body = Some(
        json!({ "message": "bad code otp_LEAKCHECK_bom for PAYER_LEAKCHECK_bom" }).to_string(),
    );
    e.response.headers.push((
        "Location".to_owned(),
        "/x?c=otp%5fLEAKCHECK%5Fbom".to_owned(),
    ));
    let redacted = redactor.exchange(&e);
    let text = serde_json::to_string(&redacted).expect("serializes");
    assert!(!text.contains("LEAKCHECK"), "{text}");
    assert!(
        text.contains(&redactor.token("PAYER_LEAKCHECK_bom")),
        "payers still join: {text}"
    );
}

/// `text` escaped `times` times as a JSON string's content is (each `"`
/// and `\` escaped): built in runs, not character by character, so the
/// 16 MiB of backslashes below take no time.
fn escaped(text: &str, times: u32) -> String {
    let mut out = String::new();
    for c in text.chars() {
        match c {
            '"' => {
                out.push_str(&"\\".repeat((1 << times) - 1));
                out.push('"');
            }
            '\\' => out.push_str(&"\\".repeat(1 << times)),
            c => out.push(c),
        }
    }
    out
}

/// JSON held in a string held in JSON, `levels` times: each level
/// `arrays` arrays and an object (`{"a":…}`) deep around the string of
/// the level inside, `core` innermost; escaped `times` times.
fn nested(levels: usize, arrays: usize, core: &str, times: u32) -> String {
    if levels == 0 {
        return escaped(core, times);
    }
    let quote = escaped("\"", times);
    format!(
        "{}{}{quote}{}{quote}}}{}",
        "[".repeat(arrays),
        escaped("{\"a\":", times),
        nested(levels - 1, arrays, core, times + 1),
        "]".repeat(arrays)
    )
}

/// The most levels of [`nested`] whose body (`whole`) fits the judging
/// limit (16 MiB), and that body.
fn deepest(arrays: usize, whole: impl Fn(usize) -> String) -> String {
    let (mut levels, mut body) = (1, whole(1));
    loop {
        let deeper = whole(levels + 1);
        if deeper.len() > crate::forward::JUDGE_LIMIT {
            assert!(body.len() > 6 << 20, "{arrays}: {}", body.len());
            return body;
        }
        (levels, body) = (levels + 1, deeper);
    }
}

/// A body whose strings hold JSON in strings, level after level, is
/// walked only as deep as serde_json reads one document, counted across
/// the levels (each string's JSON read afresh would otherwise recurse past
/// the stack, 16 MiB of it); what lies deeper and may name a secret
/// field is replaced whole.
#[test]
pub(super) fn json_nested_in_strings_past_any_depth_never_overflows_and_keeps_no_secret() {
    let core = r#"{"payerId":"PAYER-DEEP-CANARY","payer\u0049d":"PAYER-ESCAPED-CANARY"}"#;
    // The generator is JSON held in strings: each level's string is the
    // level inside.
    let two: Value = serde_json::from_str(&nested(2, 1, core, 0)).expect("JSON");
    assert_eq!(two[0]["a"], json!(nested(1, 1, core, 0)));
    // 20 levels of 127 (2,540 deep in all, 13 MiB), and 20 levels of 6,
    // each read and walked (the core at depth 121 at most).
    for (arrays, read) in [(126, false), (5, true)] {
        let mut e = exchange(
            "POST",
            "/api/payments/initiate",
            json!(null),
            404,
            json!(null),
        );
        e.request.body = Some(deepest(arrays, |n| nested(n, arrays, core, 0)));
        e.response.body = Some(deepest(arrays, |n| {
            format!(
                r#"{{"isSuccess":false,"errorCode":"TRANSACTION_NOT_FOUND","message":"{}","data":null}}"#,
                nested(n, arrays, core, 1)
            )
        }));
        // Judged whole by a proxy (the rules, redaction, the recording,
        // the console's copy) on a thread with a tokio worker's stack
        // (2 MiB), where the proxy judges.
        let recording = tempfile::NamedTempFile::new().expect("a file");
        let mut config = crate::ProxyConfig::new("http://127.0.0.1:9".parse().expect("a URL"));
        config.record = Some(recording.path().to_owned());
        let (verdict, token) = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || {
                let proxy = crate::state::ProxyState::new(config).expect("a proxy");
                let (verdict, _) = proxy.judge(e, true);
                // The last of two members named alike is the one JSON keeps.
                (verdict, proxy.redactor.token("PAYER-ESCAPED-CANARY"))
            })
            .expect("a thread")
            .join()
            .expect("judged without overflowing the stack");
        assert_ne!(verdict, crate::Verdict::Unchecked, "judged");
        // Both bodies, as the recording holds them.
        let line = std::fs::read_to_string(recording.path()).expect("recorded");
        assert!(!line.contains("CANARY"), "{arrays}: {}", &line[..300]);
        let (said, what) = if read {
            (line.matches(&token).count(), "walked to the core")
        } else {
            (
                line.matches("nested too deep to read").count(),
                "said why, each side",
            )
        };
        assert_eq!(said, 2, "{arrays}: {what}: {}", &line[line.len() - 300..]);
    }

    // One document deeper than serde_json reads, a field spelled with an
    // escape: replaced whole, not left unread.
    let deep = format!(
        "{}{}{}",
        "[".repeat(200),
        r#"{"payer\u0049d":"PAYER-UNREAD-CANARY"}"#,
        "]".repeat(200)
    );
    let replaced = Redactor::new().body(&deep);
    assert!(!replaced.contains("CANARY"), "{replaced}");
    // Deep, and nothing that may name a secret field: as it came.
    let plain = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    assert_eq!(Redactor::new().body(&plain), plain);
}

/// A finding quotes a value cut short: where the cut falls inside a
/// secret, the secret's beginning is replaced too (a plain scrub finds no
/// whole secret there).
#[test]
pub(super) fn a_secret_cut_short_in_a_findings_message_shows_none_of_it() {
    let redactor = Redactor::new();
    let secrets: Secrets = vec![("KEY-CANARY-LONG-1".to_owned(), REDACTED.to_owned())];
    let message = "errorCode xxKEY-CANARY-L… is not in the document's section 7";
    assert_eq!(
        redactor.scrub_cut(message, &secrets),
        format!("errorCode xx{REDACTED}… is not in the document's section 7")
    );
    // Whole, it is replaced as anywhere; a short beginning is left.
    assert_eq!(
        redactor.scrub_cut("code KEY-CANARY-LONG-1… KEY…", &secrets),
        format!("code {REDACTED}… KEY…")
    );
    assert_eq!(
        redactor.scrub_cut("no cut KEY-CANARY", &secrets),
        "no cut KEY-CANARY"
    );
}
