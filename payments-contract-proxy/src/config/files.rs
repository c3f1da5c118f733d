//! The files the proxy and `check` write whole (`--junit`, `--sarif`,
//! CONTRACT section 20): one that is the same file as another flag's
//! (the recording, the report, the other output, `check`'s input) is
//! refused before anything is opened; one is checked at the start without
//! being created or emptied; and each is written at the end into a
//! temporary file beside it, renamed over it, so a reader (a CI step
//! parsing the JUnit) meets the earlier file or the new one, never an
//! empty or half-written one. A path that is a symbolic link is the file
//! it names, also one that does not exist yet: compared, checked and
//! written through the link. A FIFO is written in place, only when a
//! process reads it (never waited for); a block device or a socket is
//! refused. The files appended to (`--report`, `--record`) are opened by
//! the same rule ([`open_append`]). A stream (a character device such as
//! `/dev/null`, a FIFO) may be named by several flags: it keeps nothing
//! one write could replace or mix into a file.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

// Devices and FIFOs: opened in place, a FIFO never waited on.
mod special;

/// A file a flag names: the flag (`--junit`, or what else names it, `the
/// recording`) and its path.
pub(crate) type Named<'a> = (&'a str, &'a Path);

/// Refuses an output (written whole at the end, replacing what the file
/// held) that is the same file as an earlier output or as one of
/// `others` (appended to, or read): compared as the files they are (the
/// same device and inode when both exist; else the paths with their
/// symbolic links resolved), so `./x`, `x`, `dir/../x` and a link to
/// `x` are one file, also when `x` does not exist yet (the link would
/// create it). A stream is no such file ([`same_stored_file`]).
///
/// # Errors
///
/// The two flags and their paths, and what writing would do.
pub(crate) fn refuse_shared(outputs: &[Named<'_>], others: &[Named<'_>]) -> Result<(), String> {
    for (i, &(flag, path)) in outputs.iter().enumerate() {
        for &(other, other_path) in outputs[..i].iter().chain(others) {
            if same_stored_file(path, other_path) {
                return Err(format!(
                    "{flag} {} and {other} {} are the same file: writing {flag} would replace what {other} holds; give each a file of its own",
                    path.display(),
                    other_path.display()
                ));
            }
        }
    }
    Ok(())
}

/// Whether `a` and `b` name one file that keeps what is written to it:
/// [`same_file`], and not a stream (a character device such as
/// `/dev/null` or a terminal's `/dev/stdout`, a FIFO such as a piped
/// `/dev/stdout`), which any number of flags may name: what each writes
/// passes through in turn (two writing at once interleave, the user's
/// choice). `/dev/stdout` redirected to a file is that file.
pub(crate) fn same_stored_file(a: &Path, b: &Path) -> bool {
    same_file(a, b) && !fs::metadata(a).is_ok_and(|meta| special::is_stream(&meta))
}

/// Whether `a` and `b` name one file.
fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    if let (Ok(x), Ok(y)) = (fs::metadata(a), fs::metadata(b)) {
        use std::os::unix::fs::MetadataExt as _;
        return x.dev() == y.dev() && x.ino() == y.ino();
    }
    matches!((resolved(a), resolved(b)), (Some(x), Some(y)) if x == y)
}

/// `path` with its symbolic links resolved: the file's own path when it
/// exists, else the directory of the file a dangling link names (or of
/// `path`) joined with its name, else that path made absolute as written.
fn resolved(path: &Path) -> Option<PathBuf> {
    if let Ok(real) = fs::canonicalize(path) {
        return Some(real);
    }
    let path = followed(path);
    let in_dir = path
        .file_name()
        .and_then(|name| Some(fs::canonicalize(directory(&path)).ok()?.join(name)));
    in_dir.or_else(|| std::path::absolute(&path).ok())
}

/// The most links [`followed`] follows (the kernel's own limit, 40).
const MOST_LINKS: usize = 40;

