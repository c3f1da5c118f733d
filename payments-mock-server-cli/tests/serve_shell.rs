//! The binary's shell as a process: SIGHUP stops it as SIGTERM does, a
//! stdout that cannot be written loses the banner and not the server, and
//! `--tls-self-signed DIR` on a full disk leaves DIR as it was.

use std::io::{BufRead as _, Read as _, Write as _};
use std::path::Path;
use std::process::{Child, Command, Stdio};

#[path = "proxy/process.rs"]
mod process;

const BIN: &str = env!("CARGO_BIN_EXE_payments-mock-server");
const UNSET: [&str; 2] = ["PAYMENTS_MOCK_STORE", "PAYMENTS_MOCK_ADMIN_KEY"];

/// `signal` (`HUP`, `TERM`) to `child`, then its exit code and stderr.
fn signal(child: Child, signal: &str) -> (Option<i32>, String) {
    let _ = Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status();
    let output = child.wait_with_output().expect("exits");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// `GET /_mock/health` at `address` (`HOST:PORT`) over plain HTTP: the
/// status line.
fn health(address: &str) -> String {
    let mut stream = std::net::TcpStream::connect(address).expect("connects");
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .expect("a timeout");
    write!(
        stream,
        "GET /_mock/health HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n"
    )
    .expect("sent");
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer.lines().next().unwrap_or_default().to_owned()
}

/// A closed terminal or SSH session (SIGHUP) stops the mock as SIGTERM
/// does: in-flight requests finished, exit code 0, not the signal's
/// default (killed, no journal flushed).
#[test]
fn sighup_stops_the_mock_as_sigterm_does() {
    let (child, base) =
        process::spawn_listening(&mut process::command(BIN, &["--port", "0"], &UNSET, &[]));
    let address = base.trim_start_matches("http://");
    assert!(health(address).contains(" 200 "), "{base}");
    let (code, stderr) = signal(child, "HUP");
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("shutting down: finishing in-flight requests"),
        "{stderr}"
    );
}

/// `> /dev/full`: the banner cannot be written; the mock says so on
/// stderr (with the address) and serves on, instead of panicking (101).
#[test]
fn a_stdout_that_cannot_be_written_loses_the_banner_not_the_server() {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full");
    let mut command = process::command(BIN, &["--port", "0"], &UNSET, &[]);
    let mut child = command.stdout(Stdio::from(full)).spawn().expect("spawns");
    let mut stderr = std::io::BufReader::new(child.stderr.take().expect("stderr"));
    let mut log = String::new();
    let address = loop {
        let mut line = String::new();
        if stderr.read_line(&mut line).expect("stderr") == 0 {
            let status = child.wait().expect("exits");
            panic!("exited ({status}) without a word of the banner: {log}");
        }
        log.push_str(&line);
        if let Some((_, at)) = line.split_once("serving anyway on http://") {
            break at.split_whitespace().next().expect("an address").to_owned();
        }
    };
    assert!(log.contains("cannot write the banner to stdout"), "{log}");
    assert!(health(&address).contains(" 200 "), "{log}");
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let mut rest = String::new();
    let _ = stderr.read_to_string(&mut rest);
    assert_eq!(child.wait().expect("exits").code(), Some(0), "{log}{rest}");
}

/// The mock with `--tls-self-signed dir` and `args`, allowed to write no
/// byte to a file (`ulimit -f 0`, SIGXFSZ ignored: a full disk): it cannot
/// start.
fn on_a_full_disk(dir: &Path, args: &[&str]) -> (Option<i32>, String) {
    let mut shell = Command::new("sh");
    shell
        .args([
            "-c",
            "trap '' XFSZ; ulimit -f 0 && exec \"$0\" \"$@\"",
            BIN,
            "--port",
            "0",
            "--tls-self-signed",
        ])
        .arg(dir)
        .args(args);
    for variable in UNSET {
        shell.env_remove(variable);
    }
    let output = shell
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .expect("runs");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// The mock started on `dir`, its banner read, stopped: it started.
fn starts_on(dir: &Path) {
    let dir = dir.to_str().expect("a UTF-8 path");
    let (child, base) = process::spawn_listening(&mut process::command(
        BIN,
        &["--port", "0", "--tls-self-signed", dir],
        &UNSET,
        &[],
    ));
    assert!(base.starts_with("https://"), "{base}");
    let (code, stderr) = process::stop(child);
    assert_eq!(code, Some(0), "{stderr}");
}

/// Every file of `dir`, name and content, sorted.
fn files_of(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("listed")
        .map(|entry| {
            let entry = entry.expect("an entry");
            (
                entry.file_name().to_string_lossy().into_owned(),
                std::fs::read(entry.path()).expect("read"),
            )
        })
        .collect();
    files.sort();
    files
}

/// A first use on a full disk makes nothing (no empty `ca-key.pem` that
/// every later start refuses as half a CA); a renewal on a full disk (a
/// new `--public-url`) leaves the kept CA and server certificate as they
/// were (no `server-key.pem` of 0 bytes); no temporary file or lock is
/// left, and the next start serves.
#[test]
fn a_full_disk_leaves_the_tls_directory_as_it_was() {
    let temp = tempfile::tempdir().expect("a directory");
    let dir = temp.path().join("tls");
    let (code, stderr) = on_a_full_disk(&dir, &[]);
    assert_ne!(code, Some(0), "{stderr}");
    assert!(stderr.contains("cannot write"), "{stderr}");
    assert_eq!(files_of(&dir), Vec::new(), "{stderr}");

    starts_on(&dir);
    let kept = files_of(&dir);
    let names: Vec<&str> = kept.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(
        names,
        [
            "ca-key.pem",
            "ca.pem",
            "server-key.pem",
            "server.names",
            "server.pem"
        ]
    );
    let (code, stderr) = on_a_full_disk(&dir, &["--public-url", "https://new.example:8443"]);
    assert_ne!(code, Some(0), "{stderr}");
    assert!(stderr.contains("server-key.pem"), "{stderr}");
    assert_eq!(files_of(&dir), kept, "{stderr}");
    starts_on(&dir);
}
