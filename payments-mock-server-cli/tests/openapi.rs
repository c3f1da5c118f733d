//! `/openapi.json` (CONTRACT section 10): every route and error code
//! described, every status and code the service answers documented.

use axum::http::Method;
use serde_json::{Value, json};

use crate::common::{get, initiate_body, initiated, request, send, service};

#[tokio::test]
async fn openapi_describes_every_route_and_error_code() {
    let (_, router) = service();
    let reply = get(&router, "/openapi.json").await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.headers["content-type"], "application/json");
    let doc = &reply.body;
    assert!(doc["openapi"].as_str().is_some_and(|v| v.starts_with("3.")));
    for path in [
        "/api/payments/initiate",
        "/api/payments/confirm",
        "/api/payments/{transactionId}/status",
        "/api/payments/reference/{referenceNo}/status",
        "/_mock/health",
        "/_mock/transactions",
        "/_mock/reset",
        "/_mock/clock",
        "/_mock/clock/advance",
        "/_mock/requests",
        "/openapi.json",
    ] {
        assert!(doc["paths"][path].is_object(), "missing {path}");
    }
    let text = String::from_utf8_lossy(&reply.raw);
    for code in [
        "VALIDATION_ERROR",
        "INVALID_TRANSACTION_ID",
        "INVALID_REFERENCE_NO",
        "TRANSACTION_NOT_FOUND",
        "DUPLICATE_REFERENCE_NO",
        "TRANSACTION_ALREADY_CONFIRMED",
        "TRANSACTION_EXPIRED",
        "AMBIGUOUS_REFERENCE_NO",
        "UNAUTHORIZED",
        "FORBIDDEN",
        "NOT_FOUND",
        "METHOD_NOT_ALLOWED",
        "PAYLOAD_TOO_LARGE",
        "UNSUPPORTED_MEDIA_TYPE",
        "RATE_LIMITED",
        "INTERNAL_ERROR",
    ] {
        assert!(text.contains(code), "missing {code}");
    }
}

/// A journal entry's `bodyLength` and `headersLength` (set only when the
/// journal cut its body, its headers) are documented, optional: an entry
/// with a whole body and whole headers has neither.
#[tokio::test]
async fn openapi_declares_body_length_optional() {
    let (_, router) = service();
    let doc = get(&router, "/openapi.json").await.body;
    let item = &doc["components"]["schemas"]["JournalItem"];
    let required: Vec<&str> = item["required"]
        .as_array()
        .expect("required fields")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for (whole, cut) in [("body", "bodyLength"), ("headers", "headersLength")] {
        let length = &item["properties"][cut];
        assert!(length.is_object(), "{cut}: {item}");
        assert!(
            length.to_string().contains("integer"),
            "a whole number: {length}"
        );
        assert!(required.contains(&whole), "{required:?}");
        assert!(!required.contains(&cut), "{required:?}");
    }
}

