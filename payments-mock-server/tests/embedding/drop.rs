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

/// An initiate on a new connection (a client without a pool) to `base`,
/// tried at most three times: a connection that came in the instant the
/// dropped server took its last look at the shared backlog may be closed
/// by it unanswered (documented). A refused connect is never retried: the
/// socket no longer listens.
async fn served_on(base: &str) -> u16 {
    for attempt in 0..3 {
        let client = reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .build()
            .expect("a client");
        let sent = client
            .post(format!("{base}/api/payments/initiate"))
            .header("content-type", "application/json")
            .body(crate::initiate_body(&format!("SUPPLIED-{attempt}")))
            .send()
            .await;
        match sent {
            Ok(answer) => return answer.status().as_u16(),
            Err(e) if e.is_connect() => panic!("the supplied listener was shut down: {e:?}"),
            Err(_) => {}
        }
    }
    panic!("three connections closed unanswered")
}

fn bound() -> std::net::TcpListener {
    std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port")
}

/// A drop leaves a listener the test supplied (and still holds a clone
/// of) listening: a second server on another clone serves on it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_drop_leaves_a_supplied_listener_to_the_next_server() {
    let kept = bound();
    for round in 0..5 {
        let server = MockServer::builder()
            .listener(kept.try_clone().expect("a clone"))
            .start()
            .await
            .expect("started");
        assert_eq!(served_on(&server.base_url()).await, 200, "round {round}");
        drop(server);
    }
}

/// Two servers on clones of one listener: dropping one leaves the other
/// serving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_one_of_two_servers_on_one_listener_leaves_the_other_serving() {
    let kept = bound();
    let first = MockServer::builder()
        .listener(kept.try_clone().expect("a clone"))
        .start()
        .await
        .expect("started");
    let second = MockServer::builder()
        .listener(kept)
        .start()
        .await
        .expect("started");
    drop(first);
    assert_eq!(served_on(&second.base_url()).await, 200);
}

/// The test's own clone still listens after the drop: its accept takes
/// the next connection (no `EINVAL`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_callers_own_listener_still_accepts_after_the_drop() {
    let kept = bound();
    let addr = kept.local_addr().expect("an address");
    let server = MockServer::builder()
        .listener(kept.try_clone().expect("a clone"))
        .start()
        .await
        .expect("started");
    drop(server);
    // The server made the socket non-blocking (a flag its clones share).
    kept.set_nonblocking(true).expect("non-blocking");
    match kept.accept() {
        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
        other => panic!("an accept on the test's own listener after the drop: {other:?}"),
    }
    let waited = std::time::Instant::now();
    let connect = || {
        let client = std::net::TcpStream::connect(addr).expect("not refused");
        client.set_nonblocking(true).expect("non-blocking");
        client
    };
    let mut client = connect();
    loop {
        assert!(waited.elapsed() < Duration::from_secs(20), "never accepted");
        match kept.accept() {
            Ok(_) => break,
            Err(e) if e.kind() == ErrorKind::WouldBlock => {}
            Err(e) => panic!("accept: {e:?}"),
        }
        // Taken and closed by the dropped server's last look at the
        // backlog: connect again.
        match client.peek(&mut [0u8; 1]) {
            Err(e) if e.kind() == ErrorKind::WouldBlock => {}
            _ => client = connect(),
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

/// A pooled client's kept-alive connection after `shutdown().await`:
/// closed, so its next request is not answered and nothing is stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_shutdown_a_kept_alive_connection_answers_nothing() {
    kept_alive_after(20, |server| Box::pin(server.shutdown())).await;
}

/// The same after a plain drop: a request on the connection still open
/// found a server that was still serving (7 of 50 rounds were answered
/// 200 and stored); now its connection is closed without an answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_drop_a_kept_alive_connection_answers_nothing() {
    kept_alive_after(50, |server| {
        drop(server);
        Box::pin(std::future::ready(()))
    })
    .await;
}

/// `rounds` of: a server, one initiate on a pooled client, `stop` the
/// server, a second initiate on the same client: not answered, one stored.
async fn kept_alive_after(
    rounds: usize,
    stop: impl Fn(MockServer) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>,
) {
    for round in 0..rounds {
        let server = MockServer::start().await;
        let base = server.base_url();
        let controls = payments_mock_server::Controls::clone(&server);
        let client = reqwest::Client::new();
        let post = |reference: String| {
            client
                .post(format!("{base}/api/payments/initiate"))
                .header("content-type", "application/json")
                .body(crate::initiate_body(&reference))
                .send()
        };
        let first = post(format!("K{round}a")).await.expect("answered");
        assert_eq!(first.status(), 200);
        // The whole answer read: the connection goes back to the pool.
        first.bytes().await.expect("a body");
        stop(server).await;
        let after = post(format!("K{round}b")).await;
        assert!(after.is_err(), "round {round}: answered after the stop");
        assert_eq!(controls.transactions().await.len(), 1, "round {round}");
    }
}
