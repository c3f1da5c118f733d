//! The advice after a failed connection matches what happened: HTTPS for a
//! plain-HTTP request to a TLS port (answered at once, so a longer
//! `--timeout` cannot help), a longer `--timeout` for a real timeout or a
//! dropped connection, and neither for an answer that is not valid HTTP;
//! a refused connection says where the service URL came from. Exit 4 for
//! all of them.

use payments_mock_server::MockServer;
use tokio::net::TcpListener;

use crate::common::{Sandbox, closed_port_url, run, stderr};

const UNKNOWN: &str = "01a20813-0000-7000-8000-000000000000";

const REASON: &str = "failed: the connection failed before a complete response; ";
const TIMEOUT_HINT: &str = "did not answer in time or dropped the connection; \
                            try again, or raise --timeout";

/// `payments --retries 0 --base-url BASE [args] status UNKNOWN`: its exit
/// code and stderr.
async fn status(base: &str, args: &[&str]) -> (i32, String) {
    let sandbox = Sandbox::new();
    let mut cmd = sandbox.payments();
    cmd.args(["--retries", "0", "--base-url", base])
        .args(args)
        .args(["status", UNKNOWN]);
    let assert = run(cmd).await;
    let code = assert.get_output().status.code().expect("an exit code");
    (code, stderr(&assert))
}

#[tokio::test(flavor = "multi_thread")]
async fn plain_http_to_the_mocks_https_port_says_to_use_https_and_the_ca() {
    let server = MockServer::builder()
        .tls_self_signed()
        .start()
        .await
        .expect("starts");
    let https = server.base_url();
    let port = https
        .strip_prefix("https://")
        .expect("an https base URL")
        .trim_end_matches('/');
    let http = format!("http://{port}");
    let (code, err) = status(&http, &[]).await;
    assert_eq!(code, 4, "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(
            "failed: the service's answer was not valid HTTP (invalid HTTP version parsed); "
        ),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "the service at {http} seems to speak HTTPS: use https://{port} \
             (and --ca-cert FILE if its certificate is from a private CA) (request id "
        )),
        "{err}"
    );
    assert!(!err.contains("--timeout"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_service_that_never_answers_still_suggests_a_longer_timeout() {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("loopback");
    let base = format!("http://{}", listener.local_addr().expect("bound"));
    // Accepts and holds every connection, silent, until the test ends.
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    let (code, err) = status(&base, &["--timeout", "0.2"]).await;
    assert_eq!(code, 4, "{err}");
    assert!(err.contains("failed: the request timed out; "), "{err}");
    assert!(
        err.contains(&format!("the service at {base} {TIMEOUT_HINT}")),
        "{err}"
    );
    assert!(!err.contains("HTTPS"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dropped_connection_still_suggests_trying_again() {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("loopback");
    let base = format!("http://{}", listener.local_addr().expect("bound"));
    // Accepts and closes at once, without a byte.
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            drop(socket);
        }
    });
    let (code, err) = status(&base, &[]).await;
    assert_eq!(code, 4, "{err}");
    assert!(err.contains(REASON), "{err}");
    assert!(
        err.contains(&format!("the service at {base} {TIMEOUT_HINT}")),
        "{err}"
    );
    assert!(!err.contains("HTTPS"), "{err}");
}

/// A loopback server answering every request with `answer`, as it is.
async fn answering(answer: &'static [u8]) -> String {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("loopback");
    let base = format!("http://{}", listener.local_addr().expect("bound"));
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let mut buf = [0u8; 8192];
            let _ = socket.read(&mut buf).await;
            let _ = socket.write_all(answer).await;
            let _ = socket.shutdown().await;
        }
    });
    base
}

/// A reviewer's `status -v` against a service that answered at once with
/// an ESC in a header value was told the service "did not answer in time
/// or dropped the connection; try again, or raise --timeout". It answered,
/// with something that is not HTTP: said so, no --timeout, exit 4.
#[tokio::test(flavor = "multi_thread")]
async fn an_answer_that_is_not_valid_http_is_said_as_such() {
    let base = answering(
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
          x-request-id: rid\x1b[2Jhdr\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}",
    )
    .await;
    let (code, err) = status(&base, &["-v"]).await;
    assert_eq!(code, 4, "{err}");
    assert!(
        err.contains(
            "failed: the service's answer was not valid HTTP (invalid HTTP header parsed); \
             is "
        ),
        "{err}"
    );
    assert!(!err.contains("--timeout"), "{err}");
    assert!(!err.contains("in time"), "{err}");
    assert!(!err.contains('\u{1b}'), "{err}");
}

