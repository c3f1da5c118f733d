//! The payer without a browser (CONTRACT sections 10 and 13): the admin
//! payer control, the embedded server's payer API and public URL, and
//! pages on a keyed, faulted, rate-limited server.

use std::time::Duration;

use axum::body::Body;
use axum::http::Request;
use payments_mock_server::domain::port::Store;
use payments_mock_server::state::AppState;
use payments_mock_server::{Config, MockServer, PayerAction, PayerError};
use serde_json::json;

use crate::common::{get, journal, post, post_over_http, send, service, status};
use crate::redirect::{assert_page, confirmed, location, online_banking, text};

#[tokio::test]
async fn the_admin_control_plays_the_payer_without_a_browser() {
    let (_, router) = service();
    let (id, _) = confirmed(&router, "OB-1").await;
    let path = format!("/_mock/transactions/{id}/payer");
    let reply = post(&router, &path, &json!({"action": "decline"})).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.data()["status"], "FAILED");
    assert_eq!(reply.data()["message"], "declined by bank");
    assert_eq!(reply.data()["transactionId"], id.as_str());
    let redirect = reply.data()["redirectTo"].as_str().expect("redirectTo");
    assert!(redirect.contains("&status=FAILED#top"), "{redirect}");

    // Decided: no longer waiting.
    let again = post(&router, &path, &json!({"action": "pay"})).await;
    assert_eq!(
        (again.status.as_u16(), again.code()),
        (400, "VALIDATION_ERROR")
    );
    assert_eq!(again.message(), "transaction is not waiting for the payer");
    assert_eq!(status(&router, &id).await.data()["status"], "FAILED");

    let unknown = post(
        &router,
        "/_mock/transactions/01930000-0000-7000-8000-000000000000/payer",
        &json!({"action": "pay"}),
    )
    .await;
    assert_eq!(
        (unknown.status.as_u16(), unknown.code()),
        (404, "TRANSACTION_NOT_FOUND")
    );
    let (_, router) = service();
    let topup = crate::common::initiated(&router, "T-1", "TOPUP").await;
    let reply = post(
        &router,
        &format!("/_mock/transactions/{topup}/payer"),
        &json!({"action": "pay"}),
    )
    .await;
    assert_eq!(reply.message(), "transaction is not waiting for the payer");
    let (id, _) = confirmed(&router, "OB-2").await;
    let path = format!("/_mock/transactions/{id}/payer");
    for (body, message) in [
        (json!({}), "action is required"),
        (
            json!({"action": "refund"}),
            "action must be one of pay, decline, cancel",
        ),
        (
            json!({"action": 1}),
            "action must be a string: pay, decline or cancel",
        ),
    ] {
        let reply = post(&router, &path, &body).await;
        assert_eq!(
            (reply.code(), reply.message()),
            ("VALIDATION_ERROR", message)
        );
    }
    assert_eq!(status(&router, &id).await.data()["status"], "CONFIRMED");
}

#[tokio::test]
async fn pages_need_no_key_and_are_never_faulted_limited_or_journaled() {
    let mut config = Config::default();
    config.api_keys = vec!["sk_test".parse().expect("a key")];
    config.fail_rate = 1.0;
    config.fault_seed = Some(7);
    config.rate_limit = Some(1);
    let state = AppState::new(config);
    let router = payments_mock_server::http::app(state.clone());
    // Set up through the library: every /api/ request would fail here.
    let record = state
        .store
        .create(
            payments_mock_server::domain::validate::initiate(
                online_banking("OB-1").as_object().expect("object"),
                &state.catalog,
            )
            .expect("valid"),
            payments_mock_server::InitialState::Initiated,
            Duration::from_secs(900),
        )
        .await
        .expect("the store answers")
        .expect("stored");
    let id = record.id.to_string();
    let reply = post(
        &router,
        &format!("/_mock/transactions/{id}/payer"),
        &json!({"action": "pay"}),
    )
    .await;
    assert_eq!(reply.message(), "transaction is not waiting for the payer");
    // The confirm's rules through the library (the HTTP confirm would be
    // faulted here).
    let public_url: payments_mock_server::PublicUrl = "http://localhost".parse().expect("a URL");
    let attempt = payments_mock_server::domain::lifecycle::ConfirmAttempt {
        transaction_id: &id,
        reference_no: "OB-1",
        confirmation_code: None,
        scope: None,
        public_url: &public_url,
    };
    let (confirmed, _) =
        payments_mock_server::domain::lifecycle::confirm(&state.store, &attempt, &state.catalog)
            .await
            .expect("the store answers")
            .expect("confirmed");
    let token = confirmed.payment_page().expect("a page").token.to_string();
    let path = format!("/pay/{token}");

    // No key, every fault asked for, far over the rate limit: the page
    // opens, and the submit decides, each time at once.
    for fault in ["", "internal-error", "reset", "rate-limit", "delay=60000"] {
        let mut request = Request::get(&path);
        if !fault.is_empty() {
            request = request.header("x-mock-fault", fault);
        }
        let page = send(&router, request.body(Body::empty()).expect("request")).await;
        assert_page(&page, 200);
    }
    let request = Request::post(&path)
        .header("content-type", "application/x-www-form-urlencoded")
        .header("x-mock-fault", "commit-then-reset")
        .body(Body::from("action=pay"))
        .expect("request");
    let decided = send(&router, request).await;
    assert_eq!(decided.status.as_u16(), 303, "{}", text(&decided));
    assert!(
        location(&decided).ends_with("&status=SUCCESSFUL#top"),
        "{}",
        location(&decided)
    );
    let page = get(&router, "/pay/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA").await;
    assert_page(&page, 404);
    assert!(journal(&state).await.is_empty());
}

