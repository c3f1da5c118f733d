//! `payments`: initiate, confirm and look up payment transactions from a
//! terminal or a script (COMMANDS.md is the specification).
//!
//! # Layout
//!
//! - `cli`: the clap types, i.e. the raw command line.
//! - `config`: the config file, profiles, and the one conversion of raw
//!   global options into validated `Settings`.
//! - `amount`: major/minor amount parsing with the currency's exponent.
//! - `commands`: one module per command; each builds the request, calls the
//!   client and prints.
//! - `output`: renders tables to strings.
//! - `exit`: the documented exit codes; `error`: the CLI error (and the
//!   config file's) and its one mapping to them.
//! - `usage`: usage errors said with flags, values quoted at most 200 bytes.

mod amount;
mod cli;
mod commands;
mod config;
mod error;
mod exit;
mod output;
mod secrets;
mod text;
mod usage;

use std::{io::Write as _, process::ExitCode};

use clap::CommandFactory as _;

use crate::{cli::Cli, error::CliError, exit::Exit};

/// mimalloc instead of the system allocator: a look-up allocates and frees
/// dozens of small blocks, and glibc's malloc/free were a fifth of the
/// instructions of `status --from-file` (BENCHMARKS.md, item 5).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The exit code when stdout's reader went away: 128 + SIGPIPE (13), what
/// a shell reports for a program that signal stopped.
const BROKEN_PIPE: u8 = 141;

fn main() -> ExitCode {
    // First, before anything opens a file: see `stdout_closed`.
    let stdout_closed = stdout_closed();
    commands::note_stdin_closed(stdin_closed());
    let cli = match cli::environment::parse() {
        Ok(cli) => cli,
        Err(err) => {
            // Help and version go to stdout and exit 0; real errors exit 2.
            let exit = if err.use_stderr() {
                Exit::Usage
            } else if stdout_closed {
                return closed_stdout();
            } else {
                Exit::Ok
            };
            // A bad value is said with its flag, quoted at most 200 bytes;
            // other errors (missing arguments, help) as clap writes them.
            // Nothing useful is left to do if the terminal is gone.
            match usage::clap_error_line(&err, &Cli::command()).filter(|_| err.use_stderr()) {
                Some(line) => {
                    let _ = writeln!(std::io::stderr().lock(), "error: {line}");
                }
                None if err.use_stderr() => {
                    let _ = err.print();
                }
                // Help and version are the output: one that cannot be
                // written is said as any command's is (`> /dev/full`: 4;
                // a reader gone: 141), not exit 0 with nothing written.
                None => {
                    let written = err
                        .print()
                        .and_then(|()| std::io::stdout().lock().flush())
                        .map_err(CliError::Output);
                    if let Err(err) = written {
                        if err.is_broken_pipe() {
                            return ExitCode::from(BROKEN_PIPE);
                        }
                        report(&err);
                        return err.exit_code().into();
                    }
                }
            }
            return exit.into();
        }
    };
    if stdout_closed {
        return closed_stdout();
    }
    match commands::run(cli) {
        Ok(exit) => exit.into(),
        // The reader went away (`| head`): stop quietly, with the code a
        // shell gives a program stopped by SIGPIPE, never 0: the run did
        // not finish, so it has no verdict to give (a `reconcile | head -1`
        // with every row missing exited 0).
        Err(err) if err.is_broken_pipe() => ExitCode::from(BROKEN_PIPE),
        Err(err) => {
            report(&err);
            err.exit_code().into()
        }
    }
}

/// Whether stdout was closed when the process started (`payments status
/// ID >&-`): every command writes its results there, and none would be
/// read.
///
/// Rust's runtime opens `/dev/null` for reading and writing on a standard
/// descriptor closed at start-up (so that no file opened later takes its
/// number and gets the output), where every write succeeds and is lost:
/// `>&-` exited 0 with everything lost, unlike `> /dev/full` (exit 4). So a
/// stdout that is that (`/dev/null`, readable: a shell's `> /dev/null` is
/// write-only) is taken as closed, or one that is closed still. Except when
/// stdin and stderr are such a `/dev/null` too: a daemon's way of
/// discarding all three (daemon(3), start-stop-daemon), which asks for the
/// exit code only, and where nothing could be said anyway.
fn stdout_closed() -> bool {
    use std::os::fd::AsFd as _;
    replaced(std::io::stdout().as_fd().try_clone_to_owned()) && !daemon()
}

/// Whether stdin was closed when the process started (`payments status
/// --from-file - <&-`), told as [`stdout_closed`] tells stdout: it read as
/// empty, and the run said the input had nothing to look up.
fn stdin_closed() -> bool {
    use std::os::fd::AsFd as _;
    replaced(std::io::stdin().as_fd().try_clone_to_owned()) && !daemon()
}

/// A daemon's three standard descriptors, each `/dev/null` read-write.
fn daemon() -> bool {
    use std::os::fd::AsFd as _;
    replaced(std::io::stdin().as_fd().try_clone_to_owned())
        && replaced(std::io::stdout().as_fd().try_clone_to_owned())
        && replaced(std::io::stderr().as_fd().try_clone_to_owned())
}

/// Whether a standard descriptor is closed, or is the `/dev/null` Rust's
/// runtime put in place of a closed one.
fn replaced(fd: Result<std::os::fd::OwnedFd, std::io::Error>) -> bool {
    match fd {
        Ok(fd) => null_read_write(std::fs::File::from(fd)),
        Err(err) => err.raw_os_error() == Some(EBADF),
    }
}

/// `errno` of a descriptor that is not open (the same on Linux and the BSDs).
const EBADF: i32 = 9;

/// Whether `file` is `/dev/null` opened for reading and writing (it is
/// read and written only once known to be `/dev/null`, where that takes
/// and leaves nothing).
fn null_read_write(mut file: std::fs::File) -> bool {
    use std::{
        io::{Read as _, Write as _},
        os::unix::fs::{FileTypeExt as _, MetadataExt as _},
    };
    let (Ok(it), Ok(null)) = (file.metadata(), std::fs::metadata("/dev/null")) else {
        return false;
    };
    it.file_type().is_char_device()
        && it.rdev() == null.rdev()
        && file.read(&mut [0; 1]).is_ok()
        && file.write(&[0]).is_ok()
}

/// Said when stdout is closed: as for one that cannot be written (`>
/// /dev/full`), exit 4.
fn closed_stdout() -> ExitCode {
    let err = CliError::Output(std::io::Error::other("stdout is closed"));
    report(&err);
    err.exit_code().into()
}

/// Prints the error once: the envelope on stdout for scripts reading json is
/// the command's job; here it is one line on stderr.
fn report(err: &CliError) {
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "error: {}", secrets::hide(&err.to_string()));
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
        assert!(
            null_read_write(open(true, true)),
            "as Rust's runtime opens it"
        );
        assert!(
            !null_read_write(open(false, true)),
            "as `> /dev/null` opens it"
        );
        assert!(
            !null_read_write(open(true, false)),
            "as `< /dev/null` opens it"
        );
        let file = tempfile::tempfile().expect("a temporary file");
        assert!(!null_read_write(file), "a file");
    }
}
