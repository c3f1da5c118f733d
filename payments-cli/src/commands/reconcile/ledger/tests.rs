//! The ledger's header and row checks.

use super::*;

fn rows(text: &str) -> Vec<Row> {
    let mut records = Records::new(text.as_bytes());
    let columns = header(&mut records).unwrap().unwrap();
    let mut checker = Checker::new(columns, Currency::MYR);
    let mut out = Vec::new();
    loop {
        match records.next().unwrap() {
            Next::Record { line } => out.push(checker.check(&records, line)),
            Next::TooLong { line, why } => out.push(checker.too_long(line, why)),
            Next::OpenQuote(_) | Next::End => return out,
        }
    }
}

fn invalid(row: &Row) -> &str {
    match &row.verdict {
        Verdict::Invalid(reason) => reason,
        other => panic!("line {} not invalid: {other:?}", row.line),
    }
}

#[test]
fn columns_are_found_by_name_in_any_order_and_case() {
    let rows = rows("Status, AMOUNT ,note,referenceno\nsuccessful,10.50,x,R1\n");
    let Verdict::LookUp(valid) = &rows[0].verdict else {
        panic!("{:?}", rows[0]);
    };
    assert_eq!(valid.reference, "R1");
    assert_eq!(valid.amount.get(), 1050);
    assert_eq!(valid.status, Some(TransactionStatus::Successful));
    assert_eq!(valid.currency, Currency::MYR);
}

#[test]
fn header_problems_say_what_is_wrong() {
    let find = |text: &str| {
        let mut records = Records::new(text.as_bytes());
        header(&mut records).unwrap().unwrap_err().0
    };
    assert!(find("").contains("the ledger is empty"));
    assert!(
        find("ref,amount\n").contains("no referenceNo column"),
        "{}",
        find("ref,amount\n")
    );
    assert!(find("a,b\n").contains("no referenceNo and no amount column"));
    assert!(find("amount,referenceNo,Amount\n").contains("amount twice (columns 1 and 3)"));
}

/// European Excel's `;`, a tab-separated export and Excel's "Unicode
/// text" were told "the header has no referenceNo and no amount column",
/// the names plainly there.
#[test]
fn a_header_in_another_separator_or_utf16_says_so() {
    let find = |bytes: &[u8]| {
        let mut records = Records::new(bytes);
        header(&mut records).unwrap().unwrap_err().0
    };
    let said = find(b"referenceNo;amount;currency\nR1;1,50;EUR\n");
    assert!(
        said.starts_with("the header is separated by ';': only commas are read; save the ledger as CSV with commas"),
        "{said}"
    );
    let said = find(b"Amount\tReferenceNo\nR1\t1.50\n");
    assert!(
        said.starts_with("the header is separated by tabs:"),
        "{said}"
    );
    let utf16: Vec<u8> = "referenceNo\tamount\r\n"
        .encode_utf16()
        .flat_map(u16::to_le_bytes)
        .collect();
    let with_bom = [&[0xff, 0xfe][..], &utf16].concat();
    for bytes in [&with_bom[..], &utf16[..]] {
        assert_eq!(
            find(bytes),
            "the file is UTF-16 (a spreadsheet's \"Unicode text\"): save it as CSV UTF-8"
        );
    }
    let big_endian: Vec<u8> = "\u{feff}referenceNo,amount\n"
        .encode_utf16()
        .flat_map(u16::to_be_bytes)
        .collect();
    assert!(find(&big_endian).starts_with("the file is UTF-16"));
    // A `;` in a name that is no column name is only a name.
    assert!(find(b"ref;no,total\n").starts_with("the header has no referenceNo"));
}

/// A no-break space (or any Unicode whitespace) at either end of a cell is
/// trimmed as a space is: `INV-7` and U+00A0 was looked up as is, and
/// `missing`.
#[test]
fn cells_are_trimmed_of_unicode_whitespace() {
    let rows = rows(
        "referenceNo,amount,currency,status\n\u{a0}INV-7\u{a0},\u{2007}10.50\u{a0},MYR\u{a0},\u{3000}successful\n",
    );
    let Verdict::LookUp(valid) = &rows[0].verdict else {
        panic!("{:?}", rows[0]);
    };
    assert_eq!(valid.reference, "INV-7");
    assert_eq!(valid.amount.get(), 1050);
    assert_eq!(valid.status, Some(TransactionStatus::Successful));
    assert_eq!(rows[0].cells.reference.as_deref(), Some("INV-7"));
}

#[test]
fn amounts_follow_the_currency_exponent_exactly() {
    let rows = rows(
        "referenceNo,amount,currency\n\
         A,10.505,MYR\nB,1500,jpy\nC,1.5,JPY\nD,1.500,KWD\nE,0,MYR\nF,-5,MYR\n\
         G,1e3,MYR\nH,\"1,000.00\",MYR\nI,10.50,XYZ\nJ,,MYR\nK,90071992547409.92,MYR\n\
         L,10.,MYR\nM,.5,MYR\nN,.,MYR\nO,0.5,MYR\n",
    );
    assert!(invalid(&rows[0]).contains("more than 2 decimal places, the most MYR allows"));
    assert!(matches!(&rows[1].verdict, Verdict::LookUp(v) if v.amount.get() == 1500));
    assert!(invalid(&rows[2]).contains("more than 0 decimal places"));
    assert!(matches!(&rows[3].verdict, Verdict::LookUp(v) if v.amount.get() == 1500));
    assert!(invalid(&rows[4]).contains("greater than zero"));
    assert!(invalid(&rows[5]).contains("greater than zero"));
    assert!(invalid(&rows[6]).contains("is not an amount"));
    assert!(invalid(&rows[7]).contains("is not an amount"));
    assert!(invalid(&rows[8]).contains("not an ISO 4217 code"));
    assert_eq!(invalid(&rows[9]), "amount is empty");
    assert!(invalid(&rows[10]).contains("too large"));
    // A point needs digits on both sides.
    for row in &rows[11..14] {
        assert!(invalid(row).contains("is not an amount"), "{row:?}");
    }
    assert!(matches!(&rows[14].verdict, Verdict::LookUp(v) if v.amount.get() == 50));
}

