//! `payments tail --proxy --follow` and a contract proxy restarted on the
//! same address (its exchanges numbered from 1 again) that, by the next
//! poll, numbers past the last exchange read: said once, and every new
//! exchange shown once; and a follow with no restart shows each exchange
//! once (each page starts with the last exchange read again), a slow one
//! judged after a later one included.

use std::time::Duration;

use payments_contract_proxy::{Proxy, ProxyConfig};
use serde_json::Value;
use tokio::sync::mpsc::UnboundedReceiver;

use crate::common::{MERCHANT, Sandbox};

use super::follow::{follow, follow_every, line_reader, next_line};
use super::losses::until;
use super::restart::{RESTARTED, stop};
use super::{KEY_A, PROXY_KEY, initiate, mock};

/// The next line's seq and the reference the proxy ties it to (if any).
async fn next_exchange(lines: &mut UnboundedReceiver<String>) -> (u64, String) {
    let line = next_line(lines).await;
    let item: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
    let seq = item["seq"].as_u64().unwrap_or_else(|| panic!("{item}"));
    (seq, item["referenceNo"].as_str().unwrap_or("").to_owned())
}

/// `proxy` stopped and another started on its address with `config`:
/// numbered from 1 again.
async fn restart(proxy: Proxy, config: ProxyConfig) -> Proxy {
    let addr = proxy.addr();
    proxy.shutdown().await;
    let listener = std::net::TcpListener::bind(addr).expect("the same address again");
    Proxy::start_on(listener, config)
        .await
        .expect("the proxy again")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_proxy_restarted_past_the_last_exchange_read_is_said_and_its_exchanges_shown_once() {
    let server = mock().await;
    let upstream = server.base_url();
    // With its admin key, and tail with it.
    let config = || {
        let mut config = ProxyConfig::new(upstream.parse().expect("a URL"));
        config.admin_keys = vec![PROXY_KEY.parse().expect("an admin key")];
        config
    };
    let proxy = Proxy::start(config()).await.expect("a proxy");
    let base = proxy.base_url();
    for n in 1..=5 {
        initiate(&base, KEY_A, MERCHANT, &format!("OLD-{n}")).await;
    }
    let sandbox = Sandbox::new();
    // A poll every 3 s: the restart and the new exchanges happen between
    // two (after the first read's last line).
    let mut child = follow_every(&sandbox, &base, PROXY_KEY, "3", &["--proxy"]);
    let mut lines = line_reader(&mut child);
    for n in 1..=5 {
        assert_eq!(next_exchange(&mut lines).await, (n, format!("OLD-{n}")));
    }

    // Restarted on the same address: numbered from 1 again, and 20
    // exchanges (numbered past 5) before the next poll.
    let proxy = restart(proxy, config()).await;
    for n in 1..=20 {
        initiate(&base, KEY_A, MERCHANT, &format!("NEW-{n}")).await;
    }
    for n in 1..=20 {
        assert_eq!(next_exchange(&mut lines).await, (n, format!("NEW-{n}")));
    }
    // And on from there.
    initiate(&base, KEY_A, MERCHANT, "NEW-21").await;
    assert_eq!(next_exchange(&mut lines).await, (21, "NEW-21".to_owned()));

    // Again, with as many exchanges as the one judged before the last
    // one read (20): after it, nothing; the listing says why.
    let proxy = restart(proxy, config()).await;
    for n in 1..=20 {
        initiate(&base, KEY_A, MERCHANT, &format!("THIRD-{n}")).await;
    }
    for n in 1..=20 {
        assert_eq!(next_exchange(&mut lines).await, (n, format!("THIRD-{n}")));
    }
    let (err, rest) = stop(child, lines).await;
    assert_eq!(rest, Vec::<String>::new(), "nothing more");
    assert_eq!(
        err.lines().collect::<Vec<_>>(),
        [RESTARTED, RESTARTED],
        "once a restart: {err}"
    );
    proxy.shutdown().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_follow_through_the_proxy_shows_each_exchange_once_a_slow_one_too() {
    use wiremock::matchers::path;
    use wiremock::{Mock, MockServer as Stub, ResponseTemplate};
    let upstream = Stub::start().await;
    let envelope = serde_json::json!({"isSuccess": true, "data": null});
    Mock::given(path("/api/payments/reference/SLOW/status"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(envelope.clone())
                .set_delay(Duration::from_secs(1)),
        )
        .mount(&upstream)
        .await;
    Mock::given(path("/api/payments/reference/FAST/status"))
        .respond_with(ResponseTemplate::new(200).set_body_json(envelope))
        .mount(&upstream)
        .await;
    // Without an admin key.
    let proxy = Proxy::start(ProxyConfig::new(upstream.uri().parse().expect("a URL")))
        .await
        .expect("a proxy");
    let base = proxy.base_url();
    let fast = || reqwest::get(format!("{base}/api/payments/reference/FAST/status"));
    for _ in 1..=3 {
        assert!(fast().await.is_ok_and(|r| r.status() == 200));
    }
    let sandbox = Sandbox::new();
    let mut child = follow(&sandbox, &base, "unused", &["--proxy"]);
    let mut lines = line_reader(&mut child);
    for n in 1..=3 {
        assert_eq!(next_exchange(&mut lines).await.0, n);
    }
    // 4 is slow: judged after 5, and shown after it, once.
    let slow = tokio::spawn(reqwest::get(format!(
        "{base}/api/payments/reference/SLOW/status"
    )));
    until("the slow request reaches the upstream", || async {
        upstream
            .received_requests()
            .await
            .is_some_and(|r| r.len() == 4)
    })
    .await;
    assert!(fast().await.is_ok());
    assert_eq!(next_exchange(&mut lines).await.0, 5);
    assert!(slow.await.expect("the slow request").is_ok());
    assert_eq!(next_exchange(&mut lines).await.0, 4);
    // Polls that find nothing new, then many, each once and in order.
    for _ in 6..=40 {
        assert!(fast().await.is_ok());
    }
    for n in 6..=40 {
        assert_eq!(next_exchange(&mut lines).await.0, n);
    }
    let (err, rest) = stop(child, lines).await;
    assert_eq!(rest, Vec::<String>::new(), "nothing twice");
    assert_eq!(err, "", "no note");
    proxy.shutdown().await;
}
