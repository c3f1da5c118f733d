//! The console behind an admin key in Chromium (CONTRACT section 18,
//! issue 33): the sign-in page (a plain form, checked with axe at a
//! phone's and a desktop's width), a wrong key, the admin's console with
//! sign-out, and a merchant's key seeing its own transactions only.

use payments_mock_server::MockServer;
use serde_json::json;

use crate::harness::Browser;
use crate::shop::MERCHANT;

const ADMIN_KEY: &str = "adm_browser_5e0c2a";
const MERCHANT_KEY: &str = "sk_browser_merchant";
const OTHER_KEY: &str = "sk_browser_other";
const OTHER_MERCHANT: &str = "0b0c8a9e-52a4-4c2e-8f6f-2f8f3c4d5e6a";

async fn guarded() -> MockServer {
    MockServer::builder()
        .admin_key(ADMIN_KEY)
        .api_key(MERCHANT_KEY, MERCHANT.parse().ok())
        .api_key(OTHER_KEY, OTHER_MERCHANT.parse().ok())
        .start()
        .await
        .expect("a guarded mock starts")
}

/// Initiates a TOPUP for `merchant` with `key`; its transactionId.
async fn initiate(server: &MockServer, key: &str, merchant: &str, reference: &str) -> String {
    let reply: serde_json::Value = reqwest::Client::new()
        .post(format!("{}/api/payments/initiate", server.base_url()))
        .bearer_auth(key)
        .json(&json!({
            "merchantId": merchant,
            "referenceNo": reference,
            "amount": 4990,
            "productCode": "TOPUP",
            "storeId": "KL-01",
            "payerId": "60123456789",
        }))
        .send()
        .await
        .expect("sent")
        .json()
        .await
        .expect("an envelope");
    reply["data"]["transactionId"]
        .as_str()
        .unwrap_or_else(|| panic!("initiated: {reply}"))
        .to_owned()
}

/// Types `key` into the sign-in form and submits it.
async fn sign_in_with(browser: &Browser, key: &str) {
    let field = browser.wait_for("#key").await;
    field.send_keys(key).await.expect("types");
    browser.click("#sign-in").await;
}

#[tokio::test]
async fn the_sign_in_page_lets_the_admin_in_and_out() {
    let Some(browser) = Browser::start("sign-in").await else {
        return;
    };
    let server = guarded().await;
    let id = initiate(&server, MERCHANT_KEY, MERCHANT, "SIGNIN-1").await;
    // A console page without a session: the sign-in page, which brings
    // the browser back to that page afterwards.
    browser
        .open(&format!("{}/_mock/ui/transactions/{id}", server.base_url()))
        .await;
    let heading = browser.text("h1").await;
    assert_eq!(heading, "Sign in");
    browser.check_page("the sign-in page").await;
    browser.screenshot("console-sign-in").await;

    // A wrong key: said so, the field empty again, still accessible.
    sign_in_with(&browser, "not-the-key").await;
    let problem = browser
        .wait_for_text(".problems", |t| t.contains("not accepted"))
        .await;
    assert!(!problem.contains("not-the-key"));
    let typed = browser
        .script("return document.querySelector('#key').value")
        .await;
    assert_eq!(typed, "", "the key is never filled back in");
    browser
        .check_page("the sign-in page with a wrong key")
        .await;
    browser.screenshot("console-sign-in-wrong-key").await;

    sign_in_with(&browser, ADMIN_KEY).await;
    browser.wait_for_url(|u| u.ends_with(&id)).await;
    let bar = browser.text(".who").await;
    assert!(bar.contains("Signed in with the admin key"), "{bar}");
    assert!(browser.text("main").await.contains("SIGNIN-1"));
    // HttpOnly: no script reads the session.
    assert_eq!(browser.script("return document.cookie").await, "");
    browser.check_page("the console, signed in").await;
    browser.screenshot("console-signed-in").await;

    browser.click("#sign-out").await;
    browser
        .wait_for_url(|u| u.contains("sign-in?signed-out=1"))
        .await;
    assert!(browser.text(".notice").await.contains("signed out"));
    browser
        .open(&format!("{}/_mock/ui/", server.base_url()))
        .await;
    assert_eq!(browser.text("h1").await, "Sign in", "the session ended");
    browser.close().await;
    server.shutdown().await;
}

#[tokio::test]
async fn a_merchants_key_signs_in_to_its_own_transactions() {
    let Some(browser) = Browser::start("merchant sign-in").await else {
        return;
    };
    let server = guarded().await;
    let mine = initiate(&server, MERCHANT_KEY, MERCHANT, "MINE-1").await;
    let theirs = initiate(&server, OTHER_KEY, OTHER_MERCHANT, "THEIRS-1").await;
    browser
        .open(&format!("{}/_mock/ui/sign-in", server.base_url()))
        .await;
    sign_in_with(&browser, MERCHANT_KEY).await;
    browser.wait_for_url(|u| u.ends_with("/_mock/ui/")).await;
    let rows = browser.text("#rows").await;
    assert!(rows.contains(&mine) && !rows.contains(&theirs), "{rows}");
    let nav = browser.text("nav").await;
    assert!(!nav.contains("Reset"), "{nav}");
    browser.check_page("a merchant's console").await;
    browser.screenshot("console-merchant").await;
    browser.close().await;
    server.shutdown().await;
}
