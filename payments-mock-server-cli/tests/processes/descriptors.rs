//! Out of file descriptors: the mock says so once, pauses between
//! accepts instead of spinning, keeps serving the connections it has, and
//! accepts again once descriptors are free.

use std::net::TcpStream;
use std::time::Duration;

use crate::mock::Mock;

const BOUND: Duration = Duration::from_secs(20);

/// A `GET /_mock/health` on `stream`, its status line.
fn health(stream: &mut TcpStream) -> String {
    use std::io::{BufRead as _, Write as _};
    stream
        .write_all(b"GET /_mock/health HTTP/1.1\r\nHost: x\r\n\r\n")
        .expect("sent");
    let mut line = String::new();
    std::io::BufReader::new(stream)
        .read_line(&mut line)
        .expect("an answer");
    line
}

#[test]
fn a_full_descriptor_table_is_said_once_and_served_through() {
    let mock = Mock::start_with_open_files(64, &[]);
    let addr = mock.base.strip_prefix("http://").expect("http").to_owned();
    let mut kept = TcpStream::connect(&addr).expect("connects");
    kept.set_read_timeout(Some(BOUND)).expect("a timeout");
    assert!(health(&mut kept).starts_with("HTTP/1.1 200"), "control");
    // More connections than descriptors: the kernel completes them all
    // (the listen queue), the mock runs out taking them.
    let idle: Vec<TcpStream> = (0..100)
        .map(|_| TcpStream::connect(&addr).expect("connects"))
        .collect();
    assert!(mock.logged("accept failed", BOUND), "{}", mock.log());
    // Served through it: a connection it already has.
    assert!(health(&mut kept).starts_with("HTTP/1.1 200"));
    drop(idle);
    let mut fresh = TcpStream::connect(&addr).expect("connects");
    fresh.set_read_timeout(Some(BOUND)).expect("a timeout");
    assert!(
        health(&mut fresh).starts_with("HTTP/1.1 200"),
        "accepting again"
    );
    assert!(
        mock.logged("accepting connections again", BOUND),
        "{}",
        mock.log()
    );
    let log = mock.log();
    assert_eq!(
        log.matches("accept failed").count(),
        1,
        "once an episode, not once a try: {}",
        &log[..log.len().min(2000)]
    );
}
