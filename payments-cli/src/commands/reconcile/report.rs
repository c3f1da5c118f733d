//! `--report FILE`: the rows as CSV, whatever `-o` says.
//!
//! FILE is only ever a complete report: the rows go to `FILE.partial`,
//! which takes FILE's place (a rename) when the run ends complete. FILE is
//! checked before the first look-up (exit 2): never the ledger (the same
//! device and inode, standard input's file included), and a regular file
//! or none, never a directory (which the rename at the end would fail on,
//! after every look-up), a device, a pipe or a socket, which a rename
//! would replace with a regular file. A symbolic link is followed: the report
//! takes the place of the file it points to (its `.partial` beside that
//! file), and the link stays. An existing FILE's permissions are kept; a
//! new one is made with the umask's, as a shell's `>` makes it.
//!
//! The report is meant to be opened in a spreadsheet: a text cell (the
//! ledger's or the service's) never starts like a formula, and its control
//! characters are escaped as the table shows them ([`inert`]).

use std::{
    fs::{File, Metadata, OpenOptions},
    io::{self, BufWriter, Write as _},
    os::unix::fs::{MetadataExt as _, OpenOptionsExt as _, PermissionsExt as _},
    path::{Path, PathBuf},
};

use super::emit::Judged;
use crate::{error::CliError, text::printable};

/// The most symbolic links followed from FILE (Linux's own limit).
const MAX_LINKS: usize = 40;

/// `--report FILE`: the json lines' content as CSV, one record per row.
#[derive(Debug)]
pub struct Report {
    /// FILE as the command line names it (for messages).
    named: PathBuf,
    /// Where the report goes: FILE, its symbolic links followed.
    path: PathBuf,
    /// Where the rows go until the run is complete: `FILE.partial`.
    partial: PathBuf,
    writer: csv::Writer<BufWriter<File>>,
    /// Whether [`Report::finish`] ran: a report dropped without it (the
    /// run ended by an error, such as a standard output that cannot be
    /// written) says on stderr where its rows are, as a stopped run's does.
    finished: bool,
}

const REPORT_HEADER: [&str; 16] = [
    "line",
    "referenceNo",
    "class",
    "detail",
    "ledgerAmount",
    "ledgerCurrency",
    "ledgerStatus",
    "ledgerTransactionId",
    "serviceTransactionId",
    "serviceStatus",
    "serviceAmount",
    "serviceProductCode",
    "serviceCreatedAt",
    "serviceLastModifiedAt",
    "serviceProviderReference",
    "serviceMessage",
];

