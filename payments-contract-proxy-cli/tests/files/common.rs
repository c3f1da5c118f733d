//! What the tests of the files the binary writes share: the binary run
//! with a time limit (a regression that hangs fails, never hangs the
//! suite), started through `sh` with redirections, and one exchange.

use std::io::BufRead as _;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::json;

pub const BIN: &str = env!("CARGO_BIN_EXE_payments-contract-proxy");
/// The admin key's variables, never set here.
pub const UNSET: [&str; 2] = ["PAYMENTS_PROXY_ADMIN_KEY", "PAYMENTS_MOCK_ADMIN_KEY"];
/// How long a run that should end at once may take.
pub const LIMIT: Duration = Duration::from_secs(20);

/// `child`'s exit code and stderr once it exits, `None` (the child
/// killed) when it has not within [`LIMIT`]: waited for on a thread of
/// its own, the limit a channel's, no polling.
pub fn exited(child: Child) -> Option<(Option<i32>, String)> {
    let pid = child.id();
    let (done, output) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(child.wait_with_output().expect("its output"));
    });
    match output.recv_timeout(LIMIT) {
        Ok(output) => Some((
            output.status.code(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )),
        Err(_) => {
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
            // Reaped by the waiting thread.
            let _ = output.recv();
            None
        }
    }
}

/// `program` (the proxy's binary, or `sh` running it) with `args`,
/// stdin empty, stderr piped, the admin key's variables unset.
fn command(program: &str, args: &[&str]) -> Command {
    let mut command = Command::new(program);
    command
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::piped());
    for variable in UNSET {
        command.env_remove(variable);
    }
    command
}

/// The binary with `args`, stdout and stderr piped: its exit code and
/// stderr, `None` when it did not end within [`LIMIT`].
pub fn run(args: &[&str]) -> Option<(Option<i32>, String)> {
    let mut command = command(BIN, args);
    command.stdout(Stdio::null());
    exited(command.spawn().expect("spawns"))
}

/// The binary with `args`, started by `sh` with `redirects` (`>&-`,
/// `> /dev/full`, `2> /dev/full`) after the pipes: its exit code and
/// stderr (empty when `redirects` moves it), `None` when it did not end
/// within [`LIMIT`].
pub fn run_with(redirects: &str, args: &[&str]) -> Option<(Option<i32>, String)> {
    let script = format!(r#"exec "$0" "$@" {redirects}"#);
    let mut command = command("sh", &["-c", &script, BIN]);
    command.args(args).stdout(Stdio::null());
    exited(command.spawn().expect("spawns"))
}

/// The proxy spawned with `args`: the child and its base URL, `None`
/// (the child killed) when no banner came within [`LIMIT`].
pub fn spawn_within(args: &[&str]) -> Option<(Child, String)> {
    let mut command = command(BIN, args);
    command.stdout(Stdio::piped());
    let mut child = command.spawn().expect("spawns");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = std::io::BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    match rx.recv_timeout(LIMIT) {
        Ok(line) => {
            let base = line
                .trim_end()
                .strip_prefix("listening on ")
                .unwrap_or_else(|| panic!("banner {line:?}"))
                .to_owned();
            Some((child, base))
        }
        Err(_) => {
            let _ = child.kill();
            let _ = child.wait();
            None
        }
    }
}

/// SIGTERM, then the exit code and stderr (`None`: no exit within
/// [`LIMIT`]).
pub fn stop(child: Child) -> Option<(Option<i32>, String)> {
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    exited(child)
}

/// One initiate through the proxy at `base`: its status.
pub async fn initiate(base: &str, reference: &str) -> u16 {
    reqwest::Client::new()
        .post(format!("{base}/api/payments/initiate"))
        .json(&json!({
            "merchantId": "6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60", "referenceNo": reference,
            "amount": 1050, "productCode": "TOPUP", "storeId": "S1", "payerId": "60123456789",
        }))
        .send()
        .await
        .expect("answered")
        .status()
        .as_u16()
}

/// A recording of one initiate, made by the proxy in front of `mock`
/// (`--record` to `path`).
pub async fn record_one(mock: &payments_mock_server::MockServer, path: &std::path::Path) {
    let upstream = mock.base_url();
    let path = path.display().to_string();
    let (proxy, base) = spawn_within(&["--upstream", &upstream, "--port", "0", "--record", &path])
        .expect("started");
    assert_eq!(initiate(&base, "FILES-REC-1").await, 200);
    let (code, stderr) = stop(proxy).expect("stopped");
    assert_eq!(code, Some(0), "{stderr}");
}
