//! A sandbox's id cannot be probed (CONTRACT sections 18 and 19): with
//! keys, anyone but the admin and the merchant that made it gets, on every
//! route under its prefix and whatever key they send, exactly what a
//! made-up id gets; and such a request keeps it no longer alive.

use std::time::Duration;

use payments_mock_server::MockServer;
use serde_json::json;

use super::{OTHER_MERCHANT, get, make, payment_page, post};
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
    let (_, page) = payment_page(&base, "PAGE-1", Some(OWNER)).await;
    let (status, shown) = get(&page, None).await;
    assert_eq!(status, 200, "{shown}");
}

/// A request refused under a sandbox (no key, a wrong one, another
/// merchant's) does not renew it: knowing its id is not enough to keep it
/// (and a `--max-sandboxes` place) alive. One let in still does. The time
/// to live is counted on the runtime's clock, moved on instead of waited;
/// the requests between the moves take real time too, so each move leaves
/// 3 s of it before an expiry (0.3 s was not enough on a loaded machine).
#[tokio::test]
async fn a_refused_request_keeps_no_sandbox_alive() {
    let server = keyed(Duration::from_secs(10)).await;
    let (_, refused) = make(&server, Some(OWNER)).await;
    let (_, used) = make(&server, Some(OWNER)).await;
    let advance = |millis| async move {
        tokio::time::pause();
        tokio::time::advance(Duration::from_millis(millis)).await;
        tokio::time::resume();
    };
    advance(7_000).await;
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
    advance(7_000).await;
    let (status, envelope) = get(&format!("{refused}/_mock/clock"), Some(OWNER)).await;
    assert_eq!(
        (status, envelope["errorCode"].as_str()),
        (404, Some("SANDBOX_NOT_FOUND")),
        "gone 14 s after it was made, the refused requests notwithstanding"
    );
    assert_eq!(
        get(&format!("{used}/_mock/clock"), Some(OWNER)).await.0,
        200,
        "renewed by its merchant's request"
    );
}

/// The stylesheet `html` links, resolved against `page` (the address the
/// page was served at, as a browser resolves it), loaded as the payer
/// loads it, with no key: its status and content type.
async fn linked_stylesheet(page: &str, html: &str) -> (u16, String) {
    let href = html
        .split_once(r#"<link rel="stylesheet" href=""#)
        .and_then(|(_, rest)| rest.split_once('"'))
        .map(|(href, _)| href)
        .unwrap_or_else(|| panic!("a stylesheet link in {html}"));
    let url = url::Url::parse(page)
        .expect("a URL")
        .join(href)
        .expect("a relative link");
    let response = reqwest::get(url.clone()).await.expect("an answer");
    let kind = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .unwrap_or_default();
    (response.status().as_u16(), format!("{kind} ({url})"))
}

/// Sends `req` (no key, redirects not followed) and checks that the page
/// it answers links a stylesheet its payer may load: a payment page of a
/// merchant's sandbox, and its error pages, are styled for a payer with
/// no key (the sandbox's own `pay/static/mock.css` is an unknown id's to
/// a stranger; the root's is open to all). Returns the status.
async fn styled(req: reqwest::RequestBuilder, page: &str, what: &str) -> u16 {
    let response = req.send().await.expect("an answer");
    let status = response.status().as_u16();
    let html = response.text().await.expect("a body");
    let (css, kind) = linked_stylesheet(page, &html).await;
    assert_eq!(css, 200, "{what}: the stylesheet {kind}");
    assert!(kind.starts_with("text/css"), "{what}: {kind}");
    status
}

/// With `--admin-key`, a merchant's sandbox's payment page, its error
/// pages, its decision's 303 page and a bad token's page (an unknown
/// id's) link a stylesheet that loads for the payer, who has no key.
#[tokio::test]
async fn a_sandboxs_payment_page_is_styled_for_a_payer_without_a_key() {
    let server = keyed(Duration::from_secs(3600)).await;
    let (_, base) = make(&server, Some(OWNER)).await;
    let (_, page) = payment_page(&base, "STYLE-1", Some(OWNER)).await;
    let page = page.as_str();
    let payer = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("a client");
    let form = |fields: &'static str| {
        payer
            .post(page)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(fields)
    };
    assert_eq!(styled(payer.get(page), page, "the page").await, 200);
    // Its error pages, drawn with the sandbox's state.
    assert_eq!(styled(payer.put(page), page, "a wrong method").await, 405);
    assert_eq!(
        styled(
            payer.post(page).json(&json!({"action": "pay"})),
            page,
            "JSON, not a form"
        )
        .await,
        415
    );
    assert_eq!(
        styled(form("action=refund"), page, "an unknown action").await,
        400
    );
    // The decision's 303, and the outcome afterwards.
    assert_eq!(
        styled(form("action=pay"), page, "back to the merchant").await,
        303
    );
    assert_eq!(styled(payer.get(page), page, "the outcome").await, 200);
    // A token the sandbox does not know: the page of an unknown id.
    let unknown = format!("{base}/pay/NOSUCHTOKEN");
    assert_eq!(
        styled(payer.get(&unknown), &unknown, "an unknown token").await,
        404
    );
}
