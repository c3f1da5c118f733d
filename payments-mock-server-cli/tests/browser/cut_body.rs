//! A request whose body the journal cut (its newest bodies are kept whole
//! up to 512 KiB in all, an older one keeps its first KiB): its console
//! page says so, with the whole length, and passes axe at a phone's and a
//! desktop's width.

use payments_mock_server::MockServer;

use crate::harness::{Browser, PHONE};

#[tokio::test]
async fn a_cut_body_says_so_on_its_page() {
    let Some(browser) = Browser::start("cut body").await else {
        return;
    };
    let server = MockServer::start().await;
    // Ten bodies of 64 KiB: the journal cuts the two oldest.
    let http = reqwest::Client::new();
    for _ in 0..10 {
        http.post(format!("{}/api/payments/initiate", server.base_url()))
            .header("content-type", "application/json")
            .body(format!("<b>{}", "x".repeat(64 * 1024 - 3)))
            .send()
            .await
            .expect("the mock answers");
    }
    let page = format!("{}/_mock/ui/requests/1", server.base_url());
    browser.open(&page).await;
    browser.check_page("a cut body's request page").await;
    let said = browser.text("#body-cut").await;
    assert!(said.contains("first 1 KiB of 65,536 bytes"), "{said}");
    browser.size(PHONE).await;
    browser.open(&page).await;
    browser.check_page("a cut body's request page, phone").await;
    browser.close().await;
    server.shutdown().await;
}
