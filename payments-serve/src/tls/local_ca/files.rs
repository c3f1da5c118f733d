//! The files of a local CA's directory: one process at a time makes or
//! reuses them (a lock file), and each is written whole or not at all (a
//! temporary file in the same directory, synced, renamed over).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::tls::TlsError;

#[cfg(test)]
mod tests;

/// The lock file, `DIR/.lock`: there while a process makes or reuses the
/// directory's files, removed after.
const LOCK: &str = ".lock";

/// A lock older than this is taken over: its process was killed while it
/// made the files (which takes well under a second).
pub(super) const STALE_AFTER: Duration = Duration::from_secs(30);

/// How often a process waiting for the lock looks again.
const POLL: Duration = Duration::from_millis(20);

/// Set once a stop came ([`crate::tls::stop_waiting`]): a wait for a lock
/// ends at its next look.
static GIVE_UP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Ends every wait for a directory's lock in this process, now and later.
pub(in crate::tls) fn give_up() {
    GIVE_UP.store(true, std::sync::atomic::Ordering::SeqCst);
}

/// The exclusive right to make or reuse the files of one directory, until
/// dropped. Every process starting with `--tls-self-signed DIR` at once
/// takes it in turn: the first makes the CA, the others reuse it.
pub(super) struct DirLock {
    path: PathBuf,
    file: std::fs::File,
}

/// What taking the lock of a directory gave.
pub(super) enum Taken {
    /// The lock: the files may be made, mended and written.
    Held(DirLock),
    /// The directory cannot be written (a read-only file system, as a
    /// Kubernetes secret volume; a directory of another user): no lock is
    /// needed to read its files, and none can be written. Why, as the
    /// system said.
    ReadOnly(std::io::Error),
}

/// Whether `e` says the directory cannot be written at all (rather than
/// that this write failed): a read-only file system, no permission.
pub(super) fn cannot_write(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::ReadOnlyFilesystem | std::io::ErrorKind::PermissionDenied
    )
}

impl DirLock {
    /// Takes the lock of `dir` (which exists), waiting while another
    /// process holds it (said once, as a warning of the log); a lock left
    /// [`STALE_AFTER`] ago by a process that died holding it is taken
    /// over. A directory that cannot be written is [`Taken::ReadOnly`].
    /// A `.lock` that is no regular file (a directory, a symbolic link)
    /// is no process's lock, and never goes away by itself: refused at
    /// once, asking for it to be removed.
    pub(super) fn take(dir: &Path) -> Result<Taken, TlsError> {
        Self::take_with(dir, |path| {
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)
        })
    }

    /// [`DirLock::take`], the lock file made by `create` (a test's stands
    /// for a file system that refuses).
    pub(super) fn take_with(
        dir: &Path,
        create: impl Fn(&Path) -> std::io::Result<std::fs::File>,
    ) -> Result<Taken, TlsError> {
        let path = dir.join(LOCK);
        let mut said = false;
        loop {
            match create(&path) {
                Ok(file) => return Ok(Taken::Held(Self { path, file })),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    // Not followed: a link is no lock, whatever it names.
                    let held = match std::fs::symlink_metadata(&path) {
                        Ok(held) => held,
                        // Gone since: its process has finished.
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                        Err(source) => return Err(TlsError::Write { path, source }),
                    };
                    if !held.is_file() {
                        return Err(not_a_lock(path, &held));
                    }
                    let age = age(&held);
                    if age > STALE_AFTER {
                        match take_over(&path, &held, age)? {
                            TakenOver::Removed => continue,
                            TakenOver::Another => {}
                            // Left in a directory that has since become
                            // read-only: no one can be writing there.
                            TakenOver::ReadOnly(e) => return Ok(Taken::ReadOnly(e)),
                        }
                    } else if !said {
                        said = true;
                        tracing::warn!(
                            lock = %path.display(),
                            held_secs = age.as_secs(),
                            "waiting for {}, held for {} s by another process starting on this directory; taken over after {} s (a lock its process left when killed)",
                            path.display(),
                            age.as_secs(),
                            STALE_AFTER.as_secs()
                        );
                    }
                    // A stop ends the wait, the files unwritten (the
                    // stop's handler then says the start was stopped).
                    if GIVE_UP.load(std::sync::atomic::Ordering::SeqCst) {
                        return Err(TlsError::Stopped { lock: path });
                    }
                    // Every retry waits: never a busy loop.
                    std::thread::sleep(POLL);
                }
                Err(e) if cannot_write(&e) => return Ok(Taken::ReadOnly(e)),
                Err(source) => return Err(TlsError::Write { path, source }),
            }
        }
    }
}

