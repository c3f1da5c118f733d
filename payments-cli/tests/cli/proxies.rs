//! A connect failure through the environment's proxy is blamed on what
//! happened: a proxy that could not be reached (refused, a SOCKS proxy
//! the CLI cannot use), one that refused the tunnel (407: credentials;
//! 403, 502), never answered, or opened the tunnel and closed it; a
//! service that answers plain HTTP through a working proxy is the
//! service's fault. Never a part of the proxy's `user:pass@` is shown.
//! The plain-HTTP advice names the URL as parsed.

use std::io::{Read as _, Write as _};
use std::net::{TcpListener, TcpStream};

use payments_mock_server::MockServer;

use crate::common::{Sandbox, closed_port_url, run, stderr};
use crate::network::proxy_listener;

const UNKNOWN: &str = "0193a0b4-0000-7000-8000-000000000000";

/// What the fake proxy does with a `CONNECT`.
#[derive(Clone, Copy)]
enum Mode {
    /// Answers with this head, then closes.
    Answer(&'static str),
    /// Answers `200`, then relays the tunnel to this loopback port.
    Tunnel(u16),
}

/// A loopback proxy (one thread a connection) that reads one request
/// head and does `mode`; its port.
fn fake_proxy(mode: Mode) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("loopback");
    let port = listener.local_addr().expect("its address").port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            std::thread::spawn(move || serve(stream, mode));
        }
    });
    port
}

