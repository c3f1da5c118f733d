//! The catalogue's parsing and its rules.

use super::*;

#[test]
fn a_catalogue_written_as_toml_reads_back_equal() {
    let custom = Catalog::from_toml_str(
        r#"
[[product]]
code = "Q-1"
description = "quote \" and \\ and ünï"
outcome = "decline"
decline_message = "no\nway"
max_quantity = 3

[[product]]
code = "R"
flow = "redirect"
payer_timeout = "90s"
"#,
    )
    .expect("valid");
    for catalog in [Catalog::default(), custom] {
        let text = catalog.to_toml();
        assert_eq!(Catalog::from_toml_str(&text).expect(&text), catalog);
        assert!(catalog.differences(&catalog).is_empty());
    }
}

#[test]
fn differences_name_the_product_the_key_and_both_values() {
    let stored = Catalog::default();
    let given = Catalog::from_toml_str(
        &DEFAULT_TOML
            .replace("settle_after = \"2s\"", "settle_after = \"5s\"")
            .replace("code = \"DECLINED\"", "code = \"REFUSED\""),
    )
    .expect("valid");
    assert_eq!(
        given.differences(&stored),
        [
            "BILLPAY settle_after: \"2s\" in the store, \"5s\" given",
            "product DECLINED only in the store",
            "product REFUSED only in the given catalogue",
        ]
    );
}

#[test]
fn default_catalogue_is_section_7() {
    let c = Catalog::default();
    let codes: Vec<_> = c.products().map(|p| p.code.as_str()).collect();
    assert_eq!(
        codes,
        [
            "BILLPAY",
            "DECLINED",
            "EWALLET",
            "GIFTCARD",
            "ONLINEBANKING",
            "TOPUP"
        ]
    );
    assert_eq!(
        c.product("BILLPAY").map(|p| p.outcome.clone()),
        Some(Outcome::Async {
            settle_after: Duration::from_secs(2)
        })
    );
}

#[test]
fn onlinebanking_is_redirect_based_with_a_ten_minute_window() {
    let c = Catalog::default();
    let product = c
        .product("ONLINEBANKING")
        .expect("in the default catalogue");
    assert_eq!(
        product.flow,
        Flow::Redirect {
            payer_timeout: Duration::from_secs(600)
        }
    );
    assert!(product.requires_return_url());
    assert!(!c.product("TOPUP").expect("listed").requires_return_url());
}

#[test]
fn redirect_products_take_a_payer_timeout_and_nothing_that_decides() {
    let product = |extra: &str| {
        Catalog::from_toml_str(&format!("[[product]]\ncode = \"BANK\"\n{extra}\n"))
            .map(|c| c.product("BANK").cloned())
    };
    let p = product("flow = \"redirect\"\npayer_timeout = \"90s\"").expect("valid");
    assert_eq!(
        p.map(|p| p.flow),
        Some(Flow::Redirect {
            payer_timeout: Duration::from_secs(90)
        })
    );
    for (extra, says) in [
        (
            "flow = \"redirect\"\noutcome = \"decline\"",
            "outcome does not apply",
        ),
        ("flow = \"redirect\"\npins = true", "pins does not apply"),
        (
            "flow = \"redirect\"\nconfirmation_code = \"1\"",
            "confirmation_code does not apply",
        ),
        (
            "flow = \"redirect\"\npayer_timeout = \"0s\"",
            "greater than 0",
        ),
        (
            "flow = \"redirect\"\npayer_timeout = \"soon\"",
            "payer_timeout \"soon\"",
        ),
        ("payer_timeout = \"5m\"", "needs flow = \"redirect\""),
        (
            "flow = \"redirect\"\npayer_timeout = \"1500us\"",
            "payer_timeout \"1500us\": must be a whole number of milliseconds",
        ),
        (
            "flow = \"redirect\"\npayer_timeout = \"101y\"",
            "payer_timeout \"101y\": must be at most 100 years",
        ),
        ("flow = \"popup\"", "flow \"popup\" is not one of"),
    ] {
        let e = product(extra).expect_err(extra).to_string();
        assert!(e.contains(says), "{extra}: {e}");
    }
}

#[test]
fn syntax_errors_name_the_line() {
    let e = Catalog::from_toml_str("[[product]]\ncode = \n").unwrap_err();
    assert!(e.to_string().contains("line 2"), "{e}");
}

/// A key of another outcome is refused, never dropped without a word: a
/// `settle_after` on a product that succeeds at once, a `decline_message`
/// on one that does not decline.
#[test]
fn a_key_of_another_outcome_is_refused() {
    for (toml, says) in [
        (
            "[[product]]\ncode = \"A\"\noutcome = \"success\"\nsettle_after = \"5s\"\n",
            "settle_after applies to outcome = \"async\" only",
        ),
        (
            "[[product]]\ncode = \"A\"\nsettle_after = \"5s\"\n",
            "settle_after applies to outcome = \"async\" only",
        ),
        (
            "[[product]]\ncode = \"A\"\noutcome = \"async\"\nsettle_after = \"5s\"\ndecline_message = \"x\"\n",
            "decline_message applies to outcome = \"decline\" only",
        ),
    ] {
        let err = Catalog::from_toml_str(toml).expect_err(toml).to_string();
        assert!(err.contains(says), "{toml}: {err}");
    }
    assert!(
        Catalog::from_toml_str(
            "[[product]]\ncode = \"D\"\noutcome = \"decline\"\ndecline_message = \"nope\"\n"
        )
        .is_ok()
    );
}

/// `settle_after` and `payer_timeout` follow `--expiry`'s rule: whole
/// milliseconds (a finer one was shown a millisecond off the instant it
/// settled at), at most 100 years (a longer one settled at the end of the
/// calendar); the refusal names the product and the key.
#[test]
fn settle_after_and_payer_timeout_are_whole_milliseconds_up_to_100_years() {
    let asynchronous = |after: &str| {
        Catalog::from_toml_str(&format!(
            "[[product]]\ncode = \"LATER\"\noutcome = \"async\"\nsettle_after = \"{after}\"\n"
        ))
    };
    for (after, says) in [
        (
            "1500us",
            "must be a whole number of milliseconds, e.g. 1500ms",
        ),
        ("1ns", "must be a whole number of milliseconds"),
        ("5000000000000000s", "must be at most 100 years"),
        ("100y 1ms", "must be at most 100 years"),
    ] {
        let e = asynchronous(after).expect_err(after);
        assert!(matches!(e, Error::Catalog(_)), "{e:?}");
        let e = e.to_string();
        assert!(
            e.contains(&format!(
                "product \"LATER\": settle_after \"{after}\": {says}"
            )),
            "{after}: {e}"
        );
    }
    for after in ["0s", "1500ms", "100y"] {
        asynchronous(after).expect(after);
    }
    let redirect = Catalog::from_toml_str(
        "[[product]]\ncode = \"PAGE\"\nflow = \"redirect\"\npayer_timeout = \"100y\"\n",
    );
    redirect.expect("100 years is the longest");
}
