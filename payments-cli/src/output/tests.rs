use super::*;

const PLAIN: Style = Style {
    colour: false,
    width: 1000,
};

fn at(text: &str) -> DateTime<Utc> {
    text.parse().unwrap()
}

fn found() -> StatusView {
    StatusView {
        transaction_id: "0193-aaaa".into(),
        reference_no: "INV/1".into(),
        status: "SUCCESSFUL".into(),
        amount: "150.00".into(),
        product_code: "TOPUP".into(),
        created_at: at("2026-11-22T08:15:30.123Z"),
        last_modified_at: None,
        provider_reference: Some("PRV-1".into()),
        message: None,
    }
}

#[test]
fn times_are_utc_to_the_second() {
    assert_eq!(
        time(at("2026-11-22T08:15:30.999+08:00")),
        "2026-11-22 00:15:30Z"
    );
}

#[test]
fn status_rows_keep_order_and_show_failures_in_line() {
    let text = statuses(
        &[
            LookupRow::Found(found()),
            LookupRow::Failed {
                input: "nope".into(),
                by_reference: false,
                label: "NOT FOUND".into(),
                reason: "transaction not found".into(),
            },
        ],
        PLAIN,
    );
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(lines[0].starts_with("TRANSACTION ID"));
    assert!(lines[1].contains("SUCCESSFUL") && lines[1].contains("150.00"));
    assert!(lines[2].starts_with("nope") && lines[2].contains("NOT FOUND"));
    assert!(!text.contains('\u{1b}'), "no colour when not asked");
    assert_eq!(
        lines[1].find("SUCCESSFUL"),
        lines[2].find("NOT FOUND"),
        "columns align"
    );
}

#[test]
fn a_reconciled_confirmation_keeps_the_confirm_shape_with_exact_amounts() {
    let confirmation: payments_client::Confirmation = serde_json::from_str(
        r#"{"transactionId":"t-1","referenceNo":"R/1","status":"SUCCESSFUL","amount":90071992547409.91,
            "providerReference":"PRV-1","confirmedAt":null,"errorMessage":null,"extraProperties":null}"#,
    )
    .unwrap();
    let line = reconciled_envelope(&confirmation, "req-9", Reconciled::RetryFoundItDone).unwrap();
    assert!(!line.contains('\n'), "{line}");
    let value: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(value["isSuccess"], true);
    assert!(value["message"].as_str().unwrap().contains("req-9"));
    assert_eq!(value["data"]["amount"].to_string(), "90071992547409.91");
    assert_eq!(value["data"]["referenceNo"], "R/1");
}

#[test]
fn a_reconciled_initiate_keeps_minor_units_and_currency() {
    let initiated: payments_client::Initiated = serde_json::from_str(
        r#"{"transactionId":"t-2","referenceNo":"R2","status":"INITIATED","amount":1050,
            "currencyCode":"MYR","productCode":"TOPUP","createdAt":"2026-11-22T08:15:30.123Z"}"#,
    )
    .unwrap();
    let value: serde_json::Value = serde_json::from_str(
        &reconciled_envelope(&initiated, "req-10", Reconciled::AnswerUnreadable).unwrap(),
    )
    .unwrap();
    assert_eq!(value["data"]["amount"].to_string(), "1050");
    assert_eq!(value["data"]["currencyCode"], "MYR");
    // What happened, and no retry that did not.
    let message = value["message"].as_str().unwrap();
    assert!(message.contains("could not be read"), "{message}");
    assert!(!message.contains("retry"), "{message}");
    assert_eq!(value["data"]["createdAt"], "2026-11-22T08:15:30.123Z");
}

