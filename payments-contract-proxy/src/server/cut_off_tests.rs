//! The stop's cut-off: exchanges still under way when the grace period
//! ends are answered by the proxy itself and are in every output. They
//! used to be dropped: the client got an empty reply, and the summary,
//! report, recording, JUnit, SARIF and metrics said nothing of them.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use super::Proxy;
use crate::ProxyConfig;

/// A byte of the body, then this pause: shorter than the upstream timeout,
/// so the timeout never ends the answer.
const DRIP: Duration = Duration::from_millis(50);

/// An upstream that answers every request with a head promising 100000
/// bytes, then drips them a byte at a time; `heads` counts the answers
/// begun.
async fn dripping_upstream(heads: Arc<AtomicUsize>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let addr = listener.local_addr().expect("its address");
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let heads = Arc::clone(&heads);
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    if socket.read(&mut byte).await.unwrap_or(0) == 0 {
                        return;
                    }
                    head.push(byte[0]);
                }
                let begun = socket
                    .write_all(
                        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
                          content-length: 100000\r\n\r\n",
                    )
                    .await;
                if begun.is_err() {
                    return;
                }
                heads.fetch_add(1, Ordering::SeqCst);
                while socket.write_all(b" ").await.is_ok() {
                    tokio::time::sleep(DRIP).await;
                }
            });
        }
    });
    format!("http://{addr}")
}

