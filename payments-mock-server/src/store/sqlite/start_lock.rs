//! A write lock another program holds on the store file at start
//! (CONTRACT section 15: a file another process holds is exit 1). The
//! owner lock (`open.rs`) keeps out a second mock; a program that is not
//! one (the `sqlite3` shell in a transaction, a backup tool) takes SQLite's
//! own write lock, and the mock started anyway, then answered its first
//! change 503 after 4 s while health said ok.

use std::time::Duration;

use rusqlite::{Connection, ErrorCode};

use super::STORE_TIMEOUT;

/// How long a start waits for another program's write lock to go: a
/// moment, for one that is writing, not for one that keeps it.
const START_WAIT: Duration = Duration::from_secs(1);

/// Takes and gives back the write lock (`BEGIN IMMEDIATE; ROLLBACK`,
/// waiting at most [`START_WAIT`]): why the store is refused when
/// another program keeps it. Writes nothing.
pub(super) fn write_lock_free(conn: &Connection) -> Result<(), String> {
    let sql_error = |e: &rusqlite::Error| format!("SQLite: {e}");
    conn.busy_timeout(START_WAIT).map_err(|e| sql_error(&e))?;
    let tried = conn.execute_batch("BEGIN IMMEDIATE; ROLLBACK");
    if !conn.is_autocommit() {
        let _ = conn.execute_batch("ROLLBACK");
    }
    conn.busy_timeout(STORE_TIMEOUT)
        .map_err(|e| sql_error(&e))?;
    match tried {
        Ok(()) => Ok(()),
        Err(e)
            if matches!(
                e.sqlite_error_code(),
                Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
            ) =>
        {
            Err(format!(
                "another program holds its write lock (SQLite: {e}, after {} s); one server process owns a SQLite store: end that program's transaction, then start again",
                START_WAIT.as_secs()
            ))
        }
        Err(e) => Err(sql_error(&e)),
    }
}