#[test]
fn control_characters_from_the_service_are_escaped() {
    assert_eq!(printable("plain text"), "plain text");
    assert_eq!(
        printable("red\u{1b}[31mALERT\nnext"),
        "red\\u{1b}[31mALERT\\nnext"
    );
    let mut row = found();
    row.message = Some("\u{1b}]0;pwned\u{7}".to_owned());
    let table = statuses(&[LookupRow::Found(row)], PLAIN);
    assert!(!table.contains('\u{1b}'), "{table}");
    assert!(table.contains("\\u{1b}]0;pwned\\u{7}"), "{table}");
    // Bidirectional controls would show what follows them reversed.
    assert_eq!(
        printable("/api/payments/\u{202e}ABC/status"),
        "/api/payments/\\u{202e}ABC/status"
    );
    for c in [
        '\u{61c}', '\u{200e}', '\u{200f}', '\u{202a}', '\u{2066}', '\u{2069}',
    ] {
        assert!(!printable(&format!("a{c}b")).contains(c), "{c:?}");
    }
    assert_eq!(printable("ünïcødé → ok"), "ünïcødé → ok");
}

#[test]
fn the_width_is_columns_then_the_terminal_then_80() {
    assert_eq!(table_width(Some("120"), Some(200)), 120);
    assert_eq!(table_width(Some("junk"), Some(200)), 200);
    assert_eq!(table_width(Some("0"), None), 80);
    assert_eq!(table_width(None, None), 80);
}

#[test]
fn a_single_status_goes_vertical_when_its_row_would_not_fit() {
    let wide = status(&found(), PLAIN);
    assert_eq!(wide.lines().count(), 2, "{wide}");
    let narrow = status(
        &found(),
        Style {
            colour: false,
            width: 80,
        },
    );
    assert!(narrow.lines().all(|line| line.len() <= 80), "{narrow}");
    assert!(narrow.starts_with("Transaction ID"), "{narrow}");
}

/// Support staff at an 80-column terminal (issue 40): many look-ups with
/// 25-character references and long messages stay one row per input at
/// 80, 100 and 120 columns; only a narrower terminal goes vertical.
#[test]
fn many_rows_drop_columns_then_shorten_ids_then_wrap_and_stay_rows_from_80_columns() {
    let row = |n: u32, message: Option<&str>| {
        let mut view = found();
        view.transaction_id = format!("01937e1c-0000-7000-8000-00000000{n:04}");
        view.reference_no = format!("SHOP-ORDER-2026-21333-{n:03}");
        view.amount = "90071992547409.91 MYR".into();
        view.message = message.map(str::to_owned);
        LookupRow::Found(view)
    };
    let rows = [
        row(1, None),
        row(
            2,
            Some("a message long enough to need more than one line of text"),
        ),
        LookupRow::Failed {
            input: "01937e1c-0000-7000-8000-000000009999".into(),
            by_reference: false,
            label: "NOT FOUND".into(),
            reason: "no transaction with transactionId 01937e1c-0000-7000-8000-000000009999".into(),
        },
        row(4, None),
    ];
    let width = |width| Style {
        colour: false,
        width,
    };
    let wide = statuses(&rows, PLAIN);
    assert!(wide.contains("PROVIDER REF") && wide.contains("01937e1c-0000-7000-8000-000000000001"));
    // In colour too: the STATUS column's escape codes take no room on a
    // terminal (measured as text, they once sent every row to blocks).
    let sizes = [80, 100, 120].map(|columns| (columns, false));
    let coloured = [80, 100, 120].map(|columns| (columns, true));
    for (columns, colour) in sizes.into_iter().chain(coloured) {
        let text = statuses(
            &rows,
            Style {
                colour,
                width: columns,
            },
        );
        assert_eq!(text.contains('\u{1b}'), colour, "{text:?}");
        assert!(
            text.lines()
                .all(|line| console::measure_text_width(line) <= columns),
            "{columns}:\n{text}"
        );
        assert!(
            text.starts_with("TRANSACTION ID"),
            "a table at {columns}:\n{text}"
        );
        assert_eq!(
            text.lines()
                .filter(|line| line.starts_with("01937e1c"))
                .count(),
            4,
            "one row per look-up at {columns}:\n{text}"
        );
        assert!(
            !text.contains("Transaction ID"),
            "no blocks at {columns}:\n{text}"
        );
    }
    let at_120 = statuses(&rows, width(120));
    assert!(!at_120.contains("PROVIDER REF"), "{at_120}");
    let at_80 = statuses(&rows, width(80));
    assert!(at_80.contains("01937e1c…0001"), "ids shortened: {at_80}");
    assert!(!at_80.contains("PRODUCT"), "{at_80}");
    let vertical = statuses(&rows, width(60));
    assert!(
        vertical.lines().all(|line| line.chars().count() <= 60),
        "{vertical}"
    );
    assert_eq!(vertical.matches("Transaction ID").count(), 4, "{vertical}");
}

