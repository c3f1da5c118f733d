//! The payer's payment page in Chromium (CONTRACT section 13): open it,
//! check what the payer sees, press Pay, Decline or Cancel, arrive at the
//! merchant's return handler, and check the query and the status; a double
//! click pays once; a second tab's submit changes nothing; the back button
//! shows the outcome.

use fantoccini::actions::{InputSource as _, MOUSE_BUTTON_LEFT, MouseActions, PointerAction};
use payments_mock_server::MockServer;
use payments_mock_server::domain::port::{PaymentPageKey, Store};
use serde_json::json;

use crate::harness::Browser;
use crate::shop::{Shop, confirmed_redirect, online_banking, status};

/// The query parameters of a URL, decoded.
fn query_of(url: &str) -> Vec<(String, String)> {
    url::Url::parse(url)
        .expect("a URL")
        .query_pairs()
        .into_owned()
        .collect()
}

/// The stored payment page of transaction `id`.
async fn stored_page(
    server: &MockServer,
    id: &str,
) -> payments_mock_server::domain::transaction::PaymentPage {
    server
        .state()
        .store
        .with_payment_page(PaymentPageKey::Transaction(id), |_, page| page.clone())
        .await
        .expect("the store answers")
        .expect("a payment page")
}

/// Opens the page, presses `button`, and checks the arrival at the shop:
/// the query names the transaction, the reference and `expected`, and so
/// does the service.
async fn press(button: &str, expected: &str, message: Option<&str>, test: &str) {
    let Some(browser) = Browser::start(test).await else {
        return;
    };
    let server = MockServer::start().await;
    let shop = Shop::start().await;
    let (id, page) = confirmed_redirect(&server, online_banking(&shop, "INV/2026/17")).await;
    browser.open(&page).await;
    assert_eq!(browser.text("[data-testid=amount]").await, "150.00 MYR");
    assert_eq!(browser.text("[data-testid=reference]").await, "INV/2026/17");
    browser.click(button).await;
    let arrived = browser.wait_for_url(|u| u.starts_with(&shop.base)).await;
    assert_eq!(browser.text("h1").await, "Back at the shop");
    assert_eq!(
        query_of(&arrived),
        [
            ("order".to_owned(), "17".to_owned()),
            ("transactionId".to_owned(), id.clone()),
            ("referenceNo".to_owned(), "INV/2026/17".to_owned()),
            ("status".to_owned(), expected.to_owned()),
        ]
    );
    let data = status(&server, &id).await;
    assert_eq!(data["status"], expected);
    assert_eq!(data["message"].as_str(), message);
    assert_eq!(shop.arrivals().len(), 1);
    browser.close().await;
    server.shutdown().await;
}

#[tokio::test]
async fn pay_in_the_browser_lands_on_the_return_handler_successful() {
    press("#pay", "SUCCESSFUL", None, "pay").await;
}

#[tokio::test]
async fn decline_in_the_browser_lands_on_the_return_handler_failed() {
    press("#decline", "FAILED", Some("declined by bank"), "decline").await;
}

#[tokio::test]
async fn cancel_in_the_browser_lands_on_the_return_handler_failed() {
    press("#cancel", "FAILED", Some("cancelled by payer"), "cancel").await;
}

#[tokio::test]
async fn the_page_passes_axe_fits_a_phone_and_escapes_hostile_text() {
    let Some(browser) = Browser::start("page checks").await else {
        return;
    };
    let server = MockServer::start().await;
    let shop = Shop::start().await;
    let (_, page) = confirmed_redirect(&server, online_banking(&shop, "INV-2026-0101")).await;
    browser.open(&page).await;
    browser.check_page("the open payment page").await;
    browser.size(crate::harness::PHONE).await;
    let shot = browser.screenshot("payment-page").await;
    assert!(std::fs::metadata(&shot).is_ok_and(|m| m.len() > 1000));
    browser.size(crate::harness::DESKTOP).await;

    // Hostile merchant text is shown as text: nothing runs.
    let mut body = online_banking(&shop, "<img src=x onerror=\"window.pwned=1\">");
    body["description"] = json!("<script>window.pwned=2</script>\u{202e}evil \"quoted\" & more");
    let (_, page) = confirmed_redirect(&server, body).await;
    browser.open(&page).await;
    assert_eq!(
        browser.text("[data-testid=reference]").await,
        "<img src=x onerror=\"window.pwned=1\">"
    );
    assert!(
        browser
            .text("[data-testid=description]")
            .await
            .starts_with("<script>window.pwned=2</script>")
    );
    assert_eq!(
        browser.script("return window.pwned === undefined").await,
        true
    );
    browser.check_page("a payment page with hostile text").await;

    // Decided: the outcome page passes too.
    browser.click("#cancel").await;
    browser.wait_for_url(|u| u.starts_with(&shop.base)).await;
    browser.open(&page).await;
    assert_eq!(browser.text("h1").await, "Payment cancelled");
    browser.check_page("a decided payment page").await;
    browser.close().await;
    server.shutdown().await;
}

