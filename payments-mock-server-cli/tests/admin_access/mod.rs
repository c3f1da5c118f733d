//! The admin side behind `--admin-key` (CONTRACT section 18, issue 33),
//! in-process: the role matrix on every route outside `/api/`, a
//! merchant's key scoped and read-only, wrong, empty and huge keys and
//! cookies, forged and expired sessions (`scope.rs`, `sessions.rs`). The
//! same matrix through the binary, the start-up warning and secrets in its
//! output are `admin_binary.rs`.

use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, Request};
use http_body_util::BodyExt;
use payments_mock_server::Config;
use payments_mock_server::state::AppState;
use serde_json::{Value, json};
use tower::ServiceExt;

use crate::common::{MERCHANT, OTHER_MERCHANT, clock_offset, count, service_with};
use crate::security::{KEY_A, KEY_B, KEY_OPEN};

// The console's bar on its error pages: the store to the admin alone.
mod chrome;
// An open mock answered by a rebound name: its admin side refused.
mod rebinding;
// A merchant's key: its own transactions and requests, and no change.
mod scope;
// Wrong, empty and huge keys and cookies; sign-in sessions.
mod sessions;

pub(crate) use sessions::sign_in;

/// The admin key of these tests: distinctive, so a leak is found by a
/// plain substring search.
pub(crate) const ADMIN_KEY: &str = "adm_SECRET_ADMIN_9c41e2";

/// A server with the admin key, `KEY_A` bound to `MERCHANT`, `KEY_B`
/// bound to `OTHER_MERCHANT` and `KEY_OPEN` bound to none.
pub(crate) fn guarded_config() -> Config {
    let mut config = Config::default();
    config.api_keys = vec![
        format!("{KEY_A}={MERCHANT}").parse().expect("key"),
        format!("{KEY_B}={OTHER_MERCHANT}").parse().expect("key"),
        KEY_OPEN.parse().expect("key"),
    ];
    config.admin_keys = vec![ADMIN_KEY.parse().expect("an admin key")];
    config
}

/// An answer, as both targets see it.
#[derive(Debug)]
pub(crate) struct Answer {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: String,
}

impl Answer {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }
}

/// Where requests go: the router in-process, or a server over HTTP.
#[derive(Clone)]
pub(crate) enum Target {
    Router(Router),
    Http(String, reqwest::Client),
}

impl Target {
    /// A server at `base` over HTTP; redirects are answers, not followed.
    pub fn http(base: String) -> Self {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("a client");
        Self::Http(base, client)
    }

    pub async fn call(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&str>,
    ) -> Answer {
        match self {
            Self::Router(router) => {
                let mut request = Request::builder().method(method).uri(path);
                for (name, value) in headers {
                    request = request.header(*name, *value);
                }
                let request = request
                    .body(body.map_or_else(Body::empty, |b| Body::from(b.to_owned())))
                    .expect("a request");
                let response = router.clone().oneshot(request).await.expect("infallible");
                let status = response.status().as_u16();
                let headers = response.headers().clone();
                let bytes = response
                    .into_body()
                    .collect()
                    .await
                    .expect("a body")
                    .to_bytes();
                Answer {
                    status,
                    headers,
                    body: String::from_utf8_lossy(&bytes).into_owned(),
                }
            }
            Self::Http(base, client) => {
                let method = reqwest::Method::from_bytes(method.as_bytes()).expect("a method");
                let mut request = client.request(method, format!("{base}{path}"));
                for (name, value) in headers {
                    request = request.header(*name, *value);
                }
                if let Some(body) = body {
                    request = request.body(body.to_owned());
                }
                let response = request.send().await.expect("an answer");
                let status = response.status().as_u16();
                let headers = response.headers().clone();
                let body = response.text().await.unwrap_or_default();
                Answer {
                    status,
                    headers,
                    body,
                }
            }
        }
    }

