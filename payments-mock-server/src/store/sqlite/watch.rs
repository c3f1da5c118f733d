//! Whether the SQLite store can still keep what it answers.
//!
//! - **Its file**: SQLite writes to the files it opened, whatever the
//!   path holds now. A store file (or its write-ahead log) removed or
//!   replaced while the mock runs would take every later commit with it at
//!   a restart. The writer compares the path's file with the one it opened
//!   (device and inode) around each commit, before any answer: from the
//!   first difference on, every change is refused (503, restart the mock),
//!   health says so, and the log says it once.
//! - **Writing**: a commit that fails (a full disk, an I/O error, a file
//!   made read-only) makes health answer 503 until one succeeds again.
//! - **Rows it cannot read**: said once in the log (each read says it in
//!   its answer).
//! - **A damaged file** (pages overwritten: `SQLITE_CORRUPT`,
//!   `SQLITE_NOTADB`): each request that meets the damage answers 500, the
//!   log says it once, and health answers 503 naming it from then on.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};

use super::StoreError;

/// What names one file on its device (unix); nothing elsewhere, where an
/// open file cannot be removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Identity {
    #[cfg(unix)]
    dev: u64,
    #[cfg(unix)]
    ino: u64,
}

impl Identity {
    fn of(meta: &std::fs::Metadata) -> Self {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt as _;
            Self {
                dev: meta.dev(),
                ino: meta.ino(),
            }
        }
        #[cfg(not(unix))]
        {
            let _ = meta;
            Self {}
        }
    }
}

/// The store file's watch: the files it opened, and what it found.
#[derive(Debug)]
pub(super) struct Watch {
    path: PathBuf,
    /// The database file and its write-ahead log as opened.
    files: Vec<(PathBuf, Identity)>,
    /// Its write-ahead log and shared memory as opened (`PATH-wal`,
    /// `PATH-shm`): set aside at the stop once the file was replaced.
    logs: Vec<(PathBuf, Identity)>,
    /// Set once, for good: the file was removed or replaced.
    lost: OnceLock<StoreError>,
    /// The last commit's failure, until one succeeds.
    failing: Mutex<Option<StoreError>>,
    /// Whether a row it cannot read has been logged.
    unreadable_logged: AtomicBool,
    /// Set once, for good: SQLite found the file damaged.
    damaged: OnceLock<StoreError>,
}

impl Watch {
    /// The watch of the store at `path`, open now (its log, `PATH-wal`,
    /// too when it exists).
    pub(super) fn new(path: &Path) -> Self {
        let beside = |suffix: &str| {
            let mut side = path.as_os_str().to_owned();
            side.push(suffix);
            PathBuf::from(side)
        };
        let identified = |paths: Vec<PathBuf>| -> Vec<(PathBuf, Identity)> {
            paths
                .into_iter()
                .filter_map(|p| {
                    let meta = std::fs::metadata(&p).ok()?;
                    Some((p, Identity::of(&meta)))
                })
                .collect()
        };
        Self {
            path: path.to_owned(),
            files: identified(vec![path.to_owned(), beside("-wal")]),
            logs: identified(vec![beside("-wal"), beside("-shm")]),
            lost: OnceLock::new(),
            failing: Mutex::new(None),
            unreadable_logged: AtomicBool::new(false),
            damaged: OnceLock::new(),
        }
    }

