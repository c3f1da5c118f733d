//! URLs and headers: path segments are percent-encoded, base URLs of every
//! shape work, and auth, user agent and request id are sent.

mod common;

use common::*;
use payments_client::wire::encode_path_segment;
use payments_client::{Client, Error};
use wiremock::matchers::{header, method};
use wiremock::{Mock, MockServer};

async fn raw_paths(server: &MockServer) -> Vec<String> {
    server
        .received_requests()
        .await
        .expect("recording on")
        .iter()
        .map(|r| match r.url.query() {
            Some(q) => format!("{}?{q}", r.url.path()),
            None => r.url.path().to_owned(),
        })
        .collect()
}

async fn ok_server() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(echoing_status)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(json(200, ok_envelope(&initiate_data())))
        .mount(&server)
        .await;
    server
}

#[tokio::test]
async fn references_reach_the_server_as_one_encoded_segment() {
    let server = ok_server().await;
    let c = client(&server);
    let cases = [
        ("INV/2026/0001", "INV%2F2026%2F0001"),
        ("a b", "a%20b"),
        ("100%", "100%25"),
        ("#1", "%231"),
        ("?x", "%3Fx"),
        ("ü", "%C3%BC"),
        ("plain-ref_1.2~", "plain-ref_1.2~"),
    ];
    for (reference, _) in cases {
        c.status_by_reference(reference, None).await.unwrap();
    }
    let expected: Vec<String> = cases
        .iter()
        .map(|(_, enc)| format!("/api/payments/reference/{enc}/status"))
        .collect();
    assert_eq!(raw_paths(&server).await, expected);
}

#[tokio::test]
async fn a_transaction_id_with_a_slash_stays_one_segment() {
    let server = ok_server().await;
    client(&server).status("abc/def?g#h").await.unwrap();
    assert_eq!(
        raw_paths(&server).await,
        ["/api/payments/abc%2Fdef%3Fg%23h/status"]
    );
}

#[tokio::test]
async fn merchant_id_is_sent_as_a_query_parameter() {
    let server = ok_server().await;
    client(&server)
        .status_by_reference("INV-1", Some(merchant()))
        .await
        .unwrap();
    assert_eq!(
        raw_paths(&server).await,
        [format!(
            "/api/payments/reference/INV-1/status?merchantId={MERCHANT}"
        )]
    );
}

#[tokio::test]
async fn an_empty_id_is_rejected_before_sending() {
    let server = MockServer::start().await;
    let c = client(&server);
    for err in [
        c.status("").await.unwrap_err(),
        c.status_by_reference("", None).await.unwrap_err(),
    ] {
        assert!(matches!(err, payments_client::Error::InvalidInput(_)));
        assert_eq!(err.outcome(), payments_client::Outcome::NotCarriedOut);
    }
    assert!(server.received_requests().await.unwrap().is_empty());
}

/// A blank id or reference is not empty: it is sent, and the service
/// decides (the mock answers INVALID_TRANSACTION_ID / INVALID_REFERENCE_NO;
/// the document refuses only "missing or empty"). A reference initiate
/// sent can always be read back by it.
#[tokio::test]
async fn a_blank_id_or_reference_is_sent() {
    let server = ok_server().await;
    let c = client(&server);
    c.status("  ").await.unwrap();
    c.status_by_reference(" ", None).await.unwrap();
    assert_eq!(
        raw_paths(&server).await,
        [
            "/api/payments/%20%20/status",
            "/api/payments/reference/%20/status"
        ]
    );
}

#[tokio::test]
async fn base_urls_with_or_without_slash_and_prefix_work() {
    let server = ok_server().await;
    let uri = server.uri();
    for (base, expected) in [
        (uri.clone(), "/api/payments/x/status"),
        (format!("{uri}/"), "/api/payments/x/status"),
        (format!("{uri}/prefix"), "/prefix/api/payments/x/status"),
        (format!("{uri}/prefix/"), "/prefix/api/payments/x/status"),
        (format!("{uri}/a/b//"), "/a/b/api/payments/x/status"),
    ] {
        let c = client_for(&base);
        c.status("x").await.unwrap();
        let paths = raw_paths(&server).await;
        assert_eq!(
            paths.last().map(String::as_str),
            Some(expected),
            "base {base}"
        );
    }
}

