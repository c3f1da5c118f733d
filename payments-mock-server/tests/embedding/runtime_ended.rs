use std::time::Duration;

use payments_mock_server::MockServer;

/// The panic's text.
fn said(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_default()
}

/// A server started inside a runtime that has ended (a `#[tokio::test]`
/// that returned) does not hand out its dead address: `sandbox()` and
/// `base_url()` say why, and where to read how to share one. Its port
/// refuses.
#[test]
fn a_server_whose_runtime_ended_says_so() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let server = runtime.block_on(MockServer::start());
    // While it serves, both work.
    let _ = server.base_url();
    drop(server.sandbox());
    drop(runtime);

    for (called, attempt) in [
        (
            "sandbox",
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                drop(server.sandbox());
            })),
        ),
        (
            "base_url",
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let _ = server.base_url();
            })),
        ),
    ] {
        let panic = attempt.expect_err(called);
        let text = said(&panic);
        assert!(
            text.contains(&format!("MockServer::{called}()"))
                && text.contains("no longer serving")
                && text.contains("the Tokio runtime it was started on has ended")
                && text.contains("Sharing one server across tests"),
            "{text}"
        );
    }
    let refused = std::net::TcpStream::connect_timeout(&server.addr(), Duration::from_secs(5))
        .expect_err("nothing serves the port");
    assert_eq!(refused.kind(), std::io::ErrorKind::ConnectionRefused);
}

/// The pattern the guide gives: one server on a thread with a runtime of
/// its own, shared by tests that each run on their own runtime.
#[test]
fn a_server_on_a_runtime_of_its_own_outlives_the_tests_runtimes() {
    let (started, server) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a runtime");
        runtime.block_on(async move {
            let _ = started.send(MockServer::start().await);
            std::future::pending::<()>().await;
        });
    });
    let server: MockServer = server.recv().expect("started");
    for test in 0..2 {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a test's runtime");
        runtime.block_on(async {
            let mine = server.sandbox();
            assert_eq!(
                crate::initiate(&mine.base_url(), &format!("T{test}")).await,
                200
            );
        });
    }
}
