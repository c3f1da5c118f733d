//! The test controls of CONTRACT section 19, driven for the schema test:
//! `/_mock/faults` and `/_mock/sandboxes`, every answer of each.

use axum::http::Method;
use serde_json::json;

use super::Driver;

/// `/_mock/faults` (CONTRACT section 19): every answer of its four
/// operations. The rules installed name a reference nothing sends.
pub(super) async fn drive_fault_rules(d: &mut Driver<'_>) {
    let rule = json!({"match": {"endpoint": "initiate", "referenceNo": "NEVER-SENT"}, "fault": "commit-then-hang", "times": 0});
    let reply = d.json(Method::POST, "/_mock/faults", &rule).await;
    let added = d.expect(reply, 201, "").await;
    let id = added.data()["id"].as_str().expect("an id").to_owned();
    let reply = d.call(Method::GET, "/_mock/faults", &[], None).await;
    d.expect(reply, 200, "").await;
    let reply = d
        .json(Method::POST, "/_mock/faults", &json!({"fault": "explode"}))
        .await;
    d.expect(reply, 400, "VALIDATION_ERROR").await;
    let huge = format!(r#"{{"fault":"hang","x":"{}"}}"#, "a".repeat(70 * 1024));
    let json_type = ("content-type", "application/json");
    let reply = d
        .call(Method::POST, "/_mock/faults", &[json_type], Some(&huge))
        .await;
    d.expect(reply, 413, "PAYLOAD_TOO_LARGE").await;
    let reply = d
        .call(
            Method::POST,
            "/_mock/faults",
            &[("content-type", "text/plain")],
            Some("{}"),
        )
        .await;
    d.expect(reply, 415, "UNSUPPORTED_MEDIA_TYPE").await;
    let reply = d
        .call(Method::DELETE, "/_mock/faults/not-a-rule", &[], None)
        .await;
    d.expect(reply, 400, "VALIDATION_ERROR").await;
    let path = format!("/_mock/faults/{id}");
    let reply = d.call(Method::DELETE, &path, &[], None).await;
    d.expect(reply, 200, "").await;
    let reply = d.call(Method::DELETE, &path, &[], None).await;
    d.expect(reply, 404, "NOT_FOUND").await;
    let reply = d.call(Method::DELETE, "/_mock/faults", &[], None).await;
    d.expect(reply, 200, "").await;
    for (method, path) in [
        (Method::PUT, "/_mock/faults".to_owned()),
        (Method::GET, path.clone()),
    ] {
        let reply = d.call(method, &path, &[], None).await;
        d.expect(reply, 405, "METHOD_NOT_ALLOWED").await;
    }
}

/// `/_mock/sandboxes` (CONTRACT section 19) on an open server: every
/// answer but the keys' and the limit's (the keyed server's).
pub(super) async fn drive_sandboxes(d: &mut Driver<'_>) {
    let reply = d
        .json(
            Method::POST,
            "/_mock/sandboxes",
            &json!({"label": "schema", "ttlSeconds": 60}),
        )
        .await;
    let made = d.expect(reply, 201, "").await;
    let id = made.data()["id"].as_str().expect("an id").to_owned();
    let reply = d.call(Method::POST, "/_mock/sandboxes", &[], None).await;
    d.expect(reply, 201, "").await;
    let reply = d.call(Method::GET, "/_mock/sandboxes", &[], None).await;
    d.expect(reply, 200, "").await;
    let reply = d
        .json(Method::POST, "/_mock/sandboxes", &json!({"ttlSeconds": 0}))
        .await;
    d.expect(reply, 400, "VALIDATION_ERROR").await;
    let huge = format!(r#"{{"label":"{}"}}"#, "a".repeat(70 * 1024));
    let json_type = ("content-type", "application/json");
    let reply = d
        .call(Method::POST, "/_mock/sandboxes", &[json_type], Some(&huge))
        .await;
    d.expect(reply, 413, "PAYLOAD_TOO_LARGE").await;
    let reply = d
        .call(
            Method::POST,
            "/_mock/sandboxes",
            &[("content-type", "text/plain")],
            Some("{}"),
        )
        .await;
    d.expect(reply, 415, "UNSUPPORTED_MEDIA_TYPE").await;
    let path = format!("/_mock/sandboxes/{id}");
    let reply = d.call(Method::GET, &path, &[], None).await;
    d.expect(reply, 200, "").await;
    let reply = d.call(Method::DELETE, &path, &[], None).await;
    d.expect(reply, 200, "").await;
    let reply = d.call(Method::DELETE, &path, &[], None).await;
    d.expect(reply, 404, "SANDBOX_NOT_FOUND").await;
    let reply = d.call(Method::GET, &path, &[], None).await;
    d.expect(reply, 404, "SANDBOX_NOT_FOUND").await;
    let reply = d
        .call(Method::DELETE, "/_mock/sandboxes/not-a-sandbox", &[], None)
        .await;
    d.expect(reply, 404, "SANDBOX_NOT_FOUND").await;
    for (method, path) in [
        (Method::PUT, "/_mock/sandboxes".to_owned()),
        (Method::PUT, path.clone()),
    ] {
        let reply = d.call(method, &path, &[], None).await;
        d.expect(reply, 405, "METHOD_NOT_ALLOWED").await;
    }
}