/// A 502 whose Content-Type holds a byte outside ASCII was "the service
/// answered HTTP 502 with no content type": it sent one.
#[tokio::test(flavor = "multi_thread")]
async fn a_content_type_that_is_not_readable_is_named_escaped() {
    let base = answering(
        b"HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/html\x9b0;T\r\n\
          content-length: 13\r\nconnection: close\r\n\r\n<html></html>",
    )
    .await;
    let (code, err) = status(&base, &[]).await;
    assert_eq!(code, 4, "{err}");
    assert!(
        err.contains(
            "failed: the service answered HTTP 502 with a content type that is not readable \
             text ('text/html\\u{9b}0;T') instead of its JSON envelope"
        ),
        "{err}"
    );
    assert!(!err.contains("no content type"), "{err}");
    assert!(!err.contains('\u{9b}'), "{err}");
}

/// `payments --retries 0 --base-url BASE tail`: its exit code and stderr.
async fn tail(base: &str) -> (i32, String) {
    let sandbox = Sandbox::new();
    let mut cmd = sandbox.payments();
    cmd.args(["--retries", "0", "--base-url", base, "tail"]);
    let assert = run(cmd).await;
    let code = assert.get_output().status.code().expect("an exit code");
    (code, stderr(&assert))
}

/// `tail` makes its own requests: an answer that is not valid HTTP was
/// "the connection broke off" there, and plain HTTP to the mock's TLS port
/// gave no word of HTTPS.
#[tokio::test(flavor = "multi_thread")]
async fn tail_says_an_answer_that_is_not_valid_http_and_when_it_is_https() {
    let base = answering(
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
          x-request-id: rid\x1b[2Jhdr\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}",
    )
    .await;
    let (code, err) = tail(&base).await;
    assert_eq!(code, 4, "{err}");
    assert!(
        err.contains("its answer was not valid HTTP (invalid HTTP header parsed)"),
        "{err}"
    );
    assert!(!err.contains("broke off"), "{err}");
    assert!(!err.contains('\u{1b}'), "{err}");

    let server = MockServer::builder()
        .tls_self_signed()
        .start()
        .await
        .expect("starts");
    let port = server
        .base_url()
        .strip_prefix("https://")
        .expect("an https base URL")
        .trim_end_matches('/')
        .to_owned();
    let http = format!("http://{port}");
    let (code, err) = tail(&http).await;
    assert_eq!(code, 4, "{err}");
    assert!(
        err.contains("its answer was not valid HTTP (invalid HTTP version parsed)"),
        "{err}"
    );
    assert!(
        err.contains(&format!("seems to speak HTTPS: use https://{port}")),
        "{err}"
    );
}

/// An empty `Content-Type` is said as such, not as a gap in the sentence.
#[tokio::test(flavor = "multi_thread")]
async fn an_empty_content_type_is_said_so() {
    let base = answering(
        b"HTTP/1.1 502 Bad Gateway\r\ncontent-type: \r\n\
          content-length: 13\r\nconnection: close\r\n\r\n<html></html>",
    )
    .await;
    let (code, err) = status(&base, &[]).await;
    assert_eq!(code, 4, "{err}");
    assert!(
        err.contains("HTTP 502 with an empty content type instead"),
        "{err}"
    );
    let (_, err) = tail(&base).await;
    assert!(
        err.contains("HTTP 502 with an empty content type instead"),
        "{err}"
    );
}

