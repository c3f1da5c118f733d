//! The log and shared memory SQLite keeps beside a store file
//! (`PATH-wal`, `PATH-shm`): a start refused because the file is read-only
//! leaves none behind (they were left read-only, and the next start, on
//! the file made writable again, served but could never write: 503
//! "attempt to write a readonly database", health 503); a start whose
//! side files are there but cannot be written is refused with exit 1.

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::Command;

use crate::mock::{BIN, Mock, get, http, initiate_body, post, run_as};

/// The binary as a user the files' mode bits bind: as root, `nobody`
/// through `setpriv` (`None`, having said so, without it).
fn unprivileged() -> Option<Command> {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    if !root {
        return Some(Command::new(BIN));
    }
    if Command::new("setpriv").arg("--version").output().is_err() {
        assert!(
            !std::env::var("CI").is_ok_and(|v| v == "true"),
            "CI=true, running as root and no setpriv to drop to nobody"
        );
        eprintln!("SKIPPED sqlite_side_files: root ignores mode bits, and no setpriv");
        return None;
    }
    let mut command = Command::new("setpriv");
    command.args([
        "--reuid=65534",
        "--regid=65534",
        "--clear-groups",
        "--",
        BIN,
    ]);
    Some(command)
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

fn side(path: &Path, suffix: &str) -> std::path::PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    name.into()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_read_only_start_leaves_no_side_files_and_the_next_start_writes() {
    if unprivileged().is_none() {
        return;
    }
    let dir = tempfile::tempdir().expect("a directory");
    // Open to the unprivileged user (the lock file is made beside it).
    chmod(dir.path(), 0o777);
    let path = dir.path().join("m.db");
    let spec = format!("sqlite:{}", path.display());
    // A store in WAL mode, closed cleanly: the file alone.
    let (code, stderr) = Mock::start(&["--store", &spec]).stop();
    assert_eq!(code, Some(0), "{stderr}");
    chmod(&dir.path().join("m.db.lock"), 0o666);
    assert!(!side(&path, "-wal").exists() && !side(&path, "-shm").exists());

    chmod(&path, 0o444);
    let command = unprivileged().expect("checked");
    let (code, stderr) = run_as(command, &["--store", &spec], &[]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("cannot be written"), "{stderr}");
    for suffix in ["-wal", "-shm"] {
        assert!(
            !side(&path, suffix).exists(),
            "a refused start left {suffix} behind"
        );
    }

    // Writable again: the next start serves and writes.
    chmod(&path, 0o666);
    let mock = Mock::try_start_as(unprivileged().expect("checked"), &["--store", &spec])
        .expect("starts on a writable file");
    let http = http();
    let created = post(
        &http,
        &mock.url("/api/payments/initiate"),
        &initiate_body("AFTER-CHMOD", "ONLINEBANKING", 100),
    )
    .await
    .expect("answers");
    assert_eq!(created.status, 200, "{}", created.text);
    let health = get(&http, &mock.url("/_mock/health"))
        .await
        .expect("answers");
    assert_eq!(health.status, 200, "{}", health.text);
    let (code, stderr) = mock.stop();
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn a_start_whose_side_files_cannot_be_written_is_refused() {
    let Some(command) = unprivileged() else {
        return;
    };
    let dir = tempfile::tempdir().expect("a directory");
    chmod(dir.path(), 0o777);
    let path = dir.path().join("m.db");
    let spec = format!("sqlite:{}", path.display());
    let (code, stderr) = Mock::start(&["--store", &spec]).stop();
    assert_eq!(code, Some(0), "{stderr}");
    chmod(&path, 0o666);
    chmod(&dir.path().join("m.db.lock"), 0o666);
    // Shared memory left read-only (by a start refused before the fix).
    let shm = side(&path, "-shm");
    std::fs::write(&shm, b"").expect("made");
    chmod(&shm, 0o444);
    let (code, stderr) = run_as(command, &["--store", &spec], &[]);
    assert_eq!(code, Some(1), "refused: {stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");
    assert!(
        stderr.contains(&shm.display().to_string()) && stderr.contains("cannot be written"),
        "names the file: {stderr}"
    );
    assert!(shm.exists(), "left as it is");
}
