//! DNS rebinding: a web page elsewhere makes its own name resolve to the
//! mock's loopback address, so the browser sends `Host` and `Origin` of
//! that name, which agree with each other. An open mock's admin side
//! answers only a `Host` that is an IP address, `localhost` (or under
//! `.localhost`), or its public URL's host; the API, the payment page and
//! health stay open to every name, and an admin key decides for itself.

use axum::Router;
use axum::body::Body;
use axum::http::{Method, Request};
use payments_mock_server::Config;
use payments_mock_server::state::AppState;

use super::{ADMIN_KEY, guarded_config};
use crate::common::{
    Reply, clock_offset, count, initiate, initiate_body, send, service, service_with,
};

fn with_host(method: Method, path: &str, host: &str, body: Option<&str>) -> Request<Body> {
    let mut builder = Request::builder()
        .method(method)
        .uri(path)
        .header("host", host);
    if body.is_some() {
        builder = builder.header("content-type", "application/json");
    }
    builder
        .body(body.map_or_else(Body::empty, |b| Body::from(b.to_owned())))
        .expect("a request")
}

async fn ask(router: &Router, method: Method, path: &str, host: &str) -> Reply {
    let body = (method == Method::POST).then_some(r#"{"seconds":60}"#);
    send(router, with_host(method, path, host, body)).await
}

/// A rebound name reads nothing and changes nothing; the same requests by
/// address or as localhost are answered.
#[tokio::test]
async fn an_open_mock_answers_its_admin_side_only_by_an_address_or_localhost() {
    let (state, router) = service();
    initiate(&router, &initiate_body("REB-1", "TOPUP")).await;
    for host in [
        "evil.example:8080",
        "evil.example",
        "localhost.evil.example:80",
    ] {
        for (method, path) in [
            (Method::GET, "/_mock/transactions"),
            (Method::GET, "/_mock/requests"),
            (Method::POST, "/_mock/reset"),
            (Method::POST, "/_mock/clock/advance"),
            (Method::GET, "/_mock/sandboxes"),
            (Method::GET, "/_mock/ui/"),
        ] {
            let reply = ask(&router, method.clone(), path, host).await;
            assert_eq!(reply.status, 403, "{host} {method} {path}: {:?}", reply.raw);
            if reply.body.is_object() {
                assert_eq!(reply.code(), "FORBIDDEN");
                assert!(
                    reply.message().contains("DNS rebinding")
                        && reply.message().contains(&format!("{host:?}")),
                    "{}",
                    reply.message()
                );
            }
        }
    }
    // A sandbox's admin side is refused by that name too.
    let made = send(
        &router,
        with_host(
            Method::POST,
            "/_mock/sandboxes",
            "127.0.0.1:8080",
            Some("{}"),
        ),
    )
    .await;
    assert_eq!(made.status, 201, "{}", made.body);
    let sandbox = made.body["data"]["id"].as_str().expect("an id").to_owned();
    let under = format!("/sandboxes/{sandbox}/_mock/transactions");
    let reply = ask(&router, Method::GET, &under, "evil.example:8080").await;
    assert_eq!(reply.status, 403, "{}", reply.body);
    assert_eq!(
        ask(&router, Method::GET, &under, "127.0.0.1:8080")
            .await
            .status,
        200
    );
    assert_eq!(count(&state).await, 1, "no reset went through");
    assert_eq!(clock_offset(&state).await, 0, "no advance went through");

    for host in [
        "127.0.0.1:8080",
        "[::1]:8080",
        "10.0.0.7",
        "localhost:8080",
        "mock.localhost:8080",
    ] {
        let reply = ask(&router, Method::GET, "/_mock/transactions", host).await;
        assert_eq!(reply.status, 200, "{host}: {}", reply.body);
    }
    // A tool that sends no `Host` (in-process, HTTP/1.0) names no other
    // site.
    let reply = send(
        &router,
        crate::common::request(Method::POST, "/_mock/reset", None),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(count(&state).await, 0);
}

/// The service's own routes, the payment page and health answer every
/// name: only the admin side holds what a rebound page must not reach.
#[tokio::test]
async fn the_api_and_health_answer_any_name() {
    let (_state, router) = service();
    let host = "evil.example:8080";
    let initiate = Request::post("/api/payments/initiate")
        .header("host", host)
        .header("content-type", "application/json")
        .body(Body::from(initiate_body("REB-2", "TOPUP").to_string()))
        .expect("a request");
    let reply = send(&router, initiate).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let id = reply.body["data"]["transactionId"]
        .as_str()
        .expect("an id")
        .to_owned();
    let path = format!("/api/payments/{id}/status");
    assert_eq!(ask(&router, Method::GET, &path, host).await.status, 200);
    assert_eq!(
        ask(&router, Method::GET, "/_mock/health", host)
            .await
            .status,
        200
    );
}

/// The public URL's host is the mock's own name (behind a reverse proxy
/// that keeps `Host`, or a name in `/etc/hosts`).
#[tokio::test]
async fn the_public_urls_host_is_the_mocks_name() {
    let mut config = Config::default();
    config.public_url = Some("http://shop.example:8080/mock/".parse().expect("a URL"));
    let (_state, router) = service_with(config);
    for host in ["shop.example:8080", "SHOP.example", "shop.example."] {
        let reply = ask(&router, Method::GET, "/_mock/transactions", host).await;
        assert_eq!(reply.status, 200, "{host}: {}", reply.body);
    }
    let reply = ask(
        &router,
        Method::GET,
        "/_mock/transactions",
        "shop.example.evil",
    )
    .await;
    assert_eq!(reply.status, 403, "{}", reply.body);
}

/// With an admin key the key decides, whatever the name: a rebound page
/// has no key (and the console's cookie belongs to the real name).
#[tokio::test]
async fn with_an_admin_key_the_key_decides_whatever_the_name() {
    let (state, router): (AppState, Router) = service_with(guarded_config());
    let host = "mock.internal:8080";
    let reply = ask(&router, Method::GET, "/_mock/transactions", host).await;
    assert_eq!(reply.status, 401, "{}", reply.body);
    let keyed = Request::get("/_mock/transactions")
        .header("host", host)
        .header("authorization", format!("Bearer {ADMIN_KEY}"))
        .body(Body::empty())
        .expect("a request");
    assert_eq!(send(&router, keyed).await.status, 200);
    assert_eq!(count(&state).await, 0);
}
