use super::{initiate_flag, url_from};

#[test]
fn an_initiate_field_named_as_a_word_gives_its_flag() {
    for (message, flag) in [
        (
            "payerId is required for product TOPUP",
            Some("--payer-id ID"),
        ),
        ("quantity must be between 1 and 1000", Some("--quantity N")),
        (
            "description must be at most 255 characters",
            Some("--description TEXT"),
        ),
        ("countryCode 'my' is not upper case", Some("--country CODE")),
        ("invalid returnUrl: not http(s)", Some("--return-url URL")),
        ("extraProperties: not an object", Some("--extra JSON")),
        ("field currencyCode unknown", Some("--currency CODE")),
        // The first field named wins.
        ("storeId and payerId are required", Some("--store-id ID")),
        // Only as a word.
        ("payerIds are unknown", None),
        ("the maxamount is 10", None),
        ("deviceIdentifier missing", None),
        ("nothing of ours", None),
    ] {
        assert_eq!(initiate_flag(message), flag, "{message}");
    }
}

/// Where the base URL came from, in the advice after a failed connection:
/// what to correct, and what overrides it; a long profile name or path is
/// cut at 200 bytes, as messages quote a value.
#[test]
fn the_url_advice_names_where_the_url_came_from() {
    assert_eq!(
        url_from(""),
        "set the URL with --base-url or PAYMENTS_BASE_URL"
    );
    assert_eq!(url_from("--base-url"), "the URL comes from --base-url");
    assert_eq!(
        url_from("PAYMENTS_BASE_URL"),
        "the URL comes from PAYMENTS_BASE_URL: correct it, or override it with --base-url"
    );
    assert_eq!(
        url_from("base_url of profile 'staging' in /home/me/.config/payments/config.toml"),
        "the URL comes from base_url of profile 'staging' in \
         /home/me/.config/payments/config.toml: correct it there, or override it with \
         --base-url or PAYMENTS_BASE_URL"
    );
    let long = format!("base_url of profile '{}' in /c.toml", "p".repeat(500));
    let said = url_from(&long);
    assert!(said.contains("(the first 200 of 533 bytes)"), "{said}");
    assert!(said.len() < 400, "{said}");
}
