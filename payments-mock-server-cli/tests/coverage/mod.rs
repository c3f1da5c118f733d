//! The mock's coverage of the application under test (CONTRACT section
//! 20, issue 43): every kind of cell counted by real answers, the cells
//! exactly the interface's, reset, the JSON and the page
//! (`GET /_mock/coverage`, `/_mock/ui/coverage`), `assert_covered`. What
//! recovers a committed fault is `recovery.rs`; who may read the coverage,
//! in-process and through the binary, `access.rs`.

use std::time::Duration;

use axum::Router;
use axum::http::Method;
use payments_interface::coverage::{Cell, cells};
use payments_mock_server::state::AppState;
use payments_mock_server::{Catalog, Config, CoverageReport};
use serde_json::{Value, json};

use crate::common::{
    Reply, advance, confirm, get, initiate, initiate_body, initiated, post, request, send, service,
    service_with, status,
};

// A committed fault, and the application coming back for it.
mod recovery;
// Who may read the coverage; the binary.
mod access;

/// The default catalogue and a product that starts `PENDING` and settles
/// later (the one transition the default catalogue cannot make:
/// `PENDING -> CONFIRMED`).
fn catalogue() -> Catalog {
    let example = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../payments-mock-server/catalog.example.toml"
    ));
    let text = format!(
        "{example}\n[[product]]\ncode = \"PENDINGBILL\"\ndescription = \"a bill the payer approves first\"\n\
         initial = \"PENDING\"\noutcome = \"async\"\nsettle_after = \"2s\"\n"
    );
    Catalog::from_toml_str(&text).expect("a catalogue")
}

fn server() -> (AppState, Router) {
    let mut config = Config::default();
    config.catalog = catalogue();
    service_with(config)
}

/// A request with `X-Mock-Fault: fault`.
async fn faulted(
    router: &Router,
    method: Method,
    path: &str,
    body: Option<&Value>,
    fault: &str,
) -> Reply {
    let text = body.map(Value::to_string);
    let mut request = request(method, path, text.as_deref());
    request
        .headers_mut()
        .insert("x-mock-fault", fault.parse().expect("a header value"));
    send(router, request).await
}

/// A merchant's initiate of `product` with a payer, for any product.
fn body(reference: &str, product: &str) -> Value {
    let mut body = initiate_body(reference, product);
    if product == "ONLINEBANKING" {
        body["returnUrl"] = json!("https://shop.example/back");
    }
    body
}

async fn made(router: &Router, reference: &str, product: &str) -> String {
    let reply = initiate(router, &body(reference, product)).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.data()["transactionId"]
        .as_str()
        .expect("an id")
        .to_owned()
}

/// Every transition of the contract, made by real requests and the clock.
async fn every_transition(state: &AppState, router: &Router) {
    let topup = made(router, "T-TOPUP", "TOPUP").await;
    let bill = made(router, "T-BILL", "BILLPAY").await;
    let wallet = made(router, "T-WALLET", "EWALLET").await;
    let wallet_bad = made(router, "T-WALLET-2", "EWALLET").await;
    let declined = made(router, "T-DECL", "DECLINED").await;
    let pending_bill = made(router, "T-PBILL", "PENDINGBILL").await;
    let bank = made(router, "T-BANK", "ONLINEBANKING").await;
    let bank_late = made(router, "T-BANK-2", "ONLINEBANKING").await;
    let expiring = made(router, "T-EXP", "TOPUP").await;
    let expiring_wallet = made(router, "T-EXP-2", "EWALLET").await;
    for (id, reference, code) in [
        (&topup, "T-TOPUP", None),
        (&bill, "T-BILL", None),
        (&wallet, "T-WALLET", Some("123456")),
        (&wallet_bad, "T-WALLET-2", Some("000000")),
        (&declined, "T-DECL", None),
        (&pending_bill, "T-PBILL", None),
        (&bank, "T-BANK", None),
        (&bank_late, "T-BANK-2", None),
    ] {
        let reply = confirm(router, id, reference, code).await;
        assert_eq!(reply.status, 200, "{}", reply.body);
    }
    let payer = post(
        router,
        &format!("/_mock/transactions/{bank}/payer"),
        &json!({"action": "decline"}),
    )
    .await;
    assert_eq!(payer.status, 200, "{}", payer.body);
    // The clock: settlement (2 s), the payer window (10 min), expiry (15).
    advance(state, Duration::from_secs(16 * 60)).await;
    for id in [&bill, &pending_bill, &bank_late, &expiring] {
        assert_eq!(status(router, id).await.status, 200);
    }
    // Read twice: a move of the clock counts once.
    assert_eq!(status(router, &bill).await.status, 200);
    // Shown by a confirm answered TRANSACTION_EXPIRED, no read before.
    let reply = confirm(router, &expiring_wallet, "T-EXP-2", Some("123456")).await;
    assert_eq!(reply.code(), "TRANSACTION_EXPIRED");
}

