//! Canary secrets echoed in the shapes the reviewer found in clear: any
//! percent-encoding, a JSON member name (the proxy's own `--upstream`
//! credentials too), a request body that is not JSON. None reaches the
//! recording, the report, `/_proxy/exchanges`, `/_proxy/report` or the
//! console's page of the exchange.

use serde_json::json;

use crate::rig::Rig;
use crate::upstream::Canned;

#[tokio::test]
async fn echoed_secrets_in_any_shape_never_reach_the_evidence() {
    let dir = tempfile::tempdir().expect("a directory");
    let upstream = crate::upstream::Upstream::start().await;
    let with_credentials = upstream.url().replace("http://", "http://upuser:uppass@");
    let mut config =
        payments_contract_proxy::ProxyConfig::new(with_credentials.parse().expect("a URL"));
    config.report = Some(dir.path().join("report.jsonl"));
    config.record = Some(dir.path().join("run.jsonl"));
    let proxy = payments_contract_proxy::Proxy::start(config)
        .await
        .expect("the proxy starts");
    let rig = Rig {
        upstream,
        proxy,
        client: crate::rig::client(),
    };
    let key = "Bearer sk_LEAKCHECK/9+x=";
    let echo = |data: serde_json::Value| {
        Canned::ok(data).header("location", "/r?k=sk_LEAKCHECK%2f9%2bx%3d")
    };
    for (path, data) in [
        (
            "/api/payments/reference/sk_LEAKCHECK%2f9%2bx%3d/status",
            json!({"sk_LEAKCHECK/9+x=": 1, "upuser:uppass": 3}),
        ),
        (
            "/api/payments/reference/%73k_LEAKCHECK/9+x=/status",
            json!({"note": "sk_LEAKCHECK%2F9%2Bx%3D"}),
        ),
        (
            "/api/payments/x/status?x=sk%5FLEAKCHECK%2f9%2Bx%3d",
            json!({"key sk_LEAKCHECK/9+x= in a name": 1}),
        ),
    ] {
        rig.upstream.push(echo(data));
        let reply = rig
            .client
            .get(rig.url(path))
            .header("authorization", key)
            .send()
            .await
            .expect("the proxy answers");
        assert_eq!(reply.status(), 200, "{path}");
    }
    // A confirm whose body is not JSON (a byte order mark first), the
    // answer echoing its code.
    rig.upstream.push(Canned::json(
        400,
        &json!({"isSuccess": false, "errorCode": "VALIDATION_ERROR",
                "message": "code otp_LEAKCHECK_bom refused", "data": null}),
    ));
    let reply = rig
        .client
        .post(rig.url("/api/payments/confirm"))
        .header("content-type", "application/json")
        .body("\u{feff}{\"transactionId\":\"t\",\"confirmationCode\":\"otp_LEAKCHECK_bom\"}")
        .send()
        .await
        .expect("the proxy answers");
    assert_eq!(reply.status(), 400);
    let mut shown = shown_on(
        &rig,
        &[
            "/_proxy/exchanges",
            "/_proxy/report",
            "/_proxy/ui/exchanges/1",
            "/_proxy/ui/exchanges/4",
        ],
    )
    .await;
    rig.proxy.finish().await;
    for file in ["report.jsonl", "run.jsonl"] {
        let text = std::fs::read_to_string(dir.path().join(file)).expect("written");
        assert_eq!(text.lines().count(), 4, "{file}");
        shown.push((file.to_owned(), text));
    }
    for (place, text) in shown {
        assert!(!text.contains("LEAKCHECK"), "{place}: {text}");
        assert!(!text.contains("uppass"), "{place}: {text}");
    }
}

