//! Signals (COMMANDS.md: serves "until SIGINT or SIGTERM, and then
//! finishes in-flight requests and exits 0"): a second SIGINT or SIGTERM
//! while a request is still under way stops the process at once, 130 or
//! 143, instead of being ignored.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::time::Duration;

use crate::mock::Mock;

const BOUND: Duration = Duration::from_secs(20);

/// A request under way for an hour: its head, and one byte of a body of
/// 100 (the body read waits for the rest up to --header-read-timeout).
fn request_under_way(mock: &Mock) -> TcpStream {
    let addr = mock.base.trim_start_matches("http://").to_owned();
    let mut stream = TcpStream::connect(addr).expect("connects");
    stream
        .write_all(
            b"POST /api/payments/initiate HTTP/1.1\r\nHost: x\r\n\
              Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
        )
        .expect("sent");
    stream
}

fn second_signal_stops_at_once(signal: &str, code: i32) {
    let mock = Mock::start(&["--header-read-timeout", "1h"]);
    let _held = request_under_way(&mock);
    // A request on another connection, answered: the server has taken the
    // first one (accepted before it) by then.
    let addr = mock.base.trim_start_matches("http://").to_owned();
    let mut health = TcpStream::connect(addr).expect("connects");
    health
        .write_all(b"GET /_mock/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .expect("sent");
    let mut answer = String::new();
    let _ = health.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    mock.signal(signal);
    assert!(
        mock.logged("shutting down", BOUND),
        "the first signal: {}",
        mock.log()
    );
    mock.signal(signal);
    assert_eq!(
        mock.exited_within(BOUND),
        Some(Some(code)),
        "the second {signal} stops it"
    );
}

#[test]
fn a_second_sigterm_stops_at_once_with_143() {
    second_signal_stops_at_once("TERM", 143);
}

#[test]
fn a_second_sigint_stops_at_once_with_130() {
    second_signal_stops_at_once("INT", 130);
}

/// One HTTP/1.1 exchange on a fresh connection (`Connection: close`):
/// the answer's head, and a stream left to read its body from.
fn exchange(mock: &Mock, request: &str) -> (String, Vec<u8>, TcpStream) {
    let addr = mock.base.trim_start_matches("http://").to_owned();
    let mut stream = TcpStream::connect(addr).expect("connects");
    stream.set_read_timeout(Some(BOUND)).expect("a timeout");
    stream.write_all(request.as_bytes()).expect("sent");
    let mut read = Vec::new();
    let mut buffer = [0u8; 1024];
    // The head and at least one byte of the body.
    loop {
        if let Some(end) = read.windows(4).position(|w| w == b"\r\n\r\n")
            && read.len() > end + 4
        {
            let head = String::from_utf8_lossy(&read[..end]).into_owned();
            return (head, read[end + 4..].to_vec(), stream);
        }
        let n = stream.read(&mut buffer).expect("the answer comes");
        assert!(n > 0, "closed early: {}", String::from_utf8_lossy(&read));
        read.extend_from_slice(&buffer[..n]);
    }
}

/// The `Content-Length` a head promises.
fn content_length(head: &str) -> usize {
    head.lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse().ok())?
        })
        .unwrap_or_else(|| panic!("no Content-Length: {head}"))
}

/// A `slow-body` answer under way at SIGTERM is finished, not cut off
/// (COMMANDS.md: in-flight requests are finished): the rest of its body
/// comes at once, the whole `Content-Length`, and the process exits 0.
#[test]
fn sigterm_finishes_a_trickled_body_at_once_and_exits_0() {
    let mock = Mock::start(&[]);
    let rule = r#"{"fault":"slow-body=5","times":0}"#;
    let (head, _, _) = exchange(
        &mock,
        &format!(
            "POST /_mock/faults HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{rule}",
            rule.len()
        ),
    );
    assert!(head.starts_with("HTTP/1.1 201"), "{head}");
    // Five bytes a second: the body would take half a minute.
    let (head, mut body, mut stream) = exchange(
        &mock,
        "GET /api/payments/reference/SLOW-1/status HTTP/1.1\r\nHost: x\r\n\
         Connection: close\r\n\r\n",
    );
    let promised = content_length(&head);
    assert!(body.len() < promised / 2, "trickled: {head}");
    mock.signal("TERM");
    stream
        .read_to_end(&mut body)
        .expect("the rest, then the end");
    assert_eq!(
        body.len(),
        promised,
        "{head}\n{}",
        String::from_utf8_lossy(&body)
    );
    let envelope: serde_json::Value = serde_json::from_slice(&body).expect("whole JSON");
    assert!(envelope["errorCode"].is_string(), "{envelope}");
    assert_eq!(
        mock.exited_within(BOUND),
        Some(Some(0)),
        "exits 0 once done"
    );
}
