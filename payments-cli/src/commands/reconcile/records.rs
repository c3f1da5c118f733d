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
//! next record's number on. Empty lines, lines of only whitespace, and rows
//! whose every cell is empty or whitespace (`,,,,`: a spreadsheet writes
//! them for rows whose cells were cleared) are skipped; a UTF-8 byte order
//! mark at the start is dropped.
//!
//! The quotes are followed beside the parser (as csv-core reads them: a
//! quote opens only at the start of a field), to say where a quote opened:
//! one still open at the end of the file, or past [`MAX_RECORD_BYTES`], is
//! [`Next::OpenQuote`] (everything after it would be one value), and a
//! record whose quoted value spans lines tells it ([`Records::spanned`]),
//! and which of the lines inside read as rows of the ledger
//! ([`Records::rows_inside`], `shape`).

mod shape;

use std::io::{self, Read};

use self::shape::Shape;

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
    /// A quote that never closes: the rest of the text cannot be read as
    /// rows. Nothing more is read.
    OpenQuote(OpenQuote),
    /// No more records.
    End,
}

/// Which limit a record went past.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TooLong {
    Bytes,
    Fields,
}

/// A quote that the text never closes ([`Next::OpenQuote`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenQuote {
    /// The line the quote opened on.
    pub line: u64,
    /// The field (from 0) the quote opened.
    pub field: usize,
    /// Whether the file ended inside it, or the record passed
    /// [`MAX_RECORD_BYTES`] inside it.
    pub end_of_file: bool,
}

/// The first quoted value of a record that spans lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// The line the quote opened on.
    pub opened: u64,
    /// The field (from 0) the quote opened.
    pub field: usize,
    /// The line the quote closed on.
    pub closed: u64,
}

/// Where the text is, as csv-core reads quotes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Quoting {
    /// At the start of a field: a quote here opens a quoted value.
    #[default]
    FieldStart,
    /// In a value that did not start with a quote (a quote is a quote).
    Unquoted,
    /// In a quoted value.
    Quoted,
    /// Just after a quote in a quoted value: a second one is an escaped
    /// quote, anything else closes the value.
    QuoteInQuoted,
}

/// The quotes of the record being read.
#[derive(Debug, Clone, Copy, Default)]
struct Quotes {
    state: Quoting,
    /// Fields ended so far.
    field: usize,
    /// The line and field of the quote last opened.
    opened: (u64, usize),
    /// The first quoted value that spans lines.
    spanned: Option<Span>,
    /// The line of the record's last byte (its terminator aside).
    last_line: u64,
}

impl Quotes {
    /// Follows `bytes`, whose first byte is after `newlines` line breaks
    /// (`after_cr`: just after a `\r`), telling `shape` the lines.
    fn feed(&mut self, bytes: &[u8], mut newlines: u64, mut after_cr: bool, shape: &mut Shape) {
        for &byte in bytes {
            let line = newlines + 1;
            let terminator = byte == b'\n' || byte == b'\r';
            if !terminator {
                shape.byte(byte);
            } else if !(byte == b'\n' && after_cr) {
                // A line break in a quoted value: the next line is inside.
                shape.end_line(line, self.state == Quoting::Quoted);
            }
            if !terminator || matches!(self.state, Quoting::Quoted | Quoting::QuoteInQuoted) {
                self.last_line = line;
            }
            self.state = match (self.state, byte) {
                (Quoting::FieldStart, b'"') => {
                    self.opened = (line, self.field);
                    Quoting::Quoted
                }
                (Quoting::FieldStart | Quoting::Unquoted, b',') => {
                    self.field += 1;
                    Quoting::FieldStart
                }
                (Quoting::FieldStart | Quoting::Unquoted, b'\n' | b'\r') => Quoting::FieldStart,
                (Quoting::FieldStart | Quoting::Unquoted, _) => Quoting::Unquoted,
                (Quoting::Quoted, b'"') => Quoting::QuoteInQuoted,
                (Quoting::Quoted, _) => Quoting::Quoted,
                (Quoting::QuoteInQuoted, b'"') => Quoting::Quoted,
                (Quoting::QuoteInQuoted, other) => {
                    self.close(line);
                    match other {
                        b',' => {
                            self.field += 1;
                            Quoting::FieldStart
                        }
                        b'\n' | b'\r' => Quoting::FieldStart,
                        _ => Quoting::Unquoted,
                    }
                }
            };
            newlines += u64::from(byte == b'\r' || (byte == b'\n' && !after_cr));
            after_cr = byte == b'\r';
        }
    }

