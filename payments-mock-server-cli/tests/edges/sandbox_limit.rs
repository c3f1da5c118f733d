//! `--max-sandboxes` is the server's, shared by every merchant. A
//! merchant's key at the limit is told only that it is reached: the 429
//! said "2 sandboxes live already, the limit is 2", counting other
//! merchants' sandboxes it cannot see. The admin keeps the count.

use axum::http::{Method, StatusCode};
use payments_mock_server::Config;

use crate::common::{MERCHANT, OTHER_MERCHANT, request, send, service_with};

const ADMIN: &str = "adm_limit";
const SHOP_A: &str = "sk_limit_a";
const SHOP_B: &str = "sk_limit_b";

async fn make(router: &axum::Router, key: &str) -> crate::common::Reply {
    let mut req = request(Method::POST, "/_mock/sandboxes", Some("{}"));
    req.headers_mut().insert(
        "authorization",
        format!("Bearer {key}").parse().expect("a header value"),
    );
    send(router, req).await
}

#[tokio::test]
async fn a_merchant_at_the_limit_is_not_told_how_many_others_hold() {
    let mut config = Config::default();
    config.api_keys = vec![
        format!("{SHOP_A}={MERCHANT}").parse().expect("key"),
        format!("{SHOP_B}={OTHER_MERCHANT}").parse().expect("key"),
    ];
    config.admin_keys = vec![ADMIN.parse().expect("an admin key")];
    config.max_sandboxes = 2;
    let (_, router) = service_with(config);
    // Merchant A's two: the server's limit.
    for _ in 0..2 {
        assert_eq!(make(&router, SHOP_A).await.status, StatusCode::CREATED);
    }
    let refused = make(&router, SHOP_B).await;
    assert_eq!(refused.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(refused.code(), "TOO_MANY_SANDBOXES");
    let message = refused.message();
    assert!(
        message.contains("the server's limit of live sandboxes"),
        "{message}"
    );
    assert!(message.contains("shared by every merchant"), "{message}");
    assert!(!message.contains('2'), "no count, no limit: {message}");
    // Its own: the same words.
    assert_eq!(make(&router, SHOP_A).await.message(), message);
    // The admin sees every sandbox, and is told the count.
    let admin = make(&router, ADMIN).await;
    assert_eq!(admin.status, StatusCode::TOO_MANY_REQUESTS);
    assert!(
        admin
            .message()
            .contains("2 sandboxes live already, the limit is 2"),
        "{}",
        admin.message()
    );
}
