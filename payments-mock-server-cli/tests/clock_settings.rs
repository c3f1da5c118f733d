//! Times on the virtual clock that the binary is given follow one rule:
//! a product's `settle_after` and `payer_timeout` as `--expiry` (whole
//! milliseconds, at most 100 years), and `--sandbox-ttl` whole seconds as
//! a sandbox's `ttlSeconds`. Each refusal is a start error naming what is
//! wrong, exit 2 (a bad flag or catalogue, COMMANDS.md). They started:
//! `settle_after = "5000000000000000s"` settled at the calendar's end,
//! `"1500us"` was shown a millisecond off the instant it settled at, and
//! `--sandbox-ttl 1500ms` made sandboxes that said `"ttlSeconds":1` and
//! lived 1.5 s.

use std::io::Read as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_payments-mock-server");

/// Starts the binary with `args`; its exit code and stderr once it has
/// stopped. One that starts serving instead (what was wrong) is stopped
/// after a while and told as `None`.
fn start(args: &[&str]) -> (Option<i32>, String) {
    let mut child = Command::new(BIN)
        .args(["--port", "0"])
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run");
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.try_wait().expect("waits") {
            break Some(status);
        }
        if Instant::now() > deadline {
            child.kill().expect("stops");
            child.wait().expect("stopped");
            break None;
        }
        // As the process tests' helper waits (processes/mock.rs,
        // `exited_within`): a refused start exits at once.
        std::thread::yield_now();
    };
    let mut stderr = String::new();
    if let Some(mut pipe) = child.stderr.take() {
        pipe.read_to_string(&mut stderr).expect("stderr");
    }
    (status.and_then(|s| s.code()), stderr)
}

#[test]
fn a_catalogues_settle_after_and_payer_timeout_are_whole_milliseconds_up_to_100_years() {
    let dir = tempfile::tempdir().expect("a directory");
    for (product, key, says) in [
        (
            "outcome = \"async\"\nsettle_after = \"1500us\"",
            "settle_after \"1500us\"",
            "must be a whole number of milliseconds",
        ),
        (
            "outcome = \"async\"\nsettle_after = \"5000000000000000s\"",
            "settle_after \"5000000000000000s\"",
            "must be at most 100 years",
        ),
        (
            "flow = \"redirect\"\npayer_timeout = \"10m 1us\"",
            "payer_timeout \"10m 1us\"",
            "must be a whole number of milliseconds",
        ),
        (
            "flow = \"redirect\"\npayer_timeout = \"101y\"",
            "payer_timeout \"101y\"",
            "must be at most 100 years",
        ),
    ] {
        let path = dir.path().join("catalog.toml");
        std::fs::write(&path, format!("[[product]]\ncode = \"LATER\"\n{product}\n"))
            .expect("written");
        let (code, stderr) = start(&["--catalog", path.to_str().expect("UTF-8")]);
        assert_eq!(code, Some(2), "{product}: {stderr}");
        assert!(
            stderr.contains(&format!("product \"LATER\": {key}: {says}")),
            "{product}: {stderr}"
        );
    }
}

#[test]
fn a_sandbox_ttl_in_fractions_of_a_second_is_refused() {
    for ttl in ["1500ms", "1m 1ms"] {
        let (code, stderr) = start(&["--sandbox-ttl", ttl]);
        assert_eq!(code, Some(2), "{ttl}: {stderr}");
        assert!(
            stderr.contains("sandbox time to live must be a whole number of seconds"),
            "{ttl}: {stderr}"
        );
    }
}