    /// A confirmed ONLINEBANKING payment of `MERCHANT`, made with the
    /// unbound key: (transactionId, payment page path).
    pub async fn redirect_payment(&self, reference: &str) -> (String, String) {
        let json = ("content-type", "application/json");
        let auth = format!("Bearer {KEY_OPEN}");
        let body = json!({
            "merchantId": MERCHANT,
            "referenceNo": reference,
            "amount": 1500,
            "productCode": "ONLINEBANKING",
            "storeId": "S1",
            "returnUrl": "https://shop.example/back",
        })
        .to_string();
        let initiated = self
            .call(
                "POST",
                "/api/payments/initiate",
                &[json, ("authorization", &auth)],
                Some(&body),
            )
            .await
            .json();
        let id = initiated["data"]["transactionId"]
            .as_str()
            .unwrap_or_else(|| panic!("initiated: {initiated}"))
            .to_owned();
        let body = json!({ "transactionId": id, "referenceNo": reference }).to_string();
        let confirmed = self
            .call(
                "POST",
                "/api/payments/confirm",
                &[json, ("authorization", &auth)],
                Some(&body),
            )
            .await
            .json();
        let extra: Value = serde_json::from_str(
            confirmed["data"]["extraProperties"]
                .as_str()
                .unwrap_or_else(|| panic!("confirmed: {confirmed}")),
        )
        .expect("extraProperties is JSON");
        let url = extra["paymentUrl"].as_str().expect("a payment URL");
        let page = url
            .find("/pay/")
            .map(|at| url[at..].to_owned())
            .expect("a /pay/ path");
        (id, page)
    }

    /// The newest journal entry's seq, as the admin's console lists it.
    pub async fn newest_seq(&self) -> String {
        let auth = format!("Bearer {ADMIN_KEY}");
        let page = self
            .call(
                "GET",
                "/_mock/ui/requests",
                &[("authorization", &auth)],
                None,
            )
            .await;
        page.body
            .split("_mock/ui/requests/")
            .skip(1)
            .map(|rest| {
                rest.chars()
                    .take_while(char::is_ascii_digit)
                    .collect::<String>()
            })
            .find(|seq| !seq.is_empty())
            .expect("a request row")
    }
}

/// The five callers of the matrix, in its columns' order.
pub(crate) const ROLES: [&str; 5] = [
    "no key",
    "wrong key",
    "admin key",
    "merchant key",
    "unbound API key",
];

fn role_header(role: &str) -> Option<String> {
    match role {
        "no key" => None,
        "wrong key" => Some("Bearer adm_SECRET_ADMIN_9c41e3".to_owned()),
        "admin key" => Some(format!("Bearer {ADMIN_KEY}")),
        "merchant key" => Some(format!("Bearer {KEY_A}")),
        _ => Some(format!("Bearer {KEY_OPEN}")),
    }
}

/// One row: method, the path template the document names, what is sent,
/// and the status each role gets.
struct Row {
    method: &'static str,
    template: &'static str,
    body: Option<(&'static str, &'static str)>,
    expected: [u16; 5],
}

const JSON: &str = "application/json";
const FORM: &str = "application/x-www-form-urlencoded";
const OPEN_200: [u16; 5] = [200; 5];
const READS: [u16; 5] = [401, 401, 200, 200, 403];
const CHANGES_JSON: [u16; 5] = [401, 401, 200, 403, 403];
const CHANGES_FORM: [u16; 5] = [401, 401, 303, 403, 403];