/// `path` with its symbolic links followed, the last one too when the
/// file it names does not exist yet (`canonicalize` refuses a dangling
/// link): the path a write through the link creates. A relative link is
/// read from its own directory.
fn followed(path: &Path) -> PathBuf {
    let mut current = path.to_owned();
    for _ in 0..MOST_LINKS {
        let is_link = fs::symlink_metadata(&current).is_ok_and(|meta| meta.is_symlink());
        let Some(target) = is_link.then(|| fs::read_link(&current).ok()).flatten() else {
            break;
        };
        // An absolute target replaces the directory when joined.
        current = directory(&current).join(target);
    }
    current
}

/// The directory `path` is in (`.` for a bare name).
fn directory(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

/// Opens `path` to append a line per exchange to (`--report`,
/// `--record`), created when it is not there, never waiting: a character
/// device (`/dev/null`, `/dev/stdout`) as it is; a FIFO only when a
/// process reads it (one no process reads is an error at once, as for
/// `--junit`); a block device or a socket refused, saying so.
///
/// # Errors
///
/// Why it cannot be opened.
pub(crate) fn open_append(path: &Path) -> io::Result<File> {
    if let Ok(meta) = fs::metadata(path)
        && !meta.is_file()
        && !meta.is_dir()
    {
        return special::open(path, &meta);
    }
    let file = special::append_without_waiting(path)?;
    let meta = file.metadata()?;
    if meta.is_file() {
        return Ok(file);
    }
    // Put there since it was looked at: opened again by its kind's rule.
    drop(file);
    special::open(path, &meta)
}

/// Checks that `path` can be written at the end as [`write_whole`] writes
/// it, creating nothing and emptying nothing: it is no directory; an
/// existing file opens for writing (neither truncated nor created) and
/// its directory takes a new file; for a new file (or one a dangling
/// link names), its directory takes one (a probe created there and
/// removed at once). A character device (`/dev/null`, `/dev/stdout`)
/// opens for writing; a FIFO is not opened now (that would end a reader's
/// wait): it is written at the end if a process reads it then; a block
/// device or a socket is refused.
///
/// # Errors
///
/// Why it could not be written.
pub(crate) fn check_writable(path: &Path) -> io::Result<()> {
    match fs::metadata(path) {
        Ok(meta) if meta.is_dir() => Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            "it is a directory",
        )),
        Ok(meta) if meta.is_file() => {
            OpenOptions::new().write(true).open(path)?;
            let real = fs::canonicalize(path)?;
            probe(directory(&real))
        }
        Ok(meta) if special::is_fifo(&meta) => special::fifo_at_start(),
        Ok(meta) => special::open(path, &meta).map(drop),
        Err(e) if e.kind() == io::ErrorKind::NotFound => probe(directory(&followed(path))),
        Err(e) => Err(e),
    }
}

/// Whether `dir` takes a new file: one created there and removed.
fn probe(dir: &Path) -> io::Result<()> {
    let (temporary, file) = temporary_in(dir)?;
    drop(file);
    fs::remove_file(temporary)
}

