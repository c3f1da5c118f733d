//! The binary as a container runs it: a stop (SIGTERM) while it still
//! starts ends the start (as PID 1 it was lost, and the mock served on
//! until SIGKILL; elsewhere it killed the mock mid-write), a
//! `--tls-self-signed DIR` it cannot write, the API keys from the
//! environment (`PAYMENTS_MOCK_API_KEYS`) rather than the process list.

use std::io::{BufRead as _, Read as _, Write as _};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_payments-mock-server");
const UNSET: [&str; 3] = [
    "PAYMENTS_MOCK_STORE",
    "PAYMENTS_MOCK_ADMIN_KEY",
    "PAYMENTS_MOCK_API_KEYS",
];
const BOUND: Duration = Duration::from_secs(30);

/// A proxy recording of `count` initiates answered 200, one line each.
fn big_recording(path: &Path, count: u32) {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).expect("created"));
    for n in 0..count {
        let id = format!("01a22fa0-95bd-7187-99eb-{n:012x}");
        let request = format!(
            r#"{{"amount":1050,"currencyCode":"MYR","merchantId":"0f8fad5b-d9cb-469f-a165-70867728950e","productCode":"TOPUP","referenceNo":"BIG-{n}","storeId":"S1"}}"#
        );
        let answer = format!(
            r#"{{"isSuccess":true,"errorCode":null,"message":"payment initiated","data":{{"transactionId":"{id}","referenceNo":"BIG-{n}","status":"INITIATED","amount":1050,"currencyCode":"MYR","productCode":"TOPUP","createdAt":"2026-12-01T03:23:02.973Z"}}}}"#
        );
        let line = serde_json::json!({
            "seq": n + 1,
            "time": "2026-12-01T03:23:02.968281336Z",
            "request": {"method": "POST", "path": "/api/payments/initiate", "headers": [],
                        "body": request, "bodyBytes": request.len()},
            "response": {"status": 200, "headers": [], "body": answer, "bodyBytes": answer.len()},
            "durationMs": 1.0,
        });
        writeln!(out, "{line}").expect("written");
    }
    out.flush().expect("flushed");
}

/// The mock with `args` and `env` (the mock's own variables unset
/// otherwise); stdin closed, stdout and stderr piped.
fn command(args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut command = Command::new(BIN);
    command.args(args);
    for variable in UNSET {
        command.env_remove(variable);
    }
    command
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// The first line of `child`'s stdout: empty when it closed it without
/// one.
fn banner(child: &mut Child) -> String {
    let mut line = String::new();
    let _ = std::io::BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut line);
    line
}

/// SIGTERM (or another `signal`) to `child`.
fn signal(child: &Child, signal: &str) {
    let _ = Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status();
}

/// Spawns the mock with stdout and stderr piped; its stderr's lines come
/// through the receiver as they are written.
fn spawn_reading_stderr(args: &[&str], env: &[(&str, &str)]) -> (Child, mpsc::Receiver<String>) {
    let mut child = command(args, env).spawn().expect("spawns");
    let stderr = child.stderr.take().expect("stderr");
    let (tell, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if tell.send(line).is_err() {
                break;
            }
        }
    });
    (child, lines)
}

/// Reads lines into `seen` until one contains `text` (within
/// [`BOUND`]): whether it came.
fn until_line(lines: &mpsc::Receiver<String>, text: &str, seen: &mut Vec<String>) -> bool {
    let deadline = Instant::now() + BOUND;
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        match lines.recv_timeout(left) {
            Ok(line) => {
                let found = line.contains(text);
                seen.push(line);
                if found {
                    return true;
                }
            }
            Err(_) => return false,
        }
    }
    false
}

/// Its exit code, when it exits within `bound` (polled); killed otherwise.
fn exit_within(child: &mut Child, bound: Duration) -> Option<Option<i32>> {
    let deadline = Instant::now() + bound;
    loop {
        if let Some(status) = child.try_wait().expect("waits") {
            return Some(status.code());
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::yield_now();
    }
}

/// The mock started with `args`, stopped by `signal` once its stderr
/// says `when` (a step of its start): it must end the start (exit 0
/// within seconds, no banner, "stopped before serving"). Its stderr.
fn stopped_while(args: &[&str], when: &str, signal_name: &str) -> String {
    let (mut child, lines) = spawn_reading_stderr(args, &[]);
    let mut seen = Vec::new();
    assert!(until_line(&lines, when, &mut seen), "{}", seen.join("\n"));
    signal(&child, signal_name);
    let code = exit_within(&mut child, Duration::from_secs(10));
    let mut stdout = String::new();
    let _ = child
        .stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut stdout);
    seen.extend(lines.iter());
    let stderr = seen.join("\n");
    assert_eq!(code, Some(Some(0)), "{stderr}");
    assert_eq!(stdout, "", "no banner: {stderr}");
    assert!(stderr.contains("stopped before serving"), "{stderr}");
    stderr
}

