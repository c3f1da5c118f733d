//! Who holds a store's file: the SQLite files this process has open
//! (a registry each store leaves when it has closed, so that a start on
//! the same file right after an embedded server was dropped waits for it
//! instead of being refused, or told that this process holds it), and
//! the refusal naming the holder.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::watch;

use super::SqliteStore;

/// A file a store of this process has open.
struct Entry {
    /// The database file's identity ([`key`]).
    key: FileKey,
    /// Which store's (a store that just closed leaves after its locks
    /// went: the next one's entry may already be there).
    id: u64,
    /// Dropped when the store closes: every waiter's `changed()` ends.
    _closed: watch::Sender<()>,
    closing: watch::Receiver<()>,
}

static OPEN_HERE: Mutex<Vec<Entry>> = Mutex::new(Vec::new());
static NEXT_ID: AtomicU64 = AtomicU64::new(0);

fn open_here() -> MutexGuard<'static, Vec<Entry>> {
    OPEN_HERE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The registry's name of a store's file: on Unix its identity (device
/// and inode), so that every name of it (a symbolic link, a hard link)
/// finds the same entry; elsewhere its real path (symbolic links
/// followed).
#[cfg(unix)]
type FileKey = (u64, u64);
#[cfg(not(unix))]
type FileKey = PathBuf;

/// The registry's name of the file at `path` ([`FileKey`]); none when it
/// cannot be read.
#[cfg(unix)]
fn key(path: &Path) -> Option<FileKey> {
    use std::os::unix::fs::MetadataExt as _;
    std::fs::metadata(path)
        .ok()
        .map(|meta| (meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
fn key(path: &Path) -> Option<FileKey> {
    std::fs::canonicalize(path).ok()
}

/// A store's place in the registry, left when it is dropped: the last of
/// what owning the file holds, after its locks.
#[derive(Debug)]
pub(super) struct OpenHere(u64);

impl OpenHere {
    /// Writes down that this process has `path` open (owned, locked).
    pub(super) fn enter(path: &Path) -> Self {
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        if let Some(key) = key(path) {
            let (closed, closing) = watch::channel(());
            open_here().push(Entry {
                key,
                id,
                _closed: closed,
                closing,
            });
        }
        Self(id)
    }
}

impl Drop for OpenHere {
    fn drop(&mut self) {
        // Its sender goes: every waiter is told.
        open_here().retain(|entry| entry.id != self.0);
    }
}

impl SqliteStore {
    /// Whether a store of this process has the file at `path` open: why
    /// an embedded server's start on it was refused, when it was.
    pub(crate) fn open_here(path: &Path) -> bool {
        key(path).is_some_and(|key| open_here().iter().any(|entry| entry.key == key))
    }

    /// Waits until no store of this process has the file at `path` open
    /// (one of a server just dropped closes once its requests in flight
    /// are answered), at most `within`. Told when the store closes, no
    /// polling.
    pub(crate) async fn closed_here(path: &Path, within: Duration) {
        let Some(key) = key(path) else {
            return;
        };
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let closing = open_here()
                .iter()
                .find(|entry| entry.key == key)
                .map(|entry| entry.closing.clone());
            let Some(mut closing) = closing else {
                return;
            };
            // Err: the sender is gone, the store closed.
            if tokio::time::timeout_at(deadline, closing.changed())
                .await
                .is_err()
            {
                return;
            }
        }
    }
}

/// Why a file another owner holds is refused; `holder` what its lock
/// file says (or the pid the kernel lists).
pub(super) fn held(holder: &str) -> String {
    let holder = if holder.is_empty() {
        "another process".to_owned()
    } else {
        format!("another process ({holder})")
    };
    format!(
        "the file is held by {holder}; one server process owns a SQLite store (use PostgreSQL for several)"
    )
}

/// The lock file beside a store: `PATH.lock`, `PATH` the file itself (a
/// symlink followed), so every name of the store finds the same one.
pub(super) fn lock_path(path: &Path) -> PathBuf {
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
    let mut name = real.into_os_string();
    name.push(".lock");
    PathBuf::from(name)
}

/// Who holds the database file: what its lock file says, or else (the lock
/// file deleted, or another name's) the pid the kernel lists for the lock.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(super) fn holder_of(path: &Path, file: &std::fs::File) -> String {
    use std::os::unix::fs::MetadataExt as _;
    let written = std::fs::read_to_string(lock_path(path)).unwrap_or_default();
    if !written.trim().is_empty() {
        return written.trim().to_owned();
    }
    let (Ok(meta), Ok(locks)) = (file.metadata(), std::fs::read_to_string("/proc/locks")) else {
        return String::new();
    };
    let dev = meta.dev();
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    let id = format!("{major:02x}:{minor:02x}:{}", meta.ino());
    locks
        .lines()
        .filter_map(|line| {
            // `1: FLOCK  ADVISORY  WRITE 4711 08:01:1234 0 EOF`
            let fields: Vec<&str> = line.split_whitespace().collect();
            (fields.get(1) == Some(&"FLOCK") && fields.get(5) == Some(&id.as_str()))
                .then(|| fields.get(4).map(|pid| format!("pid {pid}")))
                .flatten()
        })
        .next()
        .unwrap_or_default()
}
