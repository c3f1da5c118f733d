//! The pages a person sees while the database behind `--store` is gone
//! (CONTRACT section 15): the console and the payment page say so, in a
//! page that passes axe and fits a phone. The outage: the test's own
//! PostgreSQL database dropped under a running mock (the server stays up
//! for the other tests).

use payments_mock_server::MockServer;
use serde_json::json;

use crate::harness::Browser;
use crate::shop::{MERCHANT, call};

#[path = "../../../payments-mock-server/tests/stores/backends.rs"]
mod backends;

#[tokio::test]
async fn pages_say_the_store_is_unavailable() {
    let Some(url) = backends::postgres_database("pages_say_the_store_is_unavailable").await else {
        return;
    };
    let Some(browser) = Browser::start("store down").await else {
        return;
    };
    let server = MockServer::builder()
        .store(url.parse().expect("a store URL"))
        .start()
        .await
        .expect("starts on PostgreSQL");
    let initiated = call(
        &server,
        "POST",
        "/api/payments/initiate",
        Some(json!({
            "merchantId": MERCHANT, "referenceNo": "DOWN-1", "amount": 4990,
            "productCode": "ONLINEBANKING", "storeId": "KL-01",
            "returnUrl": "https://shop.example/back",
        })),
    )
    .await;
    let id = initiated["data"]["transactionId"]
        .as_str()
        .expect("an id")
        .to_owned();
    call(
        &server,
        "POST",
        "/api/payments/confirm",
        Some(json!({ "transactionId": id, "referenceNo": "DOWN-1" })),
    )
    .await;
    let page = server.payment_url(&id).await.expect("a payment page");

    // The outage: the database is dropped, its connections ended.
    let server_url = backends::postgres_server("store down").expect("checked above");
    let (admin, connection) = tokio_postgres::connect(&server_url, tokio_postgres::NoTls)
        .await
        .expect("connects");
    tokio::spawn(connection);
    let name = url::Url::parse(&url)
        .expect("a URL")
        .path()
        .trim_start_matches('/')
        .to_owned();
    admin
        .batch_execute(&format!("DROP DATABASE {name} WITH (FORCE)"))
        .await
        .expect("dropped");

    for (what, address) in [
        ("the console", format!("{}/_mock/ui/", server.base_url())),
        ("the payment page", page),
    ] {
        browser.open(&address).await;
        let heading = browser.text("h1").await;
        assert!(heading.contains("unavailable"), "{what}: {heading}");
        let body = browser.text("main").await;
        assert!(body.contains("database"), "{what}: {body}");
        assert!(
            !body.contains(&server_url),
            "{what}: no URL with its password"
        );
        browser.check_page(what).await;
        browser
            .screenshot(&format!("store-unavailable-{}", what.replace(' ', "-")))
            .await;
    }
    browser.close().await;
}