/// Polls `done` until it holds, for at most 10 s.
async fn until(what: &str, done: impl Fn() -> bool) {
    let waited = tokio::time::timeout(Duration::from_secs(10), async {
        while !done() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    assert!(waited.is_ok(), "{what}: not within 10 s");
}

/// Sends `request` on a connection of its own and reads until the proxy
/// closes it: the whole reply (empty when it closed without answering).
async fn ask(addr: std::net::SocketAddr, request: Vec<u8>, drip: Option<Vec<u8>>) -> String {
    let mut socket = tokio::net::TcpStream::connect(addr)
        .await
        .expect("connects");
    socket.write_all(&request).await.expect("sent");
    let mut reply = Vec::new();
    match drip {
        None => {
            let _ = socket.read_to_end(&mut reply).await;
        }
        // The body's bytes one by one, each after a pause, while reading.
        Some(body) => {
            let (mut reader, mut writer) = socket.into_split();
            let dripping = tokio::spawn(async move {
                for byte in body {
                    if writer.write_all(&[byte]).await.is_err() {
                        return;
                    }
                    tokio::time::sleep(DRIP).await;
                }
            });
            let _ = reader.read_to_end(&mut reply).await;
            dripping.abort();
        }
    }
    String::from_utf8_lossy(&reply).into_owned()
}

/// The reply of `asking`, within 10 s (no empty reply at the close: the
/// proxy answers every exchange it cut off).
async fn replied(asking: tokio::task::JoinHandle<String>, what: &str) -> String {
    tokio::time::timeout(Duration::from_secs(10), asking)
        .await
        .unwrap_or_else(|_| panic!("{what}: no reply within 10 s of the stop"))
        .expect(what)
}

/// The body of a raw reply (after its head).
fn body_of(reply: &str) -> serde_json::Value {
    let (_, body) = reply.split_once("\r\n\r\n").expect("a head and a body");
    serde_json::from_str(body).unwrap_or_else(|e| panic!("an envelope ({e}): {reply}"))
}

#[tokio::test]
async fn exchanges_open_at_the_end_of_the_grace_period_are_answered_and_in_every_output() {
    let heads = Arc::new(AtomicUsize::new(0));
    let upstream = dripping_upstream(Arc::clone(&heads)).await;
    let dir = tempfile::tempdir().expect("a directory");
    let file = |name: &str| dir.path().join(name);
    let mut config = ProxyConfig::new(upstream.parse().expect("a URL"));
    config.upstream_timeout = Duration::from_millis(300);
    config.report = Some(file("report.jsonl"));
    config.record = Some(file("record.jsonl"));
    config.junit = Some(file("junit.xml"));
    config.sarif = Some(file("sarif.json"));
    let proxy = Proxy::start(config).await.expect("the proxy starts");
    let addr = proxy.addr();
    let read = tokio::spawn(ask(
        addr,
        b"GET /api/payments/t-drip/status HTTP/1.1\r\nhost: x\r\n\r\n".to_vec(),
        None,
    ));
    let body = br#"{"merchantId":"6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60"}"#;
    let initiate = tokio::spawn(ask(
        addr,
        [
            format!(
                "POST /api/payments/initiate HTTP/1.1\r\nhost: x\r\n\
                 content-type: application/json\r\ncontent-length: {}\r\n\r\n",
                body.len()
            )
            .as_bytes(),
            body,
        ]
        .concat(),
        None,
    ));
    // Its body a byte at a time, never all of it before the cut.
    let slow_body = tokio::spawn(ask(
        addr,
        b"POST /api/payments/confirm HTTP/1.1\r\nhost: x\r\n\
          content-type: application/json\r\ncontent-length: 100000\r\n\r\n"
            .to_vec(),
        Some(vec![b' '; 100_000]),
    ));
    let state = proxy.state.clone();
    until("both answers begun and three exchanges open", || {
        heads.load(Ordering::SeqCst) == 2 && state.stop.open() == 3
    })
    .await;
    let finished = proxy.finish().await;

    // Each client got the proxy's answer, not an empty reply.
    let read = replied(read, "the read").await;
    assert!(read.starts_with("HTTP/1.1 502 "), "{read}");
    assert!(
        read.to_ascii_lowercase()
            .contains("x-contract-verdict: unchecked"),
        "{read}"
    );
    let said = body_of(&read);
    assert_eq!(said["errorCode"], "UPSTREAM_UNAVAILABLE", "{said}");
    assert_eq!(
        said["message"],
        "the proxy is stopping and the upstream service's answer was not complete"
    );
    let initiate = replied(initiate, "the initiate").await;
    assert!(initiate.starts_with("HTTP/1.1 502 "), "{initiate}");
    assert_eq!(
        body_of(&initiate)["message"],
        "the proxy is stopping and the upstream service's answer was not complete (it may \
         have carried the request out)"
    );
    let slow_body = replied(slow_body, "the confirm").await;
    assert!(slow_body.starts_with("HTTP/1.1 502 "), "{slow_body}");
    assert_eq!(
        body_of(&slow_body)["message"],
        "the proxy is stopping and the request body had not all come: it was not forwarded"
    );
    assert_eq!(heads.load(Ordering::SeqCst), 2, "the confirm never went");

    // The summary and the metrics.
    let summary = &finished.summary;
    assert_eq!(summary.exchanges, 3, "{summary:?}");
    assert_eq!(summary.verdicts.get("unchecked"), Some(&3), "{summary:?}");
    let (metrics, _) = state.metrics.render(None);
    for endpoint in ["statusById", "initiate", "confirm"] {
        let line = format!(
            "payments_proxy_exchanges_total{{endpoint=\"{endpoint}\",verdict=\"unchecked\"}} 1"
        );
        assert!(metrics.lines().any(|l| l == line), "{line} in\n{metrics}");
    }
    // The report and the recording: a line each, flushed.
    let lines = |name: &str| -> Vec<serde_json::Value> {
        std::fs::read_to_string(file(name))
            .expect("the file")
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect()
    };
    let report = lines("report.jsonl");
    assert_eq!(report.len(), 3, "{report:?}");
    for line in &report {
        assert_eq!(line["status"], 502, "{line}");
        assert_eq!(line["verdict"], "unchecked", "{line}");
    }
    let record = lines("record.jsonl");
    assert_eq!(record.len(), 3, "{record:?}");
    assert!(
        record
            .iter()
            .any(|r| r["request"]["path"] == "/api/payments/t-drip/status"
                && r["response"]["status"] == 502),
        "{record:?}"
    );
    // JUnit: a testcase each, skipped (not judged).
    let junit = std::fs::read_to_string(file("junit.xml")).expect("the JUnit file");
    assert_eq!(junit.matches("<testcase ").count(), 3, "{junit}");
    assert_eq!(junit.matches("<skipped ").count(), 3, "{junit}");
    for name in [
        "GET /api/payments/{transactionId}/status #",
        "POST /api/payments/initiate #",
        "POST /api/payments/confirm #",
    ] {
        assert!(junit.contains(name), "{name} in {junit}");
    }
    // SARIF: no finding, but a notification names each.
    let sarif: serde_json::Value =
        serde_json::from_slice(&std::fs::read(file("sarif.json")).expect("the SARIF file"))
            .expect("JSON");
    let notes = sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"]
        .as_array()
        .unwrap_or_else(|| panic!("notifications: {sarif}"));
    let mut named: Vec<&str> = notes
        .iter()
        .map(|n| {
            assert!(
                n["message"]["text"]
                    .as_str()
                    .is_some_and(|t| t.starts_with("cut off at the stop")),
                "{n}"
            );
            n["locations"][0]["logicalLocations"][0]["fullyQualifiedName"]
                .as_str()
                .expect("a location")
        })
        .collect();
    named.sort_unstable();
    let mut expected: Vec<String> = report
        .iter()
        .map(|line| {
            let endpoint = match line["path"].as_str() {
                Some("/api/payments/initiate") => "initiate",
                Some("/api/payments/confirm") => "confirm",
                _ => "statusById",
            };
            format!("{endpoint}/exchange {}", line["seq"])
        })
        .collect();
    expected.sort_unstable();
    assert_eq!(named, expected, "{sarif}");
}
