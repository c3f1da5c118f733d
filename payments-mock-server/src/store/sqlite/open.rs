//! Opening a SQLite store: owning the file, checking it before anything is
//! written, migrating it, and starting the writer.

#[cfg(any(target_os = "linux", target_os = "android"))]
use super::held::holder_of;
use super::held::{OpenHere, held, lock_path};
use super::names::{first_line, side_path};
use super::*;
use rows::*;
use rusqlite::config::DbConfig;
use writer::*;

pub(super) fn open_error(shown: &str, reason: impl Into<String>) -> Error {
    Error::StoreOpen {
        store: shown.to_owned(),
        reason: reason.into(),
    }
}

/// What owning a store holds until it closes: on Linux an OS lock on the
/// database file itself (so a symlink, a hard link or a deleted lock file
/// cannot get round it), and the lock file with this process's id, also
/// locked. Dropped after every connection of the store's (closing a handle
/// on the database file drops the process's SQLite locks on it).
#[derive(Debug)]
pub(super) struct Owner {
    _database: Option<File>,
    _lock: File,
    /// Left last, once the locks are gone: a start waiting in this
    /// process may then take the file.
    _here: OpenHere,
}

/// Takes the store's OS locks, writing this process's id into the lock
/// file, or says who holds them. Also what it created (a store refused
/// then takes it away again): the lock file, the (empty) database file.
pub(super) fn take_ownership(path: &Path, shown: &str) -> Result<(Owner, Created), Error> {
    // Before anything opens it: opening a FIFO waits for a writer (a start
    // that never ends), and SQLite would leave `/dev/full-journal` beside a
    // device it cannot use.
    if let Ok(meta) = std::fs::metadata(path)
        && !meta.is_file()
        && !meta.is_dir()
    {
        return Err(open_error(
            shown,
            "it is not a regular file (a device, a FIFO or a socket): a SQLite store is a file",
        ));
    }
    // Not created through a symbolic link to nothing: it could name any
    // place (a link left in a shared `/tmp`).
    if std::fs::metadata(path).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
        && let Ok(target) = std::fs::read_link(path)
    {
        return Err(open_error(
            shown,
            format!(
                "it is a symbolic link to a file that does not exist ({}); create that file (an empty one is an empty store) or give the store another path",
                target.display()
            ),
        ));
    }
    let lock = lock_path(path);
    // Never written through a link: a `PATH.lock` that is a symbolic link
    // (to a file of the user's, in a shared `/tmp`) would have that file
    // replaced by this process's id.
    if std::fs::symlink_metadata(&lock).is_ok_and(|m| !m.file_type().is_file()) {
        return Err(open_error(
            shown,
            format!(
                "its lock file {} is not a regular file (a symbolic link?): remove it",
                lock.display()
            ),
        ));
    }
    let (database, database_created) = lock_database(path, shown)?;
    let lock_created = !lock.exists();
    let mut created = Created {
        lock: lock_created.then(|| lock.clone()),
        database: database_created.then(|| path.to_owned()),
        side: Vec::new(),
    };
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&lock);
    let mut file = match file {
        Ok(file) => file,
        Err(e) => {
            created.remove();
            return Err(open_error(
                shown,
                format!("cannot create its lock file {}: {e}", lock.display()),
            ));
        }
    };
    // Also the lock file's own lock: what an older mock takes.
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            created.remove();
            return Err(open_error(shown, held(holder.trim())));
        }
        Err(std::fs::TryLockError::Error(e)) => {
            created.remove();
            return Err(open_error(
                shown,
                format!("cannot lock {}: {e}", lock.display()),
            ));
        }
    }
    // Ours now: the log and shared memory SQLite makes beside the file,
    // when they are not there yet, are ours to take away too.
    created.side = ["-wal", "-shm"]
        .into_iter()
        .map(|suffix| side_path(path, suffix))
        .filter(|side| !side.exists())
        .collect();
    let me = format!("pid {}, payments-mock-server", std::process::id());
    let _ = file.set_len(0).and_then(|()| file.write_all(me.as_bytes()));
    Ok((
        Owner {
            _database: database,
            _lock: file,
            _here: OpenHere::enter(path),
        },
        created,
    ))
}

/// What taking a store created, to take away again when it is refused.
pub(super) struct Created {
    lock: Option<PathBuf>,
    database: Option<PathBuf>,
    /// `PATH-wal` and `PATH-shm` when they were not there: a refused open
    /// may have made them (a read-only file's were left, read-only).
    side: Vec<PathBuf>,
}

