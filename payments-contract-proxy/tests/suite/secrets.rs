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
    let mut shown = Vec::new();
    for route in [
        "/_proxy/exchanges",
        "/_proxy/report",
        "/_proxy/ui/exchanges/1",
        "/_proxy/ui/exchanges/4",
    ] {
        let reply = rig
            .client
            .get(rig.url(route))
            .send()
            .await
            .expect("the proxy answers");
        shown.push((route.to_owned(), reply.text().await.expect("a body")));
    }
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
