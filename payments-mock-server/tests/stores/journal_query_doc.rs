//! The OpenAPI document says what the journal's `query` holds: as sent,
//! with a credential's value redacted.

use payments_mock_server::MockServer;
use serde_json::Value;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_journals_query_is_described_with_its_redaction() {
    let server = MockServer::builder().start().await.expect("a server");
    let document: Value = reqwest::get(format!("{}/openapi.json", server.base_url()))
        .await
        .expect("an answer")
        .json()
        .await
        .expect("the document");
    let query = &document["components"]["schemas"]["JournalItem"]["properties"]["query"];
    assert_eq!(
        query["description"],
        "As sent, still percent-encoded; a parameter whose name says it\n\
         carries a credential has the value `[redacted]`.",
        "{query}"
    );
    server.shutdown().await;
}
