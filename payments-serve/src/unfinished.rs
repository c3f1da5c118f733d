//! Files a server is still writing, removed if the process stops at once.
//!
//! A file written whole goes first into a temporary file beside it, then
//! is renamed over it (the contract proxy's JUnit and SARIF files). A
//! second signal during the stop ends the process with
//! `std::process::exit`, which runs no destructor: the temporary file
//! would stay, a hidden `.tmp` beside the evidence. The binaries' second
//! signal handler calls [`remove_all`] first; a writer holds an
//! [`Unfinished`] for its temporary file until the rename.
//!
//! ```
//! use payments_serve::unfinished;
//!
//! let dir = std::env::temp_dir().join(format!("unfinished-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).expect("a directory");
//! let temporary = dir.join(".report.tmp");
//! std::fs::write(&temporary, "half of it").expect("written");
//! let unfinished = unfinished::Unfinished::new(&temporary);
//! // … the process is told to stop at once: its handler removes it.
//! unfinished::remove_all();
//! assert!(!temporary.exists());
//! drop(unfinished);
//! # std::fs::remove_dir_all(&dir).expect("removed");
//! ```

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

/// The files being written, each under the number of its guard.
static PENDING: Mutex<Vec<(u64, PathBuf)>> = Mutex::new(Vec::new());
static NEXT: AtomicU64 = AtomicU64::new(0);

fn pending() -> std::sync::MutexGuard<'static, Vec<(u64, PathBuf)>> {
    PENDING.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A temporary file being written: removed by [`remove_all`] until this
/// is dropped (when it has been renamed, or removed by its writer).
#[derive(Debug)]
#[must_use = "the file is forgotten when this is dropped"]
pub struct Unfinished(u64);

impl Unfinished {
    /// Notes `path` as being written.
    pub fn new(path: &Path) -> Self {
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        pending().push((id, path.to_owned()));
        Self(id)
    }
}

impl Drop for Unfinished {
    fn drop(&mut self) {
        pending().retain(|(id, _)| *id != self.0);
    }
}

/// Whether `path` is noted as being written (an [`Unfinished`] for it is
/// still held): what [`remove_all`] would remove now.
pub fn is_pending(path: &Path) -> bool {
    pending().iter().any(|(_, pending)| pending == path)
}

/// Removes every file still being written (what a process that stops at
/// once calls last). A file already renamed or gone is passed over.
pub fn remove_all() {
    for (_, path) in pending().drain(..) {
        let _ = std::fs::remove_file(path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_files_still_being_written_are_removed() {
        let dir = std::env::temp_dir().join(format!("unfinished-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a directory");
        let (done, open) = (dir.join("done.tmp"), dir.join("open.tmp"));
        for path in [&done, &open] {
            std::fs::write(path, "x").expect("written");
        }
        let finished = Unfinished::new(&done);
        let unfinished = Unfinished::new(&open);
        assert!(is_pending(&done) && is_pending(&open));
        drop(finished);
        assert!(!is_pending(&done));
        remove_all();
        assert!(done.exists(), "a finished file is its writer's");
        assert!(!open.exists(), "an unfinished one is removed");
        // Twice, or after its writer let go: nothing more happens.
        remove_all();
        drop(unfinished);
        assert!(!pending().iter().any(|(_, path)| *path == open));
        std::fs::remove_dir_all(&dir).expect("removed");
    }
}