/// The mock's VALIDATION_ERROR names initiate's JSON field (`payerId`,
/// `quantity`); the error line adds the flag that sets it, as it does for
/// `productCode` and `confirmationCode`. It did not: the user was left to
/// guess that `payerId` is `--payer-id`.
#[tokio::test(flavor = "multi_thread")]
async fn a_validation_error_naming_an_initiate_field_names_its_flag() {
    let server = MockServer::start().await;
    let base = server.base_url();
    let sandbox = Sandbox::new();
    let initiate = ["initiate", "--reference-no", "V1", "--amount", "1"];
    let runs: [(&[&str], &str, &str); 2] = [
        (
            &["--product", "TOPUP", "--store-id", "S1"],
            "payerId",
            "; set it with --payer-id ID (request id ",
        ),
        (
            &[
                "--product",
                "TOPUP",
                "--store-id",
                "S1",
                "--payer-id",
                "P1",
                "--quantity",
                "0",
            ],
            "quantity",
            "; set it with --quantity N (request id ",
        ),
    ];
    for (args, field, advice) in runs {
        let mut cmd = sandbox.payments();
        cmd.args(["--retries", "0", "--base-url", &base])
            .args(["--merchant-id", crate::common::MERCHANT])
            .args(initiate)
            .args(args);
        let err = stderr(&run(cmd).await.code(1));
        assert!(
            err.starts_with("error: initiate failed: VALIDATION_ERROR (HTTP 400): "),
            "{err}"
        );
        assert!(err.contains(field), "{err}");
        assert!(err.contains(advice), "{err}");
    }
}

/// `payments --retries 0 ARGS` in `sandbox` with the variables `vars`:
/// its exit code and stderr.
async fn payments(sandbox: &Sandbox, vars: &[(&str, &str)], args: &[&str]) -> (i32, String) {
    let mut cmd = sandbox.payments();
    cmd.envs(vars.iter().copied()).arg("--retries=0").args(args);
    let assert = run(cmd).await;
    let code = assert.get_output().status.code().expect("an exit code");
    (code, stderr(&assert))
}

/// Before: a refused connection said "set the URL with --base-url or
/// PAYMENTS_BASE_URL" wherever the URL came from, and one from a profile's
/// `base_url` never named the profile or its file. Now the advice names
/// where it came from: the flag, the variable, or `base_url of profile 'X'
/// in FILE`; the payment commands and `tail` alike.
#[tokio::test(flavor = "multi_thread")]
async fn a_refused_connection_says_where_the_url_came_from() {
    let closed = closed_port_url();
    let sandbox = Sandbox::new();
    let config = sandbox.write_config(&format!("[profiles.staging]\nbase_url = \"{closed}\"\n"));
    let profile = format!(
        "the URL comes from base_url of profile 'staging' in {}: correct it there, or override \
         it with --base-url or PAYMENTS_BASE_URL",
        config.display()
    );
    let variable = "the URL comes from PAYMENTS_BASE_URL: correct it, or override it with \
                    --base-url";
    let flag = "the URL comes from --base-url";
    let status = ["status", UNKNOWN];
    // The variables, the arguments, what should answer, where the URL came from.
    type Case<'a> = (&'a [(&'a str, &'a str)], Vec<&'a str>, &'a str, &'a str);
    let cases: [Case<'_>; 6] = [
        (
            &[],
            [&["--base-url", &closed][..], &status].concat(),
            "the service",
            flag,
        ),
        (
            &[("PAYMENTS_BASE_URL", &closed)],
            status.to_vec(),
            "the service",
            variable,
        ),
        // The flag beats the variable, and is named.
        (
            &[("PAYMENTS_BASE_URL", "http://127.0.0.1:9")],
            [&["--base-url", &closed][..], &status].concat(),
            "the service",
            flag,
        ),
        (
            &[],
            [&["--profile", "staging"][..], &status].concat(),
            "the service",
            &profile,
        ),
        (
            &[("PAYMENTS_PROFILE", "staging")],
            vec!["tail"],
            "the mock",
            &profile,
        ),
        (
            &[("PAYMENTS_BASE_URL", &closed)],
            vec!["tail"],
            "the mock",
            variable,
        ),
    ];
    for (vars, args, server, from) in cases {
        let (code, err) = payments(&sandbox, vars, &args).await;
        assert_eq!(code, 4, "{vars:?} {args:?}: {err}");
        assert!(
            err.contains(&format!("is {server} running at {closed}? {from}")),
            "{vars:?} {args:?}: {err}"
        );
        assert!(!err.contains("set the URL with"), "{err}");
    }
}
