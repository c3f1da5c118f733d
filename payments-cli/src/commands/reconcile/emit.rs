//! What reconcile writes: a json line per row and a summary, and the table
//! (the counts, then the rows that are not `match`); the `--report` CSV is
//! `report`'s.
//!
//! Everything is written in ledger order as rows are judged, so memory does
//! not grow with the ledger. The table is the exception that needs the end
//! first (its counts come before the rows): its rows wait in an unnamed
//! temporary file, a few dozen bytes each, and are written at the end with
//! columns as wide as the widest value.

use std::{
    fs::File,
    io::{BufWriter, Seek as _, SeekFrom},
};

use payments_client::PaymentStatus;
use unicode_width::UnicodeWidthStr as _;

use super::{
    judge::{Class, Judgement},
    ledger::Cells,
};
use crate::{error::CliError, output::printable};

/// One judged row.
#[derive(Debug)]
pub struct Judged {
    pub line: u64,
    pub cells: Cells,
    pub judgement: Judgement,
    pub service: Option<Box<PaymentStatus>>,
}

/// Rows per class.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Counts([u64; Class::ALL.len()]);

impl Counts {
    pub fn add(&mut self, class: Class) {
        self.0[class as usize] += 1;
    }

    pub fn get(&self, class: Class) -> u64 {
        self.0[class as usize]
    }

    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }

    /// Whether every row is a `match` (true for none).
    pub fn all_match(&self) -> bool {
        self.total() == self.get(Class::Match)
    }
}

/// `-o json`: one object per row.
pub fn json_line(row: &Judged) -> String {
    #[derive(serde::Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Line<'a> {
        line: u64,
        reference_no: Option<&'a str>,
        class: &'static str,
        detail: Option<&'a str>,
        ledger: Ledger<'a>,
        service: Option<&'a PaymentStatus>,
    }
    #[derive(serde::Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Ledger<'a> {
        amount: Option<&'a str>,
        currency: Option<&'a str>,
        status: Option<&'a str>,
        transaction_id: Option<&'a str>,
    }
    let cells = &row.cells;
    let line = Line {
        line: row.line,
        reference_no: cells.reference.as_deref(),
        class: row.judgement.class.as_str(),
        detail: row.judgement.detail.as_deref(),
        ledger: Ledger {
            amount: cells.amount.as_deref(),
            currency: cells.currency.as_deref(),
            status: cells.status.as_deref(),
            transaction_id: cells.transaction_id.as_deref(),
        },
        service: row.service.as_deref(),
    };
    // Strings and the client's own type: serialising cannot fail.
    serde_json::to_string(&line).unwrap_or_default()
}

/// `-o json`: the last line, the counts (every class, zeros included).
pub fn json_summary(counts: &Counts, default_currency: &str, complete: bool) -> String {
    #[derive(serde::Serialize)]
    struct Line<'a> {
        summary: Summary<'a>,
    }
    // A struct, not a map: the keys keep this order whatever serde_json's
    // features are.
    #[derive(serde::Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Summary<'a> {
        rows: u64,
        r#match: u64,
        missing: u64,
        amount: u64,
        currency: u64,
        status: u64,
        pending: u64,
        duplicate: u64,
        invalid: u64,
        unverified: u64,
        default_currency: &'a str,
        complete: bool,
    }
    let line = Line {
        summary: Summary {
            rows: counts.total(),
            r#match: counts.get(Class::Match),
            missing: counts.get(Class::Missing),
            amount: counts.get(Class::Amount),
            currency: counts.get(Class::Currency),
            status: counts.get(Class::Status),
            pending: counts.get(Class::Pending),
            duplicate: counts.get(Class::Duplicate),
            invalid: counts.get(Class::Invalid),
            unverified: counts.get(Class::Unverified),
            default_currency,
            complete,
        },
    };
    serde_json::to_string(&line).unwrap_or_default()
}

/// The rows of the table that are not `match`, kept in a temporary file
/// until the counts are printed, with the widest value of each column.
#[derive(Debug)]
pub struct Spool {
    writer: csv::Writer<BufWriter<File>>,
    line_width: usize,
    reference_width: usize,
    detail_width: usize,
    rows: u64,
}