#[tokio::test]
async fn every_kind_of_cell_is_counted_by_the_real_answers() {
    let (state, router) = server();
    every_transition(&state, &router).await;
    let topup = initiated(&router, "A-1", "TOPUP").await;
    // Answers of every endpoint, failures too.
    assert_eq!(
        initiate(&router, &json!({})).await.code(),
        "VALIDATION_ERROR"
    );
    assert_eq!(
        initiate(&router, &initiate_body("A-1", "TOPUP"))
            .await
            .code(),
        "DUPLICATE_REFERENCE_NO"
    );
    assert_eq!(
        confirm(&router, "nope", "A-1", None).await.code(),
        "TRANSACTION_NOT_FOUND"
    );
    assert_eq!(confirm(&router, &topup, "A-1", None).await.status, 200);
    assert_eq!(
        confirm(&router, &topup, "A-1", None).await.code(),
        "TRANSACTION_ALREADY_CONFIRMED"
    );
    assert_eq!(status(&router, "nope").await.status, 404);
    assert_eq!(
        get(&router, "/api/payments//status").await.code(),
        "INVALID_TRANSACTION_ID"
    );
    let by_reference = get(&router, "/api/payments/reference/A-1/status").await;
    assert_eq!(by_reference.status, 200);
    assert_eq!(
        get(&router, "/api/payments/reference/A-1/status?merchantId=x")
            .await
            .code(),
        "VALIDATION_ERROR"
    );
    // Outside the cells: a wrong method on an endpoint's path.
    assert_eq!(get(&router, "/api/payments/initiate").await.status, 405);
    // Every fault kind, on initiate; two on a read.
    for (n, fault) in [
        "internal-error",
        "commit-then-error",
        "reset",
        "commit-then-reset",
        "delay=0",
        "rate-limit",
        "answer-other",
    ]
    .into_iter()
    .enumerate()
    {
        let body = initiate_body(&format!("F-{n}"), "TOPUP");
        faulted(
            &router,
            Method::POST,
            "/api/payments/initiate",
            Some(&body),
            fault,
        )
        .await;
    }
    let path = format!("/api/payments/{topup}/status");
    faulted(&router, Method::GET, &path, None, "rate-limit").await;
    faulted(&router, Method::GET, &path, None, "delay=0,internal-error").await;

    let coverage = state.coverage();
    for (name, count) in [
        ("initiate 200", 13),
        ("initiate 400 VALIDATION_ERROR", 1),
        ("initiate 400 DUPLICATE_REFERENCE_NO", 1),
        // internal-error, commit-then-error, and the reset and
        // commit-then-reset in-process (no connection to close).
        ("initiate 500 INTERNAL_ERROR", 4),
        ("initiate 429 RATE_LIMITED", 1),
        ("confirm 200", 9),
        ("confirm 400 TRANSACTION_NOT_FOUND", 1),
        ("confirm 400 TRANSACTION_ALREADY_CONFIRMED", 1),
        ("confirm 400 TRANSACTION_EXPIRED", 1),
        ("statusById 200", 5),
        ("statusById 404 TRANSACTION_NOT_FOUND", 1),
        ("statusById 400 INVALID_TRANSACTION_ID", 1),
        ("statusById 429 RATE_LIMITED", 1),
        ("statusById 500 INTERNAL_ERROR", 1),
        ("statusByReference 200", 1),
        ("statusByReference 400 VALIDATION_ERROR", 1),
        ("statusByReference 404 TRANSACTION_NOT_FOUND", 0),
        ("transition created -> INITIATED", 11),
        ("transition created -> PENDING", 4),
        ("transition INITIATED -> SUCCESSFUL", 2),
        ("transition PENDING -> SUCCESSFUL", 1),
        ("transition INITIATED -> CONFIRMED", 3),
        ("transition PENDING -> CONFIRMED", 1),
        ("transition INITIATED -> FAILED", 1),
        ("transition PENDING -> FAILED", 1),
        ("transition CONFIRMED -> SUCCESSFUL", 2),
        ("transition CONFIRMED -> FAILED", 2),
        ("transition INITIATED -> EXPIRED", 1),
        ("transition PENDING -> EXPIRED", 1),
        ("initiate internal-error", 1),
        ("initiate commit-then-error", 1),
        ("initiate reset", 1),
        ("initiate commit-then-reset", 1),
        ("initiate delay", 1),
        ("initiate rate-limit", 1),
        ("initiate answer-other", 1),
        ("statusById rate-limit", 1),
        ("statusById delay", 1),
        ("statusById internal-error", 1),
        ("confirm commit-then-error", 0),
    ] {
        assert_eq!(coverage.count(name), Some(count), "{name}");
    }
    assert_eq!(
        coverage.matrix().outside(),
        [("initiate 405 METHOD_NOT_ALLOWED".to_owned(), 1)]
    );
    // Every transition of the contract was made.
    for (cell, count) in coverage.matrix().cells() {
        if let Cell::Transition { .. } = cell {
            assert!(*count > 0, "{cell} was not made");
        }
    }
    let seen = coverage
        .matrix()
        .cells()
        .iter()
        .filter(|(_, n)| *n > 0)
        .count();
    let expected = 100.0 * seen as f64 / cells().len() as f64;
    assert!((coverage.percent() - expected).abs() < 1e-9);
}

