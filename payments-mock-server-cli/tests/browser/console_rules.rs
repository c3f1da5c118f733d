//! The console's pages of fault rules and of sandboxes in Chromium: the
//! rules with how often each fired, and the sandbox picker leading to each
//! sandbox's own console and back (axe at both widths).

use payments_mock_server::MockServer;
use serde_json::json;

use crate::console::{console, reached_by_the_navigation, row_texts, topup};
use crate::harness::{Browser, PHONE};
use crate::shop::call;

/// The Faults page (issue 42): reached from the navigation, each rule with
/// its counts, a hostile reference shown as text and never obeyed, checked
/// with axe at a desktop's and a phone's width.
#[tokio::test]
async fn the_faults_page_lists_the_rules_and_their_counts() {
    use payments_mock_server::{Endpoint, Fault, FaultRule};
    let Some(browser) = Browser::start("faults").await else {
        return;
    };
    let server = MockServer::start().await;
    browser.open(&console(&server, "faults")).await;
    assert!(browser.text("#no-rules").await.starts_with("No rule"));
    browser.check_page("the faults page without rules").await;
    let hostile = "<img src=x onerror=window.pwned=1>\u{202e}gpj";
    server
        .add_fault_rule(
            FaultRule::new(Fault::InternalError)
                .on(Endpoint::Initiate)
                .reference("FLT-1")
                .times(2),
        )
        .expect("a rule");
    server
        .add_fault_rule(
            FaultRule::new(Fault::Gateway(504))
                .reference(hostile)
                .times(0),
        )
        .expect("a rule");
    call(
        &server,
        "POST",
        "/api/payments/initiate",
        Some(topup("FLT-1")),
    )
    .await;

    reached_by_the_navigation(&browser, &server, "faults", "Faults").await;
    let rows = row_texts(&browser, "#rules").await;
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert!(
        rows[0].starts_with("internal-error endpoint initiate, referenceNo FLT-1 0 2 1.0 1 1 1"),
        "{rows:?}"
    );
    assert!(rows[1].contains("gateway=504"), "{rows:?}");
    assert!(
        rows[1].contains("<img src=x onerror=window.pwned=1><U+202E>gpj"),
        "{rows:?}"
    );
    assert!(
        rows[1].contains("until removed") && rows[1].contains("no end"),
        "{rows:?}"
    );
    assert_eq!(
        browser.script("return window.pwned === undefined").await,
        true
    );
    browser.check_page("the faults page").await;
    browser.screenshot("console-faults").await;
    browser.size(PHONE).await;
    browser.check_page("the faults page on a phone").await;
    browser.screenshot("console-faults-phone").await;
    browser.close().await;
    server.shutdown().await;
}

#[tokio::test]
async fn the_sandbox_picker_leads_to_each_sandboxs_own_console_and_back() {
    let Some(browser) = Browser::start("sandboxes").await else {
        return;
    };
    let server = MockServer::start().await;
    browser.open(&console(&server, "sandboxes")).await;
    assert_eq!(browser.text("#no-sandboxes").await, "No sandbox is live.");
    browser
        .check_page("the sandbox picker without sandboxes")
        .await;
    let hostile = "<img src=x onerror=window.pwned=1>\u{202e}gpj";
    let made = reqwest::Client::new()
        .post(format!("{}/_mock/sandboxes", server.base_url()))
        .json(&json!({ "label": hostile }))
        .send()
        .await
        .expect("made")
        .json::<serde_json::Value>()
        .await
        .expect("an envelope");
    let id = made["data"]["id"].as_str().expect("an id").to_owned();
    let other = server.sandbox();
    call(
        &other,
        "POST",
        "/api/payments/initiate",
        Some(topup("SBX-1")),
    )
    .await;

    reached_by_the_navigation(&browser, &server, "sandboxes", "Sandboxes").await;
    let rows = row_texts(&browser, "#sandboxes").await;
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert!(
        rows[0].starts_with("<img src=x onerror=window.pwned=1><U+202E>gpj"),
        "{rows:?}"
    );
    assert!(rows[1].starts_with("no label"), "{rows:?}");
    assert!(rows[1].contains(" 1 admin"), "one transaction: {rows:?}");
    assert_eq!(
        browser.script("return window.pwned === undefined").await,
        true
    );
    browser.check_page("the sandbox picker").await;
    browser.screenshot("console-sandboxes").await;

    // Into the second sandbox's console: its transaction, its name.
    browser
        .click(&format!("a[href$='sandboxes/{}/_mock/ui/']", other.id()))
        .await;
    browser
        .wait_for_url(|u| u.ends_with(&format!("/sandboxes/{}/_mock/ui/", other.id())))
        .await;
    assert_eq!(browser.text("#sandbox-name").await, other.id().to_string());
    browser.wait_for_text("main", |t| t.contains("SBX-1")).await;
    browser.check_page("a sandbox's console").await;
    browser.click("a[href$='_mock/ui/requests']").await;
    browser
        .wait_for_url(|u| u.ends_with(&format!("/sandboxes/{}/_mock/ui/requests", other.id())))
        .await;
    browser.click(".sandbox a").await;
    browser
        .wait_for_url(|u| u == console(&server, "sandboxes"))
        .await;
    // The hostile one's console names it, escaped.
    browser
        .open(&format!("{}/sandboxes/{id}/_mock/ui/", server.base_url()))
        .await;
    assert_eq!(
        browser.text("#sandbox-name").await,
        "<img src=x onerror=window.pwned=1><U+202E>gpj"
    );
    assert_eq!(
        browser.script("return window.pwned === undefined").await,
        true
    );
    browser.size(PHONE).await;
    browser.check_page("a sandbox's console on a phone").await;
    browser.close().await;
    server.shutdown().await;
}
