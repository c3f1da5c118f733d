//! CSV records read one at a time into buffers of a fixed most size.
//!
//! csv-core (the parser under the `csv` crate) does the parsing: quotes,
//! quoted commas and line breaks, `""` escapes, CRLF or LF. This file owns
//! the buffers around it, and what the `csv` crate's reader does not: a
//! record longer than [`MAX_RECORD_BYTES`] or with more than [`MAX_FIELDS`]
//! fields is read through to its end without being kept, and reported as
//! [`Next::TooLong`], so memory stays bounded whatever the file holds (the
//! `csv` crate grows its record to any size: a 50 MB line costs 50 MB).
//!
//! Line numbers are those of a record's first byte, counting line breaks
//! as csv-core ends records at them: `\n`, `\r\n`, and a `\r` alone (a
//! "CSV (Macintosh)" export); a quoted field that spans lines moves the
//! next record's number on. Empty lines, and lines of only spaces and
//! tabs, are skipped; a UTF-8 byte order mark at the start is dropped.

use std::io::{self, Read};

/// The longest record kept (bytes after unquoting): far beyond any ledger
/// row, small enough that a hostile file cannot cost memory.
pub const MAX_RECORD_BYTES: usize = 64 * 1024;
/// The most fields a kept record may have.
pub const MAX_FIELDS: usize = 256;
/// Bytes read from the source at a time.
const READ_SIZE: usize = 64 * 1024;

/// What [`Records::next`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// A record starting on `line`; its fields are [`Records::field`].
    Record { line: u64 },
    /// A record starting on `line` that was too long to keep.
    TooLong { line: u64, why: TooLong },
    /// No more records.
    End,
}

/// Which limit a record went past.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TooLong {
    Bytes,
    Fields,
}

/// Records of CSV text from `source`, one at a time.
#[derive(Debug)]
pub struct Records<R> {
    source: R,
    parser: csv_core::Reader,
    input: Box<[u8]>,
    pos: usize,
    len: usize,
    eof: bool,
    started: bool,
    output: Vec<u8>,
    ends: Vec<usize>,
    fields: usize,
    newlines: u64,
    /// The last byte counted was a `\r` (a `\n` right after it ends the
    /// same line).
    after_cr: bool,
    consumed: u64,
}

impl<R: Read> Records<R> {
    /// Reads CSV (comma-separated, `"` quotes) from `source`.
    pub fn new(source: R) -> Self {
        Self {
            source,
            parser: csv_core::Reader::new(),
            input: vec![0; READ_SIZE].into_boxed_slice(),
            pos: 0,
            len: 0,
            eof: false,
            started: false,
            output: vec![0; 1024],
            ends: vec![0; 16],
            fields: 0,
            newlines: 0,
            after_cr: false,
            consumed: 0,
        }
    }

    /// Bytes of the source consumed so far (for progress).
    pub fn consumed(&self) -> u64 {
        self.consumed
    }

    /// The number of fields of the record [`Records::next`] last returned.
    pub fn field_count(&self) -> usize {
        self.fields
    }

    /// Field `index` of the record [`Records::next`] last returned.
    pub fn field(&self, index: usize) -> Option<&[u8]> {
        if index >= self.fields {
            return None;
        }
        let start = if index == 0 { 0 } else { self.ends[index - 1] };
        self.output.get(start..self.ends[index])
    }

    /// The next record; a line of only spaces and tabs is blank, and
    /// skipped as an empty one is.
    ///
    /// # Errors
    ///
    /// Reading the source failed.
    pub fn next(&mut self) -> io::Result<Next> {
        loop {
            let next = self.next_record()?;
            let blank = matches!(next, Next::Record { .. })
                && self.fields == 1
                && self.field(0).is_some_and(|f| f.trim_ascii().is_empty());
            if !blank {
                return Ok(next);
            }
        }
    }

