//! A sandbox's id cannot be probed (CONTRACT sections 18 and 19): with
//! keys, anyone but the admin and the merchant that made it gets, on every
//! route under its prefix and whatever key they send, exactly what a
//! made-up id gets; and such a request keeps it no longer alive.

use std::time::Duration;

use payments_mock_server::MockServer;
use serde_json::{Value, json};

use super::{OTHER_MERCHANT, get, make, post};
use crate::common::{MERCHANT, initiate_body};

const ADMIN: &str = "adm_probe_5e1d";
const OWNER: &str = "sk_owner_41c9";
const OTHER: &str = "sk_other_8b2e";
const UNBOUND: &str = "sk_unbound_3f70";

/// A server with an admin key, a key for each of two merchants and one
/// bound to none; sandboxes live `ttl` unused.
async fn keyed(ttl: Duration) -> MockServer {
    let mut config = payments_mock_server::Config::default();
    config.sandbox_ttl = ttl;
    MockServer::builder()
        .config(config)
        .admin_key(ADMIN)
        .api_key(OWNER, Some(MERCHANT.parse().expect("a UUID")))
        .api_key(OTHER, Some(OTHER_MERCHANT.parse().expect("a UUID")))
        .api_key(UNBOUND, None)
        .start()
        .await
        .expect("a server")
}

/// Everything an answer tells, but its request id: status, the headers a
/// caller could compare, and the body (with `id` written as `{id}`).
async fn seen(method: &str, url: &str, key: Option<&str>, id: &str) -> (u16, String, String) {
    let method = reqwest::Method::from_bytes(method.as_bytes()).expect("a method");
    let mut req = reqwest::Client::new().request(method.clone(), url);
    if method == reqwest::Method::POST {
        req = req.json(&initiate_body("PROBE-1", "TOPUP"));
    }
    if let Some(key) = key {
        req = req.bearer_auth(key);
    }
    let response = req.send().await.expect("an answer");
    let status = response.status().as_u16();
    let mut headers: Vec<String> = response
        .headers()
        .iter()
        .filter(|(name, _)| !matches!(name.as_str(), "x-request-id" | "date"))
        .map(|(name, value)| format!("{name}: {}", String::from_utf8_lossy(value.as_bytes())))
        .collect();
    headers.sort();
    let body = response.text().await.expect("a body").replace(id, "{id}");
    (status, headers.join("\n"), body)
}

