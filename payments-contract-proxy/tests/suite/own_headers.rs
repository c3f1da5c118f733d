//! The headers that are the proxy's own business (docs/contract-proxy.md,
//! "What passes through"): none is added to a forwarded request, an
//! upstream's `X-Contract-Verdict` is replaced by the proxy's, and
//! `Proxy-Authorization` / `Proxy-Authenticate` never cross it.

use axum::http::Method;
use payments_contract_proxy::VERDICT_HEADER;

use crate::passthrough::{bytes_of, values};
use crate::rig::{Reply, Rig, client};
use crate::targets::raw_get;
use crate::upstream::Canned;

#[tokio::test]
async fn no_header_is_added_to_a_forwarded_request() {
    let rig = Rig::start().await;
    rig.upstream.push(Canned::raw(200, "seen"));
    assert_eq!(
        raw_get(
            rig.proxy.addr(),
            "/api/payments/t-1/status",
            "X-Only: this\r\n"
        )
        .await,
        200
    );
    let received = rig.upstream.only_request();
    let mut names: Vec<&str> = received.headers.keys().map(|n| n.as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["host", "x-only"], "{:?}", received.headers);
}

#[tokio::test]
async fn an_upstreams_own_verdict_header_is_replaced_never_passed_on() {
    let rig = Rig::start().await;
    let reply = rig
        .exchange(
            &Method::GET,
            "/api/payments/t-spoof/status",
            None,
            Canned::raw(502, "<html>Bad Gateway</html>")
                .header(VERDICT_HEADER, "pass")
                .header(VERDICT_HEADER, "pass"),
        )
        .await;
    assert_eq!(reply.verdict(), "violation", "exactly one, the proxy's");
}

#[tokio::test]
async fn proxy_authorization_is_never_forwarded_to_the_upstream() {
    let rig = Rig::start().await;
    rig.upstream.push(Canned::raw(200, "seen"));
    let reply = Reply::of(
        rig.client
            .get(rig.url("/api/payments/t-1/status"))
            .header("proxy-authorization", "Basic cHJveHktdXNlcjpwcm94eS1rZXk=")
            .header("authorization", "Bearer service-key-1")
            .send()
            .await
            .expect("the proxy answers"),
    )
    .await;
    assert_eq!(reply.status, 200);
    let exchanges = rig.proxy.exchanges();
    let (exchange, _, _) = exchanges.last().expect("the exchange");
    assert!(
        exchange.request.header("proxy-authorization").is_some(),
        "the proxy received it (else this test proves nothing): {:?}",
        exchange.request.headers
    );
    let received = rig.upstream.only_request();
    assert!(
        received.values("proxy-authorization").is_empty(),
        "a credential for the proxy must not reach the upstream: {:?}",
        received.headers
    );
    // The service's own credential is end to end: it goes on.
    assert_eq!(
        received.values("authorization"),
        bytes_of(&["Bearer service-key-1"])
    );
}

#[tokio::test]
async fn proxy_authenticate_is_never_passed_back_to_the_application() {
    let rig = Rig::start().await;
    let answer = || {
        Canned::raw(200, "answered")
            .header("proxy-authenticate", "Basic realm=\"upstream-hop\"")
            .header("www-authenticate", "Bearer")
            .header("x-kept", "yes")
    };
    // Straight from the upstream first: the header is on the wire.
    rig.upstream.push(answer());
    let direct = Reply::of(
        client()
            .get(format!("{}/api/hop", rig.upstream.url()))
            .send()
            .await
            .expect("the upstream answers"),
    )
    .await;
    assert!(
        direct.headers.contains_key("proxy-authenticate"),
        "the upstream sends it (else this test proves nothing): {:?}",
        direct.headers
    );

    rig.upstream.push(answer());
    let reply = rig.send(&Method::GET, "/api/hop", None).await;
    assert_eq!((reply.status, &reply.body[..]), (200, &b"answered"[..]));
    assert!(
        !reply.headers.contains_key("proxy-authenticate"),
        "the upstream's challenge for its own hop is not passed back: {:?}",
        reply.headers
    );
    assert_eq!(
        values(&reply.headers, "www-authenticate"),
        bytes_of(&["Bearer"])
    );
    assert_eq!(values(&reply.headers, "x-kept"), bytes_of(&["yes"]));
}
