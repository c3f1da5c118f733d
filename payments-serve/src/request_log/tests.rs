//! The request line's path: a payment page's token hidden, a long path cut.

use super::*;

/// A payment page's token, at the root or under a sandbox, is never
/// shown, however long; another path is cut at the bound.
#[test]
fn a_logged_path_hides_a_payment_pages_token_and_is_cut() {
    for (path, shown) in [
        ("/pay/TOKEN", Some("/pay/")),
        ("/pay/", Some("/pay/")),
        (
            "/sandboxes/2dca662f/pay/TOKEN",
            Some("/sandboxes/2dca662f/pay/"),
        ),
        ("/sandboxes/x/pay/", Some("/sandboxes/x/pay/")),
        ("/payments/x", None),
        ("/api/payments/pay/status", None),
        ("/sandboxes/x/api/payments/initiate", None),
        ("/sandboxes/pay/TOKEN", None),
        ("/sandboxes/", None),
        ("/x/pay/TOKEN", None),
    ] {
        assert_eq!(before_payment_token(path), shown, "{path}");
        match shown {
            Some(page) => {
                assert_eq!(RequestLine::shown_path(path), (page, "[redacted]"));
            }
            None => assert_eq!(RequestLine::shown_path(path), (path, "")),
        }
    }
    let token = format!("/pay/{}", "T".repeat(400));
    assert_eq!(RequestLine::shown_path(&token), ("/pay/", "[redacted]"));
    let long = format!("/api/payments/x{}/status", "\u{e9}".repeat(200));
    let (shown, cut) = RequestLine::shown_path(&long);
    assert_eq!((shown.len(), cut), (255, "…"));
    assert!(long.starts_with(shown));
    let exact = "/".repeat(RequestLine::MAX_PATH);
    assert_eq!(RequestLine::shown_path(&exact), (exact.as_str(), ""));
}

/// A token is hidden however the path is spelt around it: a proxy that
/// strips a prefix badly (`//pay/T`), one that strips none
/// (`/mock/pay/T`), another case (`/PAY/T`, `/Sandboxes/x/pay/T`), empty
/// segments, a token percent-encoded. What is no token stays readable.
#[test]
fn a_token_in_a_path_no_route_spells_is_hidden_too() {
    let token = "Da6vPJYwBvZFHi471juYGLIVrenoMSk5";
    for (path, shown) in [
        (format!("//pay/{token}"), "//pay/"),
        (format!("/PAY/{token}"), "/PAY/"),
        (format!("/Pay//{token}/"), "/Pay//"),
        (format!("/Sandboxes/x/pay/{token}"), "/Sandboxes/x/pay/"),
        (format!("/SANDBOXES/x/PAY/{token}"), "/SANDBOXES/x/PAY/"),
        (
            format!("/sandboxes//x//pay//{token}"),
            "/sandboxes//x//pay//",
        ),
        ("/sandboxes/x".to_owned(), ""),
        (format!("/mock/pay/{token}/more"), "/mock/pay/"),
        (format!("/pay%2F{token}"), ""),
        (format!("//pay/%44{}", &token[1..]), "//pay/"),
        (format!("//pay/%44%61{}", &token[2..]), "//pay/"),
    ] {
        if shown.is_empty() {
            assert_eq!(before_payment_token(&path), None, "{path}");
            assert_eq!(RequestLine::shown_path(&path), (path.as_str(), ""));
        } else {
            assert_eq!(before_payment_token(&path), Some(shown), "{path}");
            assert_eq!(RequestLine::shown_path(&path), (shown, "[redacted]"));
        }
    }
    // Not a token's shape, or no `pay` before it: shown whole.
    for path in [
        format!("//pay/{}", &token[1..]),
        format!("//pay/{token}x"),
        format!("//pay/{}-", &token[1..]),
        format!("//pay/%4{}", &token[1..]),
        format!("//pay/%ZZ{}", &token[1..]),
        format!("//pay/\u{e9}{}", &token[2..]),
        format!("//payments/{token}"),
        format!("/api/payments/reference/{token}/status"),
        format!("/api/payments/{token}/status"),
        "/api/payments/pay/status".to_owned(),
    ] {
        assert_eq!(before_payment_token(&path), None, "{path}");
    }
}

#[test]
fn a_segment_is_token_shaped_when_it_decodes_to_32_letters_and_digits() {
    assert!(token_shaped(&"a".repeat(32)));
    assert!(token_shaped(&"%41".repeat(32)));
    assert!(!token_shaped(&"%41".repeat(31)));
    assert!(!token_shaped(&"a".repeat(31)));
    assert!(!token_shaped(&format!("{}%", "a".repeat(31))));
    assert!(!token_shaped(&format!("{}%2", "a".repeat(31))));
    assert!(!token_shaped(&format!("{}%2D", "a".repeat(31))));
}
