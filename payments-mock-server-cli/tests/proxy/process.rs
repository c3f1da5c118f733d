//! A binary as a process: started with its variables set and unset, its
//! banner (`listening on URL`) read, stopped with SIGTERM. The mock's
//! `proxy` tests and payments-contract-proxy-cli's tests (which include
//! this file with `#[path]`) start their binaries so.

use std::io::BufRead as _;
use std::process::{Child, Command, Stdio};

/// `bin` with `args`, the variables `unset` removed and `env` set; stdin
/// closed, stdout and stderr piped.
pub fn command(bin: &str, args: &[&str], unset: &[&str], env: &[(&str, &str)]) -> Command {
    let mut command = Command::new(bin);
    command.args(args);
    for variable in unset {
        command.env_remove(variable);
    }
    command
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// Spawns `command` and reads the first line of its stdout: empty when it
/// closed stdout without one (it exited, refusing to start).
pub fn spawn_reading_banner(command: &mut Command) -> (Child, String) {
    let mut child = command.spawn().expect("spawns");
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("a banner");
    (child, line)
}

/// Spawns `command`, its banner read: the child and its base URL.
pub fn spawn_listening(command: &mut Command) -> (Child, String) {
    let (child, line) = spawn_reading_banner(command);
    let base = line
        .trim_end()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("banner {line:?}"))
        .to_owned();
    (child, base)
}

/// SIGTERM, then the exit code and stderr.
pub fn stop(child: Child) -> (Option<i32>, String) {
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let output = child.wait_with_output().expect("exits");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}