impl Drop for DirLock {
    fn drop(&mut self) {
        // Only this lock: one taken over from this process (it would have
        // been stalled for half a minute) is another's now.
        if self
            .file
            .metadata()
            .is_ok_and(|held| same_file(&self.path, &held))
        {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// How long ago the lock `held` was made (its modification time); none
/// for one made in the future (a clock set back).
fn age(held: &std::fs::Metadata) -> Duration {
    held.modified()
        .ok()
        .and_then(|made| SystemTime::now().duration_since(made).ok())
        .unwrap_or_default()
}

/// What taking over a stale lock did.
enum TakenOver {
    /// Removed (or gone meanwhile): the lock may be made again at once.
    Removed,
    /// Not the lock judged stale any more: another process took it over
    /// and made a new one since, which is waited for.
    Another,
    /// The directory refused the removal: it cannot be written.
    ReadOnly(std::io::Error),
}

/// Removes the stale lock at `path`, `held` as judged stale, `age` old,
/// saying so; only that lock ([`TakenOver`]).
fn take_over(path: &Path, held: &std::fs::Metadata, age: Duration) -> Result<TakenOver, TlsError> {
    if !same_file(path, held) {
        return Ok(TakenOver::Another);
    }
    match std::fs::remove_file(path) {
        Ok(()) => {
            tracing::warn!(
                lock = %path.display(),
                held_secs = age.as_secs(),
                "took over {}, left {} s ago by a process that did not finish (killed while it made the files)",
                path.display(),
                age.as_secs()
            );
            Ok(TakenOver::Removed)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(TakenOver::Removed),
        Err(e) if cannot_write(&e) => Ok(TakenOver::ReadOnly(e)),
        Err(source) => Err(TlsError::Write {
            path: path.to_owned(),
            source,
        }),
    }
}

/// The error for a `.lock` at `path` that is no regular file (`held`):
/// what it is, and that it is to be removed.
fn not_a_lock(path: PathBuf, held: &std::fs::Metadata) -> TlsError {
    let kind = held.file_type();
    let what = if kind.is_dir() {
        "a directory"
    } else if kind.is_symlink() {
        "a symbolic link"
    } else {
        "no regular file"
    };
    TlsError::Write {
        path,
        source: std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            format!(
                "it is {what}, not the lock file processes starting on this directory take turns with; remove it"
            ),
        ),
    }
}

/// Whether the file at `path` is the one `meta` was read from.
fn same_file(path: &Path, meta: &std::fs::Metadata) -> bool {
    let Ok(now) = std::fs::metadata(path) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        now.dev() == meta.dev() && now.ino() == meta.ino()
    }
    #[cfg(not(unix))]
    {
        now.modified().ok() == meta.modified().ok()
    }
}

/// The temporary file `path` is written to before it is renamed over it:
/// `DIR/.NAME.tmp`. Under the directory's lock, one writer at a time.
pub(super) fn temporary(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.tmp"))
}

/// Writes `bytes` to [`temporary`]`(path)`, synced to the disk: created
/// anew, with mode 0600 from the start for a key (`secret`), so no other
/// user can read it even for a moment. On failure nothing is left.
pub(super) fn write_temporary(
    path: &Path,
    bytes: &[u8],
    secret: bool,
) -> Result<PathBuf, TlsError> {
    let temp = temporary(path);
    let error = |source| TlsError::Write {
        path: path.to_owned(),
        source,
    };
    // One left by a process killed while it wrote: its mode may not be
    // 0600, so it is never written into.
    match std::fs::remove_file(&temp) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(error(e)),
        _ => {}
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    if secret {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    #[cfg(not(unix))]
    let _ = secret;
    let written = options.open(&temp).and_then(|mut file| {
        file.write_all(bytes)?;
        file.sync_all()
    });
    if let Err(e) = written {
        let _ = std::fs::remove_file(&temp);
        return Err(error(e));
    }
    Ok(temp)
}

/// Renames the written `temp` over `path`; on failure `temp` is removed.
pub(super) fn put_in_place(temp: &Path, path: &Path) -> Result<(), TlsError> {
    std::fs::rename(temp, path).map_err(|source| {
        let _ = std::fs::remove_file(temp);
        TlsError::Write {
            path: path.to_owned(),
            source,
        }
    })
}

/// Writes `bytes` to `path` whole or not at all: a write that fails (a
/// full disk) leaves the file as it was, and no temporary file.
pub(super) fn write_whole(path: &Path, bytes: &[u8], secret: bool) -> Result<(), TlsError> {
    let temp = write_temporary(path, bytes, secret)?;
    put_in_place(&temp, path)?;
    sync_dir(path);
    Ok(())
}

/// Syncs the directory of `path`, so a rename survives a power cut. Best
/// effort: not every system opens a directory as a file.
pub(super) fn sync_dir(path: &Path) {
    if let Some(dir) = path.parent()
        && let Ok(dir) = std::fs::File::open(dir)
    {
        let _ = dir.sync_all();
    }
}
