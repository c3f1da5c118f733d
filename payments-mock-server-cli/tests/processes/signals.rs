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