    /// The next record, blank or not.
    fn next_record(&mut self) -> io::Result<Next> {
        if !self.started {
            self.started = true;
            self.skip_bom()?;
        }
        // The terminators between records (and empty lines) are skipped
        // here rather than by the parser, so that the line count at the
        // record's first byte is known. The parser is then either at the
        // start of a record or just after a `\r`, where a byte that is not
        // `\n` starts the next record just the same.
        loop {
            self.fill()?;
            match self.input[self.pos..self.len].first() {
                Some(&byte @ (b'\n' | b'\r')) => {
                    self.count_breaks(&[byte]);
                    self.pos += 1;
                    self.consumed += 1;
                }
                _ => break,
            }
        }
        let line = self.newlines + 1;
        let (mut nout, mut nends) = (0, 0);
        let mut too_long = None;
        loop {
            self.fill()?;
            let input = &self.input[self.pos..self.len];
            let (result, nin, out, ends) =
                self.parser
                    .read_record(input, &mut self.output[nout..], &mut self.ends[nends..]);
            let (breaks, after_cr) = line_breaks(&input[..nin], self.after_cr);
            self.newlines += breaks;
            if nin > 0 {
                self.after_cr = after_cr;
            }
            self.pos += nin;
            self.consumed += nin as u64;
            nout += out;
            nends += ends;
            match result {
                csv_core::ReadRecordResult::InputEmpty => {}
                csv_core::ReadRecordResult::OutputFull => {
                    if self.output.len() < MAX_RECORD_BYTES {
                        let grown = (self.output.len() * 2).min(MAX_RECORD_BYTES);
                        self.output.resize(grown, 0);
                    } else {
                        // Past the limit: keep parsing (the state of
                        // quotes must follow the text) into the same
                        // buffer, which is no longer a record.
                        too_long.get_or_insert(TooLong::Bytes);
                        nout = 0;
                    }
                }
                csv_core::ReadRecordResult::OutputEndsFull => {
                    if self.ends.len() < MAX_FIELDS {
                        let grown = (self.ends.len() * 2).min(MAX_FIELDS);
                        self.ends.resize(grown, 0);
                    } else {
                        too_long.get_or_insert(TooLong::Fields);
                        nends = 0;
                    }
                }
                csv_core::ReadRecordResult::Record => {
                    self.fields = if too_long.is_some() { 0 } else { nends };
                    return Ok(match too_long {
                        Some(why) => Next::TooLong { line, why },
                        None => Next::Record { line },
                    });
                }
                csv_core::ReadRecordResult::End => {
                    self.fields = 0;
                    return Ok(Next::End);
                }
            }
        }
    }

    /// Counts the line breaks of `bytes`, which follow what was counted.
    fn count_breaks(&mut self, bytes: &[u8]) {
        let (breaks, after_cr) = line_breaks(bytes, self.after_cr);
        self.newlines += breaks;
        if !bytes.is_empty() {
            self.after_cr = after_cr;
        }
    }

    /// Refills the input buffer when it is used up.
    fn fill(&mut self) -> io::Result<()> {
        if self.pos < self.len || self.eof {
            return Ok(());
        }
        self.pos = 0;
        self.len = 0;
        loop {
            match self.source.read(&mut self.input) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(());
                }
                Ok(n) => {
                    self.len = n;
                    return Ok(());
                }
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => return Err(err),
            }
        }
    }

    /// Drops a UTF-8 byte order mark at the very start (a spreadsheet's
    /// "CSV UTF-8" export writes one), even when it arrives in pieces.
    fn skip_bom(&mut self) -> io::Result<()> {
        const BOM: &[u8] = b"\xef\xbb\xbf";
        while self.len < BOM.len() && !self.eof {
            match self.source.read(&mut self.input[self.len..]) {
                Ok(0) => self.eof = true,
                Ok(n) => self.len += n,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => return Err(err),
            }
        }
        if self.input[..self.len].starts_with(BOM) {
            self.pos = BOM.len();
            self.consumed = BOM.len() as u64;
        }
        Ok(())
    }
}