#[tokio::test]
async fn bad_base_urls_are_rejected() {
    for bad in [
        "",
        "not a url",
        "ftp://host",
        "http://host/?q=1",
        "http://host/#f",
        "/relative",
    ] {
        let err = Client::builder(bad).build().unwrap_err();
        assert!(
            matches!(err, payments_client::Error::Config { .. }),
            "{bad}: {err:?}"
        );
    }
}

#[tokio::test]
async fn the_api_key_is_sent_as_a_bearer_token() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(header("authorization", "Bearer sk_test_123"))
        .respond_with(json(200, ok_envelope(&status_data())))
        .expect(1)
        .mount(&server)
        .await;
    let c = Client::builder(server.uri())
        .api_key("sk_test_123")
        .build()
        .unwrap();
    c.status(TX_ID).await.unwrap();
}

#[tokio::test]
async fn a_custom_auth_header_carries_the_raw_key() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(header("x-api-key", "sk_test_123"))
        .respond_with(json(200, ok_envelope(&status_data())))
        .expect(1)
        .mount(&server)
        .await;
    let c = Client::builder(server.uri())
        .api_key("sk_test_123")
        .auth_header("X-Api-Key")
        .build()
        .unwrap();
    c.status(TX_ID).await.unwrap();
    let req = &server.received_requests().await.unwrap()[0];
    assert!(req.headers.get("authorization").is_none());
}

