//! The web console in Chromium (CONTRACT section 14): rows appear by
//! themselves, filters, the detail page, the clock moving a transaction to
//! EXPIRED, reset after a confirmation, hostile text, and every page
//! checked with axe at a phone's and a desktop's width.

use payments_mock_server::MockServer;
use serde_json::json;

use crate::harness::{Browser, PHONE};
use crate::shop::{MERCHANT, call, status};

pub(crate) fn topup(reference: &str) -> serde_json::Value {
    json!({
        "merchantId": MERCHANT,
        "referenceNo": reference,
        "amount": 4990,
        "productCode": "TOPUP",
        "storeId": "KL-01",
        "payerId": "60123456789",
    })
}

pub(crate) async fn initiate(server: &MockServer, body: serde_json::Value) -> String {
    let reply = call(server, "POST", "/api/payments/initiate", Some(body)).await;
    reply["data"]["transactionId"]
        .as_str()
        .unwrap_or_else(|| panic!("initiated: {reply}"))
        .to_owned()
}

pub(crate) fn console(server: &MockServer, page: &str) -> String {
    format!("{}/_mock/ui/{page}", server.base_url())
}

/// The console's `page` reached from the home page's navigation, which
/// then marks `title` as the current page.
pub(crate) async fn reached_by_the_navigation(
    browser: &Browser,
    server: &MockServer,
    page: &str,
    title: &str,
) {
    browser.open(&console(server, "")).await;
    browser.click(&format!("a[href$='_mock/ui/{page}']")).await;
    let tail = format!("/_mock/ui/{page}");
    browser.wait_for_url(|u| u.ends_with(&tail)).await;
    assert_eq!(browser.text("nav [aria-current=page]").await, title);
}

