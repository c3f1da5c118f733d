//! The contract proxy's console in Chromium (issue 24): exchanges appear
//! without a reload, each with its verdict and a badge per finding level;
//! an exchange opens in full with its secrets replaced; hostile text shows
//! as text; with `--admin-key`, the sign-in and sign-out (issue 33); every
//! page passes axe and fits a phone.

use payments_contract_proxy::{Proxy, ProxyConfig};
use payments_mock_server::MockServer;
use serde_json::json;

use crate::harness::Browser;
use crate::shop::MERCHANT;

async fn post(base: &str, path: &str, body: serde_json::Value) -> serde_json::Value {
    reqwest::Client::new()
        .post(format!("{base}{path}"))
        .json(&body)
        .send()
        .await
        .expect("answered")
        .json()
        .await
        .expect("JSON")
}

#[tokio::test]
async fn exchanges_appear_live_with_their_verdicts_and_pass_axe() {
    let Some(browser) = Browser::start("proxy console").await else {
        return;
    };
    let mock = MockServer::start().await;
    let proxy = Proxy::start(ProxyConfig::new(mock.base_url().parse().expect("a URL")))
        .await
        .expect("a proxy");
    let base = proxy.base_url();
    browser.open(&format!("{base}/_proxy/ui/")).await;
    browser
        .wait_for_text("#exchanges", |t| t.contains("No exchange yet"))
        .await;
    browser.check_page("the proxy console, empty").await;
    browser.script("window.mark = 'kept'").await;
    let topup = json!({
        "merchantId": MERCHANT, "referenceNo": "<script>alert(1)</script>", "amount": 4990,
        "productCode": "TOPUP", "storeId": "KL-01", "payerId": "60123456789",
    });
    post(&base, "/api/payments/initiate", topup.clone()).await;
    post(&base, "/api/payments/initiate", topup).await;
    post(&base, "/api/payments/initiate", json!({ "amount": "100" })).await;
    let rows = browser
        .wait_for_text("#exchanges", |t| {
            t.matches("/api/payments/initiate").count() == 3
        })
        .await;
    assert!(
        rows.contains("undocumented") && rows.contains("client"),
        "{rows}"
    );
    assert!(
        rows.contains("code.undocumented") && rows.contains("request.invalid"),
        "{rows}"
    );
    assert_eq!(
        browser.script("return window.mark").await,
        "kept",
        "no reload"
    );
    assert_eq!(
        browser
            .script("return document.querySelectorAll('script').length")
            .await,
        1,
        "the hostile reference is text, not a script"
    );
    browser.check_page("the proxy console").await;
    browser.screenshot("proxy-console").await;

    // Each exchange's link is named by its request, not by a number.
    let link = browser.text("#exchanges tr:last-child a").await;
    assert!(link.starts_with("POST /api/payments/initiate"), "{link}");
    assert!(
        browser
            .wait_for("button.live-pause")
            .await
            .attr("aria-pressed")
            .await
            .expect("read")
            .is_some()
    );
    browser.click("#exchanges tr:last-child a").await;
    let heading = browser
        .wait_for_text("h1", |t| t.contains("/api/payments/initiate"))
        .await;
    assert!(heading.starts_with("POST"), "{heading}");
    let page = browser.text("main").await;
    assert!(
        page.contains("payer-") && !page.contains("60123456789"),
        "{page}"
    );
    browser.check_page("an exchange").await;
    browser.screenshot("proxy-exchange").await;
    browser
        .open(&format!("{base}/_proxy/ui/exchanges/999"))
        .await;
    assert!(browser.text("h1").await.contains("No such exchange"));
    browser.check_page("an unknown exchange").await;
    // Any other address under the console: a page, as the mock's console
    // answers (it was the JSON envelope, with five axe violations).
    browser.open(&format!("{base}/_proxy/ui/nope")).await;
    assert!(browser.text("h1").await.contains("No such page"));
    browser.check_page("an unknown console page").await;
    browser.close().await;
    proxy.shutdown().await;
}

#[tokio::test]
async fn with_an_admin_key_the_console_signs_in_and_out() {
    const KEY: &str = "adm_proxy_browser_5e1f";
    let Some(browser) = Browser::start("proxy sign-in").await else {
        return;
    };
    let mock = MockServer::start().await;
    let mut config = ProxyConfig::new(mock.base_url().parse().expect("a URL"));
    config.admin_keys = vec![KEY.parse().expect("an admin key")];
    let proxy = Proxy::start(config).await.expect("a proxy");
    let base = proxy.base_url();
    let reply = reqwest::get(format!("{base}/api/payments/nope/status"))
        .await
        .expect("forwarded");
    assert_eq!(reply.status(), 404, "the application needs no admin key");
    // A console page without a session: the sign-in page, which brings
    // the browser back there afterwards.
    browser.open(&format!("{base}/_proxy/ui/exchanges/1")).await;
    assert_eq!(browser.text("h1").await, "Sign in");
    browser.check_page("the proxy's sign-in page").await;
    browser.screenshot("proxy-sign-in").await;

    let field = browser.wait_for("#key").await;
    field.send_keys("not-the-key").await.expect("types");
    browser.click("#sign-in").await;
    let problem = browser
        .wait_for_text(".problems", |t| t.contains("not accepted"))
        .await;
    assert!(!problem.contains("not-the-key"));
    assert_eq!(
        browser
            .script("return document.querySelector('#key').value")
            .await,
        "",
        "the key is never filled back in"
    );
    browser
        .check_page("the proxy's sign-in page with a wrong key")
        .await;

    let field = browser.wait_for("#key").await;
    field.send_keys(KEY).await.expect("types");
    browser.click("#sign-in").await;
    browser
        .wait_for_url(|u| u.ends_with("/_proxy/ui/exchanges/1"))
        .await;
    assert!(browser.text(".who").await.contains("Signed in"));
    assert_eq!(browser.script("return document.cookie").await, "");
    browser.check_page("the proxy's exchange, signed in").await;
    browser.open(&format!("{base}/_proxy/ui/")).await;
    browser
        .wait_for_text("#exchanges", |t| t.contains("/api/payments/nope/status"))
        .await;
    browser.check_page("the proxy console, signed in").await;
    browser.screenshot("proxy-console-signed-in").await;

    browser.click("#sign-out").await;
    browser
        .wait_for_url(|u| u.contains("sign-in?signed-out=1"))
        .await;
    assert!(browser.text(".notice").await.contains("signed out"));
    browser.open(&format!("{base}/_proxy/ui/")).await;
    assert_eq!(browser.text("h1").await, "Sign in", "the session ended");
    browser.close().await;
    drop(proxy);
}

