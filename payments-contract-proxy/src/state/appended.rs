//! The files a run appends a line per exchange to (`--report`,
//! `--record`): each line written whole or counted as lost. A line that
//! could not be written (a full disk, a file size limit, `/dev/full`) is
//! logged and counted, and the stop says how many the file lacks (the
//! binary then exits 2); one written in part leaves a torn line, and the
//! next starts on a new line, as the first of a run does after a file
//! whose last line is torn, so a torn line never swallows a whole one.

use std::fs::File;
use std::io::{self, Read as _, Seek as _, SeekFrom, Write as _};
use std::path::{Path, PathBuf};

use crate::Error;
use crate::config::files;

/// One appended file.
#[derive(Debug)]
pub(crate) struct Appended {
    file: File,
    path: PathBuf,
    /// `report` or `recording`, for the log.
    what: &'static str,
    /// The file ends inside a line: the next line starts with a newline.
    torn: bool,
    /// Lines that could not be written whole.
    lost: u64,
    /// The line being written (its room kept from one line to the next).
    line: Vec<u8>,
}

impl Appended {
    /// Opens `path` to append to (created when it does not exist), noting
    /// whether its last line is torn; never waiting, by the rule of every
    /// output ([`files::open_append`]: a FIFO no process reads, a socket
    /// or a block device is an error at once).
    pub(crate) fn open(path: &Path, what: &'static str) -> Result<Self, Error> {
        let file = files::open_append(path).map_err(|e| {
            Error::File(format!(
                "cannot open the {what} file {}: {e}",
                path.display()
            ))
        })?;
        Ok(Self {
            torn: ends_inside_a_line(&file, path),
            file,
            path: path.to_owned(),
            what,
            lost: 0,
            line: Vec::new(),
        })
    }

    /// Appends `value` as a line of JSON; one that cannot be written is
    /// logged and counted.
    pub(crate) fn write(&mut self, value: &impl serde::Serialize) {
        self.line.clear();
        if self.torn {
            self.line.push(b'\n');
        }
        let made = serde_json::to_writer(&mut self.line, value).map_err(io::Error::other);
        self.line.push(b'\n');
        let (written, result) = match made {
            Ok(()) => write_counted(&mut self.file, &self.line),
            Err(e) => (0, Err(e)),
        };
        if written > 0 {
            self.torn = self.line[written - 1] != b'\n';
        }
        if let Err(e) = result {
            self.lost += 1;
            tracing::warn!(
                path = %self.path.display(),
                error = %e,
                "the {what} could not be written to {}: {e}",
                self.path.display(),
                what = self.what
            );
        }
    }

    /// The file and how many lines it lacks, when it lacks any.
    pub(crate) fn lacking(&self) -> Option<(PathBuf, u64)> {
        (self.lost > 0).then(|| (self.path.clone(), self.lost))
    }
}

/// Writes all of `bytes` to `file`: how many were written, and the error
/// that stopped it.
fn write_counted(file: &mut File, bytes: &[u8]) -> (usize, io::Result<()>) {
    let mut written = 0;
    while written < bytes.len() {
        match file.write(&bytes[written..]) {
            Ok(0) => return (written, Err(io::ErrorKind::WriteZero.into())),
            Ok(n) => written += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return (written, Err(e)),
        }
    }
    (written, Ok(()))
}

/// Whether the file `file` opened (a regular one, not empty) ends
/// without a newline: an earlier run's last line torn. Read through
/// `path` (`file` is open to append only); what cannot be read is taken
/// as whole.
fn ends_inside_a_line(file: &File, path: &Path) -> bool {
    let Ok(meta) = file.metadata() else {
        return false;
    };
    if !meta.is_file() || meta.len() == 0 {
        return false;
    }
    let last = File::open(path).and_then(|mut read| {
        read.seek(SeekFrom::End(-1))?;
        let mut byte = [0; 1];
        read.read_exact(&mut byte)?;
        Ok(byte[0])
    });
    last.is_ok_and(|byte| byte != b'\n')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_torn_last_line_is_ended_before_the_next_and_a_whole_one_is_not() {
        let dir = tempfile::tempdir().expect("a directory");
        let path = dir.path().join("rec.jsonl");
        std::fs::write(&path, "{\"seq\":1}\n{\"seq\":2,\"tor").expect("written");
        let mut appended = Appended::open(&path, "recording").expect("opened");
        appended.write(&serde_json::json!({"seq": 1}));
        appended.write(&serde_json::json!({"seq": 2}));
        assert_eq!(appended.lacking(), None);
        let text = std::fs::read_to_string(&path).expect("read");
        assert_eq!(
            text,
            "{\"seq\":1}\n{\"seq\":2,\"tor\n{\"seq\":1}\n{\"seq\":2}\n"
        );
        drop(appended);
        let mut again = Appended::open(&path, "recording").expect("opened");
        again.write(&serde_json::json!({"seq": 3}));
        let text = std::fs::read_to_string(&path).expect("read");
        assert!(text.ends_with("{\"seq\":2}\n{\"seq\":3}\n"), "{text}");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_line_that_cannot_be_written_is_counted() {
        let mut full = Appended::open(Path::new("/dev/full"), "report").expect("opened");
        full.write(&serde_json::json!({"seq": 1}));
        full.write(&serde_json::json!({"seq": 2}));
        assert_eq!(full.lacking(), Some((PathBuf::from("/dev/full"), 2)));
    }
}
