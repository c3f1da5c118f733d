//! Money: exact minor ↔ major conversion for every currency.

use payments_client::money::{self, MoneyError};
use payments_client::{Currency, MinorAmount};
use proptest::prelude::*;
use rust_decimal::Decimal;

#[test]
fn conversions_use_the_currency_exponent() {
    let m = |n| MinorAmount::new(n).unwrap();
    assert_eq!(
        money::to_major(m(15000), Currency::MYR)
            .unwrap()
            .to_string(),
        "150.00"
    );
    assert_eq!(
        money::to_major(m(1500), Currency::JPY).unwrap().to_string(),
        "1500"
    );
    assert_eq!(
        money::to_major(m(1500), Currency::KWD).unwrap().to_string(),
        "1.500"
    );
    assert_eq!(
        money::to_major(9_007_199_254_740_991u64, &Currency::MYR)
            .unwrap()
            .to_string(),
        "90071992547409.91"
    );
    assert_eq!(
        money::to_minor(Decimal::new(15, 1), Currency::KWD).unwrap(),
        m(1500)
    );
    assert_eq!(
        money::to_minor(Decimal::new(1500, 0), Currency::JPY).unwrap(),
        m(1500)
    );
}

#[test]
fn too_many_fraction_digits_is_an_error() {
    let err = money::to_minor(Decimal::new(1005, 3), Currency::MYR).unwrap_err();
    assert!(matches!(
        err,
        MoneyError::TooManyFractionDigits { exponent: 2, .. }
    ));
    assert!(money::to_minor(Decimal::new(15, 1), Currency::JPY).is_err());
    // Trailing zeros beyond the exponent are fine: 1.500 MYR is 150 cents.
    assert_eq!(
        money::to_minor(Decimal::new(1500, 3), Currency::MYR)
            .unwrap()
            .get(),
        150
    );
}

#[test]
fn zero_negative_and_overflow_are_errors() {
    assert_eq!(
        money::to_minor(Decimal::ZERO, Currency::MYR),
        Err(MoneyError::NotPositive)
    );
    assert_eq!(
        money::to_minor(Decimal::new(-1, 0), Currency::MYR),
        Err(MoneyError::NotPositive)
    );
    assert!(matches!(
        money::to_minor(Decimal::MAX, Currency::MYR),
        Err(MoneyError::Overflow(_))
    ));
    assert_eq!(MinorAmount::new(0), Err(MoneyError::NotPositive));
}

#[test]
fn unknown_currencies_have_no_exponent() {
    let xbt = Currency::from_wire("XBT");
    assert!(matches!(
        money::to_major(1u64, &xbt),
        Err(MoneyError::UnknownExponent(_))
    ));
    assert!(Currency::from_code("XBT").is_err());
    assert!(Currency::from_code("XAU").unwrap().exponent().is_none());
}

#[test]
fn every_known_currency_is_enumerated() {
    let all: Vec<Currency> = Currency::all_known().collect();
    assert!(all.len() > 150, "{}", all.len());
    assert!(all.contains(&Currency::MYR));
    for c in &all {
        assert_eq!(Currency::from_code(c.code()).as_ref(), Ok(c));
    }
}

fn known_with_exponent() -> Vec<Currency> {
    Currency::all_known()
        .filter(|c| c.exponent().is_some())
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn minor_major_round_trips_for_every_currency(
        index in 0usize..1000,
        minor in 1u64..=u64::MAX,
    ) {
        let all = known_with_exponent();
        let currency = &all[index % all.len()];
        let major = money::to_major(minor, currency).unwrap();
        prop_assert_eq!(major.scale(), currency.exponent().unwrap());
        prop_assert_eq!(money::to_minor(major, currency).unwrap().get(), minor);
    }

    #[test]
    fn minor_major_round_trips_for_exponents_zero_to_four(
        minor in 1u64..=9_007_199_254_740_991,
        code in prop::sample::select(vec!["JPY", "MYR", "KWD", "CLF", "UYW"]),
    ) {
        let currency = Currency::from_code(code).unwrap();
        let major = money::to_major(minor, &currency).unwrap();
        let text = major.to_string();
        let reparsed = money::parse_decimal(&text).unwrap();
        prop_assert_eq!(reparsed.to_string(), text);
        prop_assert_eq!(money::to_minor(reparsed, &currency).unwrap().get(), minor);
    }

    #[test]
    fn decimals_with_more_digits_than_the_exponent_are_rejected(
        mantissa in 1i64..i64::MAX,
        extra in 1u32..6,
    ) {
        let currency = Currency::MYR;
        let d = Decimal::new(mantissa, 2 + extra);
        let ok = money::to_minor(d, &currency);
        // Only values whose extra digits are zeros convert.
        let normalized_scale = d.normalize().scale();
        prop_assert_eq!(ok.is_ok(), normalized_scale <= 2);
    }
}

#[test]
fn every_known_currency_round_trips_exactly() {
    let mut exponents = std::collections::BTreeSet::new();
    for currency in Currency::all_known() {
        let Some(exponent) = currency.exponent() else {
            assert!(money::to_major(1u64, &currency).is_err(), "{currency}");
            continue;
        };
        exponents.insert(exponent);
        for minor in [1u64, 7, 100, 12_345, money::MAX_AMOUNT, u64::MAX] {
            let major = money::to_major(minor, &currency).unwrap();
            assert_eq!(major.scale(), exponent, "{currency}");
            assert_eq!(
                money::to_minor(major, &currency).unwrap().get(),
                minor,
                "{currency}"
            );
        }
    }
    assert_eq!(exponents.into_iter().collect::<Vec<_>>(), [0, 2, 3, 4]);
}

#[test]
fn exponent_forms_are_read_exactly_or_refused() {
    // An exponent only moves the point: what the plain form could not hold
    // is refused, never rounded (`from_scientific` read these as 10.50).
    for text in [
        "1.05000000000000000000000000001e1",
        "10.5000000000000000000000000001e0",
        "105000000000000000000000000001e-28",
        "1e-29",
        "1e29",
        "1e1025",
        "1e99999999999999999999",
    ] {
        assert!(money::parse_decimal(text).is_err(), "{text}");
        assert!(
            money::parse_decimal(&text.to_uppercase()).is_err(),
            "{text}"
        );
    }
    for (text, read) in [
        ("1.5e2", "150"),
        ("1.5E+2", "150"),
        ("1.50e1", "15.0"),
        ("1050e-2", "10.50"),
        ("-1.25e0", "-1.25"),
        ("125e-5", "0.00125"),
        ("0e5", "0"),
        (
            "1.0500000000000000000000000000e1",
            "10.500000000000000000000000000",
        ),
        (
            "7.9228162514264337593543950335e28",
            "79228162514264337593543950335",
        ),
    ] {
        assert_eq!(
            money::parse_decimal(text).unwrap().to_string(),
            read,
            "{text}"
        );
    }
}