    /// The quoted value closes on `line`.
    fn close(&mut self, line: u64) {
        if self.opened.0 < line && self.spanned.is_none() {
            self.spanned = Some(Span {
                opened: self.opened.0,
                field: self.opened.1,
                closed: line,
            });
        }
    }

    /// The quote still open, if any.
    fn open(&self, end_of_file: bool) -> Option<OpenQuote> {
        (self.state == Quoting::Quoted).then_some(OpenQuote {
            line: self.opened.0,
            field: self.opened.1,
            end_of_file,
        })
    }
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
    quotes: Quotes,
    shape: Shape,
    /// The source starts with a UTF-16 byte order mark.
    utf16: bool,
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
            quotes: Quotes::default(),
            shape: Shape::default(),
            utf16: false,
        }
    }

    /// Bytes of the source consumed so far (for progress).
    pub fn consumed(&self) -> u64 {
        self.consumed
    }

    /// The source starts with a UTF-16 byte order mark (`FF FE` or
    /// `FE FF`: a spreadsheet's "Unicode text").
    pub fn utf16(&self) -> bool {
        self.utf16
    }

    /// The first quoted value of the record [`Records::next`] last
    /// returned that spans lines.
    pub fn spanned(&self) -> Option<Span> {
        self.quotes.spanned
    }

    /// The first and last lines inside the quoted values of the record
    /// [`Records::next`] last returned (those after its first line that a
    /// quote spanning lines holds) that read as rows of the ledger: as many
    /// comma-separated fields as [`Records::expect_fields`], or a reference
    /// then an amount (`INV-2,10.50`).
    pub fn rows_inside(&self) -> Option<(u64, u64)> {
        self.shape.rows()
    }

    /// The header's number of fields: a line inside a quoted value with as
    /// many reads as a row ([`Records::rows_inside`]).
    pub fn expect_fields(&mut self, fields: usize) {
        self.shape.expect(fields);
    }

    /// The line the record [`Records::next`] last returned ends on.
    pub fn last_line(&self) -> u64 {
        self.quotes.last_line
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

    /// The next record; a record whose every field is empty or whitespace
    /// (a line of only spaces, `,,,,`) is blank, and skipped as an empty
    /// line is.
    ///
    /// # Errors
    ///
    /// Reading the source failed.
    pub fn next(&mut self) -> io::Result<Next> {
        loop {
            let next = self.next_record()?;
            let blank = matches!(next, Next::Record { .. })
                && (0..self.fields).all(|i| self.field(i).is_some_and(|f| trim(f).is_empty()));
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
        self.quotes = Quotes {
            last_line: line,
            ..Quotes::default()
        };
        self.shape.start_record();
        let (mut nout, mut nends) = (0, 0);
        let mut too_long = None;
        loop {
            self.fill()?;
            let input = &self.input[self.pos..self.len];
            let (result, nin, out, ends) =
                self.parser
                    .read_record(input, &mut self.output[nout..], &mut self.ends[nends..]);
            self.quotes
                .feed(&input[..nin], self.newlines, self.after_cr, &mut self.shape);
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
                    } else if let Some(open) = self.quotes.open(false) {
                        // Past the limit inside a quote: the rest of the
                        // file may be one value.
                        self.fields = 0;
                        return Ok(Next::OpenQuote(open));
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
                    // Only at the end of the input can a record end inside
                    // a quote.
                    if let Some(open) = self.quotes.open(true) {
                        self.fields = 0;
                        return Ok(Next::OpenQuote(open));
                    }
                    if self.quotes.state == Quoting::QuoteInQuoted {
                        self.quotes.close(self.newlines + 1);
                    }
                    // The last line, when no line break ended it.
                    self.shape.end_line(self.quotes.last_line, false);
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
        self.utf16 = [b"\xff\xfe", b"\xfe\xff"]
            .iter()
            .any(|bom| self.input[..self.len].starts_with(*bom));
        Ok(())
    }
}

/// A cell without the whitespace around it, Unicode's included (a
/// spreadsheet pads with spaces; a no-break space, U+00A0, comes from a
/// web page pasted in). Bytes that are not UTF-8 stop the trimming there.
pub fn trim(bytes: &[u8]) -> &[u8] {
    let mut bytes = bytes.trim_ascii();
    if let Some(chunk) = bytes.utf8_chunks().next() {
        let valid = chunk.valid();
        bytes = &bytes[valid.len() - valid.trim_start().len()..];
    }
    if let Some(chunk) = bytes.utf8_chunks().last()
        && chunk.invalid().is_empty()
    {
        let valid = chunk.valid();
        bytes = &bytes[..bytes.len() - (valid.len() - valid.trim_end().len())];
    }
    bytes
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
mod tests;
