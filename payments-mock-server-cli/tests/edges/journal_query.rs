//! A key sent in the query string (`?api_key=…&token=…&access_token=…`)
//! was kept in clear in the journal, shown to the admin and its merchant
//! (`/_mock/requests`, the console, `payments tail`), while a header of the
//! same name was redacted. The query's parameters named as credentials are
//! now `[redacted]`, the names and the order kept.

use axum::http::Method;
use serde_json::Value;

use crate::common::{MERCHANT, get, request, send, service};

const CANARY: &str = "sk_QUERY_CANARY";

#[tokio::test]
async fn a_key_in_the_query_string_is_redacted_in_the_journal_and_the_console() {
    let (_, router) = service();
    let asked = format!(
        "/api/payments/reference/R-1/status?merchantId={MERCHANT}&api_key={CANARY}1\
         &token={CANARY}2&access_token={CANARY}3&api%5Fkey={CANARY}4&page=2"
    );
    let answered = send(&router, request(Method::GET, &asked, None)).await;
    assert_eq!(answered.status.as_u16(), 404, "{:?}", answered.body);

    let journal = get(&router, "/_mock/requests").await;
    let raw = String::from_utf8_lossy(&journal.raw);
    assert!(!raw.contains(CANARY), "{raw}");
    let entries = journal.data()["items"].as_array().expect("items");
    let queries: Vec<&Value> = entries.iter().map(|e| &e["query"]).collect();
    assert_eq!(
        queries,
        [&Value::from(format!(
            "merchantId={MERCHANT}&api_key=[redacted]&token=[redacted]\
             &access_token=[redacted]&api%5Fkey=[redacted]&page=2"
        ))],
        "{raw}"
    );

    // The console's list and the request's own page.
    for page in ["/_mock/ui/requests", "/_mock/ui/requests/1"] {
        let shown = get(&router, page).await;
        let html = String::from_utf8_lossy(&shown.raw);
        assert!(shown.status.is_success(), "{page}: {}", shown.status);
        assert!(!html.contains(CANARY), "{page}: {html}");
    }
}