/// A SIGTERM while the mock reads a large `--seed-from` recording into a
/// SQLite store ends the start: exit 0 within seconds, no banner, the
/// store closed (the next start on the file serves at once).
#[test]
fn sigterm_while_seeding_stops_the_start_with_0_and_no_banner() {
    let dir = tempfile::tempdir().expect("a directory");
    let record = dir.path().join("big.jsonl");
    big_recording(&record, 20_000);
    let store = format!("sqlite:{}", dir.path().join("mock.db").display());
    let record = record.display().to_string();
    let stderr = stopped_while(
        &["--port", "0", "--store", &store, "--seed-from", &record],
        "seeding from",
        "TERM",
    );
    assert!(!stderr.contains("seeded "), "ended part way: {stderr}");
    // The store was closed, not held or torn: it opens and serves.
    let (mut child, lines) = spawn_reading_stderr(&["--port", "0", "--store", &store], &[]);
    let line = banner(&mut child);
    signal(&child, "TERM");
    let code = exit_within(&mut child, BOUND);
    let stderr: Vec<String> = lines.iter().collect();
    assert!(
        line.starts_with("listening on http://"),
        "{line:?}: {stderr:?}"
    );
    assert_eq!(code, Some(Some(0)), "{stderr:?}");
}

/// A SIGINT while the memory store is seeded ends the start the same
/// way.
#[test]
fn sigint_while_seeding_the_memory_store_stops_the_start_with_0() {
    let dir = tempfile::tempdir().expect("a directory");
    let record = dir.path().join("big.jsonl");
    big_recording(&record, 20_000);
    let record = record.display().to_string();
    stopped_while(
        &["--port", "0", "--seed-from", &record],
        "seeding from",
        "INT",
    );
}

