//! What the console's bar shows on its error pages: the store and the
//! replica's name to the admin key alone (CONTRACT 18), navigation per
//! viewer; a page whose viewer is not known (a refused form, an unknown
//! page) shows neither.

use super::*;

const REPLICA: &str = "internal-replica-zq7";

fn guarded_replica() -> Target {
    let mut config = guarded_config();
    config.replica_name = Some(REPLICA.to_owned());
    Target::Router(service_with(config).1)
}

/// The bar's store line, and navigation only some viewers may use.
fn admin_only(body: &str) -> Vec<&'static str> {
    [
        (REPLICA, "the replica"),
        ("class=\"store\"", "the store"),
        (">Coverage<", "Coverage"),
        (">Faults<", "Faults"),
        (">Reset<", "Reset"),
    ]
    .into_iter()
    .filter(|(needle, _)| body.contains(needle))
    .map(|(_, what)| what)
    .collect()
}

#[tokio::test]
async fn error_pages_show_the_store_and_admin_navigation_to_the_admin_alone() {
    let target = guarded_replica();
    // Anonymous: a wrong method, another site's sign-in, a form that is
    // not one.
    let put = target.call("PUT", "/_mock/ui/sign-in", &[], None).await;
    let foreign = target
        .call(
            "POST",
            "/_mock/ui/sign-in",
            &[
                ("content-type", FORM),
                ("host", "127.0.0.1:8080"),
                ("origin", "https://evil.example"),
            ],
            Some("key=x"),
        )
        .await;
    let not_form = target
        .call(
            "POST",
            "/_mock/ui/sign-out",
            &[("content-type", "text/plain")],
            Some("x"),
        )
        .await;
    for (answer, status) in [(&put, 405), (&foreign, 403), (&not_form, 415)] {
        assert_eq!(answer.status, status, "{}", answer.body);
        assert!(answer.body.contains("<html"), "{}", answer.body);
        assert_eq!(admin_only(&answer.body), Vec::<&str>::new(), "{status}");
    }
    // A merchant's session: an unknown page, a refused filter.
    let (cookie, _) = sign_in(&target, KEY_A).await;
    for path in ["/_mock/ui/nope", "/_mock/ui/transactions/rows?status=X"] {
        let answer = target.call("GET", path, &[("cookie", &cookie)], None).await;
        assert!(answer.status == 404 || answer.status == 400, "{path}");
        assert_eq!(admin_only(&answer.body), Vec::<&str>::new(), "{path}");
    }
    let rows = target
        .call(
            "GET",
            "/_mock/ui/transactions/rows?status=X",
            &[("cookie", &cookie)],
            None,
        )
        .await;
    assert!(rows.body.contains("id=\"sign-out\""), "{}", rows.body);
    // The admin's refused filter shows them all.
    let (cookie, _) = sign_in(&target, ADMIN_KEY).await;
    let admin = target
        .call(
            "GET",
            "/_mock/ui/transactions/rows?status=X",
            &[("cookie", &cookie)],
            None,
        )
        .await;
    assert_eq!(admin.status, 400);
    assert_eq!(admin_only(&admin.body).len(), 5, "{}", admin.body);
}
