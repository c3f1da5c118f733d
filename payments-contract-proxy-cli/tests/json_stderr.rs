//! With `--log-format json` every line the binary writes on stderr is
//! JSON, also those outside its log: an error that stops the start (the
//! port taken, a bad `--upstream`, an unreadable TLS file, a recording
//! that cannot be opened) and the second signal's line during a stop with
//! a request in flight. With text, the same lines as text.

use std::io::{BufRead as _, Read as _, Write as _};
use std::process::Child;
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

#[path = "../../payments-mock-server-cli/tests/proxy/process.rs"]
mod process;

use process::{command, spawn_listening, stop};

const BIN: &str = env!("CARGO_BIN_EXE_payments-contract-proxy");
/// The admin key's variables, never set here.
const UNSET: [&str; 2] = ["PAYMENTS_PROXY_ADMIN_KEY", "PAYMENTS_MOCK_ADMIN_KEY"];

/// Each line of `stderr` as JSON (none of them anything else).
fn json_lines(stderr: &str) -> Vec<Value> {
    assert!(!stderr.is_empty(), "something said");
    stderr
        .lines()
        .map(|line| {
            serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("not a JSON line ({e}): {line:?} in\n{stderr}"))
        })
        .collect()
}

/// The ways to stop the start: the extra arguments, and a word of the
/// error.
fn refused_starts(dir: &std::path::Path, taken: u16) -> Vec<(Vec<String>, &'static str)> {
    let missing = dir.join("missing.pem").display().to_string();
    let unopenable = dir.join("no-such-dir/record.jsonl").display().to_string();
    let upstream = |url: &str| vec!["--upstream".to_owned(), url.to_owned()];
    let mut port_taken = upstream("http://127.0.0.1:1");
    port_taken.extend(["--port".to_owned(), taken.to_string()]);
    let mut tls = upstream("http://127.0.0.1:1");
    tls.extend(["--tls-cert", &missing, "--tls-key", &missing].map(str::to_owned));
    let mut record = upstream("http://127.0.0.1:1");
    record.extend(["--record".to_owned(), unopenable]);
    vec![
        (port_taken, "cannot listen"),
        (upstream("ftp://example.com"), "--upstream"),
        (tls, "missing.pem"),
        (record, "record"),
    ]
}

#[test]
fn an_error_that_stops_the_start_is_a_json_line_with_json_logs() {
    let dir = tempfile::tempdir().expect("a directory");
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let port = taken.local_addr().expect("its address").port();
    for (args, word) in refused_starts(dir.path(), port) {
        for json in [true, false] {
            let mut all: Vec<&str> = args.iter().map(String::as_str).collect();
            if !all.contains(&"--port") {
                all.extend(["--port", "0"]);
            }
            if json {
                all.extend(["--log-format", "json"]);
            }
            let output = command(BIN, &all, &UNSET, &[]).output().expect("runs");
            assert_eq!(output.status.code(), Some(2), "{args:?}");
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert!(stderr.contains(word), "{args:?}: {stderr}");
            if json {
                let lines = json_lines(&stderr);
                assert!(
                    lines.iter().any(|l| l["level"] == "ERROR"
                        && l["fields"]["message"]
                            .as_str()
                            .is_some_and(|m| m.contains(word))),
                    "{args:?}: {stderr}"
                );
            } else {
                assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
                assert!(!stderr.contains("{\""), "{args:?}: {stderr}");
            }
        }
    }
}

/// An upstream that takes connections, reads their requests and never
/// answers: its address, and a channel told of each request read.
fn silent_upstream() -> (String, mpsc::Receiver<()>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let addr = listener.local_addr().expect("its address");
    let (told, asked) = mpsc::channel();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") {
                if stream.read(&mut byte).unwrap_or(0) == 0 {
                    break;
                }
                head.push(byte[0]);
            }
            let _ = told.send(());
            held.push(stream);
        }
    });
    (format!("http://{addr}"), asked)
}

fn interrupt(child: &Child) {
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
}

/// The proxy in front of an upstream that never answers, a request in
/// flight, SIGINT, and once the stop began, SIGINT again: its exit code
/// and stderr.
fn stopped_twice(json: bool) -> (Option<i32>, String) {
    let (upstream, asked) = silent_upstream();
    let mut args = vec!["--upstream", upstream.as_str(), "--port", "0"];
    if json {
        args.extend(["--log-format", "json"]);
    }
    let (mut child, base) = spawn_listening(&mut command(BIN, &args, &UNSET, &[]));
    let addr = base.trim_start_matches("http://").to_owned();
    let mut client = std::net::TcpStream::connect(&addr).expect("connects");
    client
        .write_all(b"GET /api/payments/t-1/status HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
        .expect("sent");
    asked
        .recv_timeout(Duration::from_secs(30))
        .expect("the request reached the upstream");
    // stderr read as it comes: the stop has begun when it says so.
    let stderr = child.stderr.take().expect("stderr");
    let (line_told, lines) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in std::io::BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            all.push_str(&line);
            all.push('\n');
            let _ = line_told.send(line);
        }
        all
    });
    interrupt(&child);
    loop {
        let line = lines
            .recv_timeout(Duration::from_secs(30))
            .expect("the stop is said");
        if line.contains("shutting down") {
            break;
        }
    }
    interrupt(&child);
    let status = child.wait().expect("exits");
    drop(client);
    (status.code(), reader.join().expect("stderr read"))
}

#[test]
fn the_second_signals_line_is_a_json_line_with_json_logs() {
    let (code, stderr) = stopped_twice(true);
    assert_eq!(code, Some(130), "{stderr}");
    let lines = json_lines(&stderr);
    assert!(
        lines.iter().any(|l| l["level"] == "WARN"
            && l["fields"]["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("a second signal"))),
        "{stderr}"
    );
}

#[test]
fn the_second_signals_line_is_text_with_text_logs() {
    let (code, stderr) = stopped_twice(false);
    assert_eq!(code, Some(130), "{stderr}");
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("a second signal: stopping now")),
        "{stderr}"
    );
}

/// One signal, nothing in flight: the stop is finished, nothing said of a
/// second signal, every line JSON still.
#[test]
fn one_signal_finishes_the_stop_without_the_second_signals_line() {
    let args = [
        "--upstream",
        "http://127.0.0.1:1",
        "--port",
        "0",
        "--log-format",
        "json",
    ];
    let (child, _) = spawn_listening(&mut command(BIN, &args, &UNSET, &[]));
    let (code, stderr) = stop(child);
    assert_eq!(code, Some(0), "{stderr}");
    json_lines(&stderr);
    assert!(!stderr.contains("a second signal"), "{stderr}");
}