/// A SIGTERM while the mock waits for another process's lock on its
/// `--tls-self-signed` directory ends the start at once (it waited the
/// lock's 30 s out, then wrote the files): exit 0, no banner, the other
/// process's lock and the directory left as they were.
#[test]
fn sigterm_while_waiting_for_the_tls_lock_stops_the_start_with_0() {
    let dir = tempfile::tempdir().expect("a directory");
    let tls = dir.path().join("tls");
    std::fs::create_dir(&tls).expect("a directory");
    std::fs::write(tls.join(".lock"), "").expect("held by another process");
    let tls = tls.display().to_string();
    let stderr = stopped_while(
        &["--port", "0", "--tls-self-signed", &tls],
        "waiting for",
        "TERM",
    );
    let mut left: Vec<String> = std::fs::read_dir(dir.path().join("tls"))
        .expect("listed")
        .map(|entry| {
            entry
                .expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    left.sort();
    assert_eq!(left, [".lock"], "nothing written: {stderr}");
}

/// While the mock places a large `--seed-from` recording it cannot
/// answer, and its port refuses connections: a readiness probe that only
/// connects (`nc -z`, a container's TCP probe) waited for nothing (the
/// port accepted from the first moment, the banner came seconds later).
/// Once the banner is out, it accepts.
#[test]
fn the_port_refuses_connections_until_the_mock_can_answer() {
    let dir = tempfile::tempdir().expect("a directory");
    let record = dir.path().join("big.jsonl");
    big_recording(&record, 20_000);
    let record = record.display().to_string();
    // A free port, named: the banner that tells `--port 0`'s comes last.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
        .to_string();
    let (mut child, lines) = spawn_reading_stderr(&["--port", &port, "--seed-from", &record], &[]);
    let mut seen = Vec::new();
    assert!(
        until_line(&lines, "seeding from", &mut seen),
        "{}",
        seen.join("\n")
    );
    let probe = std::net::TcpStream::connect(format!("127.0.0.1:{port}"));
    let refused = probe.as_ref().err().map(std::io::Error::kind);
    let line = banner(&mut child);
    let after = std::net::TcpStream::connect(format!("127.0.0.1:{port}"));
    signal(&child, "TERM");
    let code = exit_within(&mut child, BOUND);
    seen.extend(lines.iter());
    let stderr = seen.join("\n");
    assert_eq!(
        refused,
        Some(std::io::ErrorKind::ConnectionRefused),
        "a connection while seeding: {probe:?}; {stderr}"
    );
    assert!(
        line.starts_with("listening on http://"),
        "{line:?}: {stderr}"
    );
    assert!(after.is_ok(), "after the banner: {after:?}");
    assert_eq!(code, Some(Some(0)), "{stderr}");
}

/// The mock run as a user that cannot write `dir` (mode 555): as root,
/// under `setpriv` as uid 12345 (the directory that user's, read-only to
/// it; root itself writes anywhere); otherwise as the test's own user.
/// `None` (said) when root lacks `setpriv`.
fn as_reader_of(dir: &Path, args: &[&str]) -> Option<Command> {
    use std::os::unix::fs::PermissionsExt as _;
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|out| out.stdout.trim_ascii() == b"0");
    let mut command = if root {
        if Command::new("setpriv").arg("--version").output().is_err() {
            assert!(
                std::env::var_os("CI").is_none(),
                "setpriv (util-linux) is needed under CI"
            );
            eprintln!("SKIPPED: no setpriv to run the mock as another user");
            return None;
        }
        const UID: u32 = 12_345;
        for entry in std::fs::read_dir(dir).expect("listed") {
            std::os::unix::fs::chown(entry.expect("an entry").path(), Some(UID), Some(UID))
                .expect("given");
        }
        std::os::unix::fs::chown(dir, Some(UID), Some(UID)).expect("given");
        let mut command = Command::new("setpriv");
        command.args([
            "--reuid=12345",
            "--regid=12345",
            "--clear-groups",
            "--",
            BIN,
        ]);
        command
    } else {
        Command::new(BIN)
    };
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o555)).expect("read-only");
    // Its parent, a temporary directory (0700), must be passed through.
    if let Some(parent) = dir.parent() {
        std::fs::set_permissions(parent, std::fs::Permissions::from_mode(0o755)).expect("passable");
    }
    command.args(args);
    for variable in UNSET {
        command.env_remove(variable);
    }
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    Some(command)
}

/// A `--tls-self-signed DIR` that cannot be written (a Kubernetes secret
/// volume is read-only) but holds a complete CA and a server certificate
/// for the names asked is reused, as before the lock file came; one that
/// would need a new certificate is refused, saying the directory cannot
/// be written and what it lacks, and is left as it was.
#[test]
fn a_tls_directory_that_cannot_be_written_is_reused_when_complete() {
    let top = tempfile::tempdir().expect("a directory");
    let dir = top.path().join("tls");
    let dir_arg = dir.display().to_string();
    let (mut child, lines) =
        spawn_reading_stderr(&["--port", "0", "--tls-self-signed", &dir_arg], &[]);
    let line = banner(&mut child);
    signal(&child, "TERM");
    assert_eq!(exit_within(&mut child, BOUND), Some(Some(0)));
    drop(lines);
    assert!(line.starts_with("listening on https://"), "{line:?}");

    let reuse = ["--port", "0", "--tls-self-signed", &dir_arg];
    let Some(mut command) = as_reader_of(&dir, &reuse) else {
        return;
    };
    let before: Vec<_> = std::fs::read_dir(&dir)
        .expect("listed")
        .map(|e| e.expect("an entry").file_name())
        .collect();
    let mut child = command.spawn().expect("spawns");
    let line = banner(&mut child);
    signal(&child, "TERM");
    let output = child.wait_with_output().expect("exits");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        line.starts_with("listening on https://"),
        "{line:?}: {stderr}"
    );
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("local CA reused in"), "{stderr}");

    // A name the kept certificate lacks: it would have to be written.
    let mut command = as_reader_of(
        &dir,
        &[
            "--port",
            "0",
            "--tls-self-signed",
            &dir_arg,
            "--public-url",
            "https://mock.internal.example:8443",
        ],
    )
    .expect("as before");
    let output = command.output().expect("runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("cannot be written")
            && stderr.contains("not for mock.internal.example")
            && !stderr.contains(".lock"),
        "{stderr}"
    );
    assert!(output.stdout.is_empty());
    let after: Vec<_> = std::fs::read_dir(&dir)
        .expect("listed")
        .map(|e| e.expect("an entry").file_name())
        .collect();
    assert_eq!(after, before, "nothing written, no lock left");
    use std::os::unix::fs::PermissionsExt as _;
    // Removable again by the test's user.
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).expect("writable");
}