/// The text of each body row of the table `table` (a CSS selector), its
/// white space folded.
pub(crate) async fn row_texts(browser: &Browser, table: &str) -> Vec<String> {
    let rows = browser
        .script(&format!(
            "return [...document.querySelectorAll('{table} tbody tr')]
               .map(r => r.textContent.replace(/\\s+/g, ' ').trim())"
        ))
        .await;
    rows.as_array()
        .expect("rows")
        .iter()
        .map(|r| r.as_str().unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test]
async fn new_requests_and_transactions_appear_without_reloading() {
    let Some(browser) = Browser::start("live rows").await else {
        return;
    };
    let server = MockServer::start().await;
    browser.open(&console(&server, "requests")).await;
    browser
        .wait_for_text("#requests", |t| t.contains("No /api/ request yet"))
        .await;
    let id = initiate(&server, topup("LIVE-1")).await;
    browser
        .wait_for_text("#requests", |t| t.contains("POST /api/payments/initiate"))
        .await;
    // Nothing reloaded the page: a mark set before is still there.
    browser.script("window.mark = 'kept'").await;
    call(&server, "GET", &format!("/api/payments/{id}/status"), None).await;
    let rows = browser
        .wait_for_text("#requests", |t| {
            t.contains(&format!("/api/payments/{id}/status"))
        })
        .await;
    assert!(
        rows.find("status") < rows.find("initiate"),
        "newest first: {rows}"
    );
    assert_eq!(browser.script("return window.mark").await, "kept");

    browser.open(&console(&server, "")).await;
    browser.script("window.mark = 'kept'").await;
    let second = initiate(&server, topup("LIVE-2")).await;
    browser
        .wait_for_text("#rows", |t| t.contains(&second))
        .await;
    assert_eq!(browser.script("return window.mark").await, "kept");
    browser.close().await;
    server.shutdown().await;
}

#[tokio::test]
async fn filter_by_status_then_open_a_detail_page() {
    let Some(browser) = Browser::start("filter and detail").await else {
        return;
    };
    let server = MockServer::start().await;
    let paid = initiate(&server, topup("PAID-1")).await;
    call(
        &server,
        "POST",
        "/api/payments/confirm",
        Some(json!({"transactionId": paid, "referenceNo": "PAID-1"})),
    )
    .await;
    let waiting = initiate(&server, topup("WAITING-1")).await;
    browser.open(&console(&server, "")).await;
    let status_select = browser.wait_for("#f-status").await;
    status_select
        .select_by_value("SUCCESSFUL")
        .await
        .expect("selects");
    browser.click(".filters button[type=submit]").await;
    browser
        .wait_for_url(|u| u.contains("status=SUCCESSFUL"))
        .await;
    let rows = browser.text("#rows").await;
    assert!(rows.contains(&paid) && !rows.contains(&waiting), "{rows}");
    browser.check_page("the filtered list").await;

    browser
        .click(&format!("a[href$='/_mock/ui/transactions/{paid}']"))
        .await;
    browser.wait_for_url(|u| u.ends_with(&paid)).await;
    assert_eq!(browser.text("#status").await, "SUCCESSFUL");
    let page = browser.text("main").await;
    for expected in [
        "PAID-1",
        "49.90 MYR",
        MERCHANT,
        "created",
        "confirmed",
        "POST /api/payments/confirm",
    ] {
        assert!(page.contains(expected), "{expected} missing: {page}");
    }
    browser.check_page("a transaction's detail page").await;
    browser.screenshot("console-transaction").await;
    browser.close().await;
    server.shutdown().await;
}

#[tokio::test]
async fn advancing_the_clock_from_the_console_expires_a_transaction() {
    let Some(browser) = Browser::start("clock").await else {
        return;
    };
    let server = MockServer::start().await;
    let id = initiate(&server, topup("EXPIRE-1")).await;
    browser.open(&console(&server, "clock")).await;
    browser.check_page("the clock page").await;
    browser.screenshot("console-clock").await;
    browser.click(".steps form:nth-child(3) button").await;
    browser
        .wait_for_text(".notice", |t| t.contains("moved forward by 960 s"))
        .await;
    assert!(browser.text("#clock-offset").await.contains("16m"));
    assert_eq!(status(&server, &id).await["status"], "EXPIRED");
    browser
        .open(&console(&server, &format!("transactions/{id}")))
        .await;
    assert_eq!(browser.text("#status").await, "EXPIRED");
    assert!(browser.text(".timeline").await.contains("expired"));

    // A typed advance, and a bad one.
    browser.open(&console(&server, "clock")).await;
    let input = browser.wait_for("#seconds").await;
    // (The field's own pattern stops "-5" in the browser; the server
    // has the last word on the range.)
    input.send_keys("99999999999999").await.expect("types");
    browser.click("#advance").await;
    browser
        .wait_for_text(".problems", |t| t.contains("forward must be at most"))
        .await;
    // The refused field takes the focus and is tied to the message; the
    // title says there is an error.
    assert_eq!(
        browser
            .script("const e = document.activeElement; return [document.title.startsWith('Error: '), e.id, e.getAttribute('aria-invalid'), document.getElementById(e.getAttribute('aria-describedby')).textContent]")
            .await,
        serde_json::json!([true, "seconds", "true", browser.text(".problems").await]),
    );
    browser.check_page("the clock page with a problem").await;
    browser.close().await;
    server.shutdown().await;
}

#[tokio::test]
async fn reset_after_confirming_forgets_everything() {
    let Some(browser) = Browser::start("reset").await else {
        return;
    };
    let server = MockServer::start().await;
    initiate(&server, topup("GONE-1")).await;
    browser.open(&console(&server, "reset")).await;
    assert!(
        browser
            .text("main")
            .await
            .contains("forgets all 1 transactions")
    );
    browser.check_page("the reset page").await;
    browser.screenshot("console-reset").await;
    assert_eq!(
        server.transactions().await.len(),
        1,
        "opening the page resets nothing"
    );
    browser.click("#reset").await;
    browser
        .wait_for_text(".notice", |t| t.contains("The mock was reset"))
        .await;
    assert!(server.transactions().await.is_empty());
    assert!(browser.text("#rows").await.contains("No transactions yet"));
    browser.close().await;
    server.shutdown().await;
}

#[tokio::test]
async fn hostile_text_shows_as_text_and_never_runs() {
    let Some(browser) = Browser::start("hostile text").await else {
        return;
    };
    let server = MockServer::start().await;
    let mut body = topup("<img src=x onerror=\"window.pwned=1\">");
    body["description"] = json!("<script>window.pwned=2</script>\"'&\u{202e}txt.exe\u{1b}[2J");
    let id = initiate(&server, body).await;
    let hostile = reqwest::Client::new()
        .get(format!("{}/api/payments/{id}/status", server.base_url()))
        .header("x-evil", "<svg onload=\"window.pwned=3\">")
        .send()
        .await
        .expect("sent");
    assert_eq!(hostile.status(), 200);
    for page in ["", &format!("transactions/{id}"), "requests", "requests/2"] {
        browser.open(&console(&server, page)).await;
        let text = browser.text("main").await;
        assert!(
            text.contains("<img src=x onerror=") || page.starts_with("requests"),
            "{page}: {text}"
        );
        assert_eq!(
            browser.script("return window.pwned === undefined").await,
            true,
            "{page}"
        );
        assert!(
            browser.client().get_alert_text().await.is_err(),
            "{page}: an alert"
        );
        browser
            .check_page(&format!("console page {page:?} with hostile text"))
            .await;
    }
    browser
        .open(&console(&server, &format!("transactions/{id}")))
        .await;
    let text = browser.text("main").await;
    assert!(text.contains("<script>window.pwned=2</script>"), "{text}");
    assert!(text.contains("<U+202E>txt.exe\u{241b}[2J"), "{text}");
    browser.open(&console(&server, "requests/2")).await;
    assert!(
        browser
            .text("main")
            .await
            .contains("<svg onload=\"window.pwned=3\">")
    );
    browser.close().await;
    server.shutdown().await;
}

#[tokio::test]
async fn every_page_passes_axe_and_fits_a_phone() {
    let Some(browser) = Browser::start("every page").await else {
        return;
    };
    let server = MockServer::start().await;
    for n in 0..3 {
        initiate(&server, topup(&format!("INV-2026-010{n}"))).await;
    }
    let mut bank = json!({
        "merchantId": MERCHANT,
        "referenceNo": "ORDER-17",
        "amount": 12900,
        "productCode": "ONLINEBANKING",
        "storeId": "KL-01",
        "returnUrl": "https://shop.example/back",
    });
    let bank_id = initiate(&server, bank.clone()).await;
    bank["transactionId"] = json!(bank_id);
    call(
        &server,
        "POST",
        "/api/payments/confirm",
        Some(json!({"transactionId": bank_id, "referenceNo": "ORDER-17"})),
    )
    .await;
    for (page, shot) in [
        ("", Some("console-transactions")),
        ("requests", Some("console-requests")),
        ("requests/1", Some("console-request")),
        ("catalog", Some("console-catalog")),
        (&format!("transactions/{bank_id}") as &str, None),
        ("?status=NOPE", None),
        ("?before=01930000-0000-7000-8000-000000000000", None),
        ("transactions/nope", None),
        ("requests/999", None),
        ("no/such/page", None),
    ] {
        browser.open(&console(&server, page)).await;
        browser.check_page(&format!("console page {page:?}")).await;
        if let Some(shot) = shot {
            browser.screenshot(shot).await;
        }
    }
    browser.size(PHONE).await;
    browser.open(&console(&server, "")).await;
    browser.screenshot("console-transactions-phone").await;
    browser.close().await;
    server.shutdown().await;
}

/// The longest values the API accepts, without a break opportunity (a
/// 64-character reference, a 255-character description, a long status
/// path and query, a sandbox's 200-character label, a rule's reference),
/// never make a list page scroll sideways.
#[tokio::test]
async fn the_longest_values_never_widen_a_page() {
    let Some(browser) = Browser::start("long values").await else {
        return;
    };
    let server = MockServer::start().await;
    let reference = "R".repeat(64);
    let mut body = topup(&reference);
    body["description"] = json!("D".repeat(255));
    body["storeId"] = json!("S".repeat(64));
    let id = initiate(&server, body).await;
    let long_query = format!("merchantId={}", "x".repeat(300));
    call(
        &server,
        "GET",
        &format!("/api/payments/reference/{reference}/status?{long_query}"),
        None,
    )
    .await;
    let label = json!({ "label": "L".repeat(200) });
    call(&server, "POST", "/_mock/sandboxes", Some(label)).await;
    let rule = json!({ "fault": "hang", "match": { "referenceNo": "F".repeat(64) } });
    call(&server, "POST", "/_mock/faults", Some(rule)).await;
    for page in [
        "",
        &format!("?reference={reference}") as &str,
        "requests",
        "requests/2",
        &format!("transactions/{id}"),
        "sandboxes",
        "faults",
    ] {
        browser.open(&console(&server, page)).await;
        browser.check_page(&format!("console page {page:?}")).await;
    }
    browser.close().await;
    server.shutdown().await;
}

/// The Coverage page (issue 43): reached from the navigation, the counts
/// of what the application met (a committed fault and its recovery
/// included), every cell named, checked with axe at a phone's and a
/// desktop's width, never wider than the window.
#[tokio::test]
async fn the_coverage_page_counts_what_the_application_met() {
    let Some(browser) = Browser::start("coverage").await else {
        return;
    };
    let server = MockServer::start().await;
    server.inject_faults([payments_mock_server::Fault::CommitThenError]);
    // Stored, then 500; the retry is a duplicate: recovered.
    call(
        &server,
        "POST",
        "/api/payments/initiate",
        Some(topup("COV-1")),
    )
    .await;
    call(
        &server,
        "POST",
        "/api/payments/initiate",
        Some(topup("COV-1")),
    )
    .await;
    let id = initiate(&server, topup("COV-2")).await;
    call(
        &server,
        "POST",
        "/api/payments/confirm",
        Some(json!({"transactionId": id, "referenceNo": "COV-2"})),
    )
    .await;
    call(&server, "GET", "/api/payments/nope/status", None).await;
    call(&server, "GET", "/api/payments/initiate", None).await;

    reached_by_the_navigation(&browser, &server, "coverage", "Coverage").await;
    let covered = server
        .coverage()
        .await
        .matrix()
        .cells()
        .iter()
        .filter(|(_, n)| *n > 0)
        .count();
    let facts = browser.text("#covered").await;
    assert!(facts.starts_with(&format!("{covered} of ")), "{facts}");
    let page = browser.text("main").await;
    for expected in [
        "initiate 400 DUPLICATE_REFERENCE_NO",
        "statusById 404 TRANSACTION_NOT_FOUND",
        "transition INITIATED -> SUCCESSFUL",
        "initiate commit-then-error",
        "initiate 405 METHOD_NOT_ALLOWED",
    ] {
        assert!(page.contains(expected), "{expected} missing: {page}");
    }
    // The fault's row: met once, recovered once.
    let row = browser
        .script(
            "return [...document.querySelectorAll('#faults ~ table tr')]
               .find(r => r.textContent.includes('initiate commit-then-error'))
               .textContent.replace(/\\s+/g, ' ')",
        )
        .await;
    let row = row.as_str().unwrap_or_default().to_owned();
    assert!(row.contains("initiate commit-then-error 1 1"), "{row}");
    browser.check_page("the coverage page").await;
    browser.screenshot("console-coverage").await;
    browser.size(PHONE).await;
    browser.screenshot("console-coverage-phone").await;
    browser.close().await;
    server.shutdown().await;
}