impl Report {
    /// Checks `named` (see the module docs) and starts its report in
    /// `FILE.partial` (made anew), header first: FILE itself is only put in
    /// place by [`Report::finish`] (a run stopped by a failure or Ctrl-C
    /// leaves the one before it as it was). `ledger` is the ledger's file,
    /// when it is one.
    ///
    /// # Errors
    ///
    /// FILE is the ledger, or not a regular file; the partial file cannot
    /// be made or written.
    pub fn create(named: &Path, ledger: Option<&Metadata>) -> Result<Self, CliError> {
        let path = follow_links(named).map_err(|err| report_error(named, &err))?;
        let partial = partial_of(&path);
        let is_ledger = |path: &Path| {
            ledger.is_some_and(|ledger| {
                std::fs::metadata(path)
                    .is_ok_and(|file| file.dev() == ledger.dev() && file.ino() == ledger.ino())
            })
        };
        if is_ledger(&path) || is_ledger(&partial) {
            return Err(report_error(
                named,
                &"that is the ledger itself; name another file",
            ));
        }
        let mode = match std::fs::metadata(&path) {
            Ok(file) if file.is_file() => Some(file.permissions().mode() & 0o777),
            Ok(file) if file.is_dir() => {
                return Err(report_error(named, &"it is a directory; name a file"));
            }
            Ok(_) => {
                return Err(report_error(
                    named,
                    &"not a regular file (a device, a pipe or a socket), which the report \
                      would replace; name a file",
                ));
            }
            Err(err) if err.kind() == io::ErrorKind::NotFound => None,
            Err(err) => return Err(report_error(named, &err)),
        };
        // Made anew, never written through: an earlier run's partial file
        // (or a link in its place) goes first.
        match std::fs::remove_file(&partial) {
            Ok(()) => {}
            Err(err) if err.kind() == io::ErrorKind::NotFound => {}
            Err(err) => return Err(report_error(&partial, &err)),
        }
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode.unwrap_or(0o666))
            .open(&partial)
            .map_err(|err| report_error(&partial, &err))?;
        if let Some(mode) = mode {
            // The umask took bits off: FILE's own, exactly.
            file.set_permissions(std::fs::Permissions::from_mode(mode))
                .map_err(|err| report_error(&partial, &err))?;
        }
        let mut writer = csv::Writer::from_writer(BufWriter::new(file));
        writer
            .write_record(REPORT_HEADER)
            .map_err(|err| report_error(&partial, &err))?;
        Ok(Self {
            named: named.to_owned(),
            path,
            partial,
            writer,
            finished: false,
        })
    }

    /// Writes one row.
    ///
    /// # Errors
    ///
    /// The file cannot be written.
    pub fn write(&mut self, row: &Judged) -> Result<(), CliError> {
        let cells = &row.cells;
        let service = row.service.as_deref();
        let text = |value: Option<&str>| value.map(inert).unwrap_or_default();
        // The ledger's amount as written: a plain number stays one (a
        // spreadsheet reads `-1.50` as the number it is), anything else is
        // text like the other cells.
        let ledger_amount = match cells.amount.as_deref() {
            Some(amount) if is_plain_number(amount) => amount.to_owned(),
            other => text(other),
        };
        // The line, the class, the service's amount (a decimal number) and
        // the times are the report's own; every other cell is text from
        // the ledger or the service.
        let record = [
            row.line.to_string(),
            text(cells.reference.as_deref()),
            row.judgement.class.as_str().to_owned(),
            text(row.judgement.detail.as_deref()),
            ledger_amount,
            text(cells.currency.as_deref()),
            text(cells.status.as_deref()),
            text(cells.transaction_id.as_deref()),
            text(service.map(|s| s.transaction_id.as_str())),
            text(service.map(|s| s.status.as_str())),
            service.map(|s| s.amount.to_string()).unwrap_or_default(),
            text(service.map(|s| s.product_code.as_str())),
            service.map(|s| rfc3339(s.created_at)).unwrap_or_default(),
            service
                .and_then(|s| s.last_modified_at)
                .map(rfc3339)
                .unwrap_or_default(),
            text(service.and_then(|s| s.provider_reference.as_deref())),
            text(service.and_then(|s| s.message.as_deref())),
        ];
        self.writer
            .write_record(&record)
            .map_err(|err| report_error(&self.partial, &err))
    }

    /// Writes what is buffered; for a `complete` run, puts the report in
    /// its place (a rename: whole or not at all), else leaves it in
    /// `FILE.partial` and says so on stderr.
    ///
    /// # Errors
    ///
    /// The file cannot be written or put in place.
    pub fn finish(mut self, complete: bool) -> Result<(), CliError> {
        // Its own errors name the file: no note on the way out.
        self.finished = true;
        self.writer
            .flush()
            .map_err(|err| report_error(&self.partial, &err))?;
        if complete {
            std::fs::rename(&self.partial, &self.path)
                .map_err(|err| report_error(&self.named, &err))?;
        } else {
            self.left_partial();
        }
        Ok(())
    }

    /// Says on stderr that the rows judged are in `FILE.partial` and FILE
    /// is as it was. Not eprintln!, which panics when stderr cannot be
    /// written (`2>/dev/full`): the note is lost, the exit code is not.
    fn left_partial(&self) {
        let _ = writeln!(
            std::io::stderr().lock(),
            "the report of the rows judged is in {}: {} is left as it was",
            shown(&self.partial),
            shown(&self.named)
        );
    }
}

impl Drop for Report {
    /// A run that ended by an error before [`Report::finish`] (standard
    /// output that cannot be written, a row the report cannot take) leaves
    /// what it wrote in `FILE.partial`, and says so.
    fn drop(&mut self) {
        if !self.finished {
            let _ = self.writer.flush();
            self.left_partial();
        }
    }
}

/// `path`, its symbolic links followed (a link that points nowhere gives
/// where it points: the report is made there).
fn follow_links(path: &Path) -> io::Result<PathBuf> {
    let mut path = path.to_owned();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&path) {
            Ok(file) if file.file_type().is_symlink() => {
                let target = std::fs::read_link(&path)?;
                // Relative to the link's directory; an absolute target
                // replaces the whole path.
                path = match path.parent() {
                    Some(directory) => directory.join(target),
                    None => target,
                };
            }
            _ => return Ok(path),
        }
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

/// A text cell as a spreadsheet may safely open it (OWASP's CSV injection
/// guidance): control characters and bidirectional controls escaped as the
/// terminal table shows them ([`printable`]), and a leading `'` when it
/// starts with a character a spreadsheet takes as the start of a formula
/// (`=`, `+`, `-`, `@`, a tab, a carriage return), so that
/// `=HYPERLINK(...)` from the service is shown, never run.
fn inert(text: &str) -> String {
    let shown = printable(text);
    if shown.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{shown}")
    } else {
        shown
    }
}

/// Whether `text` is a decimal number and nothing else: an optional `-`,
/// digits, and a `.` with digits after it.
fn is_plain_number(text: &str) -> bool {
    let digits = |part: &str| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit());
    let unsigned = text.strip_prefix('-').unwrap_or(text);
    match unsigned.split_once('.') {
        Some((whole, fraction)) => digits(whole) && digits(fraction),
        None => digits(unsigned),
    }
}

fn rfc3339(at: chrono::DateTime<chrono::Utc>) -> String {
    at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// `FILE.partial`, beside `FILE`.
pub fn partial_of(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".partial");
    PathBuf::from(name)
}

/// A path as a message shows it: printable, at most 200 bytes of it (a
/// usage error never repeats more of the value; the ledger's path is shown
/// the same way).
fn shown(path: &Path) -> String {
    crate::text::cut(&path.display().to_string())
}

fn report_error(path: &Path, err: &dyn std::fmt::Display) -> CliError {
    CliError::Usage(format!("--report {}: {err}", shown(path)))
}
