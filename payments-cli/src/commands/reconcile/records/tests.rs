//! Records: quotes, line numbers, blank rows, limits.

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
            Next::OpenQuote(_) | Next::End => return out,
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
    // A row whose every cell is empty or whitespace (a spreadsheet's
    // cleared row) is blank too; one cell with text keeps it a row.
    assert_eq!(
        all(b"h\n , \n,,,,\r\n\"\",\xc2\xa0\n,x,\n"),
        vec![(1, fields(&["h"])), (5, fields(&["", "x", ""]))]
    );
}

#[test]
fn cells_are_trimmed_of_unicode_whitespace_too() {
    assert_eq!(trim(" INV-7\u{a0}".as_bytes()), b"INV-7");
    assert_eq!(trim("\u{2007}\u{3000}A B\u{202f}\t".as_bytes()), b"A B");
    assert_eq!(trim(b" \xffA \xfe "), b"\xffA \xfe");
    assert_eq!(trim("\u{a0}".as_bytes()), b"");
}

/// Every record, or where a quote opened that never closes.
fn opened(bytes: &[u8]) -> (Vec<u64>, Option<OpenQuote>) {
    let mut records = Records::new(bytes);
    let mut lines = Vec::new();
    loop {
        match records.next().unwrap() {
            Next::Record { line } | Next::TooLong { line, .. } => lines.push(line),
            Next::OpenQuote(open) => return (lines, Some(open)),
            Next::End => return (lines, None),
        }
    }
}

/// A quote never closed swallowed the rest of the file as one last
/// record: it is told, with where it opened.
#[test]
fn a_quote_never_closed_is_told_where_it_opened() {
    let (lines, open) = opened(b"a,b,c\n1,2,3\n4,\"12 inch,5\n6,7,8\n");
    assert_eq!(lines, [1, 2]);
    assert_eq!(
        open,
        Some(OpenQuote {
            line: 3,
            field: 1,
            end_of_file: true
        })
    );
    // Past the limit inside the quote: told there, nothing more read.
    let mut text = b"a,b\n\"x".to_vec();
    text.extend(std::iter::repeat_n(b'y', 2 * MAX_RECORD_BYTES));
    text.extend(b"\"\nnext,1\n");
    let (lines, open) = opened(&text);
    assert_eq!(lines, [1]);
    assert_eq!(
        open,
        Some(OpenQuote {
            line: 2,
            field: 0,
            end_of_file: false
        })
    );
    // Quotes that close, a quote inside an unquoted value, an escaped
    // quote, and a quote closed by the file's end are no open quote.
    let (lines, open) = opened(b"a,b\n\"x\ny\",1\n12\" pipe,2\n\"a\"\"b\",3\n\"z\"");
    assert_eq!((lines, open), (vec![1, 2, 4, 5, 6], None));
}

#[test]
fn a_quoted_value_that_spans_lines_is_told() {
    let mut records = Records::new(&b"a,b\nx,\"1\n2\n3\"\"\",y\nz,w\n"[..]);
    let mut seen = Vec::new();
    while let Next::Record { line } = records.next().unwrap() {
        seen.push((line, records.last_line(), records.spanned()));
    }
    assert_eq!(
        seen,
        [
            (1, 1, None),
            (
                2,
                4,
                Some(Span {
                    opened: 2,
                    field: 1,
                    closed: 4
                })
            ),
            (5, 5, None),
        ]
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

/// The lines inside a quoted value that read as rows, with `\n`, `\r\n`
/// and `\r` line ends, and a last line no break ends.
#[test]
fn lines_inside_a_quote_that_read_as_rows_are_told() {
    for end in ["\n", "\r\n", "\r"] {
        let text = format!(
            "a,b,c{end}R1,1,\"x{end}R2,2,y{end}note{end}R3,3,z\"{end}R4,4,\"p{end}R5,5,q\""
        );
        let mut records = Records::new(text.as_bytes());
        assert!(matches!(records.next().unwrap(), Next::Record { line: 1 }));
        records.expect_fields(3);
        let mut seen = Vec::new();
        while let Next::Record { line } = records.next().unwrap() {
            seen.push((line, records.rows_inside()));
        }
        assert_eq!(seen, [(2, Some((3, 5))), (6, Some((7, 7)))], "{end:?}");
    }
}
