//! A sandbox's paths are the root's after the prefix, queries and all:
//! the same answer under `/sandboxes/{id}` as at the root, for a query on
//! `/api/`, on a test control, on the bare prefix and on hostile tails.

use payments_mock_server::MockServer;
use serde_json::Value;

use crate::common::{MERCHANT, initiate_body};

async fn get(url: &str) -> (u16, Value) {
    let reply = reqwest::get(url).await.expect("an answer");
    let status = reply.status().as_u16();
    (status, reply.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn queries_and_odd_tails_are_answered_as_at_the_root() {
    let server = MockServer::start().await;
    let sandbox = server.sandbox();
    for base in [server.base_url(), sandbox.base_url()] {
        let made = reqwest::Client::new()
            .post(format!("{base}/api/payments/initiate"))
            .json(&initiate_body("Q-1", "TOPUP"))
            .send()
            .await
            .expect("an answer");
        assert_eq!(made.status(), 200);
    }
    let (root, mine) = (server.base_url(), sandbox.base_url());
    for tail in [
        // A query on /api/ reaches the handler whole.
        format!("/api/payments/reference/Q-1/status?merchantId={MERCHANT}"),
        "/api/payments/reference/Q-1/status?merchantId=not-a-uuid".to_owned(),
        // And on a control: paged after the first entry.
        "/_mock/requests?after=1&limit=1".to_owned(),
        "/_mock/requests?limit=nope".to_owned(),
        // The bare prefix, with and without a query.
        String::new(),
        "?x=1".to_owned(),
        "/".to_owned(),
        "/?x=%20".to_owned(),
        // Hostile tails (a client's URL parser resolves `/../` itself, so
        // encoded dots): encoded segments, an empty query, a double slash.
        "/api/payments/%2e%2e/status".to_owned(),
        "/api/payments/reference/Q-1/status?".to_owned(),
        "//api/payments/initiate".to_owned(),
    ] {
        let (at_root, root_body) = get(&format!("{root}{tail}")).await;
        let (in_sandbox, body) = get(&format!("{mine}{tail}")).await;
        assert_eq!(
            in_sandbox, at_root,
            "{tail}: {body} vs the root's {root_body}"
        );
        assert_eq!(
            body.get("errorCode"),
            root_body.get("errorCode"),
            "{tail}: {body} vs the root's {root_body}"
        );
        if tail.contains("merchantId=6f") {
            assert_eq!(body["data"]["referenceNo"], "Q-1", "{body}");
        }
        if tail.starts_with("/_mock/requests?after=1") {
            let items = body["data"]["items"].as_array().expect("a page");
            assert_eq!(items.len(), 1, "{body}");
            assert_eq!(items[0]["seq"], 2, "{body}");
        }
    }
}

/// A page path under a sandbox that is not live (its payment page opened
/// in a browser after it was removed or expired, a malformed id) is a 404
/// page, as an unknown payment page is; the API and the controls under it
/// keep their JSON `SANDBOX_NOT_FOUND`.
#[tokio::test]
async fn a_page_under_a_sandbox_that_is_not_live_is_a_404_page() {
    let server = MockServer::start().await;
    let root = server.base_url();
    let gone = uuid::Uuid::new_v4();
    for (path, says) in [
        (
            format!("/sandboxes/{gone}/pay/AbC123"),
            "No such payment page",
        ),
        (format!("/sandboxes/{gone}/pay"), "No such payment page"),
        (
            "/sandboxes/nope/pay/AbC123".to_owned(),
            "No such payment page",
        ),
        (format!("/sandboxes/{gone}/_mock/ui/"), "No such page"),
    ] {
        let reply = reqwest::get(format!("{root}{path}"))
            .await
            .expect("an answer");
        assert_eq!(reply.status().as_u16(), 404, "{path}");
        assert_eq!(
            reply.headers()["content-type"],
            "text/html; charset=utf-8",
            "{path}"
        );
        let page = reply.text().await.expect("a page");
        assert!(page.contains(&format!("<h1>{says}</h1>")), "{path}: {page}");
        assert!(!page.contains("isSuccess"), "{path}: {page}");
    }
    for path in [
        format!("/sandboxes/{gone}/api/payments/reference/X/status"),
        format!("/sandboxes/{gone}/_mock/clock"),
        format!("/sandboxes/{gone}/pays"),
    ] {
        let (status, envelope) = get(&format!("{root}{path}")).await;
        assert_eq!(status, 404, "{path}");
        assert_eq!(envelope["errorCode"], "SANDBOX_NOT_FOUND", "{path}");
    }
}
