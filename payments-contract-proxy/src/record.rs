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

/// Reads a recording line by line (never whole: a day's recording can be
/// larger than memory), handing each exchange to `on` in order, and returns
/// the lines that are none.
///
/// # Errors
///
/// The reader's error when it fails (a line that is not UTF-8 or not an
/// exchange is a [`BadLine`], not an error).
pub fn each(
    reader: impl std::io::BufRead,
    mut on: impl FnMut(Exchange),
) -> std::io::Result<Vec<BadLine>> {
    numbered(reader, |_, exchange| on(exchange))
}

/// [`each`], handing each exchange with its line's number (1-based).
///
/// # Errors
///
/// As [`each`].
pub(crate) fn numbered(
    mut reader: impl std::io::BufRead,
    mut on: impl FnMut(usize, Exchange),
) -> std::io::Result<Vec<BadLine>> {
    let mut bad = Vec::new();
    let mut line = Vec::new();
    let mut n = 0;
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            return Ok(bad);
        }
        n += 1;
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
        assert_eq!(bad.iter().map(|b| b.line).collect::<Vec<_>>(), [2, 5, 6]);
    }
}