/// A transition is what the transaction did, whatever the answer said:
/// an initiate that met `commit-then-error` made its transaction.
#[tokio::test]
async fn a_change_made_under_a_fault_still_counts_its_transition() {
    let (state, router) = service();
    let body = initiate_body("CTE-1", "TOPUP");
    let reply = faulted(
        &router,
        Method::POST,
        "/api/payments/initiate",
        Some(&body),
        "commit-then-error",
    )
    .await;
    assert_eq!(reply.status, 500);
    let coverage = state.coverage();
    assert_eq!(coverage.count("transition created -> INITIATED"), Some(1));
    assert_eq!(coverage.count("initiate 200"), Some(0));
    assert_eq!(coverage.count("initiate 500 INTERNAL_ERROR"), Some(1));
}

/// The matrix is the interface's, cell for cell and in its order: in
/// process, in the JSON, and on the page.
#[tokio::test]
async fn the_cells_are_exactly_the_interfaces() {
    let (state, router) = service();
    let report = state.coverage();
    let matrix: Vec<Cell> = report.matrix().cells().iter().map(|(c, _)| *c).collect();
    assert_eq!(matrix, cells());

    let reply = get(&router, "/_mock/coverage").await;
    assert_eq!(reply.status, 200);
    let data = reply.data();
    let names = |list: &str| -> Vec<String> {
        data[list]
            .as_array()
            .expect("a list")
            .iter()
            .map(|c| c["name"].as_str().expect("a name").to_owned())
            .collect()
    };
    let answers: Vec<String> = cells()
        .into_iter()
        .filter(|c| c.endpoint().is_some())
        .map(|c| c.to_string())
        .collect();
    let transitions: Vec<String> = cells()
        .into_iter()
        .filter(|c| c.endpoint().is_none())
        .map(|c| c.to_string())
        .collect();
    assert_eq!(names("answers"), answers);
    assert_eq!(names("transitions"), transitions);
    assert_eq!(data["cells"], json!(cells().len()));
    assert_eq!(data["covered"], json!(0));
    assert_eq!(data["percent"].as_f64(), Some(0.0));
    // Documented or contract, as the interface says.
    for cell in &data["answers"].as_array().expect("answers")[..] {
        let named = cells()
            .into_iter()
            .find(|c| c.to_string() == cell["name"])
            .expect("a cell");
        let source = if named.is_documented() {
            "document"
        } else {
            "contract"
        };
        assert_eq!(cell["source"], source, "{}", cell["name"]);
    }
    // The fault cells: every endpoint, every kind (the seven of
    // X-Mock-Fault and the five only rules script), recovered for the five
    // that commit.
    let faults = data["faults"].as_array().expect("faults");
    assert_eq!(faults.len(), 4 * 12);
    let recovered: Vec<&str> = faults
        .iter()
        .filter(|f| !f["recovered"].is_null())
        .map(|f| f["recoveredName"].as_str().expect("a name"))
        .collect();
    assert_eq!(recovered.len(), 4 * 5);
    assert!(recovered.contains(&"initiate commit-then-error recovered"));
    assert!(recovered.contains(&"confirm answer-other recovered"));
    assert!(recovered.contains(&"statusByReference commit-then-reset recovered"));
    assert_eq!(data["outside"], json!([]));
    assert_eq!(data["replica"], "local");

    let page = get(&router, "/_mock/ui/coverage").await;
    assert_eq!(page.status, 200);
    let html = String::from_utf8_lossy(&page.raw);
    for name in answers.iter().chain(&transitions) {
        let shown = name.replace('>', "&#62;");
        assert!(html.contains(&shown), "{name} is not on the page");
    }
}

async fn a_little_of_everything(router: &Router) {
    let id = initiated(router, "R-1", "TOPUP").await;
    confirm(router, &id, "R-1", None).await;
    get(router, "/api/payments/initiate").await;
    let body = initiate_body("R-2", "TOPUP");
    faulted(
        router,
        Method::POST,
        "/api/payments/initiate",
        Some(&body),
        "commit-then-error",
    )
    .await;
}