/// Every route outside `/api/`, and what each caller gets.
fn matrix() -> Vec<Row> {
    let row = |method, template, body, expected| Row {
        method,
        template,
        body,
        expected,
    };
    vec![
        row("GET", "/_mock/health", None, OPEN_200),
        row("GET", "/openapi.json", None, OPEN_200),
        row("GET", "/metrics", None, CHANGES_JSON),
        row("GET", "/_mock/coverage", None, CHANGES_JSON),
        row("GET", "/_mock/faults", None, CHANGES_JSON),
        row(
            "POST",
            "/_mock/faults",
            Some((
                JSON,
                r#"{"fault":"internal-error","match":{"referenceNo":"NEVER-SENT"}}"#,
            )),
            [401, 401, 201, 403, 403],
        ),
        row("DELETE", "/_mock/faults", None, CHANGES_JSON),
        // An unknown rule: the admin is told so.
        row(
            "DELETE",
            "/_mock/faults/{ruleId}",
            None,
            [401, 401, 404, 403, 403],
        ),
        // Sandboxes: a merchant's key makes, lists and removes its own
        // (an unknown one is not found for anybody).
        row("GET", "/_mock/sandboxes", None, READS),
        row(
            "POST",
            "/_mock/sandboxes",
            Some((JSON, r#"{"label":"matrix"}"#)),
            [401, 401, 201, 201, 403],
        ),
        row(
            "GET",
            "/_mock/sandboxes/{sandboxId}",
            None,
            [401, 401, 404, 404, 403],
        ),
        row(
            "DELETE",
            "/_mock/sandboxes/{sandboxId}",
            None,
            [401, 401, 404, 404, 403],
        ),
        row("GET", "/_mock/transactions", None, READS),
        row("GET", "/_mock/requests", None, READS),
        row("GET", "/_mock/clock", None, READS),
        row(
            "POST",
            "/_mock/clock/advance",
            Some((JSON, r#"{"seconds":1}"#)),
            CHANGES_JSON,
        ),
        row("POST", "/_mock/reset", None, CHANGES_JSON),
        row(
            "POST",
            "/_mock/transactions/{transactionId}/payer",
            Some((JSON, r#"{"action":"pay"}"#)),
            CHANGES_JSON,
        ),
        row("GET", "/_mock/ui", None, [401, 401, 308, 308, 403]),
        row("GET", "/_mock/ui/", None, READS),
        row("GET", "/_mock/ui/transactions/rows", None, READS),
        row("GET", "/_mock/ui/transactions/{transactionId}", None, READS),
        row("GET", "/_mock/ui/requests", None, READS),
        row("GET", "/_mock/ui/sandboxes", None, READS),
        row("GET", "/_mock/ui/requests/feed", None, READS),
        row("GET", "/_mock/ui/requests/{seq}", None, READS),
        row("GET", "/_mock/ui/clock", None, READS),
        row(
            "POST",
            "/_mock/ui/clock",
            Some((FORM, "seconds=1")),
            CHANGES_FORM,
        ),
        row("GET", "/_mock/ui/catalog", None, READS),
        row("GET", "/_mock/ui/coverage", None, [401, 401, 200, 403, 403]),
        row("GET", "/_mock/ui/faults", None, [401, 401, 200, 403, 403]),
        row("GET", "/_mock/ui/reset", None, [401, 401, 200, 403, 403]),
        row("POST", "/_mock/ui/reset", Some((FORM, "")), CHANGES_FORM),
        row("GET", "/_mock/ui/sign-in", None, OPEN_200),
        row(
            "POST",
            "/_mock/ui/sign-in",
            Some((FORM, "")),
            [401, 401, 303, 303, 403],
        ),
        row("POST", "/_mock/ui/sign-out", Some((FORM, "")), [303; 5]),
        row("GET", "/_mock/ui/static/console.css", None, OPEN_200),
        row("GET", "/_mock/ui/static/console.js", None, OPEN_200),
        row("GET", "/pay/{token}", None, OPEN_200),
        row("POST", "/pay/{token}", Some((FORM, "action=pay")), [303; 5]),
        row("GET", "/pay/static/mock.css", None, OPEN_200),
    ]
}

/// Runs the matrix against `target`; `fresh` gives each cell a fresh
/// target (in-process) or `None` to use `target` throughout (a binary).
/// Returns the table as tested; panics listing every cell that differs.
pub(crate) async fn run_matrix(target: &Target, fresh: Option<&dyn Fn() -> Target>) -> String {
    let mut table = format!(
        "| route | {} |\n|---|{}\n",
        ROLES.join(" | "),
        "---|".repeat(5)
    );
    let mut wrong = Vec::new();
    let mut n = 0;
    for row in matrix() {
        let mut got = [0u16; 5];
        for (i, role) in ROLES.iter().enumerate() {
            n += 1;
            let target = fresh.map_or_else(|| target.clone(), |f| f());
            let (id, page) = target.redirect_payment(&format!("M-{n}")).await;
            let seq = target.newest_seq().await;
            let token = page.trim_start_matches("/pay/");
            let path = row
                .template
                .replace("{transactionId}", &id)
                .replace("{seq}", &seq)
                .replace("{token}", token)
                .replace("{ruleId}", "01937e1c-0000-7000-8000-0000000000c1")
                .replace("{sandboxId}", "01937e1c-0000-4000-8000-0000000000c2");
            let mut headers: Vec<(&str, &str)> = Vec::new();
            let auth = role_header(role);
            if let Some(auth) = &auth {
                headers.push(("authorization", auth));
            }
            if let Some((content_type, _)) = row.body {
                headers.push(("content-type", content_type));
            }
            // The sign-in form takes the role's key typed in, not a header.
            let typed = (row.method == "POST" && row.template == "/_mock/ui/sign-in").then(|| {
                headers.retain(|(name, _)| *name != "authorization");
                let key = auth
                    .as_deref()
                    .map_or("", |a| a.trim_start_matches("Bearer "));
                format!("key={key}")
            });
            let body = typed.as_deref().or(row.body.map(|(_, b)| b));
            let answer = target.call(row.method, &path, &headers, body).await;
            got[i] = answer.status;
            if answer.status == 401 {
                assert_eq!(
                    answer.headers.get("www-authenticate").map(|v| v.as_bytes()),
                    Some(&b"Bearer"[..]),
                    "{} {path} as {role}",
                    row.method
                );
            }
            for secret in [ADMIN_KEY, KEY_A, KEY_OPEN] {
                assert!(
                    !answer.body.contains(secret),
                    "{} {path} shows a key",
                    row.method
                );
            }
        }
        table.push_str(&format!(
            "| {} {} | {} |\n",
            row.method,
            row.template,
            got.map(|s| s.to_string()).join(" | ")
        ));
        if got != row.expected {
            wrong.push(format!(
                "{} {}: expected {:?}, got {got:?}",
                row.method, row.template, row.expected
            ));
        }
    }
    assert!(wrong.is_empty(), "{}\n{table}", wrong.join("\n"));
    table
}

fn guarded() -> (AppState, Router) {
    service_with(guarded_config())
}

#[tokio::test]
async fn the_role_matrix_holds_on_every_route_outside_the_api() {
    let fresh = || Target::Router(guarded().1);
    let table = run_matrix(&fresh(), Some(&fresh)).await;
    eprintln!("{table}");
    // The matrix names every operation the document has outside /api/.
    let (state, _router) = guarded();
    let doc: Value = serde_json::from_slice(&state.openapi_json()).expect("a document");
    for (template, ops) in doc["paths"].as_object().expect("paths") {
        if template.starts_with("/api/") {
            continue;
        }
        for method in ops.as_object().expect("operations").keys() {
            let line = format!("| {} {template} |", method.to_uppercase());
            assert!(table.contains(&line), "{line} is not in the matrix");
        }
    }
}

#[tokio::test]
async fn without_an_admin_key_the_admin_side_stays_open_whatever_key_is_sent() {
    let mut config = guarded_config();
    config.admin_keys.clear();
    let (_, router) = service_with(config);
    let target = Target::Router(router);
    for role in ROLES {
        let auth = role_header(role);
        let headers: Vec<(&str, &str)> =
            auth.iter().map(|a| ("authorization", a.as_str())).collect();
        for path in [
            "/_mock/transactions",
            "/_mock/requests",
            "/_mock/ui/",
            "/_mock/ui/reset",
        ] {
            let answer = target.call("GET", path, &headers, None).await;
            assert_eq!(answer.status, 200, "{path} as {role}");
        }
        let answer = target.call("POST", "/_mock/reset", &headers, None).await;
        assert_eq!(answer.status, 200, "reset as {role}");
    }
    // The sign-in form leads into the console whatever key it carries, an
    // empty key or no body at all (never a 401: the OpenAPI document
    // lists none without an admin key); sign-out needs no body either,
    // and carries no field (issue 40: a form has only its own fields).
    for (headers, body) in [
        (vec![("content-type", FORM)], Some("key=")),
        (vec![("content-type", FORM)], Some("")),
        (vec![], None),
    ] {
        let answer = target
            .call("POST", "/_mock/ui/sign-in", &headers, body)
            .await;
        assert_eq!(answer.status, 303, "sign-in with {body:?}: {}", answer.body);
        let answer = target
            .call("POST", "/_mock/ui/sign-out", &headers, body)
            .await;
        let status = if body == Some("key=") { 400 } else { 303 };
        assert_eq!(
            answer.status, status,
            "sign-out with {body:?}: {}",
            answer.body
        );
    }
}

#[tokio::test]
async fn the_openapi_document_says_what_each_route_takes() {
    let open_doc = |config: Config| -> Value {
        let state = AppState::new(config);
        let _router = payments_mock_server::http::app(state.clone());
        serde_json::from_slice(&state.openapi_json()).expect("a document")
    };
    let doc = open_doc(guarded_config());
    let security = |method: &str, path: &str| doc["paths"][path][method]["security"].clone();
    let reads = json!([{ "adminKey": [] }, { "merchantKey": [] }]);
    let console_reads =
        json!([{ "adminKey": [] }, { "merchantKey": [] }, { "consoleSession": [] }]);
    for path in ["/_mock/transactions", "/_mock/requests", "/_mock/clock"] {
        assert_eq!(security("get", path), reads, "{path}");
        assert!(doc["paths"][path]["get"]["responses"]["401"].is_object());
    }
    for (method, path) in [
        ("post", "/_mock/reset"),
        ("post", "/_mock/clock/advance"),
        ("post", "/_mock/transactions/{transactionId}/payer"),
    ] {
        assert_eq!(
            security(method, path),
            json!([{ "adminKey": [] }]),
            "{path}"
        );
        assert!(doc["paths"][path][method]["responses"]["403"].is_object());
    }
    for path in [
        "/_mock/ui/",
        "/_mock/ui/requests",
        "/_mock/ui/transactions/{transactionId}",
    ] {
        assert_eq!(security("get", path), console_reads, "{path}");
    }
    assert_eq!(
        security("post", "/_mock/ui/reset"),
        json!([{ "adminKey": [] }, { "consoleSession": [] }])
    );
    for (method, path) in [
        ("get", "/_mock/health"),
        ("get", "/openapi.json"),
        ("get", "/pay/{token}"),
        ("get", "/_mock/ui/sign-in"),
        ("post", "/_mock/ui/sign-in"),
        ("get", "/_mock/ui/static/console.css"),
    ] {
        assert_eq!(security(method, path), json!([]), "{method} {path}");
    }
    assert_eq!(
        security("post", "/api/payments/initiate"),
        json!([{ "bearer": [] }])
    );
    let schemes = &doc["components"]["securitySchemes"];
    assert_eq!(schemes["adminKey"]["scheme"], "bearer");
    assert_eq!(schemes["consoleSession"]["in"], "cookie");
    assert_eq!(schemes["consoleSession"]["name"], "payments_mock_session");

    // Without an admin key nothing outside /api/ wants anything.
    let mut config = guarded_config();
    config.admin_keys.clear();
    let doc = open_doc(config);
    for (path, ops) in doc["paths"].as_object().expect("paths") {
        for (method, op) in ops.as_object().expect("operations") {
            if !path.starts_with("/api/") {
                assert_eq!(op["security"], json!([]), "{method} {path}");
                assert!(op["responses"]["401"].is_null(), "{method} {path}");
            }
        }
    }
    assert!(doc["components"]["securitySchemes"]["adminKey"].is_null());
}
