//! The admin side behind `--admin-key` (CONTRACT section 18, issue 33),
//! in-process: the role matrix on every route outside `/api/`, a
//! merchant's key scoped and read-only, wrong, empty and huge keys and
//! cookies, forged and expired sessions. The same matrix through the
//! binary, the start-up warning and secrets in its output are
//! `admin_binary.rs`.

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
                .replace("{token}", token);
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
    // The sign-in form leads into the console whatever it carries, an
    // empty key or no body at all (never a 401: the OpenAPI document
    // lists none without an admin key); sign-out needs no body either.
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
        assert_eq!(
            answer.status, 303,
            "sign-out with {body:?}: {}",
            answer.body
        );
    }
}

/// `MERCHANT`'s and `OTHER_MERCHANT`'s transactions, and requests of every
/// kind about them, on a guarded server.
async fn two_merchants(target: &Target) -> (String, String) {
    let json = ("content-type", "application/json");
    let a = format!("Bearer {KEY_A}");
    let b = format!("Bearer {KEY_B}");
    let initiate = |merchant: &str, reference: &str| {
        json!({
            "merchantId": merchant, "referenceNo": reference, "amount": 100,
            "productCode": "TOPUP", "storeId": "S1", "payerId": "60123456789",
        })
        .to_string()
    };
    let mine = target
        .call(
            "POST",
            "/api/payments/initiate",
            &[json, ("authorization", &a)],
            Some(&initiate(MERCHANT, "A-1")),
        )
        .await
        .json()["data"]["transactionId"]
        .as_str()
        .expect("A's id")
        .to_owned();
    let theirs = target
        .call(
            "POST",
            "/api/payments/initiate",
            &[json, ("authorization", &b)],
            Some(&initiate(OTHER_MERCHANT, "B-SECRET-REF")),
        )
        .await
        .json()["data"]["transactionId"]
        .as_str()
        .expect("B's id")
        .to_owned();
    // B probes A's transaction and names A in an initiate: both refused,
    // and none of it is A's to see.
    let probe = target
        .call(
            "GET",
            &format!("/api/payments/{mine}/status"),
            &[("authorization", &b), ("x-probe", "B-PROBE")],
            None,
        )
        .await;
    assert_eq!(probe.status, 404);
    let posing = target
        .call(
            "POST",
            "/api/payments/initiate",
            &[json, ("authorization", &b), ("x-probe", "B-POSING")],
            Some(&initiate(MERCHANT, "B-AS-A")),
        )
        .await;
    assert_eq!(posing.status, 403);
    // A reads its own, by id and by reference.
    for path in [
        format!("/api/payments/{mine}/status"),
        "/api/payments/reference/A-1/status".to_owned(),
    ] {
        let answer = target
            .call("GET", &path, &[("authorization", &a)], None)
            .await;
        assert_eq!(answer.status, 200, "{path}");
    }
    let answer = target
        .call(
            "GET",
            &format!("/api/payments/{theirs}/status"),
            &[("authorization", &b)],
            None,
        )
        .await;
    assert_eq!(answer.status, 200);
    (mine, theirs)
}

