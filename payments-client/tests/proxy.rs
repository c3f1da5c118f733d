//! Proxies from the environment (`HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY`):
//! a base URL of this machine (loopback, or the `0.0.0.0` a server on
//! every interface prints) never goes through one (a mock on this machine
//! behind a corporate proxy), another host does, and `no_proxy()` turns
//! them off.
//!
//! reqwest reads the variables when a client is built, and setting them in
//! this process would race every other test (and is `unsafe`): each test
//! runs its body in a child process (this test binary, asked for that one
//! test) whose environment names a fake proxy of the parent, which records
//! the request line of everything that reaches it.

mod common;

use std::io::{BufRead as _, BufReader, Write as _};
use std::net::{TcpListener, TcpStream};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use common::*;
use payments_client::{Client, Error};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer};

/// Set in the child: run the test's body.
const CHILD: &str = "PAYMENTS_CLIENT_TEST_PROXY_CHILD";

/// A proxy on loopback that answers every request `404` and records its
/// request line (absolute-form for a proxied `http` request).
struct FakeProxy {
    url: String,
    lines: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl FakeProxy {
    fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let url = format!("http://{}", listener.local_addr().expect("its address"));
        let lines = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (lines, stop) = (Arc::clone(&lines), Arc::clone(&stop));
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(stream) = stream else { continue };
                    let mut reader = BufReader::new(stream);
                    let mut line = String::new();
                    let _ = reader.read_line(&mut line);
                    lines
                        .lock()
                        .expect("not poisoned")
                        .push(line.trim_end().to_owned());
                    // The rest of the head, then the answer.
                    let mut header = String::new();
                    while reader.read_line(&mut header).is_ok_and(|n| n > 2) {
                        header.clear();
                    }
                    let _ = reader.get_mut().write_all(
                        b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                    );
                }
            })
        };
        FakeProxy {
            url,
            lines,
            stop,
            thread: Some(thread),
        }
    }

    /// Runs the test `name` of this binary in a child whose every proxy
    /// variable names this proxy, and asserts that it ran and passed.
    fn run_child(&self, name: &str) {
        let exe = std::env::current_exe().expect("this test binary");
        let mut command = Command::new(exe);
        command
            .args([name, "--exact", "--nocapture", "--test-threads=1"])
            .env(CHILD, "1")
            .env_remove("NO_PROXY")
            .env_remove("no_proxy")
            .env_remove("REQUEST_METHOD");
        for variable in [
            "HTTP_PROXY",
            "http_proxy",
            "HTTPS_PROXY",
            "https_proxy",
            "ALL_PROXY",
            "all_proxy",
        ] {
            command.env(variable, &self.url);
        }
        let output = command.output().expect("the child runs");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            output.status.success() && stdout.contains("1 passed"),
            "the child failed or ran no test:\n{stdout}\n{stderr}"
        );
    }

    /// The request lines that reached the proxy, once it is stopped.
    fn stop(mut self) -> Vec<String> {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accept loop, which sees the flag and ends.
        let _ = TcpStream::connect(self.url.trim_start_matches("http://"));
        if let Some(thread) = self.thread.take() {
            thread.join().expect("the proxy's thread");
        }
        std::mem::take(&mut *self.lines.lock().expect("not poisoned"))
    }
}

fn in_child() -> bool {
    std::env::var_os(CHILD).is_some()
}

async fn answering_server() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(json(200, ok_envelope(&status_data())))
        .mount(&server)
        .await;
    server
}

#[tokio::test]
async fn a_loopback_base_url_never_goes_through_an_environment_proxy() {
    if in_child() {
        let server = answering_server().await;
        let port = server.address().port();
        for base in [
            server.uri(),
            format!("http://localhost:{port}"),
            format!("http://LOCALHOST:{port}/"),
            // What `payments-mock-server --host 0.0.0.0` prints: a
            // connection to it reaches this machine's listener.
            format!("http://0.0.0.0:{port}"),
        ] {
            let reply = client_for(&base).status(TX_ID).await;
            assert!(reply.is_ok(), "{base}: {reply:?}");
        }
        return;
    }
    let proxy = FakeProxy::start();
    proxy.run_child("a_loopback_base_url_never_goes_through_an_environment_proxy");
    assert_eq!(proxy.stop(), Vec::<String>::new());
}

#[tokio::test]
async fn another_host_goes_through_the_environment_proxy_unless_no_proxy() {
    if in_child() {
        // Through the proxy: its 404 is the answer.
        let err = client_for("http://payments.example/v1")
            .status(TX_ID)
            .await
            .unwrap_err();
        assert_eq!(err.http_status(), Some(404), "{err:?}");
        // `no_proxy()`: straight to the host, which does not exist (RFC
        // 6761's `.invalid`): a failure to connect, not the proxy's 404.
        let client = Client::builder("http://payments.invalid/v1")
            .retry_policy(fast_retries())
            .connect_timeout(std::time::Duration::from_secs(5))
            .no_proxy()
            .build()
            .expect("a client");
        let err = client.status(TX_ID).await.unwrap_err();
        assert_eq!(err.http_status(), None, "{err:?}");
        return;
    }
    let proxy = FakeProxy::start();
    proxy.run_child("another_host_goes_through_the_environment_proxy_unless_no_proxy");
    assert_eq!(
        proxy.stop(),
        [format!(
            "GET http://payments.example/v1/api/payments/{TX_ID}/status HTTP/1.1"
        )]
    );
}

#[test]
fn no_proxy_is_refused_with_the_callers_http_client() {
    let err = Client::builder("https://payments.example")
        .http_client(reqwest::Client::new())
        .no_proxy()
        .build()
        .unwrap_err();
    assert!(matches!(err, Error::Config { .. }), "{err:?}");
    assert!(err.to_string().contains("no_proxy"), "{err}");
}
