//! Schema conformance: every route and status of `/openapi.json` is driven,
//! and each response body is validated against the schema the document
//! gives for it (OpenAPI 3.0 schemas turned into JSON Schema 2020-12).

use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{Method, Request};
use payments_mock_server::Config;
use payments_mock_server::state::AppState;
use serde_json::{Value, json};

use crate::common::{
    MERCHANT, OTHER_MERCHANT, Reply, advance, get, initiate_body, send, service, service_with,
};

mod admin;
mod checker;
mod controls;
mod pages;

use admin::drive_admin_keys;
use checker::Checker;
use controls::{drive_fault_rules, drive_sandboxes};
use pages::{drive_console, drive_redirect_payments};

/// The document as the server serves it.
async fn document(router: &Router) -> Value {
    let reply = get(router, "/openapi.json").await;
    assert_eq!(reply.status, 200);
    reply.body
}

struct Driver<'a> {
    router: &'a Router,
    checker: &'a mut Checker,
}

impl Driver<'_> {
    async fn call(
        &mut self,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&str>,
    ) -> Reply {
        let mut builder = Request::builder().method(method.clone()).uri(path);
        for (name, value) in headers {
            builder = builder.header(*name, *value);
        }
        let request = builder
            .body(body.map_or_else(Body::empty, |b| Body::from(b.to_owned())))
            .expect("valid request");
        let reply = send(self.router, request).await;
        self.checker.check(&method, path, &reply);
        reply
    }

    async fn json(&mut self, method: Method, path: &str, body: &Value) -> Reply {
        let text = body.to_string();
        self.call(
            method,
            path,
            &[("content-type", "application/json")],
            Some(&text),
        )
        .await
    }

    async fn expect(&mut self, reply: Reply, status: u16, code: &str) -> Reply {
        assert_eq!(
            (reply.status.as_u16(), reply.code()),
            (status, code),
            "{}",
            reply.body
        );
        reply
    }

    async fn initiated(&mut self, reference: &str, product: &str) -> String {
        let reply = self
            .json(
                Method::POST,
                "/api/payments/initiate",
                &initiate_body(reference, product),
            )
            .await;
        let reply = self.expect(reply, 200, "").await;
        reply.data()["transactionId"]
            .as_str()
            .expect("transactionId")
            .to_owned()
    }

    async fn confirm(&mut self, id: &str, reference: &str, extra: Value) -> Reply {
        let mut body = json!({ "transactionId": id, "referenceNo": reference });
        if let (Value::Object(b), Value::Object(e)) = (&mut body, extra) {
            b.extend(e);
        }
        self.json(Method::POST, "/api/payments/confirm", &body)
            .await
    }
}

