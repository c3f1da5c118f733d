//! The payment page's form: its one action, the characters it shows.

use super::*;

#[test]
fn a_form_names_exactly_one_known_action() {
    assert_eq!(action_of(b"action=pay"), Ok(PayerAction::Pay));
    // The form's one field, nothing else (issue 40: the document
    // bounds the form by its fields).
    assert_eq!(
        action_of(b"x=1&action=decline&y=2").expect_err("another field"),
        "This form has no field \u{201c}x\u{201d}: it carries one action, pay, decline or cancel."
    );
    assert_eq!(action_of(b"action=cancel"), Ok(PayerAction::Cancel));
    for bad in [
        &b""[..],
        b"action=",
        b"action=PAY",
        b"action=pay&action=pay",
        b"action=pay&action=decline",
        b"action=%FF%FE",
        b"act%69on=refund",
        b"\xff\xfe",
    ] {
        assert!(action_of(bad).is_err(), "{}", String::from_utf8_lossy(bad));
    }
    let long = format!("action={}", "x".repeat(5000));
    let message = action_of(long.as_bytes()).expect_err("unknown");
    assert!(message.chars().count() < 200, "{message}");
}

/// A bidi override or a control character posted by another site's
/// page is shown as a symbol, never turning the page's text around.
#[test]
fn a_refused_action_shows_control_and_bidi_characters_as_symbols() {
    let value = action_of("action=%E2%80%AEyap%0B".as_bytes()).expect_err("unknown");
    assert!(
        !value.contains('\u{202e}') && !value.contains('\u{b}'),
        "{value:?}"
    );
    assert!(value.contains("<U+202E>yap\u{240b}"), "{value:?}");
    let name = action_of("%E2%80%AEx%E2%81%A6=1".as_bytes()).expect_err("a field");
    assert!(
        !name.contains('\u{202e}') && !name.contains('\u{2066}'),
        "{name:?}"
    );
    assert!(name.contains("<U+202E>x<U+2066>"), "{name:?}");
}

#[test]
fn only_forms_are_accepted() {
    let mut headers = HeaderMap::new();
    assert!(is_form(&headers));
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/x-www-form-urlencoded; charset=UTF-8"),
    );
    assert!(is_form(&headers));
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    assert!(!is_form(&headers));
}
