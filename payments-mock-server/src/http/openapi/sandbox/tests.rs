use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::*;

/// `path` with each `{parameter}` replaced by the operation's example of
/// it (`x` where it has none).
fn filled(path: &str, operation: &Value) -> String {
    let mut url = path.to_owned();
    for parameter in operation["parameters"].as_array().into_iter().flatten() {
        if parameter["in"] == "path"
            && let Some(name) = parameter["name"].as_str()
        {
            let example = parameter["example"].as_str().unwrap_or("x");
            url = url.replace(&format!("{{{name}}}"), example);
        }
    }
    url
}

/// Issue: a sandbox's `/openapi.json` listed `/_mock/sandboxes`, which a
/// sandbox answers 404 `NOT_FOUND` "no such route" (sandboxes do not
/// nest), an answer those operations do not document. Its document lists
/// every operation a sandbox serves, and only those: each operation left,
/// asked under a live sandbox, reaches a route (never the router's 404 or
/// 405); no link leads to an operation gone, every schema named is there,
/// and the schemas only the gone operations named are gone with them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sandboxs_document_lists_only_what_a_sandbox_serves() {
    let server = crate::MockServer::builder()
        .start()
        .await
        .expect("a server");
    let base = server.base_url();
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("a client");
    let root: Value = http
        .get(format!("{base}/openapi.json"))
        .send()
        .await
        .expect("answered")
        .json()
        .await
        .expect("the document");
    let made: Value = http
        .post(format!("{base}/_mock/sandboxes"))
        .json(&json!({}))
        .send()
        .await
        .expect("answered")
        .json()
        .await
        .expect("json");
    let sandbox = made["data"]["baseUrl"]
        .as_str()
        .expect("a sandbox")
        .to_owned();

    let mut doc = root.clone();
    for_sandbox(&mut doc);
    for path in ROOT_ONLY {
        assert!(root["paths"][path].is_object(), "the root serves {path}");
        assert!(doc["paths"].get(path).is_none(), "a sandbox lists {path}");
    }
    let mut asked = 0;
    let mut ids = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, operation) in item.as_object().expect("operations") {
            ids.insert(operation["operationId"].as_str().expect("an id").to_owned());
            let url = format!("{sandbox}{}", filled(path, operation));
            let method = method.to_uppercase().parse().expect("a method");
            let answer = http
                .request(method, &url)
                .header("content-type", "application/json")
                .body("")
                .send()
                .await
                .expect("answered");
            let status = answer.status();
            let text = answer.text().await.expect("a body");
            assert_ne!(status, 405, "{url}: {text}");
            let unrouted = serde_json::from_str::<Value>(&text).is_ok_and(|body| {
                body["errorCode"] == "NOT_FOUND" && body["message"] == "no such route"
            });
            assert!(
                !unrouted,
                "{path} is listed, but a sandbox has no such route"
            );
            asked += 1;
        }
    }
    assert!(asked >= 20, "{asked} operations");
    // No link to an operation gone; every schema named is there.
    let mut named = BTreeSet::new();
    refs(&doc, &mut named);
    for name in &named {
        assert!(
            doc["components"]["schemas"][name].is_object(),
            "{name} is named but gone"
        );
    }
    for operation in doc["paths"]
        .as_object()
        .into_iter()
        .flat_map(|paths| paths.values())
        .filter_map(Value::as_object)
        .flat_map(|ops| ops.values())
    {
        for answer in operation["responses"].as_object().into_iter().flatten() {
            for link in answer.1["links"].as_object().into_iter().flatten() {
                let target = link.1["operationId"].as_str().expect("an operationId");
                assert!(ids.contains(target), "a link to {target}");
            }
        }
    }
    for gone in ["Sandbox", "SandboxList", "SandboxRequest"] {
        assert!(root["components"]["schemas"][gone].is_object(), "{gone}");
        assert!(doc["components"]["schemas"].get(gone).is_none(), "{gone}");
    }
    assert_eq!(
        doc["components"]["schemas"].as_object().map(|s| s.len()),
        root["components"]["schemas"]
            .as_object()
            .map(|s| s.len() - 3),
        "only the sandboxes' schemas go"
    );
    server.shutdown().await;
}