/// The user and password of `--upstream`: the password is a secret, the
/// user name is not (`payments` replaced wherever it appeared made
/// `/api/[redacted]/initiate` of every path, and `check` of the recording
/// judged other endpoints than the live run). Nor is a secret that
/// happens to be one of the interface's words (`reference`) ever
/// rewritten where the interface fixes the text: the path's words and
/// the document's member names.
#[tokio::test]
async fn upstream_credentials_never_rewrite_the_interfaces_paths_or_member_names() {
    use crate::rig::{initiate_body, initiate_data, status_data};
    use axum::http::Method;
    for (user, password) in [("payments", "Zq9xK2mP7w"), ("admin", "reference")] {
        let dir = tempfile::tempdir().expect("a directory");
        let upstream = crate::upstream::Upstream::start().await;
        let url = upstream
            .url()
            .replace("http://", &format!("http://{user}:{password}@"));
        let mut config = payments_contract_proxy::ProxyConfig::new(url.parse().expect("a URL"));
        config.record = Some(dir.path().join("run.jsonl"));
        let proxy = payments_contract_proxy::Proxy::start(config)
            .await
            .expect("the proxy starts");
        let rig = Rig {
            upstream,
            proxy,
            client: crate::rig::client(),
        };
        // The answer echoes the password, and names a member after the
        // user.
        let mut data = initiate_data("t-1", "R-1", 100);
        data["extraProperties"] = json!(format!("{user}Note: sent by {user}"));
        let mut answer = crate::rig::ok(data);
        answer["message"] = json!(format!("authenticated with {password}"));
        rig.upstream.push(Canned::json(200, &answer));
        let body = initiate_body("R-1", 100);
        let reply = rig
            .send(&Method::POST, "/api/payments/initiate", Some(&body))
            .await;
        assert_eq!(reply.verdict(), "pass", "{user}");
        // Asked by reference, answered about another: a violation, live
        // and in `check`.
        rig.upstream
            .push(Canned::ok(status_data("t-0", "R-0", "INITIATED", "1.00")));
        let reply = rig
            .send(&Method::GET, "/api/payments/reference/R-1/status", None)
            .await;
        assert_eq!(reply.verdict(), "violation", "{user}");
        let live = rig.proxy.finish().await.summary;
        let recording = std::fs::read_to_string(dir.path().join("run.jsonl")).expect("recorded");
        let lines: Vec<serde_json::Value> = recording
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect();
        assert_eq!(lines[0]["request"]["path"], "/api/payments/initiate");
        assert_eq!(
            lines[1]["request"]["path"],
            "/api/payments/reference/R-1/status"
        );
        let answer: serde_json::Value =
            serde_json::from_str(lines[0]["response"]["body"].as_str().expect("a body"))
                .expect("JSON");
        assert_eq!(answer["message"], "authenticated with [redacted]", "{user}");
        assert_eq!(
            answer["data"]["extraProperties"],
            format!("{user}Note: sent by {user}"),
            "a user name is no secret"
        );
        assert_eq!(answer["data"]["referenceNo"], "R-1", "{answer}");
        let checked = payments_contract_proxy::check_recording(recording.as_bytes())
            .expect("a recording")
            .summary;
        assert_eq!(checked.endpoints, live.endpoints, "{user}");
        assert_eq!(checked.verdicts, live.verdicts, "{user}");
        assert_eq!(checked.levels, live.levels, "{user}");
        assert!(checked.rules.keys().eq(live.rules.keys()), "{user}");
        assert_eq!(checked.exit_code(false), 1, "{user}");
        if password == "reference" {
            // A finding's message is text: the word is replaced in it
            // (`[redacted]No`), so only it differs.
            continue;
        }
        assert!(!recording.contains(password), "{recording}");
        assert_eq!(checked.table(), live.table(), "{user}");
    }
}

