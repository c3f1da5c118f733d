//! What code generators and importers (openapi-python-client,
//! openapi-typescript, openapi-generator, Postman's openapi-to-postmanv2)
//! make of the document: amounts read exactly, and requests built from the
//! examples alone (every optional parameter sent with its example, a path
//! example put into the path as it is) that do what they say.

use serde_json::Value;

use super::generate;
use crate::state::AppState;

/// Issue: the major-unit `amount` was a bare `number`, which generators
/// type as a float or a double: 9007199254740991 MYR minor units, sent as
/// 90071992547409.91, was read as 90071992547409.9. Every such amount is
/// `format: decimal` (a generator's decimal type), still a JSON number,
/// and says how to read it exactly.
#[test]
fn amounts_in_major_units_are_decimals() {
    let doc = generate(&AppState::default());
    for schema in ["StatusData", "ConfirmData", "PayerData", "AdminTransaction"] {
        let amount = &doc["components"]["schemas"][schema]["properties"]["amount"];
        assert_eq!(amount["type"], "number", "{schema}: {amount}");
        assert_eq!(amount["format"], "decimal", "{schema}: {amount}");
        let description = amount["description"].as_str().unwrap_or_default();
        assert!(
            description.contains("never into a binary float"),
            "{schema}: {description}"
        );
    }
    // The minor-unit amounts stay integers.
    let initiate = &doc["components"]["schemas"]["InitiateData"]["properties"]["amount"];
    assert_eq!(initiate["type"], "integer", "{initiate}");
}

/// The example of parameter `name` of the operation at `path`, `method`.
fn example<'a>(doc: &'a Value, path: &str, method: &str, name: &str) -> &'a Value {
    doc["paths"][path][method]["parameters"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["name"] == name)
        .map_or(&Value::Null, |p| &p["example"])
}

/// Issue: imported into Postman, the document's requests injected real
/// faults (the optional `X-Mock-Fault` had no example, so the importer
/// made one up from its pattern: `internal-error`, `delay=60000`), put
/// the reference example `INV/2026/0001` into the path as it was (404),
/// and sent made-up `merchantId` and `after` values. Built from the
/// examples alone, as the importer builds them, an initiate and the read
/// of its reference work; the journal and the transactions list with
/// their examples show them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_built_from_the_examples_work() {
    let server = crate::MockServer::builder()
        .start()
        .await
        .expect("a server");
    let base = server.base_url();
    let http = reqwest::Client::new();
    let doc: Value = http
        .get(format!("{base}/openapi.json"))
        .send()
        .await
        .expect("answered")
        .json()
        .await
        .expect("the document");
    let get = |url: String| {
        let http = http.clone();
        async move {
            let answer = http.get(&url).send().await.expect("answered");
            let status = answer.status();
            let body: Value = answer.json().await.expect("json");
            assert_eq!(status, 200, "{url}: {body}");
            body
        }
    };

    let initiate = "/api/payments/initiate";
    let fault = example(&doc, initiate, "post", "X-Mock-Fault");
    assert_eq!(*fault, "delay=0", "an example that injects nothing");
    let examples =
        &doc["paths"][initiate]["post"]["requestBody"]["content"]["application/json"]["examples"];
    let body = examples
        .as_object()
        .and_then(|e| e.values().next())
        .map(|e| e["value"].clone())
        .expect("an initiate example");
    let answer = http
        .post(format!("{base}{initiate}"))
        .header("X-Mock-Fault", fault.as_str().unwrap_or_default())
        .json(&body)
        .send()
        .await
        .expect("answered");
    assert_eq!(answer.status(), 200, "{:?}", answer.text().await);

    let by_reference = "/api/payments/reference/{referenceNo}/status";
    let reference = example(&doc, by_reference, "get", "referenceNo")
        .as_str()
        .expect("a reference example");
    let merchant = example(&doc, by_reference, "get", "merchantId")
        .as_str()
        .expect("a merchantId example");
    assert_eq!(body["referenceNo"], reference);
    assert_eq!(body["merchantId"], merchant);
    // As the importer puts it: into the path as it is.
    let read = get(format!(
        "{base}/api/payments/reference/{reference}/status?merchantId={merchant}"
    ))
    .await;
    assert_eq!(read["data"]["referenceNo"], reference, "{read}");

    let merchant = example(&doc, "/_mock/transactions", "get", "merchantId");
    let listed = get(format!(
        "{base}/_mock/transactions?merchantId={}",
        merchant.as_str().expect("a merchantId example")
    ))
    .await;
    assert_eq!(listed["data"]["items"][0]["referenceNo"], reference);
    let after = example(&doc, "/_mock/requests", "get", "after");
    let path = example(&doc, "/_mock/requests", "get", "path");
    let journal = get(format!(
        "{base}/_mock/requests?after={after}&path={}",
        path.as_str().expect("a path example")
    ))
    .await;
    let seen = &journal["data"]["items"][0];
    assert_eq!(seen["path"], initiate, "{journal}");
    assert_eq!(seen["status"], 200, "{journal}");
    server.shutdown().await;
}
