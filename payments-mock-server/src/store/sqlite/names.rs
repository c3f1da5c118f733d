//! What the store's side files are called, and SQLite's words cut for a
//! message: shared by the open (`open.rs`) and the check of a leftover
//! log (`leftover.rs`).

use std::path::{Path, PathBuf};

/// `PATH-wal` or `PATH-shm` (`suffix`) of the file a path leads to: where
/// SQLite keeps them (beside the file a symlink names).
pub(super) fn side_path(path: &Path, suffix: &str) -> PathBuf {
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
    let mut name = real.into_os_string();
    name.push(suffix);
    PathBuf::from(name)
}

/// The first line of `text`, at most 200 characters.
pub(super) fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    match line.char_indices().nth(200) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_owned(),
    }
}
