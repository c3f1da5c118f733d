//! Shared helpers: a sandboxed `payments` command, running it off the async
//! runtime, and insta settings that hide ids and times.

#![allow(dead_code)]

use std::{
    net::TcpListener,
    path::{Path, PathBuf},
};

use assert_cmd::{Command, assert::Assert};
use tempfile::TempDir;

/// A merchant used by tests that initiate.
pub const MERCHANT: &str = "4f1c6a2e-0b7d-4c1e-9a53-2f8e6d1b7c90";

/// A temporary `$XDG_CONFIG_HOME` and `$HOME`, removed on drop.
#[derive(Debug)]
pub struct Sandbox {
    dir: TempDir,
}

impl Sandbox {
    pub fn new() -> Self {
        Self {
            dir: tempfile::tempdir().expect("a temporary directory can be created"),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes `$XDG_CONFIG_HOME/payments/config.toml`, mode 0600 as the
    /// docs advise (a key in a file others may open is warned about).
    pub fn write_config(&self, text: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = self.dir.path().join("payments");
        std::fs::create_dir_all(&dir).expect("config dir can be created");
        let path = dir.join("config.toml");
        std::fs::write(&path, text).expect("config file can be written");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
            .expect("config file's mode can be set");
        path
    }

    /// Writes a file in the sandbox and returns its path.
    pub fn write_file(&self, name: &str, contents: &str) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::write(&path, contents).expect("file can be written");
        path
    }

    /// `payments` with a clean environment: no `PAYMENTS_*` variables,
    /// config in the sandbox, no colour, stdout and stderr not terminals.
    pub fn payments(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_payments"));
        cmd.env_clear()
            .env("XDG_CONFIG_HOME", self.dir.path())
            .env("HOME", self.dir.path())
            .env("NO_COLOR", "1")
            .timeout(std::time::Duration::from_secs(60));
        cmd
    }
}

/// Runs the blocking command off the async runtime, so the in-process mock
/// keeps serving.
pub async fn run(mut cmd: Command) -> Assert {
    tokio::task::spawn_blocking(move || cmd.assert())
        .await
        .expect("the command runner does not panic")
}

/// The text of stdout.
pub fn stdout(assert: &Assert) -> String {
    String::from_utf8_lossy(&assert.get_output().stdout).into_owned()
}

/// The text of stderr.
/// `payments ARGS --help`'s stdout (it must exit 0).
pub fn help_of(args: &[&str]) -> String {
    let sandbox = Sandbox::new();
    let assert = sandbox
        .payments()
        .args(args)
        .arg("--help")
        .assert()
        .success();
    stdout(&assert)
}

/// The commands `payments --help` lists (not `help`), in its order.
pub fn commands_listed() -> Vec<String> {
    help_of(&[])
        .split_once("Commands:\n")
        .expect("a list of commands")
        .1
        .lines()
        .take_while(|line| line.starts_with("  "))
        .filter(|line| !line.starts_with("   "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|&command| command != "help")
        .map(str::to_owned)
        .collect()
}

pub fn stderr(assert: &Assert) -> String {
    String::from_utf8_lossy(&assert.get_output().stderr).into_owned()
}

/// A loopback URL nothing listens on: bind port 0, then let it go.
pub fn closed_port_url() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("loopback can be bound");
    let addr = listener
        .local_addr()
        .expect("a bound listener has an address");
    drop(listener);
    format!("http://{addr}")
}

/// insta settings: snapshots in `tests/snapshots`, ids and times replaced by
/// placeholders of the same width so table columns still line up.
pub fn snapshot_settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.add_filter(
        r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
        "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx",
    );
    settings.add_filter(
        r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}Z",
        "YYYY-MM-DD hh:mm:ssZ",
    );
    settings.add_filter(
        r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z",
        "YYYY-MM-DDThh:mm:ss.sssZ",
    );
    settings.add_filter(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT");
    settings
}

/// `payments --base-url <base_url> --merchant-id MERCHANT initiate
/// --reference-no <reference> --amount <amount> --product <product>
/// --store-id S1 --payer-id <payer>`, for more flags (`-o` among them).
pub fn initiate_command(
    sandbox: &Sandbox,
    base_url: &str,
    reference: &str,
    amount: &str,
    product: &str,
    payer: &str,
) -> Command {
    let mut cmd = sandbox.payments();
    cmd.args(["--base-url", base_url, "--merchant-id", MERCHANT])
        .args(["initiate", "--reference-no", reference, "--amount", amount])
        .args([
            "--product",
            product,
            "--store-id",
            "S1",
            "--payer-id",
            payer,
        ]);
    cmd
}

/// [`initiate_command`] of 10.50 for payer 60123456789.
pub fn initiate_cmd(sandbox: &Sandbox, base_url: &str, reference: &str, product: &str) -> Command {
    initiate_command(
        sandbox,
        base_url,
        reference,
        "10.50",
        product,
        "60123456789",
    )
}

/// Initiates a transaction through the CLI and returns its id.
pub async fn initiate(sandbox: &Sandbox, base_url: &str, reference: &str, product: &str) -> String {
    let mut cmd = initiate_cmd(sandbox, base_url, reference, product);
    cmd.args(["-o", "json"]);
    let assert = run(cmd).await.success();
    let envelope: serde_json::Value =
        serde_json::from_str(stdout(&assert).trim()).expect("initiate prints one envelope");
    envelope["data"]["transactionId"]
        .as_str()
        .expect("the envelope has a transaction id")
        .to_owned()
}

/// Confirms a transaction through the CLI.
pub async fn confirm(sandbox: &Sandbox, base_url: &str, id: &str, reference: &str) {
    let mut cmd = sandbox.payments();
    cmd.args(["--base-url", base_url, "-o", "json", "confirm", id])
        .args(["--reference-no", reference]);
    run(cmd).await.success();
}

/// A mock made by `builder`, serving HTTPS with a certificate `ca` issues
/// for `names`, expired when `expired` (the CLI's certificate advice).
pub async fn https_mock(
    builder: payments_mock_server::MockServerBuilder,
    ca: &payments_mock_server::tls::LocalCa,
    names: &[&str],
    expired: bool,
) -> payments_mock_server::MockServer {
    let names: Vec<String> = names.iter().map(|&name| name.to_owned()).collect();
    let issued = if expired {
        ca.expired_server_cert(&names)
    } else {
        ca.server_cert(&names)
    }
    .expect("a certificate");
    builder
        .tls_pem(issued.cert_pem.clone(), issued.key_pem())
        .start()
        .await
        .expect("starts")
}

/// Waits for `child` (at most 20 s, then it is killed and the test
/// fails): its exit code (none when a signal killed it) and its stderr.
pub async fn exit_of(child: std::process::Child) -> (Option<i32>, String) {
    let pid = child.id().to_string();
    let waited = tokio::task::spawn_blocking(move || child.wait_with_output());
    match tokio::time::timeout(std::time::Duration::from_secs(20), waited).await {
        Ok(output) => {
            let output = output.expect("the wait ran").expect("an exit status");
            (
                output.status.code(),
                String::from_utf8_lossy(&output.stderr).into_owned(),
            )
        }
        Err(_) => {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", &pid])
                .status();
            panic!("payments did not exit within 20 s");
        }
    }
}