/// The longest reference the table shows whole (the longest valid one).
const REFERENCE_SHOWN: usize = 64;
/// The detail column is at least this wide (or as its widest value when
/// narrower); the reference's gives way first.
const MIN_DETAIL_WIDTH: usize = 20;
/// The reference column is never narrower than its header.
const REFERENCE_HEADER: &str = "REFERENCE";
/// A row as a block: its values after labels this wide and two spaces.
const BLOCK_LABEL_WIDTH: usize = REFERENCE_HEADER.len();
/// A value of a block wraps at no fewer columns than this, however narrow
/// the terminal.
const MIN_BLOCK_VALUE: usize = 10;
/// Said after the counts of a run that stopped.
const INCOMPLETE: &str =
    "incomplete: the run stopped before the end of the ledger (stderr says where)";

impl Spool {
    /// # Errors
    ///
    /// No temporary file can be made (exit 2, naming TMPDIR).
    pub fn new() -> Result<Self, CliError> {
        let file = tempfile::tempfile().map_err(|err| spool_error("make", &err))?;
        Ok(Self {
            writer: csv::Writer::from_writer(BufWriter::new(file)),
            line_width: "LINE".len(),
            reference_width: REFERENCE_HEADER.len(),
            detail_width: 0,
            rows: 0,
        })
    }

    /// Keeps a row that is not `match`.
    ///
    /// # Errors
    ///
    /// The temporary file cannot be written.
    pub fn push(&mut self, row: &Judged) -> Result<(), CliError> {
        let reference = shown_reference(row.cells.reference.as_deref());
        let line = row.line.to_string();
        self.line_width = self.line_width.max(line.len());
        self.reference_width = self.reference_width.max(reference.width());
        self.rows += 1;
        let detail = printable(row.judgement.detail.as_deref().unwrap_or_default());
        self.detail_width = self.detail_width.max(detail.width());
        self.writer
            .write_record([
                line.as_str(),
                &reference,
                row.judgement.class.as_str(),
                &detail,
            ])
            .map_err(|err| spool_error("write", &err))
    }

    /// Writes the counts table, then the kept rows, to `out`, fitted to
    /// `width`: in columns, the reference and the detail wrapped in theirs
    /// ([`layout`]), or on a terminal too narrow for them each row as a
    /// block of its fields.
    ///
    /// # Errors
    ///
    /// The temporary file cannot be read back, or `out` written.
    pub fn print(
        self,
        counts: &Counts,
        complete: bool,
        width: usize,
        out: &mut dyn std::io::Write,
    ) -> Result<(), CliError> {
        let io = |err: std::io::Error| CliError::Output(err);
        let class_width = Class::WIDEST;
        let rows_width = counts.total().to_string().len().max("ROWS".len());
        writeln!(out, "{:<class_width$}  {:>rows_width$}", "CLASS", "ROWS").map_err(io)?;
        for class in Class::ALL {
            writeln!(
                out,
                "{:<class_width$}  {:>rows_width$}",
                class.as_str(),
                counts.get(class)
            )
            .map_err(io)?;
        }
        writeln!(
            out,
            "{:<class_width$}  {:>rows_width$}",
            "total",
            counts.total()
        )
        .map_err(io)?;
        if !complete {
            // As the json summary's `"complete":false`: these counts are
            // of the rows judged before the run stopped, not the ledger's.
            for line in crate::output::wrap(INCOMPLETE, width.max(MIN_DETAIL_WIDTH)) {
                writeln!(out, "{line}").map_err(io)?;
            }
        }
        if self.rows == 0 {
            return Ok(());
        }
        let mut file = self
            .writer
            .into_inner()
            .map_err(|err| spool_error("write", &err.into_error()))?
            .into_inner()
            .map_err(|err| spool_error("write", &err.into_error()))?;
        file.seek(SeekFrom::Start(0))
            .map_err(|err| spool_error("read", &err))?;
        let mut rows = csv::ReaderBuilder::new()
            .has_headers(false)
            .from_reader(std::io::BufReader::new(file));
        let lw = self.line_width;
        let fixed = lw + 2 + 2 + class_width + 2;
        let (rw, detail_width) = match layout(width, fixed, self.reference_width, self.detail_width)
        {
            Layout::Columns { reference, detail } => (reference, detail),
            Layout::Blocks => return blocks(&mut rows, width, out),
        };
        writeln!(out).map_err(io)?;
        writeln!(
            out,
            "{:<lw$}  {}  {:<class_width$}  DETAIL",
            "LINE",
            pad(REFERENCE_HEADER, rw),
            "CLASS"
        )
        .map_err(io)?;
        let mut record = csv::StringRecord::new();
        while rows
            .read_record(&mut record)
            .map_err(|err| spool_error("read", &err))?
        {
            let field = |i| record.get(i).unwrap_or_default();
            let details = crate::output::wrap(field(3), detail_width);
            let references = crate::output::wrap(field(1), rw);
            for n in 0..details.len().max(references.len()) {
                let (number, class) = if n == 0 {
                    (field(0), field(2))
                } else {
                    ("", "")
                };
                let text = format!(
                    "{number:<lw$}  {}  {class:<class_width$}  {}",
                    pad(references.get(n).map_or("", String::as_str), rw),
                    details.get(n).map_or("", String::as_str)
                );
                writeln!(out, "{}", text.trim_end()).map_err(io)?;
            }
        }
        Ok(())
    }
}