    /// Whether the files at the store's path are still the ones it opened:
    /// once they are not, never again.
    pub(super) fn still_ours(&self) -> Result<(), StoreError> {
        if let Some(lost) = self.lost.get() {
            return Err(lost.clone());
        }
        let changed = self.files.iter().find_map(|(path, opened)| {
            match std::fs::metadata(path) {
                Ok(meta) if Identity::of(&meta) == *opened => None,
                Ok(_) => Some(format!("{} was replaced", path.display())),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    Some(format!("{} was removed", path.display()))
                }
                // Cannot look (a permission changed): not a proof of loss.
                Err(_) => None,
            }
        });
        let Some(changed) = changed else {
            return Ok(());
        };
        let error = StoreError::lost(format!(
            "its file {changed} while the mock ran; what it answers from now on would not survive a restart, so every change is refused: restart the mock (on a file that holds the store)"
        ));
        if self.lost.set(error.clone()).is_ok() {
            tracing::warn!(
                store = %self.path.display(),
                error = %error,
                "the SQLite store's file was removed or replaced: changes are refused until the mock is restarted"
            );
        }
        Err(self.lost.get().cloned().unwrap_or(error))
    }

    /// At the stop, once every connection of the store's is closed: when
    /// the file was removed or replaced while the mock ran, the log and
    /// shared memory this process opened, if they are still at `PATH-wal`
    /// and `PATH-shm` (same device and inode), are set aside (the log
    /// renamed to `PATH-wal.replaced`, the shared memory removed). SQLite
    /// leaves the log of a file that moved where it was, and the next
    /// start read the restored file through it: a mix of the two, damaged
    /// or silently the old data.
    pub(super) fn set_aside_logs(&self) {
        if self.still_ours().is_ok() {
            return;
        }
        for (path, opened) in &self.logs {
            let ours = std::fs::symlink_metadata(path).is_ok_and(|m| Identity::of(&m) == *opened);
            if !ours {
                continue;
            }
            let mut aside = path.as_os_str().to_owned();
            aside.push(".replaced");
            let done = if path.as_os_str().to_string_lossy().ends_with("-shm") {
                std::fs::remove_file(path).map(|()| None)
            } else {
                std::fs::rename(path, &aside).map(|()| Some(PathBuf::from(aside)))
            };
            match done {
                Ok(Some(aside)) => tracing::warn!(
                    store = %self.path.display(),
                    "the log of the file that was replaced or removed while the mock ran was moved from {} to {}: the next start opens the file now at the path as it is",
                    path.display(),
                    aside.display()
                ),
                Ok(None) => {}
                Err(e) => tracing::error!(
                    store = %self.path.display(),
                    error = %e,
                    "the log of the file that was replaced or removed while the mock ran could not be set aside: before the next start, move {} away",
                    path.display()
                ),
            }
        }
    }

    /// Notes the outcome of a commit (or of a batch that could not
    /// commit): health answers 503 while the last one failed.
    pub(super) fn committed(&self, outcome: Result<(), &StoreError>) {
        if let Err(error) = outcome {
            self.unreadable(error);
        }
        let mut failing = self.failing.lock().unwrap_or_else(PoisonError::into_inner);
        *failing = outcome.err().cloned();
    }

    /// The last commit's failure, if it failed.
    pub(super) fn failing(&self) -> Option<StoreError> {
        self.failing
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The damage SQLite found in the file, once it found some: what
    /// health answers (503; the reason already says to restore the file
    /// from a copy and restart).
    pub(super) fn damaged(&self) -> Option<StoreError> {
        let found = self.damaged.get()?;
        Some(StoreError::lost(found.reason().to_owned()))
    }

    /// Logs, once, that the store holds a row it cannot read, or that its
    /// file is damaged (any other failure: nothing).
    pub(super) fn unreadable(&self, error: &StoreError) {
        if error.kind() != crate::domain::port::StoreErrorKind::Unreadable {
            return;
        }
        if error.reason().starts_with(super::rows::DAMAGED) {
            if self.damaged.set(error.clone()).is_ok() {
                tracing::error!(
                    store = %self.path.display(),
                    error = %error,
                    "the SQLite store's file is damaged: requests that meet the damage answer 500 and health 503; restore the file from a copy and restart the mock"
                );
            }
            return;
        }
        if !self.unreadable_logged.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                store = %self.path.display(),
                error = %error,
                "the SQLite store holds a row it cannot read (changed outside the mock?): requests that read it answer 500"
            );
        }
    }
}