/// A new file in `dir` under a name no other file has.
fn temporary_in(dir: &Path) -> io::Result<(PathBuf, File)> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let mut taken = None;
    for _ in 0..64 {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!(".payments-evidence-{}-{n}.tmp", std::process::id()));
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(file) => return Ok((path, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => taken = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(taken.unwrap_or_else(|| io::Error::other("no temporary name is free")))
}

/// Writes `path` whole with `write`: into a temporary file in the same
/// directory (the directory of the file a symbolic link names, also one
/// that does not exist yet: the link is kept), synced, then renamed over
/// it, keeping an existing file's permissions. A character device
/// (`/dev/stdout`) or a FIFO a process reads is written in place; a FIFO
/// no process reads is not waited for (an error). On an error the
/// temporary file is removed and `path` is as it was.
///
/// # Errors
///
/// What the write, the sync or the rename met.
pub(crate) fn write_whole(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let existing = fs::metadata(path).ok();
    if let Some(meta) = existing
        .as_ref()
        .filter(|meta| !meta.is_file() && !meta.is_dir())
    {
        let mut out = BufWriter::new(special::open(path, meta)?);
        write(&mut out)?;
        return out.flush();
    }
    let target = match &existing {
        Some(_) => fs::canonicalize(path)?,
        None => followed(path),
    };
    let (temporary, file) = temporary_in(directory(&target))?;
    // A second signal ends the process without unwinding: it removes this.
    let _unfinished = payments_serve::unfinished::Unfinished::new(&temporary);
    let written = (|| {
        if let Some(meta) = &existing {
            file.set_permissions(meta.permissions())?;
        }
        let mut out = BufWriter::new(file);
        write(&mut out)?;
        let file = out.into_inner().map_err(io::IntoInnerError::into_error)?;
        file.sync_all()?;
        drop(file);
        fs::rename(&temporary, &target)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&temporary);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .expect("a directory")
            .map(|e| {
                e.expect("an entry")
                    .file_name()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        names.sort();
        names
    }

    #[test]
    fn one_file_under_two_names_is_refused_naming_both_flags() {
        let dir = tempfile::tempdir().expect("a directory");
        let keep = dir.path().join("keep.jsonl");
        fs::write(&keep, "{}\n").expect("written");
        let dotted = dir.path().join(".").join("keep.jsonl");
        let climbed = dir.path().join("sub").join("..").join("keep.jsonl");
        fs::create_dir(dir.path().join("sub")).expect("a directory");
        let link = dir.path().join("link.jsonl");
        let hard = dir.path().join("hard.jsonl");
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(&keep, &link).expect("a link");
            fs::hard_link(&keep, &hard).expect("a hard link");
        }
        for same in [&keep, &dotted, &climbed, &link, &hard] {
            if !same.exists() {
                continue;
            }
            let refused =
                refuse_shared(&[("--junit", same)], &[("--record", &keep)]).expect_err("refused");
            assert!(
                refused.contains("--junit") && refused.contains("--record"),
                "{refused}"
            );
        }
        // Two outputs that do not exist yet, one written `./x`.
        let new = dir.path().join("same.out");
        let dotted_new = dir.path().join(".").join("same.out");
        let refused = refuse_shared(&[("--junit", &new), ("--sarif", &dotted_new)], &[])
            .expect_err("refused");
        assert!(refused.starts_with("--sarif"), "{refused}");
        assert!(refused.contains("--junit"), "{refused}");
        assert!(!new.exists(), "nothing created");
        let other = dir.path().join("other.out");
        assert!(
            refuse_shared(
                &[("--junit", &new), ("--sarif", &other)],
                &[("--record", &keep)]
            )
            .is_ok()
        );
        assert_eq!(fs::read_to_string(&keep).expect("read"), "{}\n");
    }

    /// A stream keeps nothing a write would replace or mix into a file:
    /// `/dev/null` (or a FIFO) named by every flag is no clash; a file
    /// named by two still is.
    #[cfg(unix)]
    #[test]
    fn a_stream_may_be_named_by_several_flags_and_a_file_may_not() {
        let null = Path::new("/dev/null");
        refuse_shared(
            &[("--junit", null), ("--sarif", null)],
            &[("--record", null), ("--report", null)],
        )
        .expect("a device keeps nothing");
        let dir = tempfile::tempdir().expect("a directory");
        let fifo = dir.path().join("out.fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo runs");
        assert!(made.success());
        assert!(!same_stored_file(&fifo, &fifo));
        refuse_shared(&[("--junit", &fifo), ("--sarif", &fifo)], &[]).expect("a FIFO");
        let file = dir.path().join("out.xml");
        assert!(same_stored_file(&file, &file));
        let refused =
            refuse_shared(&[("--junit", &file), ("--sarif", &file)], &[]).expect_err("one file");
        assert!(refused.contains("same file"), "{refused}");
    }

    /// A link whose file is not there yet is that file: refused beside
    /// it, checked in its directory, written through (the link kept).
    #[cfg(unix)]
    #[test]
    fn a_dangling_link_is_the_file_it_names() {
        let dir = tempfile::tempdir().expect("a directory");
        let record = dir.path().join("contract.jsonl");
        let link = dir.path().join("junit.xml");
        std::os::unix::fs::symlink("contract.jsonl", &link).expect("a link");
        let refused =
            refuse_shared(&[("--junit", &link)], &[("--record", &record)]).expect_err("refused");
        assert!(refused.contains("same file"), "{refused}");
        let elsewhere = dir.path().join("gone").join("x.xml");
        let astray = dir.path().join("astray.xml");
        std::os::unix::fs::symlink(&elsewhere, &astray).expect("a link");
        assert!(
            check_writable(&astray).is_err(),
            "its file's directory is gone"
        );
        check_writable(&link).expect("writable");
        write_whole(&link, |out| out.write_all(b"<testsuites/>")).expect("written");
        assert!(fs::symlink_metadata(&link).expect("meta").is_symlink());
        assert_eq!(fs::read_to_string(&record).expect("read"), "<testsuites/>");
    }

    #[test]
    fn the_check_creates_and_empties_nothing() {
        let dir = tempfile::tempdir().expect("a directory");
        let earlier = dir.path().join("earlier.xml");
        fs::write(&earlier, "<testsuites/>").expect("written");
        check_writable(&earlier).expect("writable");
        check_writable(&dir.path().join("new.xml")).expect("writable");
        assert_eq!(listed(dir.path()), ["earlier.xml"]);
        assert_eq!(fs::read_to_string(&earlier).expect("read"), "<testsuites/>");
        assert!(check_writable(dir.path()).is_err(), "a directory");
        assert!(check_writable(&dir.path().join("gone").join("x.xml")).is_err());
    }

    /// A second signal ends the process in the middle of a write, with no
    /// destructor run: its handler removes the files noted as being
    /// written (`payments_serve::unfinished`). The temporary file is noted
    /// for as long as it is written, and no longer. (Not by calling the
    /// handler's `remove_all` here: it would remove the temporary files of
    /// the other tests writing at the same time.)
    #[test]
    fn a_temporary_file_is_noted_for_a_second_signal_while_written() {
        let dir = tempfile::tempdir().expect("a directory");
        let target = dir.path().join("run.sarif");
        let mut noted = Vec::new();
        write_whole(&target, |out| {
            out.write_all(b"half")?;
            noted = fs::read_dir(dir.path())?
                .map(|e| e.map(|e| e.path()))
                .collect::<io::Result<Vec<_>>>()?
                .into_iter()
                .filter(|path| payments_serve::unfinished::is_pending(path))
                .collect();
            Ok(())
        })
        .expect("written");
        assert_eq!(noted.len(), 1, "{noted:?}");
        assert!(noted[0].to_string_lossy().ends_with(".tmp"), "{noted:?}");
        assert!(!payments_serve::unfinished::is_pending(&noted[0]));
        assert_eq!(listed(dir.path()), ["run.sarif"]);
    }

    #[test]
    fn a_write_that_fails_leaves_the_earlier_file_and_no_temporary() {
        let dir = tempfile::tempdir().expect("a directory");
        let target = dir.path().join("run.xml");
        fs::write(&target, "earlier").expect("written");
        let failed = write_whole(&target, |out| {
            out.write_all(b"half")?;
            Err(io::Error::other("the disk is full"))
        });
        assert!(failed.is_err());
        assert_eq!(fs::read_to_string(&target).expect("read"), "earlier");
        assert_eq!(listed(dir.path()), ["run.xml"]);
        write_whole(&target, |out| out.write_all(b"whole")).expect("written");
        assert_eq!(fs::read_to_string(&target).expect("read"), "whole");
        assert_eq!(listed(dir.path()), ["run.xml"]);
    }

    /// A link's file is replaced, the link kept, and an existing file's
    /// permissions with it.
    #[cfg(unix)]
    #[test]
    fn a_link_is_written_through_and_permissions_are_kept() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().expect("a directory");
        let real = dir.path().join("real.sarif");
        fs::write(&real, "earlier").expect("written");
        fs::set_permissions(&real, fs::Permissions::from_mode(0o640)).expect("chmod");
        let link = dir.path().join("link.sarif");
        std::os::unix::fs::symlink(&real, &link).expect("a link");
        write_whole(&link, |out| out.write_all(b"new")).expect("written");
        assert!(fs::symlink_metadata(&link).expect("meta").is_symlink());
        assert_eq!(fs::read_to_string(&real).expect("read"), "new");
        let mode = fs::metadata(&real).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o640);
    }
}
