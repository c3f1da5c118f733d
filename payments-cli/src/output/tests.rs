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
    let line = reconciled_envelope(&confirmation, "req-9").unwrap();
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
    let value: serde_json::Value =
        serde_json::from_str(&reconciled_envelope(&initiated, "req-10").unwrap()).unwrap();
    assert_eq!(value["data"]["amount"].to_string(), "1050");
    assert_eq!(value["data"]["currencyCode"], "MYR");
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

#[test]
fn many_rows_drop_the_least_needed_columns_then_wrap_then_go_vertical() {
    let mut long = found();
    long.message = Some("a message long enough to need more than one line of text".into());
    let rows = [LookupRow::Found(found()), LookupRow::Found(long)];
    let width = |width| Style {
        colour: false,
        width,
    };
    assert!(statuses(&rows, PLAIN).contains("PROVIDER REF"));
    let dropped = statuses(&rows, width(120));
    assert!(
        !dropped.contains("PROVIDER REF") && dropped.contains("PRODUCT"),
        "{dropped}"
    );
    assert!(
        dropped.contains("one line of text"),
        "the message whole: {dropped}"
    );
    let wrapped = statuses(&rows, width(100));
    assert!(
        wrapped.lines().all(|line| line.chars().count() <= 100),
        "{wrapped}"
    );
    assert!(
        !wrapped.contains("PRODUCT") && wrapped.contains("AMOUNT"),
        "{wrapped}"
    );
    assert_eq!(wrapped.lines().count(), 4, "{wrapped}");
    let vertical = statuses(&rows, width(80));
    assert!(
        vertical.lines().all(|line| line.chars().count() <= 80),
        "{vertical}"
    );
    assert_eq!(vertical.matches("Transaction ID").count(), 2, "{vertical}");
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
