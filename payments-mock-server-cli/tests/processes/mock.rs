//! The mock binary as a child process on a store: start it (waiting for
//! its banner), talk to it over HTTP, stop it with SIGTERM or SIGKILL.
//! Its stderr goes to a file, so a chatty log never blocks it.

#![allow(dead_code)]

use std::io::BufRead as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

pub const BIN: &str = env!("CARGO_BIN_EXE_payments-mock-server");
pub const MERCHANT: &str = "6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60";

/// A running mock process.
pub struct Mock {
    child: Option<Child>,
    pub base: String,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

/// What a process that did not start left behind.
#[derive(Debug)]
pub struct Exited {
    pub code: Option<i32>,
    pub stderr: String,
}

impl Mock {
    /// Starts the binary with `args` (`--port 0` is added) and waits for its
    /// banner; panics with its stderr when it exits instead.
    pub fn start(args: &[&str]) -> Self {
        match Self::try_start(args) {
            Ok(mock) => mock,
            Err(exited) => panic!("the mock did not start: {exited:?}"),
        }
    }

    /// As [`Mock::start`], or how it exited.
    pub fn try_start(args: &[&str]) -> Result<Self, Exited> {
        Self::try_start_as(Command::new(BIN), args)
    }

    /// As [`Mock::start`], allowed at most `limit` open descriptors
    /// (`ulimit -n`).
    pub fn start_with_open_files(limit: u32, args: &[&str]) -> Self {
        let mut shell = Command::new("sh");
        shell.args([
            "-c",
            &format!("ulimit -n {limit} && exec \"$0\" \"$@\""),
            BIN,
        ]);
        match Self::try_start_as(shell, args) {
            Ok(mock) => mock,
            Err(exited) => panic!("the mock did not start: {exited:?}"),
        }
    }

    /// As [`Mock::try_start`], through `command` (the binary, or a program
    /// that runs it with the arguments that follow: `setpriv … -- BIN`).
    pub fn try_start_as(mut command: Command, args: &[&str]) -> Result<Self, Exited> {
        let dir = tempfile::tempdir().expect("a directory");
        let log = dir.path().join("stderr.log");
        let mut child = command
            .args(["--port", "0"])
            .args(args)
            .env_remove("PAYMENTS_MOCK_STORE")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).expect("a log file"))
            .spawn()
            .expect("spawn");
        let mut line = String::new();
        let read = std::io::BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .unwrap_or(0);
        if read == 0 {
            let status = child.wait().expect("exit");
            return Err(Exited {
                code: status.code(),
                stderr: std::fs::read_to_string(&log).unwrap_or_default(),
            });
        }
        let base = line
            .trim_end()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("banner {line:?}"))
            .to_owned();
        Ok(Self {
            child: Some(child),
            base,
            log,
            _dir: dir,
        })
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// What it wrote to stderr so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// SIGKILL: no chance to finish anything.
    pub fn kill9(mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Sends `signal` (`TERM`, `INT`) and returns at once.
    pub fn signal(&self, signal: &str) {
        let child = self.child.as_ref().expect("running");
        let _ = Command::new("kill")
            .args([&format!("-{signal}"), &child.id().to_string()])
            .status();
    }

    /// Its exit code once it has exited within `bound`; `None` (and the
    /// process killed) when it is still running then.
    pub fn exited_within(mut self, bound: Duration) -> Option<Option<i32>> {
        let mut child = self.child.take().expect("running");
        let start = std::time::Instant::now();
        while start.elapsed() < bound {
            if let Some(status) = child.try_wait().expect("waits") {
                return Some(status.code());
            }
            std::thread::yield_now();
        }
        let _ = child.kill();
        let _ = child.wait();
        None
    }

    /// Waits (at most `bound`) until its stderr holds `text`.
    pub fn logged(&self, text: &str, bound: Duration) -> bool {
        let start = std::time::Instant::now();
        while start.elapsed() < bound {
            if self.log().contains(text) {
                return true;
            }
            std::thread::yield_now();
        }
        false
    }

    /// SIGTERM, then its exit code and stderr.
    pub fn stop(mut self) -> (Option<i32>, String) {
        let Some(child) = self.child.take() else {
            return (None, self.log());
        };
        let _ = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status();
        let output = child.wait_with_output().expect("exit");
        (output.status.code(), self.log())
    }
}

impl Drop for Mock {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Runs the binary to its end (a start that is refused): exit code, stderr.
pub fn run(args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String) {
    run_as(Command::new(BIN), args, env)
}

/// [`run`] through `command` (the binary itself, or a program that runs it
/// with the arguments that follow, such as `setpriv … -- BIN`).
pub fn run_as(mut command: Command, args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String) {
    command
        .args(["--port", "0"])
        .args(args)
        .env_remove("PAYMENTS_MOCK_STORE")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        command.env(k, v);
    }
    let mut child = command.spawn().expect("spawn");
    // A start that is not refused prints its banner and serves: stop it.
    let mut line = String::new();
    let read = std::io::BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .unwrap_or(0);
    if read > 0 {
        let _ = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status();
    }
    let output = child.wait_with_output().expect("exit");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// A reply over HTTP: status and body (JSON when it is JSON).
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub body: Value,
    pub text: String,
    pub location: Option<String>,
}

impl Reply {
    pub fn code(&self) -> &str {
        self.body["errorCode"].as_str().unwrap_or("")
    }

    pub fn data(&self) -> &Value {
        &self.body["data"]
    }
}

pub fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("a client")
}

async fn reply(response: reqwest::Response) -> Reply {
    let status = response.status().as_u16();
    let location = response
        .headers()
        .get("location")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let text = response.text().await.unwrap_or_default();
    Reply {
        status,
        body: serde_json::from_str(&text).unwrap_or(Value::Null),
        text,
        location,
    }
}

pub async fn get(http: &reqwest::Client, url: &str) -> Result<Reply, reqwest::Error> {
    Ok(reply(http.get(url).send().await?).await)
}

pub async fn post(
    http: &reqwest::Client,
    url: &str,
    body: &Value,
) -> Result<Reply, reqwest::Error> {
    Ok(reply(http.post(url).json(body).send().await?).await)
}

pub async fn post_form(
    http: &reqwest::Client,
    url: &str,
    form: &str,
) -> Result<Reply, reqwest::Error> {
    Ok(reply(
        http.post(url)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form.to_owned())
            .send()
            .await?,
    )
    .await)
}

pub fn initiate_body(reference: &str, product: &str, amount: u64) -> Value {
    serde_json::json!({
        "merchantId": MERCHANT,
        "referenceNo": reference,
        "amount": amount,
        "productCode": product,
        "storeId": "S1",
        "payerId": "60123456789",
        "returnUrl": "https://shop.example/back",
    })
}

/// The bytes of a file, to show it was left as it was.
pub fn bytes(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_default()
}
