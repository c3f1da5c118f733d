//! The HTML side of the document, driven for the schema test: the payment
//! page and the admin payer control (CONTRACT section 13), every page
//! of the console (section 14); the admin side behind an admin key
//! (section 18) is in `admin.rs`.

use axum::http::Method;
use serde_json::{Value, json};

use super::Driver;
use crate::common::initiate_body;

/// The payment page and the admin payer control (CONTRACT section 13).
pub(super) async fn drive_redirect_payments(d: &mut Driver<'_>) {
    const INITIATE: &str = "/api/payments/initiate";
    let mut body = initiate_body("S-BANK", "ONLINEBANKING");
    body["returnUrl"] = json!("https://shop.example/back");
    let reply = d.json(Method::POST, INITIATE, &body).await;
    let reply = d.expect(reply, 200, "").await;
    let id = reply.data()["transactionId"]
        .as_str()
        .expect("id")
        .to_owned();
    let reply = d.confirm(&id, "S-BANK", json!({})).await;
    let reply = d.expect(reply, 200, "").await;
    let extra: Value =
        serde_json::from_str(reply.data()["extraProperties"].as_str().expect("a string"))
            .expect("JSON");
    let page = extra["paymentUrl"]
        .as_str()
        .and_then(|u| u.strip_prefix("http://localhost"))
        .expect("a page under the default base")
        .to_owned();
    let status_path = format!("/api/payments/{id}/status");
    let reply = d.call(Method::GET, &status_path, &[], None).await;
    assert_eq!(d.expect(reply, 200, "").await.data()["status"], "CONFIRMED");

    let form = ("content-type", "application/x-www-form-urlencoded");
    for (method, path, headers, body, status) in [
        (Method::GET, page.as_str(), vec![], None, 200),
        (Method::GET, "/pay/static/mock.css", vec![], None, 200),
        (
            Method::GET,
            "/pay/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
            vec![],
            None,
            404,
        ),
        (Method::PUT, page.as_str(), vec![], None, 405),
        (
            Method::POST,
            page.as_str(),
            vec![form],
            Some("action=x"),
            400,
        ),
        (
            Method::POST,
            page.as_str(),
            vec![("content-type", "text/plain")],
            Some("a"),
            415,
        ),
        (
            Method::POST,
            page.as_str(),
            vec![form],
            Some(&*"x".repeat(21_000)),
            413,
        ),
        (
            Method::POST,
            "/pay/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
            vec![form],
            Some("action=pay"),
            404,
        ),
        (
            Method::POST,
            page.as_str(),
            vec![form],
            Some("action=pay"),
            303,
        ),
    ] {
        let reply = d.call(method, path, &headers, body).await;
        assert_eq!(reply.status.as_u16(), status, "{path}");
    }

    // The admin control, on a second transaction.
    let mut body = initiate_body("S-BANK-2", "ONLINEBANKING");
    body["returnUrl"] = json!("https://shop.example/back");
    let reply = d.json(Method::POST, INITIATE, &body).await;
    let reply = d.expect(reply, 200, "").await;
    let id = reply.data()["transactionId"]
        .as_str()
        .expect("id")
        .to_owned();
    let payer = format!("/_mock/transactions/{id}/payer");
    let reply = d
        .json(Method::POST, &payer, &json!({"action": "pay"}))
        .await;
    d.expect(reply, 400, "VALIDATION_ERROR").await;
    let reply = d.confirm(&id, "S-BANK-2", json!({})).await;
    d.expect(reply, 200, "").await;
    let reply = d
        .json(Method::POST, &payer, &json!({"action": "decline"}))
        .await;
    let reply = d.expect(reply, 200, "").await;
    assert!(reply.data()["redirectTo"].is_string());
    let unknown = "/_mock/transactions/01930000-0000-7000-8000-000000000000/payer";
    let reply = d
        .json(Method::POST, unknown, &json!({"action": "pay"}))
        .await;
    d.expect(reply, 404, "TRANSACTION_NOT_FOUND").await;
    let big = format!("{{\"a\":\"{}\"}}", "x".repeat(70_000));
    let json_type = ("content-type", "application/json");
    let reply = d.call(Method::POST, &payer, &[json_type], Some(&big)).await;
    d.expect(reply, 413, "PAYLOAD_TOO_LARGE").await;
    let reply = d
        .call(
            Method::POST,
            &payer,
            &[("content-type", "text/plain")],
            Some("{}"),
        )
        .await;
    d.expect(reply, 415, "UNSUPPORTED_MEDIA_TYPE").await;
    let reply = d.call(Method::GET, &payer, &[], None).await;
    d.expect(reply, 405, "METHOD_NOT_ALLOWED").await;
    let reply = d
        .call(Method::GET, "/_mock/transactions/x/payer/extra", &[], None)
        .await;
    d.expect(reply, 404, "NOT_FOUND").await;
}

