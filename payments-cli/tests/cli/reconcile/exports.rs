//! Ledgers as shops export them from spreadsheets (Excel, LibreOffice): a
//! quote that never closes, cells padded with no-break spaces, rows of only
//! commas, other separators and UTF-16, references turned into numbers.
//! Against the real mock (`shop`: INV-1001 paid 49.90 MYR, INV-1002 paid
//! 12.00 MYR).

use payments_mock_server::MockServer;

use super::{reconcile, shop};
use crate::common::{Sandbox, run, stderr, stdout};

/// The json rows as (line, class, detail), and the summary.
fn judged(out: &str) -> (Vec<(u64, String, String)>, serde_json::Value) {
    let mut lines: Vec<serde_json::Value> = out
        .lines()
        .map(|line| serde_json::from_str(line).expect("json"))
        .collect();
    let summary = lines.pop().expect("a summary line")["summary"].clone();
    let rows = lines
        .iter()
        .map(|row| {
            (
                row["line"].as_u64().expect("a line"),
                row["class"].as_str().expect("a class").to_owned(),
                row["detail"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    (rows, summary)
}

fn json(sandbox: &Sandbox, server: &MockServer, ledger: &std::path::Path) -> assert_cmd::Command {
    let mut cmd = reconcile(sandbox, server, ledger);
    cmd.args(["-o", "json"]);
    cmd
}

fn row(line: u64, class: &str, detail: &str) -> (u64, String, String) {
    (line, class.to_owned(), detail.to_owned())
}

/// `"12 inch` in a note column, the quote never closed: the rest of the
/// file was one last row, `invalid` ("longer than 64 KiB" or "the row has
/// 9 fields"), and the summary said `"complete":true` with thousands of
/// rows never judged. Now the run stops there, exit 2, naming the line
/// and the column where the quote opened; the rows before it are shown and
/// the summary says `"complete":false`.
#[tokio::test(flavor = "multi_thread")]
async fn a_quote_never_closed_stops_the_run_where_it_opened() {
    let (server, _) = shop().await;
    let sandbox = Sandbox::new();
    let ledger = sandbox.write_file(
        "ledger.csv",
        "referenceNo,amount,note\nINV-1001,49.90,fine\nINV-1002,12.00,\"12 inch\nINV-1001,49.90,x\n\
         INV-1002,12.00,y\n",
    );
    let assert = run(json(&sandbox, &server, &ledger)).await.code(2);
    let (rows, summary) = judged(&stdout(&assert));
    assert_eq!(rows, [row(2, "match", "")]);
    assert_eq!(summary["complete"], false);
    let err = stderr(&assert);
    assert!(
        err.contains(
            "ledger.csv: line 3, column note: a quote opens here and is never closed (the file \
             ends inside it)"
        ),
        "{err}"
    );

    // With more than 64 KiB after it: told at 64 KiB, not an `invalid`
    // "row longer than 64 KiB" and a complete run.
    let mut text = "referenceNo,amount,note\nINV-1001,49.90,\"12 inch\n".to_owned();
    for _ in 0..3000 {
        text.push_str("INV-1002,12.00,a note of some length\n");
    }
    let ledger = sandbox.write_file("big.csv", &text);
    let assert = run(json(&sandbox, &server, &ledger)).await.code(2);
    let (rows, summary) = judged(&stdout(&assert));
    assert_eq!((rows.len(), &summary["complete"]), (0, &false.into()));
    let err = stderr(&assert);
    assert!(
        err.contains(
            "big.csv: line 2, column note: a quote opens here and is not closed within 64 KiB"
        ),
        "{err}"
    );
}

/// A stray quote closed by another row's quote many lines later made those
/// lines one row, `the row has 9 fields, the header 3`: the detail says
/// which lines were read as one row and where the quote opened and
/// closed. A legitimate quoted value over lines still reads.
#[tokio::test(flavor = "multi_thread")]
async fn lines_read_as_one_row_say_where_the_quote_opened_and_closed() {
    let (server, _) = shop().await;
    let sandbox = Sandbox::new();
    let ledger = sandbox.write_file(
        "ledger.csv",
        "referenceNo,amount,note\n\
         INV-1001,49.90,\"two\nlines, quoted\"\n\
         INV-1002,12.00,\"12 inch\n\
         INV-1003,30.00,x\n\
         INV-1004,15.00,\"Wong, Siew Lan\"\n\
         INV-1002,12.00,last\n",
    );
    let assert = run(json(&sandbox, &server, &ledger)).await.code(6);
    let (rows, summary) = judged(&stdout(&assert));
    assert_eq!(
        rows,
        [
            row(2, "match", ""),
            row(
                4,
                "invalid",
                "lines 4\u{2013}6 were read as one row: the quote opened in column note on line \
                 4 closes on line 6; the row has 4 fields, the header 3"
            ),
            // Not a duplicate: the row on line 4 was no row of INV-1002.
            row(7, "match", ""),
        ]
    );
    assert_eq!(
        (&summary["rows"], &summary["complete"]),
        (&3.into(), &true.into())
    );
}

/// A stray quote in the last column closed by a later line's quote, with
/// the header's number of fields: the lines between were one row, exit 0,
/// `complete: true`, and INV-1002 and INV-1003 never looked up. A row
/// whose quoted value holds lines that read as rows (the header's number
/// of fields, or a reference and an amount) is `invalid`, saying so; every
/// row over lines is named on stderr, a legitimate one too.
#[tokio::test(flavor = "multi_thread")]
async fn a_quote_that_swallows_rows_with_the_right_field_count_is_invalid() {
    let (server, _) = shop().await;
    let sandbox = Sandbox::new();
    let ledger = sandbox.write_file(
        "ledger.csv",
        "referenceNo,amount,note\n\
         INV-1001,49.90,\"12 inch pipe\n\
         INV-1002,12.00,ok\n\
         INV-1003,30.00,5\" screen\n\
         INV-1006,20.00,fine\n",
    );
    let assert = run(json(&sandbox, &server, &ledger)).await.code(6);
    let (rows, summary) = judged(&stdout(&assert));
    assert_eq!(
        rows,
        [
            row(
                2,
                "invalid",
                "lines 2\u{2013}4 were read as one row: the quote opened in column note on line \
                 2 closes on line 4, and it holds what look like rows of the ledger (lines \
                 3\u{2013}4)"
            ),
            row(5, "match", ""),
        ]
    );
    assert_eq!(summary["invalid"], 1);
    assert_eq!(
        stderr(&assert),
        "note: ledger lines 2\u{2013}4 were read as one row: the quote opened in column note \
         on line 2 closes on line 4\n"
    );

    // A reference then an amount reads as a row whatever its field count.
    let ledger = sandbox.write_file(
        "four.csv",
        "referenceNo,amount,note,currency\n\
         INV-1001,49.90,\"pipe\n\
         INV-1002,12.00\n\
         and more\",MYR\n",
    );
    let assert = run(json(&sandbox, &server, &ledger)).await.code(6);
    let (rows, _) = judged(&stdout(&assert));
    assert_eq!(
        rows,
        [row(
            2,
            "invalid",
            "lines 2\u{2013}4 were read as one row: the quote opened in column note on line \
             2 closes on line 4, and it holds what look like rows of the ledger (line 3)"
        )]
    );
}

/// A note over lines that holds no line like a row reads, as before, and
/// is named on stderr: nothing over lines passes unseen.
#[tokio::test(flavor = "multi_thread")]
async fn a_legitimate_value_over_lines_reads_and_is_noted() {
    let (server, _) = shop().await;
    let sandbox = Sandbox::new();
    let ledger = sandbox.write_file(
        "ledger.csv",
        "referenceNo,amount,note\r\n\
         INV-1001,49.90,\"first line\r\nsecond, 12 inch\r\n5 pieces\"\r\n\
         INV-1002,12.00,ok\r\n",
    );
    let assert = run(json(&sandbox, &server, &ledger)).await.code(0);
    let (rows, _) = judged(&stdout(&assert));
    assert_eq!(rows, [row(2, "match", ""), row(5, "match", "")]);
    assert_eq!(
        stderr(&assert),
        "note: ledger lines 2\u{2013}4 were read as one row: the quote opened in column note \
         on line 2 closes on line 4\n"
    );
}

/// `INV-1001` and a no-break space (a cell pasted from a web page) was
/// looked up as is and `missing`; cells are trimmed of Unicode whitespace
/// as of spaces.
#[tokio::test(flavor = "multi_thread")]
async fn a_reference_padded_with_a_no_break_space_matches() {
    let (server, _) = shop().await;
    let sandbox = Sandbox::new();
    let ledger = sandbox.write_file(
        "ledger.csv",
        "referenceNo,amount,currency,status\n\
         INV-1001\u{a0},49.90\u{a0},\u{a0}MYR,SUCCESSFUL\u{2007}\n\
         \u{3000}INV-1002,12.00,MYR,\n",
    );
    let assert = run(json(&sandbox, &server, &ledger)).await.success();
    let (rows, _) = judged(&stdout(&assert));
    assert_eq!(rows, [row(2, "match", ""), row(3, "match", "")]);
}

/// Rows of only commas (cells cleared instead of rows deleted) were
/// `invalid`, and a clean ledger exited 6: they are skipped as blank lines
/// are.
#[tokio::test(flavor = "multi_thread")]
async fn rows_of_only_commas_are_skipped_like_blank_lines() {
    let (server, _) = shop().await;
    let sandbox = Sandbox::new();
    let ledger = sandbox.write_file(
        "ledger.csv",
        "referenceNo,amount,note\r\nINV-1001,49.90,a\r\n,,\r\n, ,\r\nINV-1002,12.00,b\r\n,,\r\n,,\r\n",
    );
    let assert = run(json(&sandbox, &server, &ledger)).await.success();
    let (rows, summary) = judged(&stdout(&assert));
    assert_eq!(rows, [row(2, "match", ""), row(5, "match", "")]);
    assert_eq!(summary["rows"], 2);
}

/// A semicolon-separated ledger (European Excel), a tab-separated one, and
/// Excel's "Unicode text" (UTF-16) were told "the header has no
/// referenceNo and no amount column", the names plainly there.
#[tokio::test(flavor = "multi_thread")]
async fn other_separators_and_utf16_say_what_the_file_is() {
    let server = MockServer::start().await;
    let sandbox = Sandbox::new();
    let utf16: Vec<u8> = "\u{feff}referenceNo\tamount\r\nINV-1001\t49.90\r\n"
        .encode_utf16()
        .flat_map(u16::to_le_bytes)
        .collect();
    let utf16_path = sandbox.path().join("unicode.txt");
    std::fs::write(&utf16_path, utf16).expect("written");
    for (ledger, said) in [
        (
            sandbox.write_file(
                "semi.csv",
                "referenceNo;amount;currency\nINV-1001;49,90;MYR\n",
            ),
            "semi.csv: the header is separated by ';': only commas are read; save the ledger as \
             CSV with commas",
        ),
        (
            sandbox.write_file("tabs.tsv", "referenceNo\tamount\nINV-1001\t49.90\n"),
            "tabs.tsv: the header is separated by tabs: only commas are read",
        ),
        (
            utf16_path,
            "unicode.txt: the file is UTF-16 (a spreadsheet's \"Unicode text\"): save it as CSV \
             UTF-8",
        ),
    ] {
        let assert = run(json(&sandbox, &server, &ledger)).await.code(2);
        let err = stderr(&assert);
        assert!(err.contains(said), "{err}");
        assert_eq!(stdout(&assert), "");
    }
}

/// A reference a spreadsheet wrote in scientific notation is `missing`,
/// and the detail says what probably happened and what to do.
#[tokio::test(flavor = "multi_thread")]
async fn a_reference_in_scientific_notation_says_a_spreadsheet_turned_it_into_a_number() {
    let (server, _) = shop().await;
    let sandbox = Sandbox::new();
    let ledger = sandbox.write_file(
        "ledger.csv",
        "referenceNo,amount\n1.23456789012346E+017,49.90\nINV-1099,1.00\n",
    );
    let assert = run(json(&sandbox, &server, &ledger)).await.code(6);
    let (rows, _) = judged(&stdout(&assert));
    assert_eq!(
        rows,
        [
            row(
                2,
                "missing",
                "the service has no transaction with this referenceNo, which looks like a number \
                 in scientific notation: a spreadsheet probably turned the reference into a \
                 number; format that column as text and export the ledger again"
            ),
            row(
                3,
                "missing",
                "the service has no transaction with this referenceNo"
            ),
        ]
    );
}