impl Created {
    pub(super) fn remove(&self) {
        for path in self.lock.iter().chain(&self.database) {
            let _ = std::fs::remove_file(path);
        }
        for side in &self.side {
            // A log that holds frames is never taken (nothing of a refused
            // open should be there, but a log is data).
            let empty = std::fs::metadata(side).is_ok_and(|m| m.len() == 0);
            if empty || side.as_os_str().to_string_lossy().ends_with("-shm") {
                let _ = std::fs::remove_file(side);
            }
        }
    }
}

/// Refuses a store whose `PATH-wal` or `PATH-shm` is there but cannot be
/// written (left read-only): it would serve and refuse every write.
fn side_files_writable(path: &Path, shown: &str) -> Result<(), Error> {
    for suffix in ["-wal", "-shm"] {
        let side = side_path(path, suffix);
        match std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&side)
        {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(open_error(
                    shown,
                    format!(
                        "its file {} cannot be written ({e}); make it writable as the database file is; the files were left as they are",
                        side.display()
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The OS lock on the database file itself (created empty when missing:
/// SQLite reads an empty file as an empty database), and whether this made
/// the file. Linux only: there `flock` and SQLite's `fcntl` locks never
/// meet; elsewhere they may (BSD, macOS) or the lock is mandatory
/// (Windows), so the lock file alone owns the store.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn lock_database(path: &Path, shown: &str) -> Result<(Option<File>, bool), Error> {
    let (file, created) = match File::open(path) {
        Ok(file) => (file, false),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let file = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .open(path)
                .map_err(|e| open_error(shown, format!("cannot create it: {e}")))?;
            (file, true)
        }
        Err(e) => return Err(open_error(shown, format!("cannot read it: {e}"))),
    };
    match file.try_lock() {
        Ok(()) => Ok((Some(file), created)),
        Err(std::fs::TryLockError::WouldBlock) => {
            let holder = holder_of(path, &file);
            Err(open_error(shown, held(&holder)))
        }
        Err(std::fs::TryLockError::Error(e)) => {
            drop(file);
            if created {
                let _ = std::fs::remove_file(path);
            }
            Err(open_error(shown, format!("cannot lock it: {e}")))
        }
    }
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn lock_database(_path: &Path, _shown: &str) -> Result<(Option<File>, bool), Error> {
    Ok((None, false))
}

/// Checks a file that exists before SQLite opens it: the header's magic,
/// and that it is as long as the header says unless its write-ahead log
/// holds frames (a truncated copy fails here, before anything could write
/// to it; a checkpoint cut off by a kill does not).
pub(super) fn check_header(path: &Path, shown: &str) -> Result<(), Error> {
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(open_error(shown, format!("cannot read it: {e}"))),
    };
    if meta.is_dir() {
        return Err(open_error(shown, "it is a directory, not a SQLite file"));
    }
    if meta.len() == 0 {
        // SQLite's own reading of an empty file: an empty database.
        return Ok(());
    }
    let mut header = [0u8; 100];
    let mut file =
        File::open(path).map_err(|e| open_error(shown, format!("cannot read it: {e}")))?;
    let read = file
        .read(&mut header)
        .map_err(|e| open_error(shown, format!("cannot read it: {e}")))?;
    if read < header.len() || &header[..16] != b"SQLite format 3\0" {
        return Err(open_error(
            shown,
            "it is not a SQLite database (no SQLite header); the file was left as it is",
        ));
    }
    let page_size = match u16::from_be_bytes([header[16], header[17]]) {
        1 => 65_536,
        n => u64::from(n),
    };
    let pages = u64::from(u32::from_be_bytes([
        header[28], header[29], header[30], header[31],
    ]));
    let valid_for = &header[92..96];
    let change_counter = &header[24..28];
    let expected = page_size * pages;
    // A checkpoint copies the log's pages in page order, the first (with
    // the new size) before those past the old end: a process killed in
    // between leaves the file shorter than its header says, and SQLite
    // reads those pages from the log, which still holds them all.
    if valid_for == change_counter
        && pages > 0
        && meta.len() < expected
        && !leftover::log_has_frames(&side_path(path, "-wal"))
    {
        return Err(open_error(
            shown,
            format!(
                "the database is damaged: the file has {} bytes, its header says {expected} (truncated?); the file was left as it is",
                meta.len()
            ),
        ));
    }
    Ok(())
}

/// The newest schema version this build knows.
pub(super) fn supported_version() -> i64 {
    migrations::migrations::runner()
        .get_migrations()
        .iter()
        .map(|m| i64::from(m.version()))
        .max()
        .unwrap_or(0)
}

/// The schema version the file records, read without writing anything.
pub(super) fn recorded_version(conn: &Connection) -> rusqlite::Result<Option<i64>> {
    let exists: bool = conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1)",
        [SCHEMA_TABLE],
        |r| r.get(0),
    )?;
    if !exists {
        return Ok(None);
    }
    conn.query_row(
        &format!("SELECT MAX(version) FROM {SCHEMA_TABLE}"),
        [],
        |r| r.get(0),
    )
}

/// The tables of a file that is not the mock's store, named (at most
/// three): a file with tables but no schema history of the mock's (a
/// history table alone, empty, is what a first start killed before its
/// migration committed leaves). Reads only.
pub(super) fn foreign_tables(conn: &Connection) -> rusqlite::Result<Option<String>> {
    if recorded_version(conn)?.is_some() {
        return Ok(None);
    }
    let mut statement = conn.prepare(
        "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') \
         AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name <> ?1 ORDER BY name",
    )?;
    let names: Vec<String> = statement
        .query_map([SCHEMA_TABLE], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    if names.is_empty() {
        return Ok(None);
    }
    let mut shown = names.iter().take(3).cloned().collect::<Vec<_>>().join(", ");
    if names.len() > 3 {
        shown.push_str(&format!(" and {} more", names.len() - 3));
    }
    Ok(Some(shown))
}

/// A failed migration in one line: SQLite's complaint, never the
/// migration's SQL (which refinery's and rusqlite's texts carry).
fn migration_error(e: &refinery::Error) -> String {
    let mut source: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(e);
    while let Some(cause) = source {
        if let Some(sqlite) = cause.downcast_ref::<rusqlite::Error>() {
            return match sqlite {
                rusqlite::Error::SqlInputError { msg, .. } => format!("SQLite: {msg}"),
                rusqlite::Error::SqliteFailure(_, Some(msg)) => format!("SQLite: {msg}"),
                other => first_line(&format!("SQLite: {other}")),
            };
        }
        source = cause.source();
    }
    first_line(&e.to_string())
}

pub(super) fn configure(conn: &Connection, durability: Durability) -> rusqlite::Result<()> {
    conn.busy_timeout(STORE_TIMEOUT)?;
    let synchronous = match durability {
        Durability::Process => "NORMAL",
        Durability::Power => "FULL",
    };
    conn.execute_batch(&format!(
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = {synchronous}; PRAGMA foreign_keys = OFF;"
    ))
}

pub(super) fn open_reader(path: &Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(STORE_TIMEOUT)?;
    conn.execute_batch("PRAGMA query_only = ON;")?;
    Ok(conn)
}

impl SqliteStore {
    /// Opens (or creates) the store at `path`, owning it: checks the file,
    /// refuses a newer schema, migrates an older one, and starts the
    /// writer.
    ///
    /// # Errors
    ///
    /// [`Error::StoreOpen`] when the file is not a SQLite database, is
    /// damaged, is a directory, cannot be created, or another process holds
    /// it; [`Error::StoreSchemaNewer`] when a newer mock wrote it. A file
    /// refused is left exactly as it was.
    pub fn open(path: &Path, durability: Durability, replica: &str) -> Result<Self, Error> {
        let shown = format!("sqlite:{}", path.display());
        if path.is_dir() {
            return Err(open_error(&shown, "it is a directory, not a SQLite file"));
        }
        let (owner, created) = take_ownership(path, &shown)?;
        let opened = Self::open_owned(path, durability, replica, &shown, owner);
        if opened.is_err() {
            // Still ours (the failed open dropped our handles, not the files).
            created.remove();
        }
        opened
    }

    fn open_owned(
        path: &Path,
        durability: Durability,
        replica: &str,
        shown: &str,
        owner: Owner,
    ) -> Result<Self, Error> {
        check_header(path, shown)?;
        let why = |e: rusqlite::Error| {
            let text = e.to_string();
            let reason = if text.contains("not a database") {
                "it is not a SQLite database; the file was left as it is".to_owned()
            } else if text.contains("malformed") || text.contains("corrupt") {
                "the database is damaged (SQLite: malformed); the file was left as it is".to_owned()
            } else {
                format!("SQLite: {text}")
            };
            open_error(shown, reason)
        };
        let mut conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(why)?;
        // Until the open has succeeded, closing never copies the log into
        // the file: a refused file is left as it was.
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)
            .map_err(why)?;
        // Before the first read, which makes the log and shared memory of
        // a file in WAL mode (a read-only file's, read-only, were left
        // behind).
        if conn.is_readonly(rusqlite::MAIN_DB).map_err(why)? {
            return Err(open_error(
                shown,
                "it cannot be written (a read-only file or file system?); the file was left as it is",
            ));
        }
        side_files_writable(path, shown)?;
        leftover::check_log(&conn, path).map_err(|r| open_error(shown, r))?;
        // Reads only, before anything is written: a file SQLite cannot
        // read, or one of a newer schema, is refused unchanged.
        conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| {
            r.get::<_, i64>(0)
        })
        .map_err(why)?;
        let supported = supported_version();
        if let Some(found) = recorded_version(&conn).map_err(why)?
            && found > supported
        {
            return Err(Error::StoreSchemaNewer {
                store: shown.to_owned(),
                found,
                supported,
            });
        }
        if let Some(foreign) = foreign_tables(&conn).map_err(why)? {
            return Err(open_error(
                shown,
                format!(
                    "it is not the mock's store: it holds other tables ({foreign}) and no schema history of the mock's; the file was left as it is"
                ),
            ));
        }
        super::start_lock::write_lock_free(&conn).map_err(|r| open_error(shown, r))?;
        configure(&conn, durability).map_err(why)?;
        migrations::migrations::runner()
            .set_migration_table_name(SCHEMA_TABLE)
            .run(&mut conn)
            .map_err(|e| {
                open_error(
                    shown,
                    format!(
                        "cannot bring its schema up to date: {}",
                        migration_error(&e)
                    ),
                )
            })?;
        let offset: i64 = conn
            .query_row(
                "SELECT offset_nanos FROM mock_clock WHERE id = 1",
                [],
                |r| r.get(0),
            )
            .map_err(why)?;
        let last_seq = setting(&conn, "journal_last_seq")
            .map_err(why)?
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0);
        let shared = Arc::new(load_view(&conn, None, replica, offset, last_seq).map_err(why)?);
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, false)
            .map_err(why)?;
        let views = Arc::new(Views::default());
        views.add(&shared);
        let (jobs, receiver) = mpsc::channel(4 * BATCH);
        // The file and its log as opened (the log exists: SQLite keeps it
        // while a connection is open in WAL mode).
        let watch = Arc::new(watch::Watch::new(path));
        let writer_watch = Arc::clone(&watch);
        let writer = std::thread::Builder::new()
            .name("sqlite-writer".to_owned())
            .spawn(move || Writer::new(&conn, writer_watch).run(receiver))
            .map_err(|e| open_error(shown, format!("cannot start its writer: {e}")))?;
        let flusher = {
            let (views, jobs) = (Arc::clone(&views), jobs.clone());
            std::thread::Builder::new()
                .name("sqlite-journal".to_owned())
                .spawn(move || flush_journal(&views, &jobs))
                .map_err(|e| open_error(shown, format!("cannot start its journal writer: {e}")))?
        };
        let reader = open_reader(path).map_err(why)?;
        let file = Opened {
            shown: shown.to_owned(),
            path: path.to_owned(),
            replica: replica.to_owned(),
            jobs,
            readers: Mutex::new(vec![reader]),
            views,
            writer: Some(writer),
            flusher: Some(flusher),
            _owner: owner,
            watch,
            counts: crate::metrics::StoreCounts::new(crate::metrics::Backend::Sqlite),
            unreserved: AtomicBool::new(false),
        };
        Ok(Self {
            file: Arc::new(file),
            shared,
        })
    }
}