/// A request to make and the status it must get: method, path, headers,
/// body.
type Exchange<'a> = (Method, String, Vec<(&'a str, &'a str)>, Option<String>, u16);

/// Every page of the console, every answer it documents.
pub(super) async fn drive_console(d: &mut Driver<'_>) {
    let reply = d
        .json(
            Method::POST,
            "/api/payments/initiate",
            &initiate_body("UI-1", "TOPUP"),
        )
        .await;
    let id = d.expect(reply, 200, "").await.data()["transactionId"]
        .as_str()
        .expect("an id")
        .to_owned();
    let unknown = "01930000-0000-7000-8000-000000000000";
    let form = ("content-type", "application/x-www-form-urlencoded");
    let same_origin = ("origin", "http://localhost");
    let host = ("host", "localhost");
    let evil = ("origin", "https://evil.example");
    let pages: Vec<Exchange<'_>> = vec![
        (Method::GET, "/_mock/ui".to_owned(), vec![], None, 308),
        (Method::GET, "/_mock/ui/".to_owned(), vec![], None, 200),
        (
            Method::GET,
            "/_mock/ui/?status=NOPE".to_owned(),
            vec![],
            None,
            400,
        ),
        (
            Method::GET,
            format!("/_mock/ui/?before={unknown}"),
            vec![],
            None,
            404,
        ),
        (
            Method::GET,
            "/_mock/ui/transactions/rows".to_owned(),
            vec![],
            None,
            200,
        ),
        (
            Method::GET,
            "/_mock/ui/transactions/rows?limit=0".to_owned(),
            vec![],
            None,
            400,
        ),
        (
            Method::GET,
            format!("/_mock/ui/transactions/{id}"),
            vec![],
            None,
            200,
        ),
        (
            Method::GET,
            format!("/_mock/ui/transactions/{unknown}"),
            vec![],
            None,
            404,
        ),
        (
            Method::GET,
            "/_mock/ui/requests".to_owned(),
            vec![],
            None,
            200,
        ),
        (
            Method::GET,
            "/_mock/ui/requests/feed?after=0".to_owned(),
            vec![],
            None,
            200,
        ),
        (
            Method::GET,
            "/_mock/ui/requests/feed?after=x".to_owned(),
            vec![],
            None,
            400,
        ),
        (
            Method::GET,
            "/_mock/ui/requests/1".to_owned(),
            vec![],
            None,
            200,
        ),
        (
            Method::GET,
            "/_mock/ui/requests/999999".to_owned(),
            vec![],
            None,
            404,
        ),
        (Method::GET, "/_mock/ui/clock".to_owned(), vec![], None, 200),
        (
            Method::POST,
            "/_mock/ui/clock".to_owned(),
            vec![form, host, same_origin],
            Some("seconds=1".to_owned()),
            303,
        ),
        (
            Method::POST,
            "/_mock/ui/clock".to_owned(),
            vec![form],
            Some("seconds=-1".to_owned()),
            400,
        ),
        (
            Method::POST,
            "/_mock/ui/clock".to_owned(),
            vec![form, host, evil],
            Some("seconds=1".to_owned()),
            403,
        ),
        (
            Method::POST,
            "/_mock/ui/clock".to_owned(),
            vec![form],
            Some(format!("seconds=1&x={}", "x".repeat(21_000))),
            413,
        ),
        (
            Method::POST,
            "/_mock/ui/clock".to_owned(),
            vec![("content-type", "application/json")],
            Some("{}".to_owned()),
            415,
        ),
        (
            Method::GET,
            "/_mock/ui/catalog".to_owned(),
            vec![],
            None,
            200,
        ),
        (
            Method::GET,
            "/_mock/ui/coverage".to_owned(),
            vec![],
            None,
            200,
        ),
        (
            Method::GET,
            "/_mock/ui/faults".to_owned(),
            vec![],
            None,
            200,
        ),
        (
            Method::GET,
            "/_mock/ui/sandboxes".to_owned(),
            vec![],
            None,
            200,
        ),
        (
            Method::GET,
            "/_mock/ui/static/console.css".to_owned(),
            vec![],
            None,
            200,
        ),
        (
            Method::GET,
            "/_mock/ui/static/console.js".to_owned(),
            vec![],
            None,
            200,
        ),
        (Method::GET, "/_mock/ui/reset".to_owned(), vec![], None, 200),
        (
            Method::POST,
            "/_mock/ui/reset".to_owned(),
            vec![form, host, evil],
            Some(String::new()),
            403,
        ),
        (
            Method::POST,
            "/_mock/ui/reset".to_owned(),
            vec![form],
            Some("x".repeat(21_000)),
            413,
        ),
        (
            Method::POST,
            "/_mock/ui/reset".to_owned(),
            vec![("content-type", "text/plain")],
            Some("x".to_owned()),
            415,
        ),
        // A form has only its own fields, each once (issue 40).
        (
            Method::POST,
            "/_mock/ui/reset".to_owned(),
            vec![form],
            Some("confirm=yes".to_owned()),
            400,
        ),
        (
            Method::POST,
            "/_mock/ui/sign-in".to_owned(),
            vec![form],
            Some("key=a&key=b".to_owned()),
            400,
        ),
        (
            Method::POST,
            "/_mock/ui/sign-out".to_owned(),
            vec![form],
            Some("next=x".to_owned()),
            400,
        ),
        (
            Method::POST,
            "/_mock/ui/reset".to_owned(),
            vec![form],
            Some(String::new()),
            303,
        ),
        (
            Method::GET,
            "/_mock/ui/sign-in?next=_mock/ui/requests".to_owned(),
            vec![],
            None,
            200,
        ),
        // Without an admin key there is nothing to sign in to: the form
        // leads to the console.
        (
            Method::POST,
            "/_mock/ui/sign-in".to_owned(),
            vec![form],
            Some("key=anything".to_owned()),
            303,
        ),
        (
            Method::POST,
            "/_mock/ui/sign-out".to_owned(),
            vec![form],
            Some(String::new()),
            303,
        ),
    ];
    for (method, path, headers, body, status) in pages {
        let reply = d
            .call(method.clone(), &path, &headers, body.as_deref())
            .await;
        assert_eq!(reply.status.as_u16(), status, "{method} {path}");
    }
    // The forms of the way in and out refuse what the others refuse.
    for path in ["/_mock/ui/sign-in", "/_mock/ui/sign-out"] {
        for (headers, body, status) in [
            (vec![form, host, evil], "key=x".to_owned(), 403),
            (vec![form], format!("key={}", "x".repeat(21_000)), 413),
            (vec![("content-type", "text/plain")], "x".to_owned(), 415),
        ] {
            let reply = d.call(Method::POST, path, &headers, Some(&body)).await;
            assert_eq!(reply.status.as_u16(), status, "POST {path}");
        }
    }
    // Every page route answers other methods 405, as a page.
    for path in [
        "/_mock/ui/sign-in",
        "/_mock/ui/sign-out",
        "/_mock/ui",
        "/_mock/ui/",
        "/_mock/ui/transactions/rows",
        "/_mock/ui/transactions/x",
        "/_mock/ui/requests",
        "/_mock/ui/requests/feed",
        "/_mock/ui/requests/1",
        "/_mock/ui/clock",
        "/_mock/ui/catalog",
        "/_mock/ui/coverage",
        "/_mock/ui/faults",
        "/_mock/ui/sandboxes",
        "/_mock/ui/reset",
        "/_mock/ui/static/console.css",
        "/_mock/ui/static/console.js",
        "/pay/static/mock.css",
        "/pay/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
    ] {
        let reply = d.call(Method::PUT, path, &[], None).await;
        assert_eq!(reply.status.as_u16(), 405, "{path}");
        assert!(reply.headers.contains_key("allow"), "{path}");
    }
}
