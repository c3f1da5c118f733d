//! The public URL, the return address and their escaping.

use super::*;
use crate::domain::transaction::RareFields;

fn record_returning_to(return_url: &str, reference: &str) -> Record {
    let mut record = crate::store::test_support::sample();
    record.id = uuid::Uuid::from_u128(0x0193_0000_0000_7000_8000_0000_0000_0017);
    record.fields.reference_no = reference.into();
    record.fields.rare = Some(std::sync::Arc::new(RareFields {
        return_url: Some(return_url.into()),
        ..RareFields::default()
    }));
    record
}

#[test]
fn a_host_beyond_ascii_is_refused_saying_so_its_path_is_not() {
    for url in [
        "https://bücher.example/",
        "http://xn--bcher-kva.example.bücher.example:8080/x",
        "https://例え.テスト",
    ] {
        assert!(has_non_ascii_host(url), "{url}");
        assert_eq!(
            url.parse::<PublicUrl>().err().as_deref(),
            Some(NON_ASCII_HOST)
        );
        assert!(!is_returnable(url), "{url}");
    }
    for url in [
        "https://xn--bcher-kva.example/rückkehr",
        "https://shop.example/back?q=ü#ü",
        "not a url ü",
    ] {
        assert!(!has_non_ascii_host(url), "{url}");
    }
    assert!(is_returnable("https://xn--bcher-kva.example/rückkehr"));
}

#[test]
fn the_return_address_keeps_the_query_and_puts_the_fragment_last() {
    let record = record_returning_to("https://shop.example/back?order=17#top", "INV/17");
    assert_eq!(
        return_address(&record, "SUCCESSFUL").as_deref(),
        Some(
            "https://shop.example/back?order=17&transactionId=01930000-0000-7000-8000-000000000017\
             &referenceNo=INV%2F17&status=SUCCESSFUL#top"
        )
    );
}

#[test]
fn hostile_references_are_encoded_never_pasted() {
    let record = record_returning_to("http://127.0.0.1:9/r", "a&status=SUCCESSFUL#x ü");
    let address = return_address(&record, "FAILED").expect("an address");
    let url = url::Url::parse(&address).expect("a URL");
    let pairs: Vec<(String, String)> = url.query_pairs().into_owned().collect();
    assert_eq!(
        pairs,
        [
            ("transactionId".to_owned(), record.id.to_string()),
            (
                "referenceNo".to_owned(),
                "a&status=SUCCESSFUL#x ü".to_owned()
            ),
            ("status".to_owned(), "FAILED".to_owned()),
        ]
    );
    assert_eq!(url.fragment(), None);
    // Percent-encoded, a space as %20 (a plain percent-decoder reads it
    // right), a plus as %2B.
    assert!(
        address.ends_with("&referenceNo=a%26status%3DSUCCESSFUL%23x%20%C3%BC&status=FAILED"),
        "{address}"
    );
    let record = record_returning_to("https://shop.example/back?", "1+1 = 2");
    assert_eq!(
        return_address(&record, "SUCCESSFUL").as_deref(),
        Some(
            "https://shop.example/back?transactionId=01930000-0000-7000-8000-000000000017\
             &referenceNo=1%2B1%20%3D%202&status=SUCCESSFUL"
        )
    );
}

#[test]
fn no_return_url_no_address() {
    let mut record = crate::store::test_support::sample();
    record.fields.rare = None;
    assert_eq!(return_address(&record, "FAILED"), None);
}

#[test]
fn tokens_are_long_random_and_url_safe() {
    let a = new_token();
    let b = new_token();
    assert_ne!(a, b);
    assert!(is_token(&a) && is_token(&b));
    assert!(!is_token(&a[1..]));
    assert!(!is_token(&format!("{}-", &a[1..])));
    assert!(!is_token(&format!("{}é", &a[2..])));
}

#[test]
fn the_payment_url_keeps_a_path_prefix() {
    let base = |s: &str| s.parse::<PublicUrl>().expect("a public URL");
    assert_eq!(
        payment_url(&base("http://127.0.0.1:8080"), "T0K"),
        "http://127.0.0.1:8080/pay/T0K"
    );
    assert_eq!(
        payment_url(&base("https://dev.example/mock/"), "T0K"),
        "https://dev.example/mock/pay/T0K"
    );
    assert_eq!(
        payment_url(&base("https://dev.example/mock"), "T0K"),
        "https://dev.example/mock/pay/T0K"
    );
    for bad in [
        "ftp://dev.example",
        "https://dev.example/?a=1",
        "https://dev.example/#f",
        "https://u:p@dev.example/",
        "mailto:someone@example.com",
        "https://",
        "https://dev.example:65536/",
        "not a url",
        "",
    ] {
        let refused = bad.parse::<PublicUrl>().expect_err(bad);
        assert!(!refused.contains("u:p"), "{refused}");
    }
}

#[test]
fn a_listener_is_announced_as_a_browser_can_open_it() {
    let url = |a: &str| PublicUrl::of_listener(a.parse().expect("an address")).to_string();
    assert_eq!(url("127.0.0.1:8080"), "http://127.0.0.1:8080/");
    assert_eq!(url("0.0.0.0:8080"), "http://127.0.0.1:8080/");
    assert_eq!(url("[::]:9"), "http://[::1]:9/");
    assert_eq!(url("10.0.0.1:80"), "http://10.0.0.1/");
}

/// Whether a path segment looks like a Windows drive letter (`C:`):
/// the `url` crate keeps such a segment when `..` follows it, in any
/// scheme, where the WHATWG standard (and browsers) keep it in `file:`
/// URLs only. These functions follow the standard; such paths are left
/// out of the comparison.
fn has_drive_letter(url: &str) -> bool {
    url.split(['?', '#'])
        .next()
        .unwrap_or_default()
        .split('/')
        .any(|s| s.len() == 2 && s.as_bytes()[0].is_ascii_alphabetic() && s.as_bytes()[1] == b':')
}

