//! The lines inside a quoted value that spans lines, each read as if the
//! quote were none: one that would be a row of the ledger (as many
//! comma-separated fields as the header, or a reference then an amount)
//! says the quote is most likely a stray one (`"12 inch`) that swallowed
//! the rows after it, though the record closed with the header's number of
//! fields.

/// The most bytes of a line's first field kept: a reference of 1,024
/// characters, 4 bytes each.
const MAX_FIRST_BYTES: usize = 4 * 1024;
/// The most bytes of a line's second field kept (an amount).
const MAX_SECOND_BYTES: usize = 64;

/// The physical lines of the record being read that began inside a quoted
/// value, and those among them that read as rows of the ledger.
#[derive(Debug, Default)]
pub(super) struct Shape {
    /// The header's number of fields, once known (0: not yet).
    expected: usize,
    /// The current line began inside a quoted value.
    inside: bool,
    commas: usize,
    first: Vec<u8>,
    second: Vec<u8>,
    first_cut: bool,
    second_cut: bool,
    /// The first and last such lines of the record that read as rows.
    rows: Option<(u64, u64)>,
}

impl Shape {
    /// Lines with `fields` fields read as rows from now on.
    pub(super) fn expect(&mut self, fields: usize) {
        self.expected = fields;
    }

    /// A new record starts (outside any quote).
    pub(super) fn start_record(&mut self) {
        self.rows = None;
        self.begin_line(false);
    }

    /// The first and last lines inside the record's quoted values that
    /// read as rows of the ledger.
    pub(super) fn rows(&self) -> Option<(u64, u64)> {
        self.rows
    }

    /// A byte of the current line that is not a line break.
    pub(super) fn byte(&mut self, byte: u8) {
        if !self.inside {
            return;
        }
        let (field, max, cut) = match self.commas {
            0 => (&mut self.first, MAX_FIRST_BYTES, &mut self.first_cut),
            1 => (&mut self.second, MAX_SECOND_BYTES, &mut self.second_cut),
            _ => {
                self.commas += usize::from(byte == b',');
                return;
            }
        };
        if byte == b',' {
            self.commas += 1;
        } else if field.len() < max {
            field.push(byte);
        } else {
            *cut = true;
        }
    }

    /// Line `line` ends; the next begins inside a quoted value or not.
    pub(super) fn end_line(&mut self, line: u64, next_inside: bool) {
        if self.inside && self.reads_as_row() {
            let first = self.rows.map_or(line, |(first, _)| first);
            self.rows = Some((first, line));
        }
        self.begin_line(next_inside);
    }

    fn begin_line(&mut self, inside: bool) {
        self.inside = inside;
        self.commas = 0;
        self.first.clear();
        self.second.clear();
        self.first_cut = false;
        self.second_cut = false;
    }

    /// As many fields as the header, or a reference and an amount first.
    fn reads_as_row(&self) -> bool {
        (self.expected > 1 && self.commas + 1 == self.expected)
            || (self.commas >= 1
                && !self.first_cut
                && !self.second_cut
                && is_reference(unquoted(&self.first))
                && is_amount(unquoted(&self.second)))
    }
}

/// A cell without the whitespace and the quotes around it.
fn unquoted(cell: &[u8]) -> &[u8] {
    let cell = cell.trim_ascii();
    cell.strip_prefix(b"\"")
        .and_then(|c| c.strip_suffix(b"\""))
        .unwrap_or(cell)
        .trim_ascii()
}

/// Text as a reference is written: no whitespace, quote or control
/// character, and not only digits (a number in a note, `12`, is none).
fn is_reference(cell: &[u8]) -> bool {
    !cell.is_empty()
        && !cell.iter().all(u8::is_ascii_digit)
        && std::str::from_utf8(cell).is_ok_and(|text| {
            text.chars()
                .all(|c| !c.is_whitespace() && !c.is_control() && c != '"')
        })
}

/// `DIGITS[.DIGITS]`, as a ledger's amount.
fn is_amount(cell: &[u8]) -> bool {
    let (whole, fraction) = match cell.iter().position(|&b| b == b'.') {
        Some(at) => (&cell[..at], &cell[at + 1..]),
        None => (cell, &b"0"[..]),
    };
    !whole.is_empty()
        && !fraction.is_empty()
        && whole.iter().chain(fraction).all(u8::is_ascii_digit)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(expected: usize, lines: &[&str]) -> Option<(u64, u64)> {
        let mut shape = Shape::default();
        shape.expect(expected);
        shape.start_record();
        for (at, text) in lines.iter().enumerate() {
            text.bytes().for_each(|b| shape.byte(b));
            shape.end_line(at as u64 + 1, true);
        }
        shape.rows()
    }

    #[test]
    fn lines_that_read_as_rows_are_told() {
        // Line 1 is the record's own: never judged.
        assert_eq!(
            rows(3, &["INV-1,1,\"x", "INV-2,10.50,ok", "5\" screen"]),
            Some((2, 2))
        );
        assert_eq!(
            rows(3, &["a", "INV-2,10.50,ok", "INV-3,10.50,5\" screen"]),
            Some((2, 3))
        );
        // A reference then an amount, whatever the count.
        assert_eq!(rows(5, &["a", "INV-2, 10.50"]), Some((2, 2)));
        assert_eq!(rows(5, &["a", "\"INV-2\",\"10\",x"]), Some((2, 2)));
        // Text of a note: none.
        for note in [
            "second line of the note",
            "12 inch, 5 pieces",
            "12,50",
            "see INV 7, 10.50",
            "INV-2,10.5.0",
            "INV-2,",
        ] {
            assert_eq!(rows(3, &["a", note]), None, "{note}");
        }
    }
}
