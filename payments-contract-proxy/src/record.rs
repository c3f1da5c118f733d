//! Recordings (`--record`, CONTRACT section 16): each exchange whole, one
//! JSON line, its secrets replaced by `redact.rs` before it is written;
//! read back here, line by line, by `check` and `--seed-from`.

use super::exchange::Exchange;

/// One line of a recording that could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadLine {
    /// 1-based.
    pub line: usize,
    /// Why.
    pub reason: String,
}

/// The longest line a recording may hold: an exchange keeps bodies of up
/// to 16 MiB each, written as JSON strings (escapes make them longer).
/// A longer line is a [`BadLine`], skipped without being read into memory.
pub const MAX_LINE: usize = 128 * 1024 * 1024;

/// Broken lines kept with their number and reason; the rest are counted.
pub const BAD_LINES_KEPT: usize = 100;

/// The lines of a recording that are no exchange: the first
/// 100 of them, and how many there were in all (a file of
/// millions of broken lines takes no more memory than one of a hundred).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct BadLines {
    /// The first ones, in order.
    pub first: Vec<BadLine>,
    /// How many there were.
    pub count: usize,
}

impl BadLines {
    fn push(&mut self, bad: BadLine) {
        self.count += 1;
        if self.first.len() < BAD_LINES_KEPT {
            self.first.push(bad);
        }
    }
}

/// Reads a recording line by line (never whole: a day's recording can be
/// larger than memory), handing each exchange to `on` in order, and returns
/// the lines that are none.
///
/// # Errors
///
/// The reader's error when it fails (a line that is not UTF-8, not an
/// exchange or longer than 128 MiB is a [`BadLine`], not an error).
pub fn each(
    reader: impl std::io::BufRead,
    mut on: impl FnMut(Exchange),
) -> std::io::Result<BadLines> {
    numbered(reader, |_, exchange| on(exchange))
}

/// [`each`], handing each exchange with its line's number (1-based).
///
/// # Errors
///
/// As [`each`].
pub(crate) fn numbered(
    reader: impl std::io::BufRead,
    on: impl FnMut(usize, Exchange),
) -> std::io::Result<BadLines> {
    numbered_within(reader, MAX_LINE, on)
}

/// [`numbered`], with lines of at most `max_line` bytes.
fn numbered_within(
    mut reader: impl std::io::BufRead,
    max_line: usize,
    mut on: impl FnMut(usize, Exchange),
) -> std::io::Result<BadLines> {
    use std::io::{BufRead as _, Read as _};
    let mut bad = BadLines::default();
    let mut line = Vec::new();
    let mut n = 0;
    loop {
        line.clear();
        let limit = u64::try_from(max_line)
            .unwrap_or(u64::MAX)
            .saturating_add(1);
        if (&mut reader).take(limit).read_until(b'\n', &mut line)? == 0 {
            return Ok(bad);
        }
        n += 1;
        if line.len() > max_line && line.last() != Some(&b'\n') {
            // The rest of the line is passed over, never held.
            reader.skip_until(b'\n')?;
            bad.push(BadLine {
                line: n,
                reason: format!("not a recorded exchange (longer than {} bytes)", max_line),
            });
            continue;
        }
        if line.trim_ascii().is_empty() {
            continue;
        }
        match serde_json::from_slice::<Exchange>(&line) {
            Ok(exchange) => on(n, exchange),
            Err(e) => {
                // Only the kind of error and the column: serde's message can
                // quote a value of the line.
                let kind = match e.classify() {
                    serde_json::error::Category::Syntax | serde_json::error::Category::Eof => {
                        "not JSON"
                    }
                    _ => "JSON, but not the shape of an exchange",
                };
                bad.push(BadLine {
                    line: n,
                    reason: format!("not a recorded exchange ({kind}, at column {})", e.column()),
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::rules::test_support::exchange;

    #[test]
    fn a_recording_reads_back_with_its_broken_lines_numbered() {
        let e = exchange("GET", "/api/payments/x/status", json!(null), 404, json!({}));
        let line = serde_json::to_string(&e).expect("serializes");
        let mut text = format!("{line}\n{{broken\n\n{line}\nnot json at all\n").into_bytes();
        text.extend_from_slice(b"\xff\xfe\n");
        text.extend_from_slice(line.as_bytes());
        let mut exchanges = Vec::new();
        let bad = each(text.as_slice(), |e| exchanges.push(e)).expect("reads");
        assert_eq!(exchanges.len(), 3, "the last line needs no newline");
        assert_eq!(
            bad.first.iter().map(|b| b.line).collect::<Vec<_>>(),
            [2, 5, 6]
        );
        assert_eq!(bad.count, 3);
    }

    #[test]
    fn broken_lines_beyond_the_first_hundred_are_counted_not_kept() {
        let text = "x\n".repeat(100_000);
        let bad = each(text.as_bytes(), |_| panic!("no exchange")).expect("reads");
        assert_eq!(bad.count, 100_000);
        assert_eq!(bad.first.len(), BAD_LINES_KEPT);
        assert_eq!(bad.first.last().map(|b| b.line), Some(BAD_LINES_KEPT));
    }

    #[test]
    fn a_line_longer_than_the_limit_is_passed_over_unread() {
        let e = exchange("GET", "/api/payments/x/status", json!(null), 404, json!({}));
        let line = serde_json::to_string(&e).expect("serializes");
        let limit = line.len();
        let long = format!("{line}{}", " ".repeat(10_000));
        // Exactly the limit passes; one byte more, with or without a
        // newline, is a broken line, and reading goes on after it.
        let text = format!("{line}\n{long}\n{line}\n{line} \n{line}\n{long}");
        let mut lines = Vec::new();
        let bad = numbered_within(text.as_bytes(), limit, |n, _| lines.push(n)).expect("reads");
        assert_eq!(lines, [1, 3, 5]);
        assert_eq!(
            bad.first.iter().map(|b| b.line).collect::<Vec<_>>(),
            [2, 4, 6]
        );
        assert!(bad.first[0].reason.contains("longer than"), "{bad:?}");
        // An endless line (a device of zeros) ends as one broken line,
        // read through in bounded memory.
        let endless = std::io::Read::take(std::io::repeat(0), 50_000_000);
        let bad = numbered_within(std::io::BufReader::new(endless), 1024, |_, _| {
            panic!("no exchange")
        })
        .expect("reads");
        assert_eq!(bad.count, 1);
    }
}