#[tokio::test]
async fn a_merchants_key_sees_its_own_transactions_and_requests_only() {
    let (_state, router) = guarded();
    let target = Target::Router(router);
    let (mine, theirs) = two_merchants(&target).await;
    let a = format!("Bearer {KEY_A}");
    let admin = format!("Bearer {ADMIN_KEY}");
    let get = |path: String, auth: &str| {
        let target = target.clone();
        let auth = auth.to_owned();
        async move {
            target
                .call("GET", &path, &[("authorization", &auth)], None)
                .await
        }
    };

    let listed = get("/_mock/transactions".into(), &a).await.json();
    let ids: Vec<&str> = listed["data"]["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|t| t["transactionId"].as_str())
        .collect();
    assert_eq!(ids, vec![mine.as_str()], "{listed}");
    let all = get("/_mock/transactions".into(), &admin).await.json();
    assert_eq!(all["data"]["items"].as_array().map(Vec::len), Some(2));
    // Another merchant's filter is empty, its id no place to page from.
    let other = get(
        format!("/_mock/transactions?merchantId={OTHER_MERCHANT}"),
        &a,
    )
    .await
    .json();
    assert_eq!(other["data"]["items"], json!([]), "{other}");
    let after = get(format!("/_mock/transactions?after={theirs}"), &a).await;
    assert_eq!(after.status, 404, "{}", after.body);

    let journal = get("/_mock/requests".into(), &a).await;
    assert_eq!(journal.status, 200);
    for absent in [
        theirs.as_str(),
        OTHER_MERCHANT,
        "B-SECRET-REF",
        "B-PROBE",
        "B-POSING",
        "B-AS-A",
    ] {
        assert!(
            !journal.body.contains(absent),
            "{absent} is in A's journal: {}",
            journal.body
        );
    }
    let items = journal.json()["data"]["items"]
        .as_array()
        .expect("items")
        .len();
    assert_eq!(items, 3, "A's initiate and two reads: {}", journal.body);
    let everything = get("/_mock/requests".into(), &admin).await;
    assert!(everything.body.contains("B-PROBE") && everything.body.contains("B-SECRET-REF"));

    // The console, the same: the list, the live rows, the detail, the
    // journal, its feed and one request.
    for page in [
        "/_mock/ui/",
        "/_mock/ui/transactions/rows",
        "/_mock/ui/requests",
        "/_mock/ui/requests/feed?after=0",
    ] {
        let answer = get(page.into(), &a).await;
        assert_eq!(answer.status, 200, "{page}");
        for absent in [theirs.as_str(), "B-SECRET-REF", "B-PROBE"] {
            assert!(!answer.body.contains(absent), "{absent} on {page}");
        }
        if page.starts_with("/_mock/ui/requests") {
            assert!(answer.body.contains("/api/payments/initiate"), "{page}");
        } else {
            assert!(answer.body.contains(&mine), "{page}");
        }
    }
    let list = get("/_mock/ui/".into(), &a).await;
    assert!(!list.body.contains("stored in all"), "no totals of others");
    assert!(!list.body.contains("f-merchant"), "no merchant filter");
    let detail = get(format!("/_mock/ui/transactions/{theirs}"), &a).await;
    assert_eq!(detail.status, 404);
    let detail = get(format!("/_mock/ui/transactions/{mine}"), &a).await;
    assert_eq!(detail.status, 200);
    assert!(!detail.body.contains("B-PROBE"));
    // Every request seq: A opens its own and none of B's.
    let admin_rows = get("/_mock/ui/requests".into(), &admin).await.body;
    let mut opened = 0;
    for part in admin_rows.split("_mock/ui/requests/").skip(1) {
        let seq: String = part.chars().take_while(char::is_ascii_digit).collect();
        if seq.is_empty() {
            continue;
        }
        let as_admin = get(format!("/_mock/ui/requests/{seq}"), &admin).await;
        let as_a = get(format!("/_mock/ui/requests/{seq}"), &a).await;
        let bs = as_admin.body.contains(OTHER_MERCHANT)
            || as_admin.body.contains("B-P")
            || as_admin.body.contains(&theirs);
        assert_eq!(as_a.status, if bs { 404 } else { 200 }, "request {seq}");
        opened += usize::from(as_a.status == 200);
    }
    assert_eq!(opened, 3);
}

#[tokio::test]
async fn a_merchants_key_changes_nothing() {
    let (state, router) = guarded();
    let target = Target::Router(router);
    let (id, page) = target.redirect_payment("NO-CHANGE").await;
    let before = (count(&state).await, clock_offset(&state).await);
    let a = format!("Bearer {KEY_A}");
    let auth = ("authorization", a.as_str());
    let json = ("content-type", JSON);
    let form = ("content-type", FORM);
    let payer = format!("/_mock/transactions/{id}/payer");
    let mut tried = 0;
    for (method, path, headers, body) in [
        ("POST", "/_mock/reset", vec![auth], None),
        (
            "POST",
            "/_mock/clock/advance",
            vec![auth, json],
            Some(r#"{"seconds":3600}"#),
        ),
        (
            "POST",
            &payer,
            vec![auth, json],
            Some(r#"{"action":"pay"}"#),
        ),
        (
            "POST",
            &payer,
            vec![auth, json],
            Some(r#"{"action":"decline"}"#),
        ),
        (
            "POST",
            &payer,
            vec![auth, json],
            Some(r#"{"action":"cancel"}"#),
        ),
        (
            "POST",
            "/_mock/ui/clock",
            vec![auth, form],
            Some("seconds=3600"),
        ),
        ("POST", "/_mock/ui/reset", vec![auth, form], Some("")),
        ("GET", "/_mock/ui/reset", vec![auth], None),
        // Whatever a later version adds that changes the catalogue or
        // anything else, it will not be a GET: refused before routing.
        ("PUT", "/_mock/catalog", vec![auth, json], Some("{}")),
        ("POST", "/_mock/catalog", vec![auth, json], Some("{}")),
        ("DELETE", "/_mock/transactions", vec![auth], None),
        ("PATCH", "/_mock/clock", vec![auth, json], Some("{}")),
        ("PUT", "/_mock/ui/catalog", vec![auth, form], Some("")),
    ] {
        tried += 1;
        let answer = target.call(method, path, &headers, body).await;
        assert_eq!(answer.status, 403, "{method} {path}: {}", answer.body);
        if !path.starts_with("/_mock/ui") {
            assert_eq!(answer.json()["errorCode"], "FORBIDDEN", "{method} {path}");
        }
    }
    assert_eq!(tried, 13);
    assert_eq!((count(&state).await, clock_offset(&state).await), before);
    let status = target
        .call("GET", &format!("/api/payments/{id}/status"), &[auth], None)
        .await
        .json();
    assert_eq!(
        status["data"]["status"], "CONFIRMED",
        "the payer has not decided"
    );
    // The payer's own page stays open: the token is the capability.
    let paid = target
        .call("POST", &page, &[form], Some("action=pay"))
        .await;
    assert_eq!(paid.status, 303);
}

#[tokio::test]
async fn wrong_empty_and_huge_keys_and_cookies_are_refused_without_an_echo() {
    let (_, router) = guarded();
    let target = Target::Router(router);
    let huge = format!("Bearer {}", "k".repeat(100 * 1024));
    let near = format!("Bearer {}x", ADMIN_KEY);
    let short = format!("Bearer {}", &ADMIN_KEY[..ADMIN_KEY.len() - 1]);
    let upper = format!("Bearer {}", ADMIN_KEY.to_uppercase());
    let basic = format!("Basic {ADMIN_KEY}");
    let twice = format!("Bearer {ADMIN_KEY} {ADMIN_KEY}");
    for auth in [
        "",
        "Bearer",
        "Bearer ",
        "Bearer  ",
        &huge,
        &near,
        &short,
        &upper,
        &basic,
        &twice,
        "Bearer \u{7f}",
    ] {
        for path in ["/_mock/transactions", "/_mock/ui/", "/_mock/reset"] {
            let method = if path == "/_mock/reset" {
                "POST"
            } else {
                "GET"
            };
            let Ok(value) = axum::http::HeaderValue::from_str(auth) else {
                continue;
            };
            let value = value.to_str().unwrap_or_default().to_owned();
            let answer = target
                .call(method, path, &[("authorization", &value)], None)
                .await;
            assert_eq!(answer.status, 401, "{path} with {:.20}", auth);
            assert!(!answer.body.contains("kkkkkkkk") && !answer.body.contains(ADMIN_KEY));
        }
    }
    // The scheme in any letter case, as on /api/.
    let lower = format!("bearer {ADMIN_KEY}");
    let answer = target
        .call(
            "GET",
            "/_mock/transactions",
            &[("authorization", &lower)],
            None,
        )
        .await;
    assert_eq!(answer.status, 200);

    let huge_cookie = format!("payments_mock_session={}", "a".repeat(100 * 1024));
    let many = (0..50)
        .map(|i| format!("payments_mock_session={i:064x}"))
        .collect::<Vec<_>>()
        .join("; ");
    for cookie in [
        "",
        "payments_mock_session=",
        "payments_mock_session=nope",
        &huge_cookie,
        &many,
        "payments_mock_session=zz; other=1",
        &format!("payments_mock_session={ADMIN_KEY}"),
    ] {
        let answer = target
            .call("GET", "/_mock/ui/", &[("cookie", cookie)], None)
            .await;
        assert_eq!(answer.status, 401, "cookie {:.40}", cookie);
        assert!(answer.body.contains("Sign in"));
        assert!(!answer.body.contains("aaaaaaaa") && !answer.body.contains(ADMIN_KEY));
        // A JSON control takes no cookie at all.
        let answer = target
            .call("GET", "/_mock/transactions", &[("cookie", cookie)], None)
            .await;
        assert_eq!(answer.status, 401);
    }
    // A wrong, empty or huge key typed on the sign-in page.
    for key in [
        "",
        "nope-key-7731",
        &"k".repeat(3000),
        &format!("{ADMIN_KEY} "),
    ] {
        let body: String = form_urlencoded::Serializer::new(String::new())
            .append_pair("key", key)
            .finish();
        let answer = target
            .call(
                "POST",
                "/_mock/ui/sign-in",
                &[("content-type", FORM)],
                Some(&body),
            )
            .await;
        assert_eq!(answer.status, 401, "{:.20}", key);
        assert!(answer.headers.get("set-cookie").is_none());
        assert!(
            key.is_empty() || !answer.body.contains(key.trim()),
            "{:.20}",
            key
        );
    }
    let body = format!("key={}", "k".repeat(100 * 1024));
    let answer = target
        .call(
            "POST",
            "/_mock/ui/sign-in",
            &[("content-type", FORM)],
            Some(&body),
        )
        .await;
    assert_eq!(answer.status, 413);
    assert!(!answer.body.contains("kkkkkkkk"));
}

/// Signs in with `key` on the sign-in page: the session cookie's
/// `name=value`, and the whole `Set-Cookie`.
pub(crate) async fn sign_in(target: &Target, key: &str) -> (String, String) {
    let body: String = form_urlencoded::Serializer::new(String::new())
        .append_pair("key", key)
        .append_pair("next", "_mock/ui/requests")
        .finish();
    let answer = target
        .call(
            "POST",
            "/_mock/ui/sign-in",
            &[("content-type", FORM)],
            Some(&body),
        )
        .await;
    assert_eq!(answer.status, 303, "{}", answer.body);
    assert_eq!(answer.headers["location"], "../../_mock/ui/requests");
    let set = answer.headers["set-cookie"]
        .to_str()
        .expect("ascii")
        .to_owned();
    let pair = set.split(';').next().expect("name=value").to_owned();
    (pair, set)
}

#[tokio::test]
async fn a_sign_in_keeps_a_session_until_sign_out_and_never_the_key() {
    let (state, router) = guarded();
    let target = Target::Router(router);
    let (cookie, set) = sign_in(&target, ADMIN_KEY).await;
    for flag in ["HttpOnly", "SameSite=Strict", "Path=/", "Max-Age=43200"] {
        assert!(set.contains(flag), "{set}");
    }
    assert!(!set.contains("Secure"), "plain HTTP: {set}");
    assert!(!set.contains(ADMIN_KEY));
    let id = cookie.trim_start_matches("payments_mock_session=");
    assert_eq!(id.len(), 64, "256 bits in hex");
    let page = target
        .call("GET", "/_mock/ui/", &[("cookie", &cookie)], None)
        .await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains("Signed in with the admin key") && page.body.contains("sign-out"));
    assert!(
        !page.body.contains(id),
        "the page never shows the session id"
    );
    // A second sign-in is a second session; signing out ends only its own.
    let (other, _) = sign_in(&target, ADMIN_KEY).await;
    assert_ne!(other, cookie);
    assert_eq!(state.admin.sessions.len(), 2);
    let out = target
        .call(
            "POST",
            "/_mock/ui/sign-out",
            &[("cookie", &cookie), ("content-type", FORM)],
            Some(""),
        )
        .await;
    assert_eq!(out.status, 303);
    assert!(
        out.headers["set-cookie"]
            .to_str()
            .expect("ascii")
            .contains("Max-Age=0")
    );
    let after = target
        .call("GET", "/_mock/ui/", &[("cookie", &cookie)], None)
        .await;
    assert_eq!(after.status, 401, "a signed-out session is refused");
    assert!(after.body.contains("Your sign-in has ended"));
    assert!(
        after.headers["set-cookie"]
            .to_str()
            .expect("ascii")
            .contains("Max-Age=0")
    );
    let still = target
        .call("GET", "/_mock/ui/", &[("cookie", &other)], None)
        .await;
    assert_eq!(still.status, 200);
    // Nothing of it in the state's Debug either.
    let debug = format!("{state:?}");
    let other_id = other.trim_start_matches("payments_mock_session=");
    assert!(
        !debug.contains(ADMIN_KEY) && !debug.contains(other_id),
        "{debug:.2000}"
    );

    // A merchant's session sees what its key sees.
    let (merchant, _) = sign_in(&target, KEY_A).await;
    let page = target
        .call("GET", "/_mock/ui/clock", &[("cookie", &merchant)], None)
        .await;
    assert!(
        page.body
            .contains(&format!("Signed in as merchant {MERCHANT}"))
    );
    assert!(
        !page.body.contains("id=\"advance\""),
        "no clock form for a merchant"
    );
    let refused = target
        .call(
            "POST",
            "/_mock/ui/reset",
            &[("cookie", &merchant), ("content-type", FORM)],
            Some(""),
        )
        .await;
    assert_eq!(refused.status, 403);
    // An unbound API key has nothing to sign in to.
    let body = format!("key={KEY_OPEN}");
    let answer = target
        .call(
            "POST",
            "/_mock/ui/sign-in",
            &[("content-type", FORM)],
            Some(&body),
        )
        .await;
    assert_eq!(answer.status, 403);
    assert!(answer.headers.get("set-cookie").is_none());
}

#[tokio::test]
async fn a_forged_or_expired_session_is_refused() {
    let (state, router) = guarded();
    let target = Target::Router(router);
    let (cookie, _) = sign_in(&target, ADMIN_KEY).await;
    let ok = target
        .call("GET", "/_mock/ui/", &[("cookie", &cookie)], None)
        .await;
    assert_eq!(ok.status, 200);
    // Forged: one digit off at the start (finds no session) and at the
    // end (the right session, the wrong verifier); a made-up one.
    let flip = |at: usize| {
        let mut bytes = cookie.clone().into_bytes();
        let i = "payments_mock_session=".len() + at;
        bytes[i] = if bytes[i] == b'0' { b'1' } else { b'0' };
        String::from_utf8(bytes).expect("ascii")
    };
    for forged in [
        flip(0),
        flip(63),
        format!("payments_mock_session={}", "0".repeat(64)),
    ] {
        let answer = target
            .call("GET", "/_mock/ui/", &[("cookie", &forged)], None)
            .await;
        assert_eq!(answer.status, 401, "{forged}");
    }
    // Expired: the sessions' clock moves past 12 hours (no sleep); the
    // mock's virtual clock has nothing to do with it.
    state
        .admin
        .sessions
        .pass_time(Duration::from_secs(12 * 3600 - 60));
    let ok = target
        .call("GET", "/_mock/ui/", &[("cookie", &cookie)], None)
        .await;
    assert_eq!(ok.status, 200, "still valid a minute before its end");
    state.admin.sessions.pass_time(Duration::from_secs(61));
    let expired = target
        .call("GET", "/_mock/ui/", &[("cookie", &cookie)], None)
        .await;
    assert_eq!(expired.status, 401);
    assert!(expired.body.contains("Your sign-in has ended"));
    let answer = target
        .call(
            "GET",
            "/_mock/ui/",
            &[("authorization", &format!("Bearer {ADMIN_KEY}"))],
            None,
        )
        .await;
    assert_eq!(answer.status, 200, "the key itself still works");
}

#[tokio::test]
async fn another_sites_page_is_refused_even_with_a_session() {
    let (state, router) = guarded();
    let target = Target::Router(router);
    let (cookie, _) = sign_in(&target, ADMIN_KEY).await;
    let before = clock_offset(&state).await;
    let evil = [
        ("cookie", cookie.as_str()),
        ("content-type", FORM),
        ("host", "127.0.0.1:8080"),
        ("origin", "https://evil.example"),
    ];
    for (path, body) in [
        ("/_mock/ui/clock", "seconds=60"),
        ("/_mock/ui/reset", ""),
        ("/_mock/ui/sign-out", ""),
        ("/_mock/ui/sign-in", "key=x"),
    ] {
        let answer = target.call("POST", path, &evil, Some(body)).await;
        assert_eq!(answer.status, 403, "{path}");
    }
    let json_evil = [
        ("authorization", &*format!("Bearer {ADMIN_KEY}")),
        ("content-type", JSON),
        ("host", "127.0.0.1:8080"),
        ("origin", "https://evil.example"),
    ];
    let answer = target
        .call(
            "POST",
            "/_mock/clock/advance",
            &json_evil,
            Some(r#"{"seconds":60}"#),
        )
        .await;
    assert_eq!(answer.status, 403);
    assert_eq!(clock_offset(&state).await, before);
    let still = target
        .call("GET", "/_mock/ui/", &[("cookie", &cookie)], None)
        .await;
    assert_eq!(still.status, 200, "the refused sign-out ended nothing");
    // The same form from the console's own origin goes through.
    let own = [
        ("cookie", cookie.as_str()),
        ("content-type", FORM),
        ("host", "127.0.0.1:8080"),
        ("origin", "http://127.0.0.1:8080"),
    ];
    let answer = target
        .call("POST", "/_mock/ui/clock", &own, Some("seconds=60"))
        .await;
    assert_eq!(answer.status, 303);
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