/// Successes of every product and state, and every open-server error.
async fn drive_open_server(router: &Router, state: &AppState, checker: &mut Checker) {
    let mut d = Driver { router, checker };
    const INITIATE: &str = "/api/payments/initiate";
    const CONFIRM: &str = "/api/payments/confirm";

    // Every product initiated and confirmed: each state and data shape.
    let topup = d.initiated("S-TOPUP", "TOPUP").await;
    let billpay = d.initiated("S-BILL", "BILLPAY").await;
    let gift = d.initiated("S-GIFT", "GIFTCARD").await;
    let wallet = d.initiated("S-WALLET", "EWALLET").await;
    let wallet_bad = d.initiated("S-WALLET-2", "EWALLET").await;
    let declined = d.initiated("S-DECL", "DECLINED").await;
    let expiring = d.initiated("S-EXP", "TOPUP").await;
    let mut jpy = initiate_body("S-JPY", "TOPUP");
    jpy["currencyCode"] = json!("JPY");
    jpy["extraProperties"] = json!({"note": "x"});
    jpy["description"] = json!("yen");
    jpy["quantity"] = json!(1);
    jpy["countryCode"] = json!("MY");
    jpy["deviceId"] = json!("D1");
    jpy["returnUrl"] = json!("https://shop.example/return");
    let reply = d.json(Method::POST, INITIATE, &jpy).await;
    d.expect(reply, 200, "").await;

    for id in [&topup, &billpay, &wallet, &declined] {
        let reply = d
            .call(
                Method::GET,
                &format!("/api/payments/{id}/status"),
                &[],
                None,
            )
            .await;
        d.expect(reply, 200, "").await;
    }
    let reply = d.confirm(&topup, "S-TOPUP", json!({})).await;
    d.expect(reply, 200, "").await;
    let reply = d.confirm(&billpay, "S-BILL", json!({})).await;
    assert_eq!(d.expect(reply, 200, "").await.data()["status"], "CONFIRMED");
    let reply = d.confirm(&gift, "S-GIFT", json!({})).await;
    d.expect(reply, 200, "").await;
    let reply = d
        .confirm(&wallet, "S-WALLET", json!({"confirmationCode": "123456"}))
        .await;
    d.expect(reply, 200, "").await;
    let reply = d
        .confirm(
            &wallet_bad,
            "S-WALLET-2",
            json!({"confirmationCode": "000000", "extraProperties": "{\"a\":1}"}),
        )
        .await;
    assert_eq!(d.expect(reply, 200, "").await.data()["status"], "FAILED");
    let reply = d.confirm(&declined, "S-DECL", json!({})).await;
    d.expect(reply, 200, "").await;

    // Time moves: settlement and expiry show in status reads.
    advance(state, Duration::from_secs(16 * 60)).await;
    for (id, reference) in [
        (&topup, "S-TOPUP"),
        (&billpay, "S-BILL"),
        (&gift, "S-GIFT"),
        (&wallet_bad, "S-WALLET-2"),
        (&declined, "S-DECL"),
        (&expiring, "S-EXP"),
    ] {
        let reply = d
            .call(
                Method::GET,
                &format!("/api/payments/{id}/status"),
                &[],
                None,
            )
            .await;
        d.expect(reply, 200, "").await;
        let path = format!("/api/payments/reference/{reference}/status");
        let reply = d.call(Method::GET, &path, &[], None).await;
        d.expect(reply, 200, "").await;
        let path = format!("{path}?merchantId={MERCHANT}");
        let reply = d.call(Method::GET, &path, &[], None).await;
        d.expect(reply, 200, "").await;
    }

    // Initiate errors.
    let reply = d.json(Method::POST, INITIATE, &json!({})).await;
    d.expect(reply, 400, "VALIDATION_ERROR").await;
    let reply = d
        .json(Method::POST, INITIATE, &initiate_body("S-TOPUP", "TOPUP"))
        .await;
    d.expect(reply, 400, "DUPLICATE_REFERENCE_NO").await;
    let big = format!("{{\"a\":\"{}\"}}", "x".repeat(70_000));
    for path in [INITIATE, CONFIRM, "/_mock/clock/advance"] {
        let reply = d
            .call(
                Method::POST,
                path,
                &[("content-type", "application/json")],
                Some(&big),
            )
            .await;
        d.expect(reply, 413, "PAYLOAD_TOO_LARGE").await;
        let reply = d
            .call(
                Method::POST,
                path,
                &[("content-type", "text/plain")],
                Some("{}"),
            )
            .await;
        d.expect(reply, 415, "UNSUPPORTED_MEDIA_TYPE").await;
    }
    for path in [
        "/api/payments/x/status".to_owned(),
        "/api/payments/reference/x/status".to_owned(),
    ] {
        let reply = d
            .call(
                Method::GET,
                &path,
                &[("content-type", "application/json")],
                Some(&big),
            )
            .await;
        d.expect(reply, 413, "PAYLOAD_TOO_LARGE").await;
    }

    // Confirm errors, in the order of CONTRACT section 6.
    let reply = d.json(Method::POST, CONFIRM, &json!({})).await;
    d.expect(reply, 400, "VALIDATION_ERROR").await;
    let reply = d.confirm("nope", "S-TOPUP", json!({})).await;
    d.expect(reply, 400, "TRANSACTION_NOT_FOUND").await;
    let reply = d.confirm(&expiring, "S-EXP", json!({})).await;
    d.expect(reply, 400, "TRANSACTION_EXPIRED").await;
    let reply = d.confirm(&topup, "S-TOPUP", json!({})).await;
    d.expect(reply, 400, "TRANSACTION_ALREADY_CONFIRMED").await;

    // Status errors.
    for (path, status, code) in [
        ("/api/payments//status", 400, "INVALID_TRANSACTION_ID"),
        ("/api/payments/unknown/status", 404, "TRANSACTION_NOT_FOUND"),
        (
            "/api/payments/reference//status",
            400,
            "INVALID_REFERENCE_NO",
        ),
        (
            "/api/payments/reference/NONE/status",
            404,
            "TRANSACTION_NOT_FOUND",
        ),
        (
            "/api/payments/reference/S-TOPUP/status?merchantId=nope",
            400,
            "VALIDATION_ERROR",
        ),
    ] {
        let reply = d.call(Method::GET, path, &[], None).await;
        d.expect(reply, status, code).await;
    }
    let mut other = initiate_body("S-TOPUP", "TOPUP");
    other["merchantId"] = json!(OTHER_MERCHANT);
    let reply = d.json(Method::POST, INITIATE, &other).await;
    d.expect(reply, 200, "").await;
    let reply = d
        .call(
            Method::GET,
            "/api/payments/reference/S-TOPUP/status",
            &[],
            None,
        )
        .await;
    d.expect(reply, 400, "AMBIGUOUS_REFERENCE_NO").await;

    // Faults on every /api/ route: 429 and 500 before and after the change.
    let api: [(Method, &str, Option<Value>); 4] = [
        (Method::POST, INITIATE, Some(initiate_body("F-1", "TOPUP"))),
        (
            Method::POST,
            CONFIRM,
            Some(json!({"transactionId": gift, "referenceNo": "S-GIFT"})),
        ),
        (Method::GET, "/api/payments/x/status", None),
        (Method::GET, "/api/payments/reference/x/status", None),
    ];
    for (method, path, body) in &api {
        for (fault, status, code) in [
            ("rate-limit", 429, "RATE_LIMITED"),
            ("internal-error", 500, "INTERNAL_ERROR"),
            ("commit-then-error", 500, "INTERNAL_ERROR"),
        ] {
            let text = body.as_ref().map(Value::to_string);
            let mut headers = vec![("x-mock-fault", fault)];
            if text.is_some() {
                headers.push(("content-type", "application/json"));
            }
            let reply = d
                .call(method.clone(), path, &headers, text.as_deref())
                .await;
            let reply = d.expect(reply, status, code).await;
            if status == 429 {
                assert!(reply.headers.contains_key("retry-after"));
            }
        }
        // A wrong method on every route.
        let wrong: &[Method] = if *method == Method::GET {
            &[Method::POST, Method::PUT, Method::DELETE]
        } else {
            &[Method::GET, Method::PUT, Method::DELETE, Method::PATCH]
        };
        for wrong in wrong {
            let reply = d.call(wrong.clone(), path, &[], None).await;
            let reply = d.expect(reply, 405, "METHOD_NOT_ALLOWED").await;
            assert!(reply.headers.contains_key("allow"), "{wrong} {path}");
        }
    }

    // The /_mock/ controls and the document.
    for path in [
        "/_mock/health",
        "/_mock/clock",
        "/_mock/transactions",
        "/_mock/transactions?limit=2",
        "/_mock/transactions?status=EXPIRED&merchantId=6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60",
        "/_mock/requests",
        "/_mock/requests?limit=3&path=/api/payments/initiate",
        "/openapi.json",
        "/metrics",
        "/_mock/coverage",
    ] {
        let reply = d.call(Method::GET, path, &[], None).await;
        d.expect(reply, 200, "").await;
    }
    let openmetrics = ("accept", "application/openmetrics-text; version=1.0.0");
    let reply = d.call(Method::GET, "/metrics", &[openmetrics], None).await;
    d.expect(reply, 200, "").await;
    let first = d
        .call(Method::GET, "/_mock/transactions?limit=1", &[], None)
        .await;
    let next = first.data()["next"]
        .as_str()
        .expect("a next page")
        .to_owned();
    let reply = d
        .call(
            Method::GET,
            &format!("/_mock/transactions?limit=1&after={next}"),
            &[],
            None,
        )
        .await;
    d.expect(reply, 200, "").await;
    for path in ["/_mock/transactions?limit=0", "/_mock/requests?limit=x"] {
        let reply = d.call(Method::GET, path, &[], None).await;
        d.expect(reply, 400, "VALIDATION_ERROR").await;
    }
    let reply = d
        .json(
            Method::POST,
            "/_mock/clock/advance",
            &json!({"seconds": 1.5}),
        )
        .await;
    d.expect(reply, 200, "").await;
    let reply = d
        .json(
            Method::POST,
            "/_mock/clock/advance",
            &json!({"seconds": -1}),
        )
        .await;
    d.expect(reply, 400, "VALIDATION_ERROR").await;
    for (method, path) in [
        (Method::POST, "/_mock/health"),
        (Method::POST, "/_mock/transactions"),
        (Method::GET, "/_mock/reset"),
        (Method::POST, "/_mock/clock"),
        (Method::GET, "/_mock/clock/advance"),
        (Method::POST, "/_mock/requests"),
        (Method::POST, "/openapi.json"),
        (Method::POST, "/metrics"),
        (Method::POST, "/_mock/coverage"),
    ] {
        let reply = d.call(method, path, &[], None).await;
        d.expect(reply, 405, "METHOD_NOT_ALLOWED").await;
    }
    for path in [
        "/nope",
        "/api/nope",
        "/api/payments/a/b/status",
        "/_mock/nope",
    ] {
        let reply = d.call(Method::GET, path, &[], None).await;
        d.expect(reply, 404, "NOT_FOUND").await;
    }
    drive_fault_rules(&mut d).await;
    drive_sandboxes(&mut d).await;
    drive_redirect_payments(&mut d).await;
    drive_console(&mut d).await;

    // Another site's page may not change the mock.
    let json = ("content-type", "application/json");
    let evil = ("origin", "https://evil.example");
    for (path, body) in [
        ("/_mock/reset", None),
        ("/_mock/clock/advance", Some(r#"{"seconds":1}"#)),
        (
            "/_mock/transactions/00000000-0000-7000-8000-000000000000/payer",
            Some(r#"{"action":"pay"}"#),
        ),
        ("/_mock/faults", Some(r#"{"fault":"hang"}"#)),
    ] {
        let reply = d.call(Method::POST, path, &[json, evil], body).await;
        d.expect(reply, 403, "FORBIDDEN").await;
    }

    let reply = d.call(Method::POST, "/_mock/reset", &[], None).await;
    d.expect(reply, 200, "").await;
}

/// The errors that need API keys: 401 on every route, 403 on initiate;
/// and those of the admin side behind an admin key.
async fn drive_keyed_server(router: &Router, checker: &mut Checker) {
    let mut d = Driver { router, checker };
    let bound = "Bearer sk_bound";
    let body = initiate_body("K-1", "TOPUP").to_string();
    let json_type = ("content-type", "application/json");
    for (method, path, body) in [
        (Method::POST, "/api/payments/initiate", Some(body.as_str())),
        (Method::POST, "/api/payments/confirm", Some("{}")),
        (Method::GET, "/api/payments/x/status", None),
        (Method::GET, "/api/payments/reference/x/status", None),
    ] {
        let reply = d.call(method, path, &[json_type], body).await;
        d.expect(reply, 401, "UNAUTHORIZED").await;
    }
    let mut other = initiate_body("K-2", "TOPUP");
    other["merchantId"] = json!(OTHER_MERCHANT);
    let text = other.to_string();
    let reply = d
        .call(
            Method::POST,
            "/api/payments/initiate",
            &[json_type, ("authorization", bound)],
            Some(&text),
        )
        .await;
    d.expect(reply, 403, "FORBIDDEN").await;
    // A merchant's key naming another merchant in a reference read.
    let reply = d
        .call(
            Method::GET,
            &format!("/api/payments/reference/K-1/status?merchantId={OTHER_MERCHANT}"),
            &[("authorization", bound)],
            None,
        )
        .await;
    d.expect(reply, 403, "FORBIDDEN").await;
    drive_admin_keys(&mut d).await;
}

#[tokio::test]
async fn every_documented_route_and_status_answers_its_documented_schema() {
    let (state, router) = service();
    let mut checker = Checker::new(document(&router).await);
    drive_open_server(&router, &state, &mut checker).await;

    // A keyed server documents 401 and 403 too: its answers are checked
    // against its own document, which then must have seen everything. It
    // has an admin key, a merchant's key and a key bound to no merchant.
    let mut config = Config::default();
    config.api_keys = vec![
        format!("sk_bound={MERCHANT}").parse().expect("key"),
        "sk_unbound".parse().expect("key"),
    ];
    config.admin_keys = vec!["adm_schema".parse().expect("an admin key")];
    config.max_sandboxes = 2;
    let (_, keyed) = service_with(config);
    let mut keyed_checker = Checker::new(document(&keyed).await);
    drive_keyed_server(&keyed, &mut keyed_checker).await;
    keyed_checker.absorb(checker);
    let checker = keyed_checker;

    // 503 STORE_UNAVAILABLE needs a database store that fails while
    // serving (tests/processes/outage.rs drives it, on PostgreSQL); the
    // memory store these servers run on never fails.
    let keyed_document = document(&keyed).await;
    let store_down: Vec<(String, String)> = keyed_document["paths"]
        .as_object()
        .expect("paths")
        .iter()
        .flat_map(|(template, ops)| {
            ops.as_object()
                .expect("operations")
                .iter()
                .filter(|(_, op)| op["responses"].get("503").is_some())
                .map(|(method, _)| (template.clone(), method.clone()))
        })
        .collect();
    // Only a handler bug can make a /_mock/ control or the document fail.
    let mut unreachable: Vec<(&str, &str, u16)> = [
        "/_mock/health",
        "/_mock/transactions",
        "/_mock/reset",
        "/_mock/clock",
        "/_mock/clock/advance",
        "/_mock/requests",
        "/openapi.json",
    ]
    .into_iter()
    .flat_map(|p| {
        let method = if p == "/_mock/reset" || p == "/_mock/clock/advance" {
            "post"
        } else {
            "get"
        };
        [(p, method, 500)]
    })
    .collect();
    unreachable.extend(
        store_down
            .iter()
            .map(|(template, method)| (template.as_str(), method.as_str(), 503)),
    );
    let missing = checker.missing(&unreachable);
    assert!(
        missing.is_empty(),
        "documented but never driven:\n{}",
        missing.join("\n")
    );
    assert!(checker.checked > 100, "{}", checker.checked);
}