#[tokio::test]
async fn the_coverage_page_shows_each_cell_and_passes_axe() {
    let Some(browser) = Browser::start("proxy coverage").await else {
        return;
    };
    let mock = MockServer::start().await;
    let proxy = Proxy::start(ProxyConfig::new(mock.base_url().parse().expect("a URL")))
        .await
        .expect("a proxy");
    let base = proxy.base_url();
    browser.open(&format!("{base}/_proxy/ui/")).await;
    browser.click("nav a[href$='_proxy/ui/coverage']").await;
    browser
        .wait_for_url(|u| u.ends_with("/_proxy/ui/coverage"))
        .await;
    assert_eq!(browser.text("h1").await, "Interface coverage");
    assert!(
        browser.text("#percent").await.starts_with("0 of "),
        "nothing seen yet"
    );
    assert_eq!(browser.text("#outside").await, "Nothing.");
    browser.check_page("the proxy's coverage, empty").await;

    let topup = json!({
        "merchantId": MERCHANT, "referenceNo": "COV-PAGE-1", "amount": 4990,
        "productCode": "TOPUP", "storeId": "KL-01", "payerId": "60123456789",
    });
    let initiated = post(&base, "/api/payments/initiate", topup.clone()).await;
    post(&base, "/api/payments/initiate", topup).await;
    let id = initiated["data"]["transactionId"].as_str().expect("an id");
    post(
        &base,
        "/api/payments/confirm",
        json!({ "transactionId": id, "referenceNo": "COV-PAGE-1" }),
    )
    .await;
    browser.open(&format!("{base}/_proxy/ui/coverage")).await;
    let percent = browser.text("#percent").await;
    assert!(percent.starts_with("5 of "), "{percent}");
    let cells = browser.text("#cells").await;
    for seen in [
        "initiate 200",
        "initiate 400 DUPLICATE_REFERENCE_NO",
        "confirm 200",
        "transition created -> INITIATED",
        "transition INITIATED -> SUCCESSFUL",
    ] {
        assert!(cells.contains(seen), "{seen}: {cells}");
    }
    assert!(cells.contains("never"), "cells not seen say so: {cells}");
    assert_eq!(
        browser
            .script("return document.querySelector('nav a[aria-current=page]').textContent")
            .await,
        "Coverage"
    );
    browser.check_page("the proxy's coverage").await;
    browser.screenshot("proxy-coverage").await;
    browser.close().await;
    proxy.shutdown().await;
}

/// A finding that quotes a long word (a service's 52-character
/// errorCode, 300 characters of one) breaks inside the findings list: the
/// exchange page never scrolls sideways on a phone (it was 574 px wide at
/// 360).
#[tokio::test]
async fn a_finding_with_a_long_word_fits_a_phone() {
    let Some(browser) = Browser::start("proxy long finding").await else {
        return;
    };
    let code = format!(
        "PROVIDER_GATEWAY_TIMEOUT_WHILE_CONFIRMING_THE_PAYMENT{}",
        "X".repeat(250)
    );
    let body = json!({"isSuccess": false, "errorCode": code, "message": "m", "data": null});
    let upstream = axum::Router::new().fallback(move || {
        let body = body.to_string();
        async move {
            (
                axum::http::StatusCode::BAD_REQUEST,
                [("content-type", "application/json")],
                body,
            )
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let address = listener.local_addr().expect("an address");
    tokio::spawn(async move { axum::serve(listener, upstream).await });
    let proxy = Proxy::start(ProxyConfig::new(
        format!("http://{address}").parse().expect("a URL"),
    ))
    .await
    .expect("a proxy");
    let base = proxy.base_url();
    post(&base, "/api/payments/initiate", json!({})).await;
    browser.open(&format!("{base}/_proxy/ui/exchanges/1")).await;
    let findings = browser.text(".findings").await;
    assert!(findings.contains("PROVIDER_GATEWAY"), "{findings}");
    browser.check_page("an exchange with a long finding").await;
    browser.close().await;
    proxy.shutdown().await;
}