#[tokio::test]
async fn a_sandbox_is_an_unknown_id_to_all_but_the_admin_and_its_merchant() {
    let server = keyed(Duration::from_secs(3600)).await;
    let root = server.base_url();
    let (mine, base) = make(&server, Some(OWNER)).await;
    let (admins, admins_base) = make(&server, Some(ADMIN)).await;
    let made_up = uuid::Uuid::new_v4().to_string();
    let routes = [
        ("GET", "/_mock/clock"),
        ("GET", "/_mock/health"),
        ("GET", "/_mock/transactions"),
        ("DELETE", "/_mock/faults"),
        ("GET", "/_mock/ui/"),
        ("GET", "/_mock/ui/sign-in"),
        ("GET", "/_mock/ui/static/console.css"),
        ("GET", "/api/payments/reference/X/status"),
        ("POST", "/api/payments/initiate"),
        ("GET", "/metrics"),
        ("GET", "/openapi.json"),
        ("GET", "/pay/NOSUCHTOKEN"),
        ("GET", "/pay/static/mock.css"),
        ("GET", "/nothing/here"),
        ("GET", ""),
    ];
    for (id, of) in [(&mine, "a merchant's"), (&admins, "the admin's")] {
        for key in [None, Some("wrong-key"), Some(UNBOUND), Some(OTHER)] {
            for (method, tail) in routes {
                // The admin's sandbox's API takes any API key, as the
                // root's does; its admin side is the admin's alone.
                if of == "the admin's"
                    && tail.starts_with("/api/")
                    && key.is_some_and(|k| k.starts_with("sk_"))
                {
                    continue;
                }
                let live = seen(method, &format!("{root}/sandboxes/{id}{tail}"), key, id).await;
                let unknown = seen(
                    method,
                    &format!("{root}/sandboxes/{made_up}{tail}"),
                    key,
                    &made_up,
                )
                .await;
                assert_eq!(live, unknown, "{of} {method} {tail} with {key:?}");
                assert_eq!(live.0, 404, "{of} {method} {tail} with {key:?}");
            }
        }
    }
    // Its merchant and the admin find it; another merchant's key uses the
    // admin's sandbox's API as it uses the root's.
    for (url, key) in [
        (format!("{base}/_mock/clock"), OWNER),
        (format!("{base}/_mock/clock"), ADMIN),
        (format!("{base}/_mock/health"), OWNER),
        (format!("{base}/openapi.json"), OWNER),
        (format!("{admins_base}/_mock/clock"), ADMIN),
    ] {
        assert_eq!(get(&url, Some(key)).await.0, 200, "{url} with {key}");
    }
    let initiate = |base: String, key| async move {
        post(
            &format!("{base}/api/payments/initiate"),
            initiate_body("OWN-1", "TOPUP"),
            Some(key),
        )
        .await
        .0
    };
    assert_eq!(initiate(base.clone(), OWNER).await, 200);
    for key in [OTHER, UNBOUND] {
        let (status, envelope) = get(
            &format!("{admins_base}/api/payments/reference/X/status"),
            Some(key),
        )
        .await;
        assert_eq!(
            (status, envelope["errorCode"].as_str()),
            (404, Some("TRANSACTION_NOT_FOUND")),
            "{key}"
        );
    }
    // A payment page's token opens it to the payer, who has no key.
    let (status, envelope) = post(
        &format!("{base}/api/payments/initiate"),
        {
            let mut body = initiate_body("PAGE-1", "ONLINEBANKING");
            body["returnUrl"] = json!("https://shop.example/back");
            body
        },
        Some(OWNER),
    )
    .await;
    assert_eq!(status, 200, "{envelope}");
    let transaction = envelope["data"]["transactionId"].as_str().expect("an id");
    let (status, envelope) = post(
        &format!("{base}/api/payments/confirm"),
        json!({"transactionId": transaction, "referenceNo": "PAGE-1"}),
        Some(OWNER),
    )
    .await;
    assert_eq!(status, 200, "{envelope}");
    let extra: Value = serde_json::from_str(
        envelope["data"]["extraProperties"]
            .as_str()
            .expect("extraProperties is a JSON string"),
    )
    .expect("JSON");
    let page = extra["paymentUrl"].as_str().expect("a payment URL");
    assert!(page.starts_with(&format!("{base}/pay/")), "{page}");
    let (status, shown) = get(page, None).await;
    assert_eq!(status, 200, "{shown}");
}

/// A request refused under a sandbox (no key, a wrong one, another
/// merchant's) does not renew it: knowing its id is not enough to keep it
/// (and a `--max-sandboxes` place) alive. One let in still does. The time
/// to live is counted on the runtime's clock, moved on instead of waited.
#[tokio::test]
async fn a_refused_request_keeps_no_sandbox_alive() {
    let server = keyed(Duration::from_secs(1)).await;
    let (_, refused) = make(&server, Some(OWNER)).await;
    let (_, used) = make(&server, Some(OWNER)).await;
    let advance = |millis| async move {
        tokio::time::pause();
        tokio::time::advance(Duration::from_millis(millis)).await;
        tokio::time::resume();
    };
    advance(700).await;
    for key in [None, Some("wrong-key"), Some(UNBOUND), Some(OTHER)] {
        for tail in ["/_mock/clock", "/api/payments/reference/X/status", "/pay/X"] {
            let (status, _) = get(&format!("{refused}{tail}"), key).await;
            assert_eq!(status, 404, "{tail} with {key:?}");
        }
    }
    assert_eq!(
        get(&format!("{used}/_mock/clock"), Some(OWNER)).await.0,
        200
    );
    advance(700).await;
    let (status, envelope) = get(&format!("{refused}/_mock/clock"), Some(OWNER)).await;
    assert_eq!(
        (status, envelope["errorCode"].as_str()),
        (404, Some("SANDBOX_NOT_FOUND")),
        "gone 1.4 s after it was made, the refused requests notwithstanding"
    );
    assert_eq!(
        get(&format!("{used}/_mock/clock"), Some(OWNER)).await.0,
        200,
        "renewed by its merchant's request"
    );
}