#[tokio::test]
async fn the_embedded_server_plays_the_payer_and_announces_its_public_url() {
    let server = MockServer::builder()
        .public_url("https://dev.example/mock/".parse().expect("a URL"))
        .start()
        .await
        .expect("started");
    let api = |p: &str| format!("{}/api/payments/{p}", server.base_url());
    let initiated = post_over_http(&api("initiate"), &online_banking("OB-1")).await;
    let id = initiated["data"]["transactionId"]
        .as_str()
        .expect("id")
        .to_owned();
    assert_eq!(server.payment_url(&id).await, None);
    assert_eq!(
        server.payer(&id, PayerAction::Pay).await.map(|o| o.status),
        Err(PayerError::NotWaiting)
    );
    let confirmed = post_over_http(
        &api("confirm"),
        &json!({"transactionId": id, "referenceNo": "OB-1"}),
    )
    .await;
    let extra = confirmed["data"]["extraProperties"]
        .as_str()
        .expect("a string");
    let url = server.payment_url(&id).await.expect("a page");
    assert!(url.starts_with("https://dev.example/mock/pay/"), "{url}");
    assert!(extra.contains(&url), "{extra}");
    let stored = &server.transactions().await[0];
    assert_eq!(stored.payment_url.as_deref(), Some(url.as_str()));

    let outcome = server
        .payer(&id, PayerAction::Cancel)
        .await
        .expect("decided");
    assert_eq!(outcome.status, "FAILED");
    assert!(outcome.redirect_to.contains(&format!("transactionId={id}")));
    assert_eq!(
        server.transactions().await[0].error_message.as_deref(),
        Some("cancelled by payer")
    );
    assert_eq!(
        server.payer(&id, PayerAction::Pay).await.map(|o| o.status),
        Err(PayerError::NotWaiting)
    );
    assert_eq!(
        server
            .payer("nope", PayerAction::Pay)
            .await
            .map(|o| o.status),
        Err(PayerError::NotFound)
    );
    server.shutdown().await;
}

#[tokio::test]
async fn by_default_pages_are_announced_under_the_listening_address() {
    let server = MockServer::start().await;
    let router_url = server.base_url();
    let api = |p: &str| format!("{router_url}/api/payments/{p}");
    let initiated = post_over_http(&api("initiate"), &online_banking("OB-1")).await;
    let id = initiated["data"]["transactionId"].as_str().expect("id");
    post_over_http(
        &api("confirm"),
        &json!({"transactionId": id, "referenceNo": "OB-1"}),
    )
    .await;
    let url = server.payment_url(id).await.expect("a page");
    assert!(url.starts_with(&format!("{router_url}/pay/")), "{url}");
    // And the page is there, over real HTTP.
    let page = reqwest::get(&url).await.expect("sent");
    assert_eq!(page.status(), 200);
    let no_redirects = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("a client");
    let paid = no_redirects
        .post(&url)
        .header("content-type", "application/x-www-form-urlencoded")
        .body("action=pay")
        .send()
        .await
        .expect("sent");
    assert_eq!(paid.status(), 303);
    server.shutdown().await;
}

#[tokio::test]
async fn a_public_url_with_a_path_and_no_last_slash_carries_on_into_sandboxes() {
    // `--public-url https://dev.example/mock`: a sandbox's base URL,
    // its payment pages and its OpenAPI document's server are under
    // `/mock/sandboxes/{id}` (it read `/mocksandboxes/{id}`).
    let server = MockServer::builder()
        .public_url("https://dev.example/mock".parse().expect("a URL"))
        .start()
        .await
        .expect("started");
    let made = post_over_http(
        &format!("{}/_mock/sandboxes", server.base_url()),
        &json!({}),
    )
    .await;
    let sandbox = made["data"]["id"].as_str().expect("an id").to_owned();
    let announced = format!("https://dev.example/mock/sandboxes/{sandbox}");
    assert_eq!(made["data"]["baseUrl"], announced.as_str(), "{made}");

    let here = format!("{}/sandboxes/{sandbox}", server.base_url());
    let initiated = post_over_http(
        &format!("{here}/api/payments/initiate"),
        &online_banking("OB-P"),
    )
    .await;
    let id = initiated["data"]["transactionId"].as_str().expect("id");
    let confirmed = post_over_http(
        &format!("{here}/api/payments/confirm"),
        &json!({"transactionId": id, "referenceNo": "OB-P"}),
    )
    .await;
    let extra = confirmed["data"]["extraProperties"]
        .as_str()
        .expect("a string");
    assert!(extra.contains(&format!("{announced}/pay/")), "{extra}");

    let document = |url: String| async move {
        reqwest::get(url)
            .await
            .expect("answered")
            .json::<serde_json::Value>()
            .await
            .expect("JSON")
    };
    let sandboxed = document(format!("{here}/openapi.json")).await;
    assert_eq!(sandboxed["servers"][0]["url"], announced.as_str());
    let root = document(format!("{}/openapi.json", server.base_url())).await;
    assert_eq!(root["servers"][0]["url"], "https://dev.example/mock");
    // The same document otherwise, but for what a sandbox does not serve
    // (sandboxes do not nest).
    let mut expected = root["paths"].clone();
    let paths = expected.as_object_mut().expect("paths");
    assert!(paths.remove("/_mock/sandboxes").is_some());
    assert!(paths.remove("/_mock/sandboxes/{sandboxId}").is_some());
    assert_eq!(expected, sandboxed["paths"], "the same document otherwise");
    server.shutdown().await;
}
