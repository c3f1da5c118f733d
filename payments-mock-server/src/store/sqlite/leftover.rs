//! A write-ahead log left beside the file at start (`PATH-wal` with
//! frames): what a process killed with `kill -9` leaves, and also what a
//! copy put in place beside that dead process's log meets. SQLite reads
//! the file through such a log, so a copy restored beside another file's
//! log is served as a mix of the two. The store is checked before it is
//! served (`PRAGMA quick_check`), and a damaged one refused, with the files
//! left as they are: the check's connection never checkpoints the log
//! into the file when it closes (`open.rs` sets
//! `SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE` until the open has succeeded).

use std::fs::File;
use std::io::Read as _;
use std::path::Path;

use rusqlite::Connection;

use super::names::{first_line, side_path};

/// Whether the write-ahead log `log` (a store's `PATH-wal`) holds frames:
/// a log header of SQLite's and more than that header.
pub(super) fn log_has_frames(log: &Path) -> bool {
    let Ok(mut file) = File::open(log) else {
        return false;
    };
    let mut header = [0u8; 32];
    if file.read_exact(&mut header).is_err() {
        return false;
    }
    let magic = u32::from_be_bytes([header[0], header[1], header[2], header[3]]);
    (magic == 0x377f_0682 || magic == 0x377f_0683)
        && file.metadata().is_ok_and(|m| m.len() > header.len() as u64)
}

/// When a log with frames lies beside the file, checks the store as read
/// through it (`PRAGMA quick_check`, on `conn`, which must not checkpoint
/// on close) and refuses a damaged one, saying how to restore a copy.
/// Without such a log: nothing to check (a damaged file alone is refused
/// by the first read).
///
/// # Errors
///
/// Why the store is refused: the damage (at most 200 characters of
/// SQLite's report) and what to do.
pub(super) fn check_log(conn: &Connection, path: &Path) -> Result<(), String> {
    if !log_has_frames(&side_path(path, "-wal")) {
        return Ok(());
    }
    let found = conn
        .prepare("PRAGMA quick_check(3)")
        .and_then(|mut statement| {
            statement
                .query_map([], |r| r.get::<_, String>(0))?
                .collect::<rusqlite::Result<Vec<String>>>()
        });
    let report = match found {
        Ok(lines) if lines.iter().all(|l| l == "ok") => return Ok(()),
        Ok(lines) => lines.join("; "),
        Err(e)
            if matches!(
                e.sqlite_error_code(),
                Some(rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase)
            ) =>
        {
            e.to_string()
        }
        Err(e) => return Err(format!("SQLite: {}", first_line(&e.to_string()))),
    };
    let log = path.display();
    Err(format!(
        "the database is damaged as read through the write-ahead log left beside it, {log}-wal (SQLite: {}); \
         was a copy put in place beside the log of a process that was killed? \
         To restore a copy: stop the mock, move {log}-wal and {log}-shm away, put the copy in place, start again; \
         the files were left as they are",
        first_line(&report)
    ))
}