/// A payer id echoed in a reference (`TOPUP-60123456789-1`) is a secret
/// of its initiate: the transaction's later exchanges (status by id, by
/// reference, its confirm), which carry no `payerId`, show the same token
/// in its place, in the listing, the console, the report and the
/// recording, where they showed it in clear.
#[tokio::test]
async fn a_payer_id_of_an_initiate_stays_a_token_in_its_transactions_later_exchanges() {
    use crate::rig::{confirm_body, confirm_data, initiate_body, initiate_data, status_data};
    use axum::http::Method;
    const PAYER: &str = "60123456789";
    let reference = format!("TOPUP-{PAYER}-1");
    let dir = tempfile::tempdir().expect("a directory");
    let rig = Rig::configured(|config| {
        config.report = Some(dir.path().join("report.jsonl"));
        config.record = Some(dir.path().join("run.jsonl"));
    })
    .await;
    let mut body = initiate_body(&reference, 100);
    body["payerId"] = json!(PAYER);
    let status = || Canned::ok(status_data("t-1", &reference, "INITIATED", "1.00"));
    for (method, path, body, canned) in [
        (
            Method::POST,
            "/api/payments/initiate".to_owned(),
            Some(body),
            Canned::ok(initiate_data("t-1", &reference, 100)),
        ),
        (
            Method::GET,
            "/api/payments/t-1/status".to_owned(),
            None,
            status(),
        ),
        (
            Method::GET,
            format!("/api/payments/reference/{reference}/status"),
            None,
            status(),
        ),
        (
            Method::POST,
            "/api/payments/confirm".to_owned(),
            Some(confirm_body("t-1", &reference)),
            Canned::ok(confirm_data("t-1", &reference, "CONFIRMED", "1.00")),
        ),
    ] {
        let reply = rig.exchange(&method, &path, body.as_ref(), canned).await;
        assert_eq!(reply.verdict(), "pass", "{path}");
    }
    let listed: serde_json::Value = rig
        .client
        .get(rig.url("/_proxy/exchanges"))
        .send()
        .await
        .expect("the proxy answers")
        .json()
        .await
        .expect("an envelope");
    let items = listed["data"]["items"].as_array().expect("items");
    let shown = items[0]["referenceNo"].as_str().expect("a reference");
    assert!(shown.starts_with("TOPUP-payer-"), "{shown}");
    for item in items {
        assert_eq!(item["referenceNo"], shown, "the same token: {item}");
    }
    let mut places = vec![("/_proxy/exchanges".to_owned(), listed.to_string())];
    for n in 1..=4 {
        let page = format!("/_proxy/ui/exchanges/{n}");
        let reply = rig.client.get(rig.url(&page)).send().await.expect("a page");
        places.push((page, reply.text().await.expect("a body")));
    }
    rig.proxy.finish().await;
    for file in ["report.jsonl", "run.jsonl"] {
        let text = std::fs::read_to_string(dir.path().join(file)).expect("written");
        assert_eq!(text.lines().count(), 4, "{file}");
        places.push((file.to_owned(), text));
    }
    for (place, text) in places {
        assert!(!text.contains(PAYER), "{place}: {text}");
    }
}

/// The interface document does not show the service's authentication
/// scheme: a key in `X-Api-Key`, `Api-Key` or `X-Auth-Token` (or a token
/// the service answers with) is as secret as one in `Authorization`, and
/// never reaches the recording, the report, the listing or the console;
/// `Idempotency-Key` names a request and is kept.
#[tokio::test]
async fn keys_in_headers_of_any_name_are_secrets_but_idempotency_keys_are_not() {
    let dir = tempfile::tempdir().expect("a directory");
    let rig = Rig::configured(|config| {
        config.report = Some(dir.path().join("report.jsonl"));
        config.record = Some(dir.path().join("run.jsonl"));
    })
    .await;
    rig.upstream
        .push(Canned::raw(200, "seen").header("x-session-token", "HDRLEAK-answer-0"));
    let reply = rig
        .client
        .get(rig.url("/api/payments/t-1/status"))
        .header("x-api-key", "HDRLEAK-xapi-1")
        .header("api-key", "HDRLEAK-apikey-2")
        .header("X-Auth-Token", "HDRLEAK-auth-3")
        .header("Ocp-Apim-Subscription-Key", "HDRLEAK-sub-4")
        .header("idempotency-key", "idem-KEPT-5")
        .send()
        .await
        .expect("the proxy answers");
    assert_eq!(reply.status(), 200);
    let mut shown = shown_on(
        &rig,
        &[
            "/_proxy/exchanges",
            "/_proxy/report",
            "/_proxy/ui/exchanges/1",
        ],
    )
    .await;
    rig.proxy.finish().await;
    let recording = std::fs::read_to_string(dir.path().join("run.jsonl")).expect("written");
    assert!(recording.contains("idem-KEPT-5"), "{recording}");
    assert!(recording.contains("[redacted]"), "{recording}");
    shown.push(("run.jsonl".to_owned(), recording));
    let report = std::fs::read_to_string(dir.path().join("report.jsonl")).expect("written");
    shown.push(("report.jsonl".to_owned(), report));
    for (place, text) in shown {
        assert!(!text.contains("HDRLEAK"), "{place}: {text}");
    }
}

/// What each of the proxy's own `routes` shows, with the route.
async fn shown_on(rig: &Rig, routes: &[&str]) -> Vec<(String, String)> {
    let mut shown = Vec::new();
    for route in routes {
        let reply = rig
            .client
            .get(rig.url(route))
            .send()
            .await
            .expect("the proxy answers");
        shown.push(((*route).to_owned(), reply.text().await.expect("a body")));
    }
    shown
}
