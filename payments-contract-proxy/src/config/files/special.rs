//! The files written in place, not replaced: a character device
//! (`/dev/null`, `/dev/stdout`) and a FIFO. Opening a FIFO for writing
//! waits until a process reads it, without end, and before the proxy
//! takes its signals: it is opened without waiting (`O_NONBLOCK`), and
//! one no process reads is an error, never a hang. A block device (a
//! disk) and a socket are refused. The same for every output: the files
//! written whole (`--junit`, `--sarif`) and the ones appended to
//! (`--report`, `--record`).

use std::fs::{File, Metadata, OpenOptions};
use std::io;
use std::path::Path;

/// `O_NONBLOCK` of `open(2)` (libc's, per platform); none off Unix, where
/// a FIFO is refused (it could only be opened by waiting).
#[cfg(unix)]
const NONBLOCK: Option<i32> = Some(libc::O_NONBLOCK);
#[cfg(not(unix))]
const NONBLOCK: Option<i32> = None;

/// `ENXIO`: a FIFO opened for writing without waiting, that no process
/// reads.
#[cfg(unix)]
const ENXIO: i32 = libc::ENXIO;

/// Whether `meta` is a FIFO's.
pub(super) fn is_fifo(meta: &Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        meta.file_type().is_fifo()
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        false
    }
}

/// Whether `meta` is a stream's, written in place and keeping nothing:
/// a character device (`/dev/null`, a terminal) or a FIFO (a pipe).
pub(super) fn is_stream(meta: &Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        meta.file_type().is_char_device() || meta.file_type().is_fifo()
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        false
    }
}

/// Opens `path` to append to, created when it is not there, never
/// waiting: with `O_NONBLOCK` on Unix, which a regular file ignores, so
/// a FIFO put at `path` after it was looked at is no wait either (no
/// reader: `ENXIO` at once).
pub(super) fn append_without_waiting(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    if let Some(nonblock) = NONBLOCK {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.custom_flags(nonblock);
    }
    options.open(path)
}

/// A FIFO at the start: not opened (opening it would end the wait of a
/// process reading it, which then reads nothing at the end), only
/// refused where it could not be opened at the end without waiting.
pub(super) fn fifo_at_start() -> io::Result<()> {
    NONBLOCK.map(drop).ok_or_else(fifo_refused)
}

/// Why a FIFO is refused where it cannot be opened without waiting.
fn fifo_refused() -> io::Error {
    io::Error::other(
        "it is a FIFO, which cannot be opened here without waiting for a reader; give a file",
    )
}

/// Opens `path` (neither a file nor a directory, as `meta` says) for
/// writing in place: a character device as it is; a FIFO only when a
/// process reads it, never waiting for one; a block device or a socket
/// refused.
pub(super) fn open(path: &Path, meta: &Metadata) -> io::Result<File> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        let kind = meta.file_type();
        if kind.is_block_device() {
            return Err(io::Error::other(
                "it is a block device (a disk), which would be overwritten; give a file",
            ));
        }
        if kind.is_socket() {
            return Err(io::Error::other("it is a socket; give a file"));
        }
        if kind.is_fifo() {
            return open_fifo(path);
        }
    }
    #[cfg(not(unix))]
    let _ = meta;
    OpenOptions::new().write(true).open(path)
}

/// A FIFO opened for writing when a process reads it: first without
/// waiting (no reader: an error at once), then as usual, which with a
/// reader there does not wait either, for writes that wait for the
/// reader rather than fail when the pipe is full.
#[cfg(unix)]
fn open_fifo(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let nonblock = NONBLOCK.ok_or_else(fifo_refused)?;
    let probe = OpenOptions::new()
        .write(true)
        .custom_flags(nonblock)
        .open(path)
        .map_err(|e| {
            if e.raw_os_error() == Some(ENXIO) {
                io::Error::other("it is a FIFO that no process reads (nothing waits for one)")
            } else {
                e
            }
        })?;
    // Held open until the second is: the reader's end sees no writer leave.
    let file = OpenOptions::new().write(true).open(path);
    drop(probe);
    file
}
