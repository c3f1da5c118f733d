//! The binaries' standard output and error, written without a panic
//! (`print!` panics on a stdout that cannot be written: `> /dev/full`, a
//! reader gone). Stdout carries a result (the proxy's banner, `check`'s
//! summary): one that cannot be written is said on stderr and exits 2,
//! as a file that cannot be written does. Stderr carries what is said
//! beside it: one that cannot be written is not waited for, its lines
//! are lost, and the exit code is the run's.

use std::io::{self, Write as _};

use payments_serve::logging::LogFormat;

/// Writes `text` to stdout, flushed.
///
/// # Errors
///
/// What the write met.
pub(super) fn to_stdout(text: &str) -> io::Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()
}

/// Writes `text` to stderr; a stderr that cannot be written loses it.
pub(super) fn to_stderr(text: &str) {
    let _ = io::stderr().lock().write_all(text.as_bytes());
}

/// An error that stops the run: `error: MESSAGE` on stderr (as text), or
/// an `ERROR` event (`--log-format json`).
pub(super) fn say_error(format: LogFormat, message: &str) {
    match format {
        LogFormat::Text => to_stderr(&format!("error: {message}\n")),
        LogFormat::Json => payments_serve::cli::say_error(format, message),
    }
}

/// What is said of a stdout that cannot be written.
pub(super) fn unwritable_output(e: &io::Error) -> String {
    format!("cannot write the output: {e}")
}

/// Whether stdout was closed when the process started (`check FILE
/// >&-`): Rust's runtime puts `/dev/null`, opened for reading and
/// writing, in place of a closed standard descriptor, where every write
/// succeeds and is lost; a shell's `> /dev/null` is opened for writing
/// only. Not when stdin and stderr are such a `/dev/null` too: a
/// daemon's way of discarding all three, which asks for the exit code
/// only (the `payments` CLI tells a closed stdout so).
pub(super) fn stdout_closed() -> bool {
    use std::os::fd::AsFd as _;
    let replaced = |fd: io::Result<std::os::fd::OwnedFd>| match fd {
        Ok(fd) => null_read_write(std::fs::File::from(fd)),
        Err(e) => e.raw_os_error() == Some(EBADF),
    };
    let out = replaced(io::stdout().as_fd().try_clone_to_owned());
    out && !(replaced(io::stdin().as_fd().try_clone_to_owned())
        && replaced(io::stderr().as_fd().try_clone_to_owned()))
}

/// `errno` of a descriptor that is not open (the same on Linux and the
/// BSDs).
const EBADF: i32 = 9;

/// Whether `file` is `/dev/null` opened for reading and writing (read and
/// written only once known to be `/dev/null`, where that takes and leaves
/// nothing).
fn null_read_write(mut file: std::fs::File) -> bool {
    use std::io::Read as _;
    use std::os::unix::fs::{FileTypeExt as _, MetadataExt as _};
    let (Ok(it), Ok(null)) = (file.metadata(), std::fs::metadata("/dev/null")) else {
        return false;
    };
    it.file_type().is_char_device()
        && it.rdev() == null.rdev()
        && file.read(&mut [0; 1]).is_ok()
        && file.write(&[0]).is_ok()
}

#[cfg(test)]
mod tests {
    use std::fs::OpenOptions;

    use super::null_read_write;

    #[test]
    fn only_dev_null_open_for_reading_too_is_a_stdout_put_in_place() {
        let open = |read, write| {
            OpenOptions::new()
                .read(read)
                .write(write)
                .open("/dev/null")
                .expect("/dev/null opens")
        };
        assert!(null_read_write(open(true, true)), "as the runtime opens it");
        assert!(!null_read_write(open(false, true)), "as `> /dev/null` does");
        assert!(!null_read_write(open(true, false)), "as `< /dev/null` does");
        let file = tempfile::tempfile().expect("a temporary file");
        assert!(!null_read_write(file), "a file");
    }
}
