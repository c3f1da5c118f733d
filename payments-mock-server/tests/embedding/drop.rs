use std::io::ErrorKind;
use std::time::Duration;

use payments_mock_server::{Fault, FaultRule, MockServer};

/// Starts and drops a server `rounds` times, connecting to its port right
/// after each drop: refused every time (no payment on a server that is
/// down, the client's "not carried out").
async fn drop_then_connect(rounds: usize) {
    for round in 0..rounds {
        let server = MockServer::start().await;
        let addr = server.addr();
        drop(server);
        match std::net::TcpStream::connect(addr) {
            Err(e) if e.kind() == ErrorKind::ConnectionRefused => {}
            other => panic!("round {round}: a connect right after the drop: {other:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_drop_the_port_refuses_at_once_multi_thread() {
    drop_then_connect(200).await;
}

#[tokio::test(flavor = "current_thread")]
async fn after_a_drop_the_port_refuses_at_once_current_thread() {
    drop_then_connect(200).await;
}

/// An initiate sent right after the drop, as a client would: it is not
/// answered, and the connection is refused (nothing reached the server).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_initiate_after_a_drop_is_refused_and_nothing_is_stored() {
    for round in 0..50 {
        let server = MockServer::start().await;
        let base = server.base_url();
        // The test's look at its store, past the drop.
        let controls = payments_mock_server::Controls::clone(&server);
        drop(server);
        let sent = reqwest::Client::new()
            .post(format!("{base}/api/payments/initiate"))
            .header("content-type", "application/json")
            .body(crate::initiate_body(&format!("R{round}")))
            .send()
            .await;
        let error = sent.expect_err("a server that was dropped answers nothing");
        assert!(error.is_connect(), "round {round}: {error:?}");
        assert!(controls.transactions().await.is_empty(), "round {round}");
    }
}

/// A request being answered when the server is dropped is still answered;
/// a new connection is refused meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_under_way_at_the_drop_is_still_answered() {
    let server = MockServer::start().await;
    let base = server.base_url();
    let addr = server.addr();
    server
        .add_fault_rule(FaultRule::new(Fault::Delay(Duration::from_millis(300))).times(1))
        .expect("a rule");
    let answering = tokio::spawn(async move { crate::initiate(&base, "UNDER-WAY").await });
    let waited = std::time::Instant::now();
    while server.fault_rules()[0].fired == 0 {
        assert!(
            waited.elapsed() < Duration::from_secs(20),
            "the request never came"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    drop(server);
    let refused = std::net::TcpStream::connect(addr).expect_err("refused");
    assert_eq!(refused.kind(), ErrorKind::ConnectionRefused);
    let status = tokio::time::timeout(Duration::from_secs(20), answering)
        .await
        .expect("answered in time")
        .expect("no panic");
    assert_eq!(status, 200);
}