#[tokio::test]
async fn user_agent_accept_content_type_and_request_id_are_sent() {
    let server = ok_server().await;
    let c = Client::builder(server.uri())
        .user_agent("shop/1.0")
        .build()
        .unwrap();
    // What the stub answers: the client checks the answer's echo.
    let req = plain_initiate_request();
    let reply = c.initiate(req).await.unwrap();
    let received = &server.received_requests().await.unwrap()[0];
    let h = |name: &str| {
        received
            .headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    assert_eq!(h("user-agent").as_deref(), Some("shop/1.0"));
    assert_eq!(h("accept").as_deref(), Some("application/json"));
    assert_eq!(h("content-type").as_deref(), Some("application/json"));
    assert_eq!(h("x-request-id").as_deref(), Some(reply.request_id()));
    assert!(uuid::Uuid::parse_str(reply.request_id()).is_ok());
}

#[tokio::test]
async fn each_call_gets_its_own_request_id() {
    let server = ok_server().await;
    let c = client(&server);
    let a = c.status(TX_ID).await.unwrap();
    let b = c.status(TX_ID).await.unwrap();
    assert_ne!(a.request_id(), b.request_id());
}

#[tokio::test]
async fn a_callers_own_http_client_is_used() {
    // Only the caller's client sends this header, so the mock answering
    // proves that client carried the request.
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(header("x-callers-client", "yes"))
        .respond_with(json(200, ok_envelope(&status_data())))
        .expect(1)
        .named("request sent by the caller's client")
        .mount(&server)
        .await;
    let mut defaults = reqwest::header::HeaderMap::new();
    defaults.insert("x-callers-client", "yes".parse().unwrap());
    let http = reqwest::Client::builder()
        .default_headers(defaults)
        .build()
        .unwrap();
    let c = Client::builder(server.uri())
        .http_client(http)
        .build()
        .unwrap();
    c.status(TX_ID).await.unwrap();
}

#[tokio::test]
async fn dot_segments_are_rejected_before_sending() {
    let server = MockServer::start().await;
    let c = client(&server);
    for value in [".", ".."] {
        let by_id = c.status(value).await.unwrap_err();
        let by_ref = c.status_by_reference(value, None).await.unwrap_err();
        for err in [by_id, by_ref] {
            assert!(
                matches!(err, payments_client::Error::InvalidInput(_)),
                "{value}: {err:?}"
            );
            assert!(
                err.to_string().contains("cannot be sent in a URL path"),
                "{err}"
            );
        }
        let initiate = payments_client::InitiateRequest::builder(
            merchant(),
            value,
            payments_client::MinorAmount::new(1).unwrap(),
            "TOPUP",
            "S1",
        )
        .build()
        .unwrap_err();
        assert!(
            initiate.to_string().contains("referenceNo must not be"),
            "{initiate}"
        );
    }
    assert!(server.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn references_with_dots_that_are_not_dot_segments_reach_the_server_intact() {
    let server = ok_server().await;
    let c = client(&server);
    for reference in ["...", ".a", "a..", "%2E", "%2e%2E", "./x", "../.."] {
        c.status_by_reference(reference, None).await.unwrap();
    }
    assert_eq!(
        raw_paths(&server).await,
        vec![
            "/api/payments/reference/.../status",
            "/api/payments/reference/.a/status",
            "/api/payments/reference/a../status",
            "/api/payments/reference/%252E/status",
            "/api/payments/reference/%252e%252E/status",
            "/api/payments/reference/.%2Fx/status",
            "/api/payments/reference/..%2F../status",
        ]
    );
}

#[test]
fn encode_path_segment_leaves_only_unreserved_characters() {
    assert_eq!(encode_path_segment("a/b c?d#e%f"), "a%2Fb%20c%3Fd%23e%25f");
    assert_eq!(encode_path_segment("AZaz09-._~"), "AZaz09-._~");
}

#[tokio::test]
async fn userinfo_in_the_base_url_is_sent_as_basic_auth_beside_a_key_in_another_header() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(json(200, ok_envelope(&status_data())))
        .mount(&server)
        .await;
    let with_userinfo = server
        .uri()
        .replacen("http://", "http://us%40er:p%3Ass@", 1);
    client_for(&with_userinfo).status(TX_ID).await.unwrap();
    Client::builder(&with_userinfo)
        .api_key("sk_test_123")
        .auth_header("X-Api-Key")
        .build()
        .unwrap()
        .status(TX_ID)
        .await
        .unwrap();
    let received = server.received_requests().await.unwrap();
    let sent = |i: usize, name: &str| {
        received[i]
            .headers
            .get(name)
            .map(|v| v.to_str().unwrap().to_owned())
    };
    // base64("us@er:p:ss"), the userinfo percent-decoded.
    assert_eq!(
        sent(0, "authorization").as_deref(),
        Some("Basic dXNAZXI6cDpzcw==")
    );
    assert_eq!(
        sent(1, "authorization").as_deref(),
        Some("Basic dXNAZXI6cDpzcw==")
    );
    assert_eq!(sent(1, "x-api-key").as_deref(), Some("sk_test_123"));
    assert!(received.iter().all(|r| r.url.username().is_empty()));
}

/// `user:pass@` and an API key would both be `Authorization`; one would
/// silently drop the other (a gateway's Basic check failing for no
/// visible reason): refused at build, naming both, showing neither.
#[test]
fn userinfo_and_a_key_in_authorization_are_refused_at_build() {
    for name in [None, Some("Authorization"), Some("authorization")] {
        let mut builder = Client::builder("https://gw-user:GwPass9@payments.example/v1")
            .api_key("sk_test_SECRET");
        if let Some(name) = name {
            builder = builder.auth_header(name);
        }
        let err = builder.build().unwrap_err();
        assert!(matches!(err, Error::Config { .. }), "{err:?}");
        let text = err.to_string();
        assert!(text.contains("user:pass@"), "{text}");
        assert!(text.contains("api_key"), "{text}");
        for secret in ["gw-user", "GwPass9", "SECRET"] {
            assert!(!text.contains(secret), "{secret} shown: {text}");
            assert!(!format!("{err:?}").contains(secret), "{secret} in Debug");
        }
    }
}
