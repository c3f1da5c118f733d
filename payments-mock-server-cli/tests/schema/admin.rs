//! The admin side behind an admin key (CONTRACT section 18), driven for
//! the schema test.

use axum::http::Method;

use super::Driver;

/// The admin side behind an admin key (CONTRACT section 18), on a server
/// with `adm_schema`, `sk_bound` (bound to MERCHANT) and `sk_unbound`:
/// 401 without a key on every guarded route, 403 for an unbound API key
/// and for a merchant's changes, and the sign-in form's answers.
pub(super) async fn drive_admin_keys(d: &mut Driver<'_>) {
    let admin = ("authorization", "Bearer adm_schema");
    let bound = ("authorization", "Bearer sk_bound");
    let unbound = ("authorization", "Bearer sk_unbound");
    let json = ("content-type", "application/json");
    let form = ("content-type", "application/x-www-form-urlencoded");
    let payer = "/_mock/transactions/00000000-0000-7000-8000-000000000000/payer";
    let changes: [(&str, Option<&str>); 3] = [
        ("/_mock/reset", None),
        ("/_mock/clock/advance", Some(r#"{"seconds":1}"#)),
        (payer, Some(r#"{"action":"pay"}"#)),
    ];
    for (path, body) in changes {
        let reply = d.call(Method::POST, path, &[json], body).await;
        d.expect(reply, 401, "UNAUTHORIZED").await;
        for key in [bound, unbound] {
            let reply = d.call(Method::POST, path, &[json, key], body).await;
            d.expect(reply, 403, "FORBIDDEN").await;
        }
    }
    for path in ["/_mock/transactions", "/_mock/requests", "/_mock/clock"] {
        let reply = d.call(Method::GET, path, &[], None).await;
        d.expect(reply, 401, "UNAUTHORIZED").await;
        let reply = d.call(Method::GET, path, &[unbound], None).await;
        d.expect(reply, 403, "FORBIDDEN").await;
        for key in [admin, bound] {
            let reply = d.call(Method::GET, path, &[key], None).await;
            d.expect(reply, 200, "").await;
        }
    }
    // Sandboxes: a key, the admin's or a merchant's; two live at most.
    for (method, path) in [
        (Method::GET, "/_mock/sandboxes"),
        (Method::POST, "/_mock/sandboxes"),
        (
            Method::DELETE,
            "/_mock/sandboxes/0b6f3c2e-5d1a-4f7e-9c3b-8a2d4e6f1a90",
        ),
        (
            Method::GET,
            "/_mock/sandboxes/0b6f3c2e-5d1a-4f7e-9c3b-8a2d4e6f1a90",
        ),
    ] {
        let reply = d.call(method.clone(), path, &[json], None).await;
        d.expect(reply, 401, "UNAUTHORIZED").await;
        let reply = d.call(method.clone(), path, &[json, unbound], None).await;
        d.expect(reply, 403, "FORBIDDEN").await;
    }
    for key in [admin, bound] {
        let reply = d.call(Method::POST, "/_mock/sandboxes", &[key], None).await;
        d.expect(reply, 201, "").await;
    }
    let reply = d
        .call(Method::POST, "/_mock/sandboxes", &[admin], None)
        .await;
    d.expect(reply, 429, "TOO_MANY_SANDBOXES").await;
    let reply = d.call(Method::GET, "/_mock/health", &[], None).await;
    d.expect(reply, 200, "").await;
    // The metrics: an admin key alone.
    let reply = d.call(Method::GET, "/metrics", &[], None).await;
    d.expect(reply, 401, "UNAUTHORIZED").await;
    for key in [bound, unbound] {
        let reply = d.call(Method::GET, "/metrics", &[key], None).await;
        d.expect(reply, 403, "FORBIDDEN").await;
    }
    let reply = d.call(Method::GET, "/metrics", &[admin], None).await;
    d.expect(reply, 200, "").await;
    // The coverage: an admin key alone, too.
    let reply = d.call(Method::GET, "/_mock/coverage", &[], None).await;
    d.expect(reply, 401, "UNAUTHORIZED").await;
    for key in [bound, unbound] {
        let reply = d.call(Method::GET, "/_mock/coverage", &[key], None).await;
        d.expect(reply, 403, "FORBIDDEN").await;
    }
    let reply = d.call(Method::GET, "/_mock/coverage", &[admin], None).await;
    d.expect(reply, 200, "").await;
    for (key, status) in [
        (None, 401),
        (Some(bound), 403),
        (Some(unbound), 403),
        (Some(admin), 200),
    ] {
        let reply = d
            .call(Method::GET, "/_mock/ui/coverage", key.as_slice(), None)
            .await;
        assert_eq!(
            reply.status.as_u16(),
            status,
            "GET /_mock/ui/coverage as {key:?}"
        );
        let reply = d
            .call(Method::GET, "/_mock/ui/faults", key.as_slice(), None)
            .await;
        assert_eq!(
            reply.status.as_u16(),
            status,
            "GET /_mock/ui/faults as {key:?}"
        );
    }
    // The fault rules: an admin key alone.
    let rule = r#"{"fault":"internal-error","match":{"referenceNo":"NEVER-SENT"}}"#;
    let rule_path = "/_mock/faults/6f1c0f0e-8d4b-4c47-9a4e-2f4f7f9d8a10";
    for (method, path, body) in [
        (Method::GET, "/_mock/faults", None),
        (Method::POST, "/_mock/faults", Some(rule)),
        (Method::DELETE, "/_mock/faults", None),
        (Method::DELETE, rule_path, None),
    ] {
        let reply = d.call(method.clone(), path, &[json], body).await;
        d.expect(reply, 401, "UNAUTHORIZED").await;
        for key in [bound, unbound] {
            let reply = d.call(method.clone(), path, &[json, key], body).await;
            d.expect(reply, 403, "FORBIDDEN").await;
        }
    }
    let reply = d
        .call(Method::POST, "/_mock/faults", &[json, admin], Some(rule))
        .await;
    d.expect(reply, 201, "").await;
    let reply = d
        .call(Method::DELETE, "/_mock/faults", &[admin], None)
        .await;
    d.expect(reply, 200, "").await;

    let reads = [
        "/_mock/ui",
        "/_mock/ui/",
        "/_mock/ui/transactions/rows",
        "/_mock/ui/transactions/x",
        "/_mock/ui/requests",
        "/_mock/ui/requests/feed",
        "/_mock/ui/requests/1",
        "/_mock/ui/clock",
        "/_mock/ui/catalog",
        "/_mock/ui/reset",
        "/_mock/ui/coverage",
        "/_mock/ui/sandboxes",
    ];
    for path in reads {
        let reply = d.call(Method::GET, path, &[], None).await;
        assert_eq!(reply.status.as_u16(), 401, "GET {path}");
        assert_eq!(reply.headers["www-authenticate"], "Bearer", "GET {path}");
        let reply = d.call(Method::GET, path, &[unbound], None).await;
        assert_eq!(reply.status.as_u16(), 403, "GET {path}");
    }
    let reply = d.call(Method::GET, "/_mock/ui/reset", &[bound], None).await;
    assert_eq!(reply.status.as_u16(), 403);
    for (path, body) in [("/_mock/ui/clock", "seconds=1"), ("/_mock/ui/reset", "")] {
        let reply = d.call(Method::POST, path, &[form], Some(body)).await;
        assert_eq!(reply.status.as_u16(), 401, "POST {path}");
        for key in [bound, unbound] {
            let reply = d.call(Method::POST, path, &[form, key], Some(body)).await;
            assert_eq!(reply.status.as_u16(), 403, "POST {path}");
        }
    }
    for (body, status) in [
        ("key=wrong", 401),
        ("key=", 401),
        ("key=sk_unbound", 403),
        ("key=sk_bound&next=_mock/ui/requests", 303),
        ("key=adm_schema", 303),
    ] {
        let reply = d
            .call(Method::POST, "/_mock/ui/sign-in", &[form], Some(body))
            .await;
        assert_eq!(reply.status.as_u16(), status, "{body}");
    }
    // The open routes stay open.
    for (path, status) in [
        ("/_mock/ui/sign-in", 200),
        ("/_mock/ui/static/console.css", 200),
        ("/openapi.json", 200),
    ] {
        let reply = d.call(Method::GET, path, &[], None).await;
        assert_eq!(reply.status.as_u16(), status, "{path}");
    }
}
