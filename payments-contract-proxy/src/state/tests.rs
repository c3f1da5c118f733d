//! The state's upstream targets, the listing's references and the
//! upstream's credentials as secrets.

use super::*;

fn state(upstream: &str) -> ProxyState {
    let url = upstream.parse().expect("a URL");
    ProxyState::new(ProxyConfig::new(url)).expect("a proxy")
}

#[test]
fn a_target_goes_upstream_as_it_came_or_after_the_upstreams_prefix() {
    let asked: axum::http::Uri = "/api/payments/a%2Fb/status?x=%20&y".parse().expect("uri");
    for upstream in ["http://127.0.0.1:8080", "http://127.0.0.1:8080/"] {
        let proxy = state(upstream);
        assert!(
            proxy.origin.is_some(),
            "{upstream}: no prefix, shared target"
        );
        let uri = proxy.upstream_uri(&asked).expect("a URI");
        assert_eq!(
            uri.to_string(),
            "http://127.0.0.1:8080/api/payments/a%2Fb/status?x=%20&y"
        );
    }
    let proxy = state("https://user:secret@svc.test/v1/");
    assert!(proxy.origin.is_none(), "a prefix is put before the target");
    let uri = proxy.upstream_uri(&asked).expect("a URI");
    assert_eq!(
        uri.to_string(),
        "https://svc.test/v1/api/payments/a%2Fb/status?x=%20&y"
    );
}

/// The listing of a later exchange takes its reference from the
/// proxy's memory as its initiate showed it (a payer id echoed in it
/// as its token), never as it came: also once the initiate's secrets
/// are forgotten for its bodies.
#[test]
fn the_listing_shows_a_remembered_reference_as_its_initiate_showed_it() {
    use crate::rules::test_support::{exchange, initiate_body, initiate_data, ok, status_data};
    let proxy = state("http://127.0.0.1:9");
    let reference = "TOPUP-60123456789-1";
    let mut body = initiate_body(reference, 100);
    body["payerId"] = serde_json::json!("60123456789");
    let initiate = exchange(
        "POST",
        "/api/payments/initiate",
        body,
        200,
        ok(initiate_data("t-1", reference, 100)),
    );
    proxy.judge(initiate, true);
    proxy.earlier.forget();
    // A read whose answer names no reference: the listing's is the
    // memory's.
    let mut data = status_data("t-1", reference, "INITIATED", "1.00");
    data["referenceNo"] = serde_json::Value::Null;
    let mut read = exchange(
        "GET",
        "/api/payments/t-1/status",
        serde_json::Value::Null,
        200,
        ok(data),
    );
    read.seq = 2;
    proxy.judge(read, true);
    let page = listing::Page::parse(None).expect("a page");
    let shown = serde_json::to_value(proxy.lock().listing.page(page)).expect("JSON");
    let items = shown["items"].as_array().expect("items");
    let first = items[0]["referenceNo"].as_str().expect("a reference");
    assert!(first.starts_with("TOPUP-payer-"), "{shown}");
    assert_eq!(items[1]["referenceNo"], first, "{shown}");
}

#[test]
fn the_upstreams_password_is_a_secret_and_its_user_name_only_when_alone() {
    let e = rules::test_support::exchange(
        "GET",
        "/api/payments/x/status",
        serde_json::Value::Null,
        404,
        serde_json::Value::Null,
    );
    for (upstream, secret, user) in [
        (
            "http://payments:Zq9xK2mP7w@svc.test",
            "Zq9xK2mP7w",
            "payments",
        ),
        // An API key sent as the user name, no password: the key.
        (
            "http://sk_live_Zq9xK2mP7w@svc.test",
            "sk_live_Zq9xK2mP7w",
            "",
        ),
    ] {
        let proxy = state(upstream);
        let (_, secrets) = proxy.redactor.redact(&e);
        // As written, and with its first byte percent-encoded.
        let encoded = format!("%{:02x}{}", secret.as_bytes()[0], &secret[1..]);
        let shown = proxy
            .redactor
            .scrub(&format!("{user} {secret} {encoded}"), &secrets);
        assert_eq!(shown, format!("{user} [redacted] [redacted]"), "{upstream}");
    }
}
