//! A sandbox's `/openapi.json`, as served, leaves out `/_mock/sandboxes`
//! (sandboxes do not nest: a sandbox answers those routes 404); the
//! root's keeps them. The sandbox's listed them, which a strict
//! generated client pointed at the sandbox then met undocumented.

use payments_mock_server::MockServer;
use serde_json::{Value, json};

const ROOT_ONLY: [&str; 2] = ["/_mock/sandboxes", "/_mock/sandboxes/{sandboxId}"];

async fn document(http: &reqwest::Client, base: &str) -> Value {
    http.get(format!("{base}/openapi.json"))
        .send()
        .await
        .expect("answered")
        .json()
        .await
        .expect("the document")
}

#[tokio::test]
async fn a_sandboxs_served_document_lists_no_sandboxes_and_the_roots_does() {
    let server = MockServer::start().await;
    let base = server.base_url();
    let http = reqwest::Client::new();
    let made: Value = http
        .post(format!("{base}/_mock/sandboxes"))
        .json(&json!({}))
        .send()
        .await
        .expect("answered")
        .json()
        .await
        .expect("json");
    let sandbox = made["data"]["baseUrl"].as_str().expect("a sandbox");

    let root = document(&http, &base).await;
    let inside = document(&http, sandbox.trim_end_matches('/')).await;
    for path in ROOT_ONLY {
        assert!(root["paths"][path].is_object(), "the root lists {path}");
        assert!(
            inside["paths"].get(path).is_none(),
            "a sandbox lists {path}"
        );
    }
    // The rest is the root's, with the sandbox's own server.
    assert!(inside["paths"]["/api/payments/initiate"].is_object());
    assert_eq!(
        inside["servers"][0]["url"].as_str(),
        Some(sandbox.trim_end_matches('/'))
    );
    // The root's is served again unchanged after a sandbox's was made.
    assert_eq!(document(&http, &base).await, root);
    server.shutdown().await;
}