/// Every (operation, status, errorCode) the service produces is documented:
/// the OpenAPI response exists and, for failures, lists the code.
#[tokio::test]
async fn openapi_documents_every_status_and_code_the_service_answers() {
    let (_, router) = service();
    let doc = get(&router, "/openapi.json").await.body;
    let id = initiated(&router, "OA-1", "TOPUP").await;
    let confirm_body = json!({ "transactionId": id, "referenceNo": "OA-1" });
    let cases: Vec<(Method, &str, String, Option<Value>)> = vec![
        (
            Method::POST,
            "/api/payments/initiate",
            "/api/payments/initiate".into(),
            Some(initiate_body("OA-2", "TOPUP")),
        ),
        (
            Method::POST,
            "/api/payments/initiate",
            "/api/payments/initiate".into(),
            Some(initiate_body("OA-2", "TOPUP")),
        ),
        (
            Method::POST,
            "/api/payments/initiate",
            "/api/payments/initiate".into(),
            Some(json!({})),
        ),
        (
            Method::POST,
            "/api/payments/confirm",
            "/api/payments/confirm".into(),
            Some(confirm_body.clone()),
        ),
        (
            Method::POST,
            "/api/payments/confirm",
            "/api/payments/confirm".into(),
            Some(confirm_body),
        ),
        (
            Method::POST,
            "/api/payments/confirm",
            "/api/payments/confirm".into(),
            Some(json!({ "transactionId": "x", "referenceNo": "y" })),
        ),
        (
            Method::GET,
            "/api/payments/{transactionId}/status",
            format!("/api/payments/{id}/status"),
            None,
        ),
        (
            Method::GET,
            "/api/payments/{transactionId}/status",
            "/api/payments/nope/status".into(),
            None,
        ),
        (
            Method::GET,
            "/api/payments/{transactionId}/status",
            "/api/payments//status".into(),
            None,
        ),
        (
            Method::GET,
            "/api/payments/reference/{referenceNo}/status",
            "/api/payments/reference/OA-1/status".into(),
            None,
        ),
        (
            Method::GET,
            "/api/payments/reference/{referenceNo}/status",
            "/api/payments/reference/NOPE/status".into(),
            None,
        ),
        (
            Method::GET,
            "/api/payments/reference/{referenceNo}/status",
            "/api/payments/reference//status".into(),
            None,
        ),
        (
            Method::GET,
            "/api/payments/reference/{referenceNo}/status",
            "/api/payments/reference/OA-1/status?merchantId=x".into(),
            None,
        ),
        (Method::GET, "/_mock/health", "/_mock/health".into(), None),
        (
            Method::GET,
            "/_mock/transactions",
            "/_mock/transactions".into(),
            None,
        ),
        (
            Method::GET,
            "/_mock/transactions",
            "/_mock/transactions?limit=0".into(),
            None,
        ),
        (Method::GET, "/_mock/clock", "/_mock/clock".into(), None),
        (
            Method::POST,
            "/_mock/clock/advance",
            "/_mock/clock/advance".into(),
            Some(json!({ "seconds": 1 })),
        ),
        (
            Method::POST,
            "/_mock/clock/advance",
            "/_mock/clock/advance".into(),
            Some(json!({ "seconds": -1 })),
        ),
        (
            Method::GET,
            "/_mock/requests",
            "/_mock/requests".into(),
            None,
        ),
        (Method::POST, "/_mock/reset", "/_mock/reset".into(), None),
    ];
    for (method, template, uri, body) in cases {
        let text = body.map(|b| b.to_string());
        let reply = send(&router, request(method.clone(), &uri, text.as_deref())).await;
        let op = &doc["paths"][template][method.as_str().to_ascii_lowercase()];
        let response = &op["responses"][reply.status.as_str()];
        assert!(
            response.is_object(),
            "{method} {uri}: {} undocumented",
            reply.status
        );
        if reply.body["isSuccess"] == false {
            let examples = &response["content"]["application/json"]["examples"];
            assert!(
                examples[reply.code()].is_object(),
                "{method} {uri}: {} {} undocumented",
                reply.status,
                reply.code()
            );
        }
    }
    // Faults and auth apply to every /api/ operation.
    let faulted = axum::http::Request::get(format!("/api/payments/{id}/status"))
        .header("x-mock-fault", "rate-limit")
        .body(axum::body::Body::empty())
        .expect("request");
    assert_eq!(send(&router, faulted).await.status, 429);
    for path in [
        "/api/payments/initiate",
        "/api/payments/confirm",
        "/api/payments/{transactionId}/status",
    ] {
        let ops = doc["paths"][path].as_object().expect("path");
        for op in ops.values() {
            for status in ["429", "500"] {
                assert!(op["responses"][status].is_object(), "{path} {status}");
            }
            // An open server takes no key: no 401, no security.
            assert!(op["responses"]["401"].is_null(), "{path}");
        }
    }
    // A keyed server's document says so on every /api/ operation.
    let mut config = payments_mock_server::Config::default();
    config.api_keys = vec!["sk_doc".parse().expect("a key")];
    let keyed = payments_mock_server::state::AppState::new(config);
    let _router = payments_mock_server::http::app(keyed.clone());
    let doc: Value = serde_json::from_slice(&keyed.openapi_json()).expect("a document");
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for op in item.as_object().expect("operations").values() {
            let api = path.starts_with("/api/");
            assert_eq!(op["responses"]["401"].is_object(), api, "{path}");
            assert_eq!(op["security"] == json!([{ "bearer": [] }]), api, "{path}");
        }
    }
    assert_eq!(
        doc["components"]["securitySchemes"]["bearer"]["scheme"],
        "bearer"
    );
}

