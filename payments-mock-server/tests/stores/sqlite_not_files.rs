//! A SQLite store named by what is not a regular file, or whose lock file
//! is not one: refused before anything is opened or written. A device
//! (`/dev/full`) left a `-journal` file of SQLite's beside it, a FIFO made
//! the start wait for a writer forever, and a `PATH.lock` that was a
//! symbolic link had the file it named replaced by this process's id.

use std::path::Path;
use std::time::Duration;

use payments_mock_server::store::SqliteStore;
use payments_mock_server::{Durability, Error};

use crate::backends::REPLICA;

/// Opens `path` on a thread of its own, so a start that would wait for a
/// FIFO's writer fails the test instead of holding it.
fn open_within(path: &Path) -> Result<SqliteStore, Error> {
    let path = path.to_owned();
    let (done, result) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(SqliteStore::open(&path, Durability::Process, REPLICA));
    });
    result
        .recv_timeout(Duration::from_secs(30))
        .expect("the open ends (a FIFO made it wait for a writer)")
}

fn refused(path: &Path) -> String {
    match open_within(path) {
        Ok(_) => panic!("{} opened as a store", path.display()),
        Err(e) => {
            assert_eq!(e.exit_code(), 1, "{e}");
            e.to_string()
        }
    }
}

fn mkfifo(path: &Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs");
    assert!(made.success(), "mkfifo {}", path.display());
}

#[test]
fn a_fifo_is_refused_at_once() {
    let dir = tempfile::tempdir().expect("a directory");
    let fifo = dir.path().join("m.db");
    mkfifo(&fifo);
    let message = refused(&fifo);
    assert!(message.contains("not a regular file"), "{message}");
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .expect("the directory")
        .map(|e| e.expect("an entry").file_name())
        .collect();
    assert_eq!(left, ["m.db"], "nothing made beside it");
}

#[test]
fn a_device_is_refused_leaving_no_journal_beside_it() {
    // A link to the device in a directory of the test's own: SQLite's
    // debris would land beside the link's target, `/dev/null-journal`, so
    // that is what is checked too.
    let dir = tempfile::tempdir().expect("a directory");
    let device = dir.path().join("m.db");
    std::os::unix::fs::symlink("/dev/null", &device).expect("a link");
    let journal_before = Path::new("/dev/null-journal").exists();
    let message = refused(&device);
    assert!(message.contains("not a regular file"), "{message}");
    if !journal_before {
        assert!(!Path::new("/dev/null-journal").exists());
    }
    assert!(!dir.path().join("m.db.lock").exists());
}

#[test]
fn a_lock_file_that_is_a_symbolic_link_is_refused_and_its_target_kept() {
    let dir = tempfile::tempdir().expect("a directory");
    let precious = dir.path().join("victim.txt");
    std::fs::write(&precious, "precious\n").expect("written");
    let db = dir.path().join("m.db");
    std::os::unix::fs::symlink(&precious, dir.path().join("m.db.lock")).expect("a link");
    let message = refused(&db);
    assert!(message.contains("lock file"), "{message}");
    assert!(message.contains("not a regular file"), "{message}");
    assert_eq!(
        std::fs::read_to_string(&precious).expect("the target"),
        "precious\n"
    );
    assert!(!db.exists(), "the database file is not made");
}
