use super::*;
use proptest::prelude::*;

fn line(line: usize, value: &str, lookup: Result<Lookup, &str>) -> Input {
    Input {
        origin: Origin::Line(line),
        value: value.to_owned(),
        lookup: lookup.map_err(str::to_owned),
    }
}

#[test]
fn lines_skip_blanks_and_comments_and_report_the_rest() {
    let inputs = parse_lines(b"# ids\n\nabc\n  def  \r\nbad id\n\x01\n# end", false);
    assert_eq!(
        inputs,
        vec![
            line(3, "abc", Ok(Lookup::Id("abc".into()))),
            line(4, "def", Ok(Lookup::Id("def".into()))),
            line(
                5,
                "bad id",
                Err(
                    "'bad id' is not a transaction id (it has spaces; use --by-reference for references)"
                )
            ),
            line(
                6,
                "\x01",
                Err("the transaction id contains a control character")
            ),
        ]
    );
}

#[test]
fn a_byte_order_mark_is_not_part_of_the_first_line() {
    for by_reference in [false, true] {
        let inputs = parse_lines(b"\xef\xbb\xbfabc\r\n\xef\xbb\xbfdef\r\n", by_reference);
        let lookup = |v: &str| {
            if by_reference {
                Lookup::Reference(v.into())
            } else {
                Lookup::Id(v.into())
            }
        };
        assert_eq!(inputs[0], line(1, "abc", Ok(lookup("abc"))));
        // A mark at any line's start is not part of it: two files that
        // each begin with one, joined with `cat`, put one mid-file.
        assert_eq!(inputs[1], line(2, "def", Ok(lookup("def"))));
    }
    // A file that is only a mark holds nothing to look up.
    assert!(parse_lines(b"\xef\xbb\xbf", false).is_empty());
}

#[test]
fn an_id_with_an_invisible_format_character_is_malformed() {
    let text = "01a2\u{200b}0813-0000-7000-8000-000000000000\n\
                01a20813-0000-7000-8000-00000000\u{202e}0001\n\
                01a20813-0000-7000-8000-\u{feff}000000000002\n";
    let inputs = parse_lines(text.as_bytes(), false);
    let reasons: Vec<_> = inputs.iter().map(|input| input.lookup.clone()).collect();
    assert_eq!(
        reasons,
        ["200B", "202E", "FEFF"].map(|code| Err(format!(
            "the transaction id contains an invisible format character (U+{code})"
        )))
    );
    // A reference is the service's to judge: it is sent as it is.
    let inputs = parse_lines("INV\u{200b}1\n".as_bytes(), true);
    assert_eq!(
        inputs[0].lookup,
        Ok(Lookup::Reference("INV\u{200b}1".into()))
    );
}

#[test]
fn references_may_hold_inner_spaces_and_slashes() {
    let inputs = parse_lines("INV/2026 0001\nnon-utf8 \u{e9}\n".as_bytes(), true);
    assert_eq!(
        inputs[0].lookup,
        Ok(Lookup::Reference("INV/2026 0001".into()))
    );
    let inputs = parse_lines(b"\xff\xfe\n", true);
    assert!(matches!(inputs[0].origin, Origin::Line(1)) && inputs[0].lookup.is_err());
}

#[test]
fn a_joined_line_names_its_input_beside_the_envelope() {
    let input = line(7, "abc", Ok(Lookup::Id("abc".into())));
    let envelope =
        "{\"isSuccess\":true,\n \"data\":{\"amount\":90071992547409.91,\"m\":\"a \\\" b\"}}";
    let text = joined_line(&input, Some(envelope), None, None);
    assert_eq!(
        text,
        r#"{"input":{"line":7,"value":"abc"},"envelope":{"isSuccess":true,"data":{"amount":90071992547409.91,"m":"a \" b"}},"error":null}"#
    );
    let bad = line(9, "x y", Err("no"));
    assert_eq!(
        joined_line(&bad, None, Some("--from-file line 9: no"), None),
        r#"{"input":{"line":9,"value":"x y"},"envelope":null,"error":"--from-file line 9: no"}"#
    );
    let arg = Input::arg(1, Lookup::Reference("R".into()));
    assert!(
        joined_line(&arg, None, Some("e"), None).starts_with(r#"{"input":{"arg":2,"value":"R"}"#)
    );
}

#[test]
fn a_refused_answer_is_received_beside_a_null_envelope() {
    let input = line(3, "abc", Ok(Lookup::Id("abc".into())));
    let lying = "{\"isSuccess\":true,\n \"data\":{\"transactionId\":\"other\"}}";
    assert_eq!(
        joined_line(&input, None, Some("mismatch"), Some(lying)),
        r#"{"input":{"line":3,"value":"abc"},"envelope":null,"error":"mismatch","received":{"isSuccess":true,"data":{"transactionId":"other"}}}"#
    );
    assert_eq!(
        joined_line(&input, None, Some("mismatch"), Some("<html>")),
        r#"{"input":{"line":3,"value":"abc"},"envelope":null,"error":"mismatch","received":"<html>"}"#
    );
}

#[test]
fn a_long_malformed_line_is_echoed_at_most_200_bytes() {
    let long = "x ".repeat(100_000);
    let inputs = parse_lines(long.as_bytes(), false);
    assert!(
        inputs[0].value.len() <= crate::text::MAX_ECHO + 3,
        "{}",
        inputs[0].value.len()
    );
}

proptest! {
    #[test]
    fn any_bytes_give_one_input_per_meaningful_line(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let inputs = parse_lines(&bytes, false);
        let lines = bytes.split(|&b| b == b'\n').count();
        prop_assert!(inputs.len() <= lines);
    }
}