#[test]
fn an_id_is_shortened_to_its_first_and_last_characters() {
    assert_eq!(
        short_id("01937e1c-0000-7000-8000-0000000000c1"),
        "01937e1c…00c1"
    );
    assert_eq!(short_id("0193-aaaa"), "0193-aaaa");
    assert_eq!(short_id("abcdefgh12345"), "abcdefgh12345");
    assert_eq!(short_id("ääääääääxyzwvu"), "ääääääää…zwvu");
}

#[test]
fn amounts_carry_a_currency_whose_decimals_they_have() {
    let amount: Decimal = "49.90".parse().unwrap();
    assert_eq!(
        amount_in(&amount, &Currency::MYR).as_deref(),
        Some("49.90 MYR")
    );
    assert_eq!(amount_in(&amount, &Currency::JPY), None);
    assert_eq!(amount_in(&amount, &Currency::KWD), None);
}

#[test]
fn colour_is_only_used_when_asked() {
    let text = statuses(
        &[LookupRow::Found(found())],
        Style {
            colour: true,
            width: 1000,
        },
    );
    assert!(text.contains('\u{1b}'), "{text:?}");
}

/// CJK text takes two columns a character and has no spaces: a status
/// message of 54 such characters made a 124-column line at 80 columns,
/// a 64-character CJK reference a 143-column one.
#[test]
fn a_single_look_up_fits_the_width_in_any_script() {
    let narrow = Style {
        colour: false,
        width: 80,
    };
    let fits = |text: &str| {
        text.lines()
            .all(|line| console::measure_text_width(line) <= 80)
    };
    let reference = format!("{}X", "請求書".repeat(21));
    let message = "支払いは銀行によって拒否されました。".repeat(3);
    let mut view = found();
    view.message = Some(message.clone());
    view.reference_no = reference.clone();
    let text = status(&view, narrow);
    assert!(fits(&text), "{text}");
    // In colour too: the STATUS value's padding sat inside its codes.
    let coloured = status(
        &view,
        Style {
            colour: true,
            width: 80,
        },
    );
    assert!(
        coloured.contains('\u{1b}') && fits(&coloured),
        "{coloured:?}"
    );
    let unwrapped = text.lines().map(|line| line.trim()).collect::<String>();
    assert!(
        unwrapped.contains(&message) && unwrapped.contains(&reference),
        "{text}"
    );
    let text = initiated(
        &InitiatedView {
            transaction_id: "01a229b6-2411-742a-a4b6-0f252b81f3ff".into(),
            reference_no: reference.clone(),
            status: "INITIATED".into(),
            amount: "1.00 MYR".into(),
            product_code: "DECLINED".into(),
            created_at: at("2026-11-22T08:15:30Z"),
            extra_properties: None,
        },
        narrow,
    );
    assert!(fits(&text), "{text}");
    assert!(text.contains("Reference       請求書"), "{text}");
    // Many look-ups: one row each, or blocks, but within the width.
    let many = statuses(
        &[LookupRow::Found(view.clone()), LookupRow::Found(found())],
        narrow,
    );
    assert!(fits(&many), "{many}");
    // The payment page stays whole on its line, ready to copy.
    let url = format!("https://bank.example/pay?session={}", "a".repeat(90));
    let text = confirmed(
        &ConfirmedView {
            transaction_id: "t".into(),
            reference_no: reference,
            status: "CONFIRMED".into(),
            amount: "1.00".into(),
            provider_reference: None,
            confirmed_at: None,
            error_message: Some(message),
            extra_properties: None,
            payment_url: Some(url.clone()),
        },
        narrow,
    );
    assert!(text.contains(&url), "{text}");
    assert!(
        text.lines()
            .filter(|line| !line.contains(&url))
            .all(|line| console::measure_text_width(line) <= 80),
        "{text}"
    );
}