/// The view of the sandbox `sandbox` (`None`: the root) as the file holds
/// it: its transaction count and the last [`CAPACITY`] entries of its
/// journal, its clock at `offset`, its journal numbered on from
/// `last_seq` (the numbers the file reserved, [`JOURNAL_AHEAD`]).
pub(super) fn load_view(
    conn: &Connection,
    sandbox: Option<Uuid>,
    replica: &str,
    offset: i64,
    last_seq: u64,
) -> rusqlite::Result<Shared> {
    let shared = Shared::new(sandbox, replica, offset, 0);
    let count: i64 = conn.query_row(
        "SELECT count(*) FROM mock_transactions WHERE sandbox = ?1",
        [&shared.key],
        |r| r.get(0),
    )?;
    shared
        .count
        .store(usize::try_from(count).unwrap_or(0), Ordering::SeqCst);
    let mut statement = conn.prepare_cached(&format!(
        "SELECT {JOURNAL_COLUMNS}, {SQLITE_JOURNAL_EXTRA} FROM mock_journal WHERE sandbox = ?1 ORDER BY seq DESC LIMIT {CAPACITY}"
    ))?;
    let mut kept: Vec<JournalEntry> = statement
        .query_map([&shared.key], journal_entry_of)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    kept.reverse();
    shared.journal.restore(&kept, last_seq);
    let last = shared.journal.last_seq();
    shared.journal_written.store(last, Ordering::SeqCst);
    // What the file holds is reserved: a restart after a `kill -9` numbers
    // on after the reservation, past every number shown before it.
    shared.writer_reserved.store(last, Ordering::SeqCst);
    shared.journal_reserved.store(last, Ordering::SeqCst);
    Ok(shared)
}