fn serve(mut stream: TcpStream, mode: Mode) {
    let mut head = Vec::new();
    let mut buf = [0; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    match mode {
        Mode::Answer(answer) => {
            let _ = stream.write_all(answer.as_bytes());
        }
        Mode::Tunnel(port) => {
            let Ok(upstream) = TcpStream::connect(("127.0.0.1", port)) else {
                return;
            };
            let _ = stream.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n");
            let (Ok(mut down), Ok(mut up)) = (stream.try_clone(), upstream.try_clone()) else {
                return;
            };
            let mut upstream = upstream;
            std::thread::spawn(move || std::io::copy(&mut down, &mut upstream));
            let _ = std::io::copy(&mut up, &mut stream);
        }
    }
}

/// `payments status UNKNOWN` against `base` with `env`: exit code and
/// stderr.
async fn status(base: &str, env: &[(&str, &str)], args: &[&str]) -> (i32, String) {
    let sandbox = Sandbox::new();
    let mut cmd = sandbox.payments();
    cmd.envs(env.iter().copied())
        .args(["--base-url", base, "--retries", "0"])
        .args(args)
        .args(["status", UNKNOWN]);
    let assert = run(cmd).await;
    let code = assert.get_output().status.code().expect("an exit code");
    (code, stderr(&assert))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_password_with_an_at_sign_is_never_shown_in_the_proxys_url() {
    let dead = closed_port_url();
    let port = dead.rsplit(':').next().expect("a port");
    for value in [
        format!("http://alice:Winter@2026-secret@127.0.0.1:{port}"),
        format!("http://alice:Winter%402026-secret@127.0.0.1:{port}"),
    ] {
        let (code, err) = status(
            "http://pay.example:8080",
            &[("HTTP_PROXY", value.as_str())],
            &[],
        )
        .await;
        assert_eq!(code, 4, "{err}");
        assert!(
            err.contains(&format!(
                "failed: could not connect to the proxy http://127.0.0.1:{port} (from \
                 HTTP_PROXY); is the proxy running?"
            )),
            "{err}"
        );
        for secret in ["alice", "Winter", "2026", "secret"] {
            assert!(!err.contains(secret), "{secret}: {err}");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_proxy_that_wants_credentials_is_said_to_never_their_text() {
    let port = fake_proxy(Mode::Answer(
        "HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=x\r\n\
         Content-Length: 0\r\n\r\n",
    ));
    let through = format!(
        "failed: could not connect to the service through the proxy http://127.0.0.1:{port} \
         (from HTTPS_PROXY): the proxy refused the tunnel with 407 Proxy Authentication Required"
    );
    let wrong = format!("http://proxy-user:wrong-pw@127.0.0.1:{port}");
    let (code, err) = status("https://pay.example:8443", &[("HTTPS_PROXY", &wrong)], &[]).await;
    assert_eq!(code, 4, "{err}");
    assert!(err.contains(&through), "{err}");
    assert!(
        err.contains(
            "; the proxy did not accept the credentials in HTTPS_PROXY: correct its user:pass@"
        ),
        "{err}"
    );
    assert!(
        !err.contains("proxy-user") && !err.contains("wrong-pw"),
        "{err}"
    );
    assert!(!err.contains("is the proxy running"), "{err}");

    let none = format!("http://127.0.0.1:{port}");
    let (code, err) = status("https://pay.example:8443", &[("HTTPS_PROXY", &none)], &[]).await;
    assert_eq!(code, 4, "{err}");
    assert!(err.contains(&through), "{err}");
    assert!(
        err.contains(
            "; the proxy wants credentials: give them in HTTPS_PROXY as http://USER:PASS@HOST:PORT"
        ),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_proxy_that_refuses_the_tunnel_is_named_for_it() {
    for answer in [
        "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n",
    ] {
        let proxy = format!("http://127.0.0.1:{}", fake_proxy(Mode::Answer(answer)));
        let (code, err) = status("https://pay.example:8443", &[("HTTPS_PROXY", &proxy)], &[]).await;
        assert_eq!(code, 4, "{err}");
        assert!(
            err.contains(&format!(
                "failed: could not connect to the service through the proxy {proxy} (from \
                 HTTPS_PROXY): the proxy refused the tunnel (it answered the CONNECT with an \
                 error status); the proxy will not open a tunnel to pay.example"
            )),
            "{err}"
        );
        assert!(!err.contains("is the proxy running"), "{err}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_proxy_that_never_answers_the_connect_timed_out() {
    // Taken by the kernel, never accepted: no answer ever comes.
    let (_held, proxy) = proxy_listener();
    let (code, err) = status(
        "https://pay.example:8443",
        &[("HTTPS_PROXY", &proxy)],
        &["--timeout", "2"],
    )
    .await;
    assert_eq!(code, 4, "{err}");
    assert!(
        err.contains(&format!(
            "failed: timed out waiting for the proxy {proxy} (from HTTPS_PROXY); is the proxy \
             working?"
        )),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tunnel_opened_then_closed_is_no_proxy_that_could_not_be_reached() {
    let proxy = format!(
        "http://127.0.0.1:{}",
        fake_proxy(Mode::Answer("HTTP/1.1 200 Connection established\r\n\r\n"))
    );
    let (code, err) = status("https://pay.example:8443", &[("HTTPS_PROXY", &proxy)], &[]).await;
    assert_eq!(code, 4, "{err}");
    assert!(
        err.contains(&format!(
            "failed: could not connect to the service through the proxy {proxy} (from \
             HTTPS_PROXY): the connection closed during the TLS handshake; the proxy opened the \
             tunnel"
        )),
        "{err}"
    );
    assert!(!err.contains("could not connect to the proxy"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn plain_http_through_a_working_proxy_is_the_services_answer() {
    let server = MockServer::start().await;
    let port = server.base_url().rsplit(':').next().unwrap().to_owned();
    let proxy = format!(
        "http://127.0.0.1:{}",
        fake_proxy(Mode::Tunnel(port.parse().unwrap()))
    );
    let (code, err) = status(
        &format!("https://pay.example:{port}"),
        &[("HTTPS_PROXY", &proxy)],
        &[],
    )
    .await;
    assert_eq!(code, 4, "{err}");
    assert!(
        err.contains(&format!(
            "failed: could not connect to the service: the server answered in plain HTTP, not \
             TLS (it speaks http://); the service speaks plain HTTP: use http://pay.example:{port} \
             (request id"
        )),
        "{err}"
    );
    assert!(!err.contains("the proxy"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_socks_proxy_is_said_to_be_unsupported() {
    let socks = closed_port_url().replace("http://", "socks5://");
    let (code, err) = status("https://pay.example:8443", &[("ALL_PROXY", &socks)], &[]).await;
    assert_eq!(code, 4, "{err}");
    assert!(
        err.contains(&format!(
            "failed: could not connect to the proxy {socks} (from ALL_PROXY): the proxy's scheme \
             is not supported (only http:// and https:// proxies are, not SOCKS); SOCKS proxies \
             are not supported: unset ALL_PROXY, or name an http:// proxy in it"
        )),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_plain_http_advice_names_the_url_as_parsed() {
    let server = MockServer::start().await;
    let rest = server.base_url().trim_start_matches("http://").to_owned();
    let want = format!("; the service speaks plain HTTP: use http://{rest} (request id");
    let (code, err) = status(&format!(" https://{rest}/ "), &[], &[]).await;
    assert_eq!(code, 4, "{err}");
    assert!(err.contains(&want), "{err}");
    let typed = format!("https://{rest}\r");
    let sandbox = Sandbox::new();
    let mut cmd = sandbox.payments();
    cmd.env("PAYMENTS_BASE_URL", &typed)
        .args(["--retries", "0", "status", UNKNOWN]);
    let err = stderr(&run(cmd).await.code(4));
    assert!(err.contains(&want), "{err:?}");
}