#[test]
fn the_second_row_of_a_reference_is_a_duplicate_of_the_first() {
    let rows = rows("referenceNo,amount\nR1,1\nR2,2\nR1,3\nR1,x\n");
    assert!(matches!(rows[0].verdict, Verdict::LookUp(_)));
    assert_eq!(rows[2].verdict, Verdict::Duplicate { first_line: 2 });
    assert!(
        invalid(&rows[3]).contains("not an amount"),
        "malformed wins"
    );
}

#[test]
fn every_problem_of_a_row_is_named() {
    let rows = rows("referenceNo,amount,status,transactionId\n,abc,PAID,a b\nR,1\n");
    let reason = invalid(&rows[0]);
    for part in [
        "referenceNo is empty",
        "'abc' is not an amount",
        "'PAID' is not one of",
        "has a space",
    ] {
        assert!(reason.contains(part), "{part}: {reason}");
    }
    assert!(invalid(&rows[1]).contains("the row has 2 fields, the header 4"));
}

/// Issue 40: an unquoted comma gave cascading complaints about values
/// in the wrong columns; now one message, and the row is no reference's
/// first sighting (its values are not where the header says).
#[test]
fn a_row_with_another_field_count_is_invalid_with_one_message() {
    let rows = rows(
        "referenceNo,amount,currency,status\nINV-1,1,000.00,MYR,SUCCESSFUL\nINV-1,1000.00,MYR,SUCCESSFUL\n",
    );
    assert_eq!(
        invalid(&rows[0]),
        "the row has 5 fields, the header 4 (a comma in a value must be quoted)"
    );
    assert!(
        matches!(rows[1].verdict, Verdict::LookUp(_)),
        "{:?}",
        rows[1].verdict
    );
}

#[test]
fn cells_that_are_not_utf8_are_named() {
    let mut text = b"referenceNo,amount,other\n".to_vec();
    text.extend(b"R\xff,1,\xfe\nR2,1,\xfe\n");
    let mut records = Records::new(text.as_slice());
    let columns = header(&mut records).unwrap().unwrap();
    let mut checker = Checker::new(columns, Currency::MYR);
    let Next::Record { line } = records.next().unwrap() else {
        panic!()
    };
    let row = checker.check(&records, line);
    assert_eq!(invalid(&row), "referenceNo is not valid UTF-8");
    assert_eq!(row.cells.reference.as_deref(), Some("R\u{fffd}"));
    let Next::Record { line } = records.next().unwrap() else {
        panic!()
    };
    assert!(
        matches!(checker.check(&records, line).verdict, Verdict::LookUp(_)),
        "an unused column may hold anything"
    );
}

/// A valid referenceNo of 64 emoji is 256 bytes: its cell is repeated
/// whole (it was cut to 200 bytes, so two such references showed as the
/// same 50 emoji and `…`), as is one of 300 characters (the references'
/// rule, not the cut, bounds it); a value that cannot be valid is cut by
/// characters, and an accepted amount is whole however long.
#[test]
fn cells_are_whole_unless_no_valid_value_is_that_long() {
    use crate::commands::reference::MAX_REFERENCE_CHARS;
    let emoji = "😀".repeat(63);
    let accepted = "r".repeat(300);
    let long = "x".repeat(MAX_REFERENCE_CHARS + 50);
    let zeros = format!("{}1.00", "0".repeat(300));
    let rows = rows(&format!(
        "referenceNo,amount,transactionId\n{emoji}A,1.00,\n{emoji}B,1.00,\n{long},{zeros},{long}\n\
         {accepted},1.00,\n"
    ));
    assert!(matches!(rows[0].verdict, Verdict::LookUp(_)));
    assert_eq!(rows[0].cells.reference, Some(format!("{emoji}A")));
    assert_eq!(rows[1].cells.reference, Some(format!("{emoji}B")));
    let cut = format!("{}…", "x".repeat(MAX_CELL_CHARS));
    assert!(invalid(&rows[2]).contains("referenceNo is longer than 1024 characters"));
    assert!(invalid(&rows[2]).contains("transactionId is longer than 128 characters"));
    assert_eq!(rows[2].cells.reference.as_deref(), Some(cut.as_str()));
    assert_eq!(rows[2].cells.transaction_id.as_deref(), Some(cut.as_str()));
    assert_eq!(rows[2].cells.amount.as_deref(), Some(zeros.as_str()));
    assert!(matches!(rows[3].verdict, Verdict::LookUp(_)));
    assert_eq!(rows[3].cells.reference.as_deref(), Some(accepted.as_str()));
}
