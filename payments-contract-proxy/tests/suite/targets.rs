//! Request targets through the proxy (docs/contract-proxy.md, "What passes
//! through"): unusual but valid path and query bytes reach the upstream
//! exactly as sent, and a dot segment never leads out of `/api/` or the
//! upstream's path prefix. Sent as raw bytes, so no client re-encodes them.

use std::time::Duration;

use crate::rig::{Rig, Setup};
use crate::upstream::Canned;

/// Sends `GET target` as raw bytes (no client in between to re-encode
/// it) with these extra header lines, reads until the proxy closes (a
/// guard against a hang, not a sleep), and returns the answer's status.
pub(crate) async fn raw_get(addr: std::net::SocketAddr, target: &str, headers: &str) -> u16 {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let mut stream = tokio::net::TcpStream::connect(addr)
        .await
        .expect("connect to the proxy");
    let request =
        format!("GET {target} HTTP/1.1\r\nHost: proxy.test\r\n{headers}Connection: close\r\n\r\n");
    stream
        .write_all(request.as_bytes())
        .await
        .expect("write the request");
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut answer))
        .await
        .expect("the proxy answers and closes")
        .expect("read the answer");
    let head = String::from_utf8_lossy(&answer);
    head.split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("an HTTP status line: {head:?}"))
}

/// Asserts each raw target reaches the upstream with exactly its path and
/// query.
async fn assert_targets_forwarded_unchanged(targets: &[(&str, Option<&str>)]) {
    let rig = Rig::start().await;
    for (n, (path, query)) in targets.iter().enumerate() {
        rig.upstream.push(Canned::raw(200, "seen"));
        let target = match query {
            Some(q) => format!("{path}?{q}"),
            None => (*path).to_owned(),
        };
        assert_eq!(
            raw_get(rig.proxy.addr(), &target, "").await,
            200,
            "{target}"
        );
        assert_eq!(rig.upstream.count(), n + 1, "{target} forwarded once");
        let received = rig.upstream.received().pop().expect("received");
        assert_eq!(
            (received.path.as_str(), received.query.as_deref()),
            (*path, *query),
            "{target}"
        );
    }
}

#[tokio::test]
async fn unusual_but_valid_path_and_query_bytes_reach_the_upstream_unchanged() {
    assert_targets_forwarded_unchanged(&[
        ("/api/x/a|b^c", Some("x=a|b^c")),
        ("/api/x/a%zzb/%2F%2f/%7e", Some("x=%2f%2F&y=%zz&z=%7e~")),
        ("/api/x;p=1/.../y", Some("a=b?c=d/e")),
        ("/api/a//b", Some("")),
        ("/api/x/..%2f..%2fadmin", None),
    ])
    .await;
}

#[tokio::test]
async fn quotes_braces_and_backslashes_in_the_path_and_query_reach_the_upstream_unchanged() {
    assert_targets_forwarded_unchanged(&[
        ("/api/x/it's", Some("name=O'Brien")),
        ("/api/x/{id}", Some("filter={a}")),
        ("/api/x/a\\b", Some("x=a\\b")),
    ])
    .await;
}

#[tokio::test]
async fn a_dot_segment_never_takes_a_request_out_of_api_or_the_upstream_prefix() {
    for prefix in ["", "/stage"] {
        let rig = Rig::with(Setup {
            prefix,
            ..Setup::default()
        })
        .await;
        // Refused, never forwarded: the upstream would resolve them to
        // outside /api/ or its prefix, also those that climb out and come
        // back down (resolved, the last lands on /api/ again, but above
        // the prefix: /stage/api/x/../../../api/… is /api/…).
        for target in [
            "/api/../admin",
            "/api/%2e%2e/admin",
            "/api/payments/../../../../x",
            "/api/x/%2E%2e/%2e./y",
            "/api/x/../../../api/payments/abc/status",
            "/api/../api/payments/abc/status",
            "/api/payments/../%2e%2e/api/payments/abc/status",
            "/api/x/..",
        ] {
            let before = rig.upstream.count();
            let status = raw_get(rig.proxy.addr(), target, "").await;
            assert_eq!(status, 404, "{prefix:?} {target}: refused as NOT_FOUND");
            assert_eq!(
                rig.upstream.count(),
                before,
                "{prefix:?} {target}: never forwarded"
            );
        }
        // A dot segment that stays inside /api/ is forwarded as it came
        // (the upstream decides what it means): it was refused.
        for target in [
            "/api/payments/./status",
            "/api/payments/%2e/status",
            "/api/payments/reference/%2E/status",
            "/api/payments/../status",
        ] {
            let before = rig.upstream.count();
            rig.upstream.push(Canned::raw(404, "seen"));
            raw_get(rig.proxy.addr(), target, "").await;
            assert_eq!(
                rig.upstream.count(),
                before + 1,
                "{prefix:?} {target}: forwarded"
            );
            let received = rig.upstream.received().pop().expect("forwarded");
            assert_eq!(received.path, format!("{prefix}{target}"), "{prefix:?}");
        }
    }
}

/// A path outside `/api/` is the proxy's own 404, marked `unchecked` as
/// every answer of its own is (it carried no verdict), and no exchange:
/// nothing is forwarded, recorded or counted.
#[tokio::test]
async fn a_path_outside_api_is_an_unchecked_404_and_no_exchange() {
    let rig = Rig::start().await;
    for path in ["/apix", "/API/payments/x/status", "/x"] {
        let reply = reqwest::get(format!("http://{}{path}", rig.proxy.addr()))
            .await
            .expect("an answer");
        assert_eq!(reply.status(), 404, "{path}");
        assert_eq!(
            reply
                .headers()
                .get("x-contract-verdict")
                .and_then(|v| v.to_str().ok()),
            Some("unchecked"),
            "{path}"
        );
    }
    assert_eq!(rig.upstream.count(), 0);
    assert_eq!(rig.proxy.summary().exchanges, 0);
}

/// RFC 9112, section 3.2: an HTTP/1.1 request with a second `Host` or
/// one that is not a host and port is answered 400 by the proxy itself
/// and never reaches the upstream (which could read another host).
#[tokio::test]
async fn a_second_or_a_malformed_host_is_refused_and_never_forwarded() {
    let rig = Rig::start().await;
    for extra in ["Host: other.test\r\n", "Host: a b\r\n"] {
        assert_eq!(
            raw_get(rig.proxy.addr(), "/api/payments/x/status", extra).await,
            400,
            "{extra:?}"
        );
    }
    assert_eq!(rig.upstream.count(), 0, "nothing forwarded");
    rig.upstream.push(Canned::raw(200, "seen"));
    assert_eq!(
        raw_get(rig.proxy.addr(), "/api/payments/x/status", "").await,
        200,
        "one Host passes"
    );
}