/// Issue 40: schemathesis, with its own data, met `POST /_mock/ui/sign-out`
/// answering 413 to a form the document called valid: the forms were
/// bounded (4 KiB) but their schemas let them grow. Through the binary:
/// every form's schema takes only its own fields, each with a `maxLength`
/// (or an enum or a number), and the widest form each schema allows
/// (every character at its widest percent-encoding) is never 413; one
/// field more is 400, never read.
#[tokio::test]
async fn every_form_the_document_calls_valid_fits_the_servers_limit() {
    use std::process::{Command, Stdio};
    let (child, base) = crate::common::spawn_with_banner(
        Command::new(env!("CARGO_BIN_EXE_payments-mock-server"))
            .args(["--port", "0"])
            .env_remove("PAYMENTS_MOCK_ADMIN_KEY")
            .env_remove("PAYMENTS_MOCK_STORE")
            .stderr(Stdio::null()),
    );
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("a client");
    let doc: Value = http
        .get(format!("{base}/openapi.json"))
        .send()
        .await
        .expect("answered")
        .json()
        .await
        .expect("json");
    // A payment waiting for its payer, for the payment page's form.
    let initiated: Value = http
        .post(format!("{base}/api/payments/initiate"))
        .json(&json!({
            "merchantId": crate::common::MERCHANT, "referenceNo": "FORMS-1", "amount": 100,
            "productCode": "ONLINEBANKING", "storeId": "S1", "returnUrl": "https://shop.example/back",
        }))
        .send()
        .await
        .expect("answered")
        .json()
        .await
        .expect("json");
    let id = initiated["data"]["transactionId"].as_str().expect("an id");
    let confirmed: Value = http
        .post(format!("{base}/api/payments/confirm"))
        .json(&json!({ "transactionId": id, "referenceNo": "FORMS-1" }))
        .send()
        .await
        .expect("answered")
        .json()
        .await
        .expect("json");
    let extra: Value = serde_json::from_str(
        confirmed["data"]["extraProperties"]
            .as_str()
            .expect("a payment page"),
    )
    .expect("json");
    let page = extra["paymentUrl"].as_str().expect("a URL").to_owned();
    let page_path = page.strip_prefix(&base).expect("on this server").to_owned();

    let mut forms = 0;
    // The payment page first: the console's reset form forgets the payment.
    let mut paths: Vec<_> = doc["paths"].as_object().expect("paths").iter().collect();
    paths.sort_by_key(|(path, _)| !path.starts_with("/pay/"));
    for (path, item) in paths {
        let Some(body) =
            item["post"]["requestBody"]["content"].get("application/x-www-form-urlencoded")
        else {
            continue;
        };
        forms += 1;
        let name = body["schema"]["$ref"]
            .as_str()
            .and_then(|r| r.rsplit('/').next())
            .expect("a named schema");
        let schema = &doc["components"]["schemas"][name];
        assert_eq!(
            schema["additionalProperties"], false,
            "{name}: a form the document calls valid could carry any field of any size"
        );
        let mut form = form_urlencoded::Serializer::new(String::new());
        for (field, rule) in schema["properties"].as_object().into_iter().flatten() {
            let value = if let Some(most) = rule["maxLength"].as_u64() {
                // The widest character, percent-encoded: 12 bytes.
                "\u{10FFFF}".repeat(usize::try_from(most).expect("small"))
            } else if let Some(values) = rule["enum"].as_array() {
                values[0].as_str().expect("a text").to_owned()
            } else if let Some(top) = rule["maximum"].as_u64() {
                top.to_string()
            } else {
                panic!("{name}.{field}: a field without a bound: {rule}");
            };
            form.append_pair(field, &value);
        }
        let widest = form.finish();
        let target = if path == "/pay/{token}" {
            page_path.clone()
        } else {
            path.clone()
        };
        let send = |body: String| {
            http.post(format!("{base}{target}"))
                .header("content-type", "application/x-www-form-urlencoded")
                .header("origin", base.as_str())
                .body(body)
                .send()
        };
        let answer = send(widest.clone()).await.expect("answered");
        assert_ne!(
            answer.status(),
            413,
            "{path}: the widest form {name} allows ({} bytes) is too large",
            widest.len()
        );
        let more = format!(
            "{widest}{}unknown=1",
            if widest.is_empty() { "" } else { "&" }
        );
        let answer = send(more).await.expect("answered");
        assert_eq!(answer.status(), 400, "{path}: a field {name} does not have");
    }
    assert_eq!(forms, 5, "the payment page's form and the console's four");
    crate::common::terminate_expecting_success(child);
}