#[tokio::test]
async fn a_double_click_on_pay_pays_once() {
    let Some(browser) = Browser::start("double click").await else {
        return;
    };
    let server = MockServer::start().await;
    let shop = Shop::start().await;
    let (id, page) = confirmed_redirect(&server, online_banking(&shop, "DBL-1")).await;
    browser.open(&page).await;
    let pay = browser.wait_for("#pay").await;
    let double_click = MouseActions::new("mouse".to_owned())
        .then(PointerAction::MoveToElement {
            element: pay,
            duration: None,
            x: 0.0,
            y: 0.0,
        })
        .then(PointerAction::Down {
            button: MOUSE_BUTTON_LEFT,
        })
        .then(PointerAction::Up {
            button: MOUSE_BUTTON_LEFT,
        })
        .then(PointerAction::Down {
            button: MOUSE_BUTTON_LEFT,
        })
        .then(PointerAction::Up {
            button: MOUSE_BUTTON_LEFT,
        });
    browser
        .client()
        .perform_actions(double_click)
        .await
        .expect("the double click is performed");
    browser.wait_for_url(|u| u.starts_with(&shop.base)).await;
    let first = status(&server, &id).await;
    assert_eq!(first["status"], "SUCCESSFUL");
    // Chromium turns a double click into one submit (the second click's
    // navigation replaces the first before it is sent), so whether one or
    // two reached the page, one decided. That a second submit reaching the
    // page changes nothing is the next test's, with two tabs.
    for arrival in shop.arrivals() {
        assert!(arrival.ends_with("status=SUCCESSFUL"), "{arrival}");
    }
    let page = stored_page(&server, &id).await;
    assert_eq!(
        page.decision.map(|d| d.action),
        Some(payments_mock_server::PayerAction::Pay)
    );
    assert!(page.later_submits <= 1, "{}", page.later_submits);
    assert_eq!(status(&server, &id).await, first);
    browser.close().await;
    server.shutdown().await;
}

/// The payer has the page open in two tabs, pays in the first, then
/// presses Decline in the second, still showing its buttons: that submit
/// reaches the page, changes nothing, and lands at the shop with the real
/// outcome.
#[tokio::test]
async fn a_second_tab_submitting_after_paying_changes_nothing() {
    let Some(browser) = Browser::start("second tab").await else {
        return;
    };
    let server = MockServer::start().await;
    let shop = Shop::start().await;
    let (id, page) = confirmed_redirect(&server, online_banking(&shop, "TAB-1")).await;
    let client = browser.client();
    let first = client.window().await.expect("the first tab");
    browser.open(&page).await;
    let second = client.new_window(true).await.expect("a second tab").handle;
    client
        .switch_to_window(second.clone())
        .await
        .expect("to the second tab");
    browser.open(&page).await;
    browser.wait_for("#decline").await;

    client
        .switch_to_window(first)
        .await
        .expect("to the first tab");
    browser.click("#pay").await;
    browser.wait_for_url(|u| u.starts_with(&shop.base)).await;
    assert_eq!(status(&server, &id).await["status"], "SUCCESSFUL");

    client
        .switch_to_window(second)
        .await
        .expect("back to the second tab");
    browser.click("#decline").await;
    let arrived = browser.wait_for_url(|u| u.starts_with(&shop.base)).await;
    assert!(arrived.ends_with("status=SUCCESSFUL"), "{arrived}");
    assert_eq!(status(&server, &id).await["status"], "SUCCESSFUL");
    let page = stored_page(&server, &id).await;
    assert_eq!(
        page.decision.map(|d| d.action),
        Some(payments_mock_server::PayerAction::Pay)
    );
    assert_eq!(page.later_submits, 1, "the second tab's submit arrived");
    assert_eq!(shop.arrivals().len(), 2);
    browser.close().await;
    server.shutdown().await;
}

#[tokio::test]
async fn the_back_button_after_paying_shows_the_outcome_and_never_pays_twice() {
    let Some(browser) = Browser::start("back button").await else {
        return;
    };
    let server = MockServer::start().await;
    let shop = Shop::start().await;
    let (id, page) = confirmed_redirect(&server, online_banking(&shop, "BACK-1")).await;
    browser.open(&page).await;
    browser.script("window.mark = 'old document'").await;
    browser.click("#pay").await;
    browser.wait_for_url(|u| u.starts_with(&shop.base)).await;
    let paid = status(&server, &id).await;
    browser.client().back().await.expect("back");
    browser.wait_for_url(|u| u == page).await;
    // A fresh document, not the one kept in the back/forward cache.
    assert_eq!(
        browser.script("return window.mark === undefined").await,
        true
    );
    assert_eq!(browser.text("h1").await, "Payment successful");
    let back_link = browser.wait_for("#return").await;
    let href = back_link
        .attr("href")
        .await
        .expect("an attribute")
        .expect("a link back");
    assert!(href.ends_with("status=SUCCESSFUL"), "{href}");
    assert!(
        browser
            .client()
            .find(fantoccini::Locator::Css("#pay"))
            .await
            .is_err(),
        "no Pay button once decided"
    );
    back_link.click().await.expect("follows the link");
    browser.wait_for_url(|u| u.starts_with(&shop.base)).await;
    assert_eq!(status(&server, &id).await, paid);
    browser.close().await;
    server.shutdown().await;
}

