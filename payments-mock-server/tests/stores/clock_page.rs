//! The console's clock page says how far ahead the clock is with days as
//! the largest unit: after an advance of 365 days it said "11months 30days
//! 3h 50m 24s" (humantime's months of 30.44 days).

use payments_mock_server::{MockServer, StoreSpec};
use serde_json::json;

#[tokio::test]
async fn the_clock_page_says_a_year_ahead_in_days() {
    let server = MockServer::builder()
        .store(StoreSpec::Memory)
        .start()
        .await
        .expect("a server");
    let base = server.base_url();
    let client = reqwest::Client::new();
    let advanced = client
        .post(format!("{base}/_mock/clock/advance"))
        .json(&json!({"seconds": 31_536_000}))
        .send()
        .await
        .expect("an answer");
    assert_eq!(advanced.status(), 200);
    let page = client
        .get(format!("{base}/_mock/ui/clock"))
        .send()
        .await
        .expect("an answer")
        .text()
        .await
        .expect("a page");
    assert!(
        page.contains(r#"<dd id="clock-offset">365 days (31536000 s)</dd>"#),
        "{page}"
    );
    server.shutdown().await;
}