fn is_empty(report: &CoverageReport) -> bool {
    report.matrix().cells().iter().all(|(_, n)| *n == 0)
        && report.matrix().outside().is_empty()
        && report
            .faults()
            .iter()
            .all(|f| f.met == 0 && f.recovered.unwrap_or(0) == 0)
}

#[tokio::test]
async fn every_reset_clears_the_coverage() {
    let (state, router) = service();
    // POST /_mock/reset.
    a_little_of_everything(&router).await;
    assert!(!is_empty(&state.coverage()));
    let before = state.coverage().since();
    assert_eq!(
        send(&router, request(Method::POST, "/_mock/reset", None))
            .await
            .status,
        200
    );
    let after = state.coverage();
    assert!(is_empty(&after), "{after:?}");
    assert!(after.since() >= before);
    // A committed fault noted before the reset is forgotten: a read of
    // its reference now recovers nothing.
    a_little_of_everything(&router).await;
    send(&router, request(Method::POST, "/_mock/reset", None)).await;
    initiated(&router, "R-2", "TOPUP").await;
    get(&router, "/api/payments/reference/R-2/status").await;
    assert_eq!(
        state
            .coverage()
            .count("initiate commit-then-error recovered"),
        Some(0)
    );

    // The console's reset.
    a_little_of_everything(&router).await;
    let mut form = request(Method::POST, "/_mock/ui/reset", None);
    form.headers_mut().insert(
        "content-type",
        "application/x-www-form-urlencoded"
            .parse()
            .expect("a value"),
    );
    assert_eq!(send(&router, form).await.status, 303);
    assert!(is_empty(&state.coverage()));

    // MockServer::reset.
    let server = payments_mock_server::MockServer::start().await;
    let http = reqwest::Client::new();
    http.post(format!("{}/api/payments/initiate", server.base_url()))
        .json(&initiate_body("R-3", "TOPUP"))
        .send()
        .await
        .expect("sent");
    assert_eq!(server.coverage().await.count("initiate 200"), Some(1));
    server.reset().await;
    assert!(is_empty(&server.coverage().await));
    server.shutdown().await;
}

/// The panic's message names every cell that was not covered, and says
/// which names are no cell at all.
#[tokio::test]
async fn assert_covered_panics_naming_the_missing_cells() {
    let (state, router) = service();
    initiated(&router, "P-1", "TOPUP").await;
    let report = state.coverage();
    report.assert_covered(["initiate 200", "transition created -> INITIATED"]);
    let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        report.assert_covered([
            "initiate 200",
            "confirm 400 TRANSACTION_NOT_FOUND",
            "initiate commit-then-error recovered",
            "initate 200",
        ]);
    }))
    .expect_err("a panic");
    let message = panic
        .downcast_ref::<String>()
        .cloned()
        .expect("a formatted message");
    assert!(message.contains("3 cells not covered"), "{message}");
    assert!(
        message.contains("\"confirm 400 TRANSACTION_NOT_FOUND\": not exercised"),
        "{message}"
    );
    assert!(
        message.contains("\"initiate commit-then-error recovered\": not exercised"),
        "{message}"
    );
    assert!(
        message.contains("\"initate 200\": no such cell"),
        "{message}"
    );
    assert!(!message.contains("\"initiate 200\": "), "{message}");
    assert_eq!(
        report.uncovered(["initiate 200", "confirm 200"]),
        ["\"confirm 200\": not exercised"]
    );
}

/// Outside text on the page (the replica's name is the operator's) is
/// text, and the page has the console's navigation, with its own entry
/// current.
#[tokio::test]
async fn the_page_shows_the_counts_and_escapes_outside_text() {
    let mut config = Config::default();
    config.replica_name = Some("<script>alert(1)</script>".to_owned());
    let (state, router) = service_with(config);
    initiated(&router, "PG-1", "TOPUP").await;
    let page = get(&router, "/_mock/ui/coverage").await;
    assert_eq!(page.status, 200);
    let html = String::from_utf8_lossy(&page.raw);
    assert!(!html.contains("<script>alert"), "{html}");
    assert!(
        html.contains("&#60;script&#62;alert(1)&#60;/script&#62;"),
        "{html}"
    );
    assert!(
        html.contains("aria-current=\"page\">Coverage</a>"),
        "{html}"
    );
    let covered = state
        .coverage()
        .matrix()
        .cells()
        .iter()
        .filter(|(_, n)| *n > 0)
        .count();
    assert!(
        html.contains(&format!("{covered} of {} (", cells().len())),
        "{html}"
    );
    // Every console page links to it.
    let list = get(&router, "/_mock/ui/").await;
    assert!(String::from_utf8_lossy(&list.raw).contains("_mock/ui/coverage\">Coverage</a>"));
    assert_eq!(state.coverage().replica(), "<script>alert(1)</script>");
}