/// The checks can fail: a page with an image without text and a box wider
/// than the phone is reported by both.
#[tokio::test]
async fn the_page_checks_catch_a_violation_and_sideways_scrolling() {
    let Some(browser) = Browser::start("checks can fail").await else {
        return;
    };
    let server = MockServer::start().await;
    let shop = Shop::start().await;
    let (_, page) = confirmed_redirect(&server, online_banking(&shop, "AXE-1")).await;
    browser.open(&page).await;
    browser
        .script(
            "const img = document.createElement('img'); img.src = 'data:,'; \
             document.querySelector('main').appendChild(img); \
             const wide = document.createElement('div'); wide.style.width = '2000px'; \
             wide.textContent = 'wide'; document.body.appendChild(wide);",
        )
        .await;
    let violations = browser.axe().await;
    assert!(
        violations.iter().any(|v| v.starts_with("image-alt")),
        "{violations:?}"
    );
    let overflow = browser
        .script(
            "return document.documentElement.scrollWidth - document.documentElement.clientWidth",
        )
        .await;
    assert!(overflow.as_i64().is_some_and(|o| o > 0), "{overflow}");
    browser.close().await;
    server.shutdown().await;
}

#[tokio::test]
async fn a_sandboxs_payment_page_is_under_its_prefix_and_pays_in_the_sandbox_alone() {
    let Some(browser) = Browser::start("sandbox payment page").await else {
        return;
    };
    let server = MockServer::start().await;
    let sandbox = server.sandbox();
    let shop = Shop::start().await;
    let (id, page) = confirmed_redirect(&sandbox, online_banking(&shop, "INV/2026/18")).await;
    assert!(
        page.starts_with(&format!("{}/pay/", sandbox.base_url())),
        "{page}"
    );
    browser.open(&page).await;
    assert_eq!(browser.text("[data-testid=reference]").await, "INV/2026/18");
    browser.check_page("a sandbox's payment page").await;
    browser.click("#pay").await;
    let arrived = browser.wait_for_url(|u| u.starts_with(&shop.base)).await;
    assert!(
        query_of(&arrived).contains(&("status".to_owned(), "SUCCESSFUL".to_owned())),
        "{arrived}"
    );
    assert_eq!(status(&sandbox, &id).await["status"], "SUCCESSFUL");
    assert!(server.transactions().await.is_empty(), "the root has none");
    browser.close().await;
    server.shutdown().await;
}

/// Whether the open page has the mock's stylesheet applied: the body's
/// margin is the stylesheet's 0, not the browser's default 8 px, and the
/// card is bounded.
async fn is_styled(browser: &Browser) -> bool {
    let style = browser
        .script(
            "const card = document.querySelector('main.card');
             return [getComputedStyle(document.body).marginTop,
                     card ? getComputedStyle(card).maxWidth : ''];",
        )
        .await;
    style[0] == "0px" && style[1] != "none" && style[1] != ""
}

/// With `--admin-key`, the payer (no key, no session) gets a sandbox's
/// payment page styled: it links the root's stylesheet, open to all, not
/// the sandbox's own, which answers a stranger as an unknown id does.
#[tokio::test]
async fn a_sandboxs_payment_page_is_styled_for_its_payer_behind_an_admin_key() {
    let Some(browser) = Browser::start("sandbox payment page, admin key").await else {
        return;
    };
    let server = MockServer::builder()
        .admin_key("adm_page_style_77c1")
        .start()
        .await
        .expect("a server");
    let sandbox = server.sandbox();
    let shop = Shop::start().await;
    let (_, page) = confirmed_redirect(&sandbox, online_banking(&shop, "INV/2026/19")).await;
    browser.open(&page).await;
    assert_eq!(browser.text("[data-testid=reference]").await, "INV/2026/19");
    assert!(is_styled(&browser).await, "the page is unstyled");
    browser
        .check_page("a sandbox's payment page behind an admin key")
        .await;
    // A token the sandbox does not know: an unknown id's page, styled too.
    browser
        .open(&format!("{}/pay/NOSUCHTOKEN", sandbox.base_url()))
        .await;
    assert_eq!(browser.text("h1").await, "No such payment page");
    assert!(is_styled(&browser).await, "the 404 page is unstyled");
    browser.check_page("a sandbox's unknown payment page").await;
    browser.close().await;
    server.shutdown().await;
}