/// Whether the URL's host has a label starting with `xn--` (any case):
/// Punycode, which WHATWG validates with the IDNA tables and these
/// functions take as written (the module's doc).
fn has_punycode_label(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let host = rest.split([':', '/', '?', '#']).next().unwrap_or_default();
    host.split('.')
        .any(|label| label.len() >= 4 && label[..4].eq_ignore_ascii_case("xn--"))
}

#[test]
fn a_punycode_label_is_taken_as_written() {
    for (text, written) in [
        // Invalid Punycode to WHATWG (no URL at all), kept here.
        ("http://xn--", "http://xn--/"),
        ("http://XN--A.example", "http://xn--a.example/"),
        // Valid Punycode: the same for both.
        (
            "https://xn--mnchen-3ya.example/r",
            "https://xn--mnchen-3ya.example/r",
        ),
    ] {
        assert!(has_punycode_label(text), "{text}");
        let ours = text.parse::<PublicUrl>().map(|u| u.to_string());
        assert_eq!(ours.as_deref(), Ok(written), "{text}");
    }
    assert_eq!(whatwg_public("http://xn--"), None);
    assert_eq!(
        whatwg_public("https://xn--mnchen-3ya.example/r").as_deref(),
        Some("https://xn--mnchen-3ya.example/r")
    );
    assert!(!has_punycode_label("http://axn--b.example/xn--"));
}

#[test]
fn a_drive_letter_segment_is_popped_as_any_other_in_http() {
    let record = record_returning_to("http://a/A:/..", "R");
    let address = return_address(&record, "FAILED").expect("an address");
    assert!(address.starts_with("http://a/?transactionId="), "{address}");
}

/// The `url` crate (WHATWG), the reference these functions follow.
fn whatwg_public(text: &str) -> Option<String> {
    let url = url::Url::parse(text).ok()?;
    Some(url.to_string())
}

fn whatwg_return(return_url: &str, ours: &str) -> Option<String> {
    let mut url = url::Url::parse(return_url).ok()?;
    let query = match url.query() {
        Some(theirs) if !theirs.is_empty() => format!("{theirs}&{ours}"),
        _ => ours.to_owned(),
    };
    url.set_query(Some(&query));
    Some(url.into())
}

/// Return URLs as `rules::RETURN_URL` admits them, with the parts WHATWG
/// rewrites: upper-case hosts, default and zero-padded ports, dot
/// segments (also `%2e`), empty paths, text outside ASCII, `'` in a
/// query, empty queries and fragments.
fn return_urls() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    let host = prop_oneof![
        "[a-zA-Z][a-zA-Z0-9-]{0,8}(\\.[a-zA-Z][a-zA-Z0-9-]{0,8}){0,2}",
        "(25[0-5]|1[0-9]{2}|[1-9]?[0-9])(\\.(25[0-5]|1[0-9]{2}|[1-9]?[0-9])){3}",
    ];
    let port = prop_oneof!["", ":80", ":443", ":0080", ":8080", ":65535", ":1"];
    let segment = prop_oneof![
        "[A-Za-z0-9._~!$&'()*+,;=:@%-]{0,6}",
        Just(".".to_owned()),
        Just("..".to_owned()),
        Just("%2e".to_owned()),
        Just("%2E%2e".to_owned()),
        Just("café".to_owned()),
        Just("✓".to_owned()),
    ];
    let path = proptest::collection::vec(segment, 0..5)
        .prop_map(|segments| segments.iter().map(|s| format!("/{s}")).collect::<String>());
    let query = prop_oneof![
        Just(String::new()),
        Just("?".to_owned()),
        "\\?[A-Za-z0-9._~!$&'()*+,;=:@/?%-]{0,10}",
        Just("?q=ünï&o='x'".to_owned()),
    ];
    let fragment = prop_oneof![
        Just(String::new()),
        Just("#".to_owned()),
        "#[A-Za-z0-9._~!$&'()*+,;=:@/?%-]{0,8}",
        Just("#✓".to_owned()),
    ];
    (
        prop_oneof!["http", "https"],
        host,
        port,
        path,
        query,
        fragment,
    )
        .prop_map(|(scheme, host, port, path, query, fragment)| {
            format!("{scheme}://{host}{port}{path}{query}{fragment}")
        })
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2048))]

    #[test]
    fn the_return_address_is_what_whatwg_writes(return_url in return_urls()) {
        proptest::prop_assume!(crate::domain::rules::is_return_url(&return_url));
        proptest::prop_assume!(!has_drive_letter(&return_url));
        proptest::prop_assume!(!has_punycode_label(&return_url));
        let record = record_returning_to(&return_url, "R 1+ü");
        let ours = "transactionId=01930000-0000-7000-8000-000000000017&referenceNo=R%201%2B%C3%BC&status=FAILED";
        proptest::prop_assert_eq!(
            return_address(&record, "FAILED"),
            whatwg_return(&return_url, ours),
            "{}", return_url
        );
    }

    #[test]
    fn a_public_url_is_what_whatwg_writes(return_url in return_urls()) {
        proptest::prop_assume!(!has_drive_letter(&return_url));
        proptest::prop_assume!(!has_punycode_label(&return_url));
        let base = return_url.split(['?', '#']).next().unwrap_or_default();
        let ours = base.parse::<PublicUrl>().ok().map(|u| u.to_string());
        proptest::prop_assert_eq!(ours, whatwg_public(base), "{}", base);
    }
}
