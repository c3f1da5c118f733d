//! The directory's lock: a `.lock` that is no regular file is refused at
//! once (a directory made the start spin at full CPU, a dangling link
//! waited without end); a wait is said once, as a warning of the log, and
//! every retry waits.

use std::sync::mpsc;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use super::*;

/// How long a take that should end at once may take.
const LIMIT: Duration = Duration::from_secs(20);

/// The log lines `take` writes, as text, while it runs on this thread.
#[derive(Clone, Default)]
struct Said(Arc<Mutex<Vec<u8>>>);

impl Said {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap_or_else(PoisonError::into_inner)).into_owned()
    }
}

impl std::io::Write for Said {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// [`DirLock::take_with`] on `dir` on a thread of its own, its log to
/// `said` and the time of each attempt to make the lock to `attempts`:
/// what it gave, within [`LIMIT`] (`None`: it had not ended).
fn take_within(
    dir: &Path,
    said: &Said,
    attempts: &Arc<Mutex<Vec<Instant>>>,
    until: impl FnOnce(),
) -> Option<Result<bool, String>> {
    let (tx, rx) = mpsc::channel();
    let (dir, said, attempts) = (dir.to_owned(), said.clone(), Arc::clone(attempts));
    std::thread::spawn(move || {
        let subscriber = tracing_subscriber::fmt()
            .with_ansi(false)
            .with_writer(move || said.clone())
            .finish();
        let taken = tracing::subscriber::with_default(subscriber, || {
            DirLock::take_with(&dir, |path| {
                attempts
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(Instant::now());
                std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(path)
            })
        });
        let _ = tx.send(
            taken
                .map(|taken| matches!(taken, Taken::Held(_)))
                .map_err(|e| e.to_string()),
        );
    });
    until();
    rx.recv_timeout(LIMIT).ok()
}

/// Polls `done` until it holds, for at most [`LIMIT`].
fn poll(mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + LIMIT;
    while Instant::now() < deadline {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    false
}

#[test]
fn a_lock_that_is_a_directory_is_refused_at_once() {
    let long_ago = SystemTime::now() - STALE_AFTER * 2;
    // As old as a stale lock (the start spun at full CPU) and new.
    for aged in [true, false] {
        let dir = tempfile::tempdir().expect("a directory");
        let lock = dir.path().join(LOCK);
        std::fs::create_dir(&lock).expect("a directory");
        if aged {
            std::fs::File::open(&lock)
                .and_then(|d| d.set_modified(long_ago))
                .expect("aged");
        }
        let attempts = Arc::new(Mutex::new(Vec::new()));
        let taken = take_within(dir.path(), &Said::default(), &attempts, || {})
            .expect("refused at once, not a loop");
        let text = taken.expect_err("refused");
        assert!(
            text.contains(&lock.display().to_string())
                && text.contains("it is a directory")
                && text.contains("remove it"),
            "{text}"
        );
        assert!(lock.is_dir(), "left as it was");
    }
}

/// A link, dangling (it was waited for without end, silently) or to a
/// file: no lock, refused at once.
#[cfg(unix)]
#[test]
fn a_lock_that_is_a_link_is_refused_at_once() {
    for target in ["gone", "ca.pem"] {
        let dir = tempfile::tempdir().expect("a directory");
        std::fs::write(dir.path().join("ca.pem"), "").expect("written");
        let lock = dir.path().join(LOCK);
        std::os::unix::fs::symlink(target, &lock).expect("a link");
        let attempts = Arc::new(Mutex::new(Vec::new()));
        let taken = take_within(dir.path(), &Said::default(), &attempts, || {})
            .expect("refused at once, not a wait");
        let text = taken.expect_err("refused");
        assert!(
            text.contains("it is a symbolic link") && text.contains("remove it"),
            "{target}: {text}"
        );
    }
}

/// A lock another process holds: waited for, said once (with how long it
/// has been held and when it is taken over), each retry after a pause;
/// taken when it goes.
#[test]
fn a_wait_for_the_lock_is_said_once_and_every_retry_waits() {
    let dir = tempfile::tempdir().expect("a directory");
    let lock = dir.path().join(LOCK);
    std::fs::File::create(&lock).expect("held");
    let said = Said::default();
    let attempts = Arc::new(Mutex::new(Vec::new()));
    let tried = |n: usize| {
        attempts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
            >= n
    };
    let taken = take_within(dir.path(), &said, &attempts, || {
        assert!(poll(|| tried(6)), "{}", said.text());
        std::fs::remove_file(&lock).expect("released");
    })
    .expect("taken once released");
    assert_eq!(taken, Ok(true));
    let text = said.text();
    assert_eq!(text.matches("waiting for").count(), 1, "{text}");
    assert!(
        text.contains(&format!("waiting for {}, held for 0 s", lock.display()))
            && text.contains("taken over after 30 s"),
        "{text}"
    );
    let attempts = attempts.lock().unwrap_or_else(PoisonError::into_inner);
    for pair in attempts.windows(2) {
        assert!(pair[1] - pair[0] >= POLL, "a retry without a pause");
    }
}

/// A lock left by a killed process, stale: taken over at once, saying so.
#[test]
fn a_stale_lock_is_taken_over_saying_so() {
    let dir = tempfile::tempdir().expect("a directory");
    let lock = dir.path().join(LOCK);
    let file = std::fs::File::create(&lock).expect("left");
    file.set_modified(SystemTime::now() - STALE_AFTER * 2)
        .expect("aged");
    drop(file);
    let said = Said::default();
    let attempts = Arc::new(Mutex::new(Vec::new()));
    let taken = take_within(dir.path(), &said, &attempts, || {}).expect("taken over");
    assert_eq!(taken, Ok(true));
    let text = said.text();
    assert!(
        text.contains(&format!("took over {}, left ", lock.display()))
            && text.contains(" s ago by a process that did not finish"),
        "{text}"
    );
    assert!(!text.contains("waiting for"), "{text}");
}