/// How the kept rows are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// In columns, the reference's and the detail's this wide.
    Columns { reference: usize, detail: usize },
    /// Each row as a block of its fields, one per line.
    Blocks,
}

/// The layout at `width`, the line and class columns `fixed` wide with
/// their gaps, the widest reference and detail `reference` and `detail`:
/// the references whole when the detail keeps its least width beside
/// them ([`MIN_DETAIL_WIDTH`], or its widest value's when narrower); else
/// their column takes half of what is left, at least its header's width
/// and at most what leaves the detail its least, and a reference wraps in
/// it. A terminal too narrow for even that (about 48 columns) gets blocks.
fn layout(width: usize, fixed: usize, reference: usize, detail: usize) -> Layout {
    let room = width.saturating_sub(fixed);
    let least_detail = detail.clamp("DETAIL".len(), MIN_DETAIL_WIDTH);
    let header = REFERENCE_HEADER.len();
    let reference = if reference + least_detail <= room {
        reference
    } else if header + least_detail <= room {
        (room / 2).clamp(header, room - least_detail)
    } else {
        return Layout::Blocks;
    };
    Layout::Columns {
        reference,
        detail: room - reference,
    }
}

/// The kept rows in `rows`, each as its fields, one per line, the
/// reference and the detail wrapped to `width`; a blank line before each.
fn blocks(
    rows: &mut csv::Reader<std::io::BufReader<File>>,
    width: usize,
    out: &mut dyn std::io::Write,
) -> Result<(), CliError> {
    let io = |err: std::io::Error| CliError::Output(err);
    let room = width
        .saturating_sub(BLOCK_LABEL_WIDTH + 2)
        .max(MIN_BLOCK_VALUE);
    let mut record = csv::StringRecord::new();
    while rows
        .read_record(&mut record)
        .map_err(|err| spool_error("read", &err))?
    {
        let field = |i| record.get(i).unwrap_or_default();
        writeln!(out).map_err(io)?;
        for (label, value) in [
            ("Line", field(0)),
            ("Reference", field(1)),
            ("Class", field(2)),
            ("Detail", field(3)),
        ] {
            for (n, part) in crate::output::wrap(value, room).iter().enumerate() {
                let label = if n == 0 { label } else { "" };
                let text = format!("{label:<BLOCK_LABEL_WIDTH$}  {part}");
                writeln!(out, "{}", text.trim_end()).map_err(io)?;
            }
        }
    }
    Ok(())
}

/// The table's temporary file failed: a local failure, not the service's
/// (exit 2, as for a `--report` FILE), named with the directory it is in
/// (TMPDIR, else /tmp).
fn spool_error(what: &str, err: &dyn std::fmt::Display) -> CliError {
    CliError::Usage(format!(
        "cannot {what} the table's temporary file in {} (the directory TMPDIR names, \
         else /tmp): {err}; set TMPDIR to a writable directory, or use -o json",
        crate::text::cut(&std::env::temp_dir().display().to_string())
    ))
}

/// A reference as the table shows it: a valid one whole, a longer one
/// its first 64 characters and `…` (cut as written, then made printable,
/// so an escape is never cut).
fn shown_reference(reference: Option<&str>) -> String {
    printable(&crate::text::clip_chars(
        reference.unwrap_or("-"),
        REFERENCE_SHOWN,
    ))
}

/// `text` padded to `width` display columns.
fn pad(text: &str, width: usize) -> String {
    let mut padded = text.to_owned();
    padded.extend(std::iter::repeat_n(' ', width.saturating_sub(text.width())));
    padded
}