/// `GET /api/payments/{id}/status` of a transaction no one holds, with
/// `key` as the bearer: the status code (401 without a key the mock
/// takes, 404 with one).
fn status_with(base: &str, key: Option<&str>) -> u16 {
    let address = base.trim_start_matches("http://").trim_end_matches('/');
    let mut stream = std::net::TcpStream::connect(address).expect("connects");
    stream.set_read_timeout(Some(BOUND)).expect("a timeout");
    let auth = key.map_or_else(String::new, |k| format!("Authorization: Bearer {k}\r\n"));
    write!(
        stream,
        "GET /api/payments/01a22fa0-95bd-7187-99eb-000000000001/status HTTP/1.1\r\n\
         Host: {address}\r\n{auth}Connection: close\r\n\r\n"
    )
    .expect("sent");
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status: {answer:?}"))
}

/// The mock started with `args` and `env`, then each `(key, status)`
/// asked, then SIGTERM: its stderr.
fn keyed(args: &[&str], env: &[(&str, &str)], asked: &[(Option<&str>, u16)]) -> String {
    let (mut child, lines) = spawn_reading_stderr(args, env);
    let line = banner(&mut child);
    let base = line
        .trim_end()
        .strip_prefix("listening on ")
        .map(str::to_owned);
    let answers: Vec<(Option<&str>, u16)> = match &base {
        Some(base) => asked
            .iter()
            .map(|(key, _)| (*key, status_with(base, *key)))
            .collect(),
        None => Vec::new(),
    };
    signal(&child, "TERM");
    let code = exit_within(&mut child, BOUND);
    let stderr = lines.iter().collect::<Vec<_>>().join("\n");
    assert!(base.is_some(), "{line:?}: {stderr}");
    assert_eq!(code, Some(Some(0)), "{stderr}");
    assert_eq!(answers, asked, "{stderr}");
    stderr
}

/// `PAYMENTS_MOCK_API_KEYS` holds the API keys (whitespace between them,
/// the `KEY[=MERCHANT_UUID]` of `--api-key`), so they are not in the
/// process list; never in the log; flags given, it is ignored (said);
/// a bad entry stops the start naming the variable and the entry's
/// position, never a key.
#[test]
fn api_keys_come_from_the_environment_never_shown() {
    const MERCHANT: &str = "0f8fad5b-d9cb-469f-a165-70867728950e";
    let listed = format!("sk_env_a={MERCHANT}\n  sk_env_b,x\tsk_env_c=");
    let env = [("PAYMENTS_MOCK_API_KEYS", listed.as_str())];
    let stderr = keyed(
        &["--port", "0"],
        &env,
        &[
            (None, 401),
            (Some("sk_wrong"), 401),
            (Some("sk_env_a"), 404),
            (Some("sk_env_b,x"), 404),
            (Some("sk_env_c="), 404),
        ],
    );
    assert!(!stderr.contains("sk_env"), "{stderr}");

    let stderr = keyed(
        &["--port", "0", "--api-key", "sk_flag"],
        &env,
        &[(Some("sk_flag"), 404), (Some("sk_env_b,x"), 401)],
    );
    assert!(
        stderr.contains("PAYMENTS_MOCK_API_KEYS is ignored: --api-key is given"),
        "{stderr}"
    );
    assert!(!stderr.contains("sk_env"), "{stderr}");

    for json in [false, true] {
        let mut args = vec!["--port", "0"];
        if json {
            args.extend(["--log-format", "json"]);
        }
        let output = command(
            &args,
            &[(
                "PAYMENTS_MOCK_API_KEYS",
                "sk_fine sk_secret_canary=not-a-uuid",
            )],
        )
        .output()
        .expect("runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains("PAYMENTS_MOCK_API_KEYS: entry 2 of 2 is not an API key"),
            "{stderr}"
        );
        assert!(
            !stderr.contains("canary")
                && !stderr.contains("not-a-uuid")
                && !stderr.contains("sk_fine"),
            "{stderr}"
        );
        if json {
            for line in stderr.lines() {
                let _: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
            }
        }
    }
}