/// The line breaks in `bytes` after a `\r` (`after_cr`) or not: each
/// `\n` and each `\r`, but a `\n` right after a `\r` ends the same line.
/// Gives the count and whether `bytes` ended with a `\r`.
fn line_breaks(bytes: &[u8], mut after_cr: bool) -> (u64, bool) {
    let mut breaks = 0;
    for &byte in bytes {
        breaks += u64::from(byte == b'\r' || (byte == b'\n' && !after_cr));
        after_cr = byte == b'\r';
    }
    (breaks, after_cr)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Every record as (line, fields) or (line, too long).
    fn all(bytes: &[u8]) -> Vec<(u64, Result<Vec<String>, TooLong>)> {
        let mut records = Records::new(bytes);
        let mut out = Vec::new();
        loop {
            match records.next().unwrap() {
                Next::Record { line } => {
                    let fields = (0..records.field_count())
                        .map(|i| String::from_utf8_lossy(records.field(i).unwrap()).into_owned())
                        .collect();
                    out.push((line, Ok(fields)));
                }
                Next::TooLong { line, why } => out.push((line, Err(why))),
                Next::End => return out,
            }
        }
    }

    fn fields(texts: &[&str]) -> Result<Vec<String>, TooLong> {
        Ok(texts.iter().map(|t| (*t).to_owned()).collect())
    }

    #[test]
    fn quotes_crlf_bom_and_empty_lines() {
        let text = b"\xef\xbb\xbfreferenceNo,amount\r\n\"A,1\",\"1\"\"0\"\r\n\r\n\r\nB,2\n\"multi\nline\",3\nlast,4";
        assert_eq!(
            all(text),
            vec![
                (1, fields(&["referenceNo", "amount"])),
                (2, fields(&["A,1", "1\"0"])),
                (5, fields(&["B", "2"])),
                (6, fields(&["multi\nline", "3"])),
                (8, fields(&["last", "4"])),
            ]
        );
    }

    /// csv-core ends a record at a `\r` alone too (a "CSV (Macintosh)"
    /// file, or one stray in a Windows file): each such record has a line
    /// of its own, so no two records share a number.
    #[test]
    fn a_carriage_return_alone_is_a_line_break() {
        assert_eq!(
            all(b"referenceNo,amount\rA,1\rB,2\r\rC,3"),
            vec![
                (1, fields(&["referenceNo", "amount"])),
                (2, fields(&["A", "1"])),
                (3, fields(&["B", "2"])),
                (5, fields(&["C", "3"])),
            ]
        );
        assert_eq!(
            all(b"h\nA,1\rA,1\r\nB,2\n\"x\ry\",3\nC,4"),
            vec![
                (1, fields(&["h"])),
                (2, fields(&["A", "1"])),
                (3, fields(&["A", "1"])),
                (4, fields(&["B", "2"])),
                (5, fields(&["x\ry", "3"])),
                (7, fields(&["C", "4"])),
            ]
        );
    }

    /// A line of only spaces or tabs is blank: skipped, as an empty line
    /// is (it was an `invalid` row, and a matching ledger exited 6).
    #[test]
    fn lines_of_only_spaces_and_tabs_are_skipped() {
        assert_eq!(
            all(b"   \nreferenceNo,amount\n  \nA,1\n\t\r\n \t \nB,2\n  "),
            vec![
                (2, fields(&["referenceNo", "amount"])),
                (4, fields(&["A", "1"])),
                (7, fields(&["B", "2"])),
            ]
        );
        // A row of empty cells is a row, not a blank line.
        assert_eq!(
            all(b"h\n , \n"),
            vec![(1, fields(&["h"])), (2, fields(&[" ", " "]))]
        );
    }

    #[test]
    fn an_empty_source_has_no_records() {
        assert!(all(b"").is_empty());
        assert!(all(b"\xef\xbb\xbf").is_empty());
        assert!(all(b"\n\r\n\n").is_empty());
    }

    #[test]
    fn a_record_past_the_limits_is_skipped_whole_and_the_next_is_read() {
        let mut text = b"a,b\n".to_vec();
        text.extend(std::iter::repeat_n(b'x', 3 * MAX_RECORD_BYTES));
        text.extend(b",\"quoted\n,still\"\nnext,1\n");
        text.extend(",".repeat(MAX_FIELDS + 5).as_bytes());
        text.extend(b"\nafter,2\n");
        assert_eq!(
            all(&text),
            vec![
                (1, fields(&["a", "b"])),
                (2, Err(TooLong::Bytes)),
                (4, fields(&["next", "1"])),
                (5, Err(TooLong::Fields)),
                (6, fields(&["after", "2"])),
            ]
        );
    }

    #[test]
    fn a_source_read_one_byte_at_a_time_gives_the_same_records() {
        struct Trickle<'a>(&'a [u8]);
        impl Read for Trickle<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                let Some((first, rest)) = self.0.split_first() else {
                    return Ok(0);
                };
                buf[0] = *first;
                self.0 = rest;
                Ok(1)
            }
        }
        let text = b"\xef\xbb\xbfh1,h2\r\n\"a\r\nb\",c\r\nd,e";
        let mut records = Records::new(Trickle(text));
        let mut lines = Vec::new();
        while let Next::Record { line } = records.next().unwrap() {
            lines.push((line, records.field(0).unwrap().to_vec()));
        }
        assert_eq!(
            lines,
            vec![
                (1, b"h1".to_vec()),
                (2, b"a\r\nb".to_vec()),
                (4, b"d".to_vec())
            ]
        );
    }

    proptest! {
        #[test]
        fn any_bytes_end_without_panicking(bytes in proptest::collection::vec(any::<u8>(), 0..2000)) {
            let records = all(&bytes);
            let lines = line_breaks(&bytes, false).0 + 1;
            prop_assert!(records.iter().all(|(line, _)| *line <= lines));
            // Each record on a line of its own: a ledger's duplicate is
            // told by its line.
            prop_assert!(records.windows(2).all(|w| w[0].0 < w[1].0));
        }
    }
}
