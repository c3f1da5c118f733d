//! The console's live rows in Chromium: a poll that finds nothing new
//! leaves the rows (and the keyboard's focus) alone, a change keeps the
//! focus on the same link, and rows that stop updating (the server gone,
//! the session ended) say so; the bar's focus ring is seen on the bar.

use payments_mock_server::MockServer;
use serde_json::json;

use crate::harness::Browser;
use crate::shop::{MERCHANT, call};

async fn initiate(server: &MockServer, reference: &str) -> String {
    let body = json!({
        "merchantId": MERCHANT,
        "referenceNo": reference,
        "amount": 4990,
        "productCode": "TOPUP",
        "storeId": "KL-01",
        "payerId": "60123456789",
    });
    let reply = call(server, "POST", "/api/payments/initiate", Some(body)).await;
    reply["data"]["transactionId"]
        .as_str()
        .unwrap_or_else(|| panic!("initiated: {reply}"))
        .to_owned()
}

/// Counts the polls the page's script has seen answered (after which
/// their rows are drawn: a tick waits for the one before it), in a line
/// at the page's end the test reads.
pub(crate) const COUNT_POLLS: &str = "const out = document.createElement('output'); out.id = 'polls'; \
    out.textContent = '0'; document.body.append(out); const f = window.fetch; \
    window.fetch = (...a) => f(...a).finally(() => { out.textContent = String(Number(out.textContent) + 1); });";

/// Waits until the page's script has finished `n` more polls.
pub(crate) async fn polls(browser: &Browser, n: u64) {
    let start: u64 = browser.text("#polls").await.parse().expect("a count");
    browser
        .wait_for_text("#polls", |t| {
            t.parse::<u64>().is_ok_and(|seen| seen >= start + n)
        })
        .await;
}

fn focused() -> &'static str {
    "const e = document.activeElement; return e ? e.tagName + ' ' + (e.getAttribute('href') || '') : ''"
}

#[tokio::test]
async fn a_poll_keeps_the_rows_and_the_keyboards_focus() {
    let Some(browser) = Browser::start("live focus").await else {
        return;
    };
    let server = MockServer::start().await;
    let first = initiate(&server, "FOCUS-1").await;
    browser
        .open(&format!("{}/_mock/ui/", server.base_url()))
        .await;
    browser.script(COUNT_POLLS).await;
    browser
        .script("window.row = document.querySelector('#rows tr'); document.querySelector('#rows a').focus()")
        .await;
    let link = browser.script(focused()).await;
    assert!(
        link.as_str()
            .is_some_and(|l| l.starts_with("A ") && l.ends_with(&first)),
        "{link}"
    );
    // Nothing changed: the rows the server drew stay, and so does focus.
    polls(&browser, 2).await;
    assert_eq!(
        browser
            .script("return window.row === document.querySelector('#rows tr')")
            .await,
        true,
        "the rows were replaced though nothing changed"
    );
    assert_eq!(browser.script(focused()).await, link);
    // A new transaction: the rows are replaced, focus stays on the link.
    let second = initiate(&server, "FOCUS-2").await;
    browser
        .wait_for_text("#rows", |t| t.contains(&second))
        .await;
    assert_eq!(browser.script(focused()).await, link);
    browser.close().await;
    server.shutdown().await;
}

#[tokio::test]
async fn live_rows_that_stop_updating_say_so() {
    let Some(browser) = Browser::start("live stopped").await else {
        return;
    };
    let server = MockServer::start().await;
    initiate(&server, "STALE-1").await;
    for page in ["", "requests"] {
        browser
            .open(&format!("{}/_mock/ui/{page}", server.base_url()))
            .await;
        let note = browser.wait_for("[role=status].live-note").await;
        assert_eq!(note.text().await.expect("text"), "", "{page}");
        assert!(
            browser.text(".summary").await.contains("by themselves"),
            "{page}"
        );
    }
    server.shutdown().await;
    let said = browser
        .wait_for_text(".live-note", |t| t.contains("Updates stopped"))
        .await;
    assert!(said.contains("cannot be reached"), "{said}");
    let summary = browser.text(".summary").await;
    assert!(!summary.contains("by themselves"), "{summary}");
    assert_eq!(
        browser
            .script("return document.querySelector('[data-stale]') !== null")
            .await,
        true
    );
    browser.check_page("live rows stopped").await;
    browser.close().await;
}

const ADMIN_KEY: &str = "adm_browser_live_7d1e";

#[tokio::test]
async fn an_ended_session_and_the_bars_focus_ring_are_seen() {
    let Some(browser) = Browser::start("live session").await else {
        return;
    };
    let server = MockServer::builder()
        .admin_key(ADMIN_KEY)
        .start()
        .await
        .expect("a guarded mock starts");
    browser
        .open(&format!("{}/_mock/ui/sign-in", server.base_url()))
        .await;
    let field = browser.wait_for("#key").await;
    field.send_keys(ADMIN_KEY).await.expect("types");
    browser.click("#sign-in").await;
    browser.wait_for("#sign-out").await;
    // The Sign out button's focus ring, reached by keyboard, stands out
    // from the bar by 3:1 at least (WCAG 1.4.11).
    browser
        .script("document.querySelector('#sign-out').focus()")
        .await;
    let button = browser.wait_for("#sign-out").await;
    button.send_keys("\u{e008}").await.expect("a key pressed");
    let ratio = browser
        .script(
            "const b = document.querySelector('#sign-out'); \
             const lum = c => { const v = c.match(/\\d+(\\.\\d+)?/g).slice(0, 3).map(Number).map(x => x / 255) \
               .map(x => x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4); \
               return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2]; }; \
             const ring = lum(getComputedStyle(b).outlineColor); \
             const bar = lum(getComputedStyle(document.querySelector('.bar')).backgroundColor); \
             return b.matches(':focus-visible') ? (Math.max(ring, bar) + 0.05) / (Math.min(ring, bar) + 0.05) : -1;",
        )
        .await
        .as_f64()
        .expect("a ratio");
    assert!(
        ratio >= 3.0,
        "the focus ring's contrast on the bar: {ratio}"
    );
    // The session ends (its cookie gone): the rows say to sign in again.
    browser
        .client()
        .delete_all_cookies()
        .await
        .expect("cookies gone");
    let said = browser
        .wait_for_text(".live-note", |t| t.contains("Updates stopped"))
        .await;
    assert!(said.contains("Sign in again"), "{said}");
    browser.close().await;
    server.shutdown().await;
}