#[cfg(test)]
mod tests {
    use super::*;

    /// At 80 columns a 64-character CJK reference (128 columns) and a
    /// detail of CJK text (no spaces) ran to 140 columns and more: the
    /// reference wraps in its column, the detail between characters.
    #[test]
    fn rows_fit_the_width_whatever_their_script() {
        let reference = format!("{}X", "請求書".repeat(21));
        let message = "支払いは銀行によって拒否されました。".repeat(3);
        let mut spool = Spool::new().unwrap();
        let row = |line, reference: &str, detail: String| Judged {
            line,
            cells: Cells {
                reference: Some(reference.to_owned()),
                ..Cells::default()
            },
            judgement: Judgement {
                class: Class::Status,
                detail: Some(detail),
            },
            service: None,
        };
        spool
            .push(&row(
                2,
                &reference,
                format!("ledger SUCCESSFUL, service FAILED ({message})"),
            ))
            .unwrap();
        spool.push(&row(3, "R1", "short".to_owned())).unwrap();
        let mut counts = Counts::default();
        counts.add(Class::Status);
        counts.add(Class::Status);
        let mut out = Vec::new();
        spool.print(&counts, true, 80, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.lines().all(|line| line.width() <= 80), "{text}");
        let rows: Vec<&str> = text
            .lines()
            .skip_while(|l| !l.starts_with("LINE"))
            .collect();
        // Nothing lost: the reference and the detail go on down their columns.
        assert!(rows[1].starts_with("2     請求書"), "{text}");
        assert!(rows[5].starts_with("      請求書X  "), "{text}");
        assert!(rows[5].ends_with("行によって拒否されました。)"), "{text}");
        assert!(rows.iter().any(|l| l.starts_with("3     R1")), "{text}");
        // The references, whole, when they fit beside the detail.
        let mut spool = Spool::new().unwrap();
        spool.push(&row(2, "INV-1", message.clone())).unwrap();
        let mut out = Vec::new();
        spool.print(&counts, true, 80, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.lines().all(|line| line.width() <= 80), "{text}");
        assert!(
            text.contains("\n2     INV-1      status      支払い"),
            "{text}"
        );
    }

    /// The reference column gave the detail under 20 columns from about
    /// 56 down, and the detail then went unwrapped past the width.
    #[test]
    fn the_detail_keeps_its_least_width_before_the_reference_takes_half() {
        // LINE (4) and CLASS (9) with their gaps: 19 columns.
        for width in 0..=200 {
            match layout(width, 19, 128, 300) {
                Layout::Columns { reference, detail } => {
                    assert!(detail >= MIN_DETAIL_WIDTH, "{width}");
                    assert!(reference >= "REFERENCE".len(), "{width}");
                    assert_eq!(19 + reference + detail, width);
                }
                Layout::Blocks => assert!(width < 19 + 9 + MIN_DETAIL_WIDTH, "{width}"),
            }
        }
        assert_eq!(
            layout(55, 19, 128, 300),
            Layout::Columns {
                reference: 16,
                detail: 20
            }
        );
        // Details all narrower than 20 need only their width.
        assert_eq!(
            layout(45, 19, 13, 12),
            Layout::Columns {
                reference: 13,
                detail: 13
            }
        );
        assert_eq!(layout(47, 19, 13, 300), Layout::Blocks);
    }

    #[test]
    fn a_stopped_run_says_so_within_the_width() {
        let mut counts = Counts::default();
        counts.add(Class::Missing);
        let mut out = Vec::new();
        Spool::new()
            .unwrap()
            .print(&counts, false, 40, &mut out)
            .unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.lines().all(|line| line.width() <= 40), "{text}");
        assert!(text.contains("incomplete: the run stopped"), "{text}");
    }

    #[test]
    fn the_summary_names_every_class() {
        let mut counts = Counts::default();
        counts.add(Class::Match);
        counts.add(Class::Invalid);
        assert_eq!(
            json_summary(&counts, "MYR", true),
            r#"{"summary":{"rows":2,"match":1,"missing":0,"amount":0,"currency":0,"status":0,"pending":0,"duplicate":0,"invalid":1,"unverified":0,"defaultCurrency":"MYR","complete":true}}"#
        );
        assert!(!counts.all_match());
    }
}
