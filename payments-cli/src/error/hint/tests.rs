use super::initiate_flag;

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
