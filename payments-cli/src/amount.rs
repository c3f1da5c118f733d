//! Amounts typed by people: `--amount 10.50` (major units) and
//! `--amount-minor 1050`, turned into minor units exactly, without floats.
//!
//! The text is read here, strictly: digits with an optional decimal point,
//! and no more fraction digits than the currency has. A support engineer
//! who typed `10.505`, or `10.500` for MYR, meant something else; both are
//! refused, never rounded. The arithmetic is the client's
//! ([`payments_client::money`]): the currency and its ISO 4217 exponent
//! (MYR has 2 digits after the point, JPY none, KWD 3), major to minor
//! units, and the largest amount the service accepts.

use std::fmt;

use payments_client::money::{self, MAX_AMOUNT, MoneyError};
use payments_client::{Currency, Decimal, MinorAmount};

use crate::output::{printable, quote};

/// Why an amount was refused; the message completes "--amount ...".
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AmountError {
    /// Not a plain decimal number.
    NotANumber(String),
    /// Zero or negative.
    NotPositive(String),
    /// More fraction digits than the currency has.
    TooManyDecimals {
        text: String,
        currency: String,
        exponent: u32,
    },
    /// Minor units that are not a whole number (`--amount-minor 10.50`).
    NotWhole(String),
    /// Beyond what the service accepts.
    TooLarge(String),
    /// The currency code is not an ISO 4217 code.
    UnknownCurrency(String),
    /// An ISO 4217 code that was withdrawn (`HRK`), with the code that
    /// replaced it when ISO names one: the service takes only active ones.
    WithdrawnCurrency {
        code: String,
        replaced_by: Option<String>,
    },
    /// The currency has no minor unit (gold, SDR...).
    NoMinorUnit(String),
}

impl fmt::Display for AmountError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotANumber(text) => write!(
                f,
                "{} is not an amount: digits with an optional decimal point, e.g. 10.50",
                quote(text)
            ),
            Self::NotWhole(text) => write!(
                f,
                "{} is not a whole number of minor units: use digits only, e.g. 1050 for 10.50 MYR",
                quote(text)
            ),
            Self::NotPositive(text) => write!(f, "{} must be greater than zero", quote(text)),
            Self::TooManyDecimals {
                text,
                currency,
                exponent: 0,
            } => write!(
                f,
                "{} has decimals but {currency} has no minor unit",
                quote(text)
            ),
            Self::TooManyDecimals {
                text,
                currency,
                exponent,
            } => write!(
                f,
                "{} has more than {exponent} decimal places, the most {currency} allows",
                quote(text)
            ),
            Self::TooLarge(text) => write!(
                f,
                "{} is too large: at most {MAX_AMOUNT} in minor units",
                quote(text)
            ),
            Self::UnknownCurrency(code) => {
                write!(
                    f,
                    "{} is not an ISO 4217 currency code such as MYR",
                    quote(code)
                )
            }
            Self::WithdrawnCurrency { code, replaced_by } => {
                write!(f, "{} is a withdrawn ISO 4217 code", quote(code))?;
                if let Some(successor) = replaced_by {
                    write!(f, " (replaced by {successor})")?;
                }
                f.write_str(": the service takes only active ones")
            }
            Self::NoMinorUnit(code) => {
                write!(
                    f,
                    "{} has no minor unit and cannot be paid",
                    printable(code)
                )
            }
        }
    }
}

impl std::error::Error for AmountError {}

/// Looks a currency code up (upper case, as the service wants it), with
/// its exponent: an active ISO 4217 code, the service's own table
/// ([`payments_interface::rules::active_currency`]). A withdrawn code
/// (`HRK`, `CUC`, `SLL`, `BGN`), which the client's `Currency` still
/// knows, is refused as the service refuses it, and said to be withdrawn
/// (with the code that replaced it), not unknown.
///
/// # Errors
///
/// The code is not an ISO 4217 code, is a withdrawn one, or the currency
/// has no exponent.
pub fn currency(code: &str) -> Result<(Currency, u32), AmountError> {
    let unknown = || AmountError::UnknownCurrency(code.to_owned());
    let currency = Currency::from_code(code).map_err(|_| unknown())?;
    let exponent = exponent(&currency)?;
    if payments_interface::rules::active_currency(code).is_none() {
        // Known to ISO 4217 (the client's table), with a minor unit, yet
        // not active: superseded (the service's table is iso_currency's
        // without its superseded codes).
        let replaced_by = currency
            .iso()
            .and_then(|iso| iso.is_superseded())
            .map(|successor| successor.code().to_owned());
        return Err(AmountError::WithdrawnCurrency {
            code: code.to_owned(),
            replaced_by,
        });
    }
    Ok((currency, exponent))
}

fn exponent(currency: &Currency) -> Result<u32, AmountError> {
    currency
        .exponent()
        .ok_or_else(|| AmountError::NoMinorUnit(currency.code().to_owned()))
}

/// Parses an amount in major units into minor units of `currency`.
///
/// # Errors
///
/// Anything but `DIGITS[.DIGITS]` (signs, exponents, spaces, thousands
/// separators, a point without digits on both sides: `.5`, `5.`), zero, more fraction digits than the currency has, or more
/// than [`MAX_AMOUNT`].
pub fn parse_major(
    text: &str,
    currency: impl std::borrow::Borrow<Currency>,
) -> Result<u64, AmountError> {
    let currency = currency.borrow();
    let exponent = exponent(currency)?;
    if is_negative_number(text) {
        return Err(AmountError::NotPositive(text.to_owned()));
    }
    // A point needs digits on both sides, as in a reconcile ledger: `.5`
    // and `5.` are no amount one means (a lost digit, a cut-off value), and
    // are not guessed at (they were sent as 50 and 500 sen).
    let (whole, fraction) = match text.split_once('.') {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (text, None),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || !fraction.is_none_or(digits) {
        return Err(AmountError::NotANumber(text.to_owned()));
    }
    let fraction = fraction.unwrap_or_default();
    // Strict on purpose: `10.500` MYR is refused rather than read as 10.50, so a
    // slip of the decimal point never changes an amount silently.
    if fraction.len() > exponent as usize {
        return Err(AmountError::TooManyDecimals {
            text: text.to_owned(),
            currency: currency.code().to_owned(),
            exponent,
        });
    }
    let too_large = || AmountError::TooLarge(text.to_owned());
    // The digits as a decimal (`10` completed to `10.0`; leading zeros
    // dropped, as they say nothing): more digits than a decimal holds is
    // far more than the service accepts.
    let whole = whole.trim_start_matches('0');
    let major = Decimal::from_str_exact(&format!(
        "{}.{fraction}0",
        if whole.is_empty() { "0" } else { whole }
    ))
    .map_err(|_| too_large())?;
    let minor = money::to_minor(major, currency).map_err(|err| match err {
        MoneyError::NotPositive => AmountError::NotPositive(text.to_owned()),
        _ => too_large(),
    })?;
    check_range(minor.get(), text)
}

/// Parses an amount already in minor units.
///
/// # Errors
///
/// Anything but digits, zero, or more than [`MAX_AMOUNT`].
pub fn parse_minor(text: &str) -> Result<u64, AmountError> {
    if is_negative_number(text) {
        return Err(AmountError::NotPositive(text.to_owned()));
    }
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(AmountError::NotWhole(text.to_owned()));
    }
    let minor = text
        .parse::<u64>()
        .map_err(|_| AmountError::TooLarge(text.to_owned()))?;
    check_range(minor, text)
}

/// Formats minor units with the currency's digits: 1050 MYR → `10.50`.
#[must_use]
pub fn format_minor(minor: u64, exponent: u32) -> String {
    // What money::to_major does with a currency of this exponent.
    Decimal::try_from_i128_with_scale(i128::from(minor), exponent)
        .map_or_else(|_| minor.to_string(), |major| major.to_string())
}

/// `-5`, `-0.5`: a number, but negative (as opposed to `-abc`, not a number).
fn is_negative_number(text: &str) -> bool {
    text.strip_prefix('-').is_some_and(|rest| {
        rest.bytes().any(|b| b.is_ascii_digit())
            && rest.bytes().all(|b| b.is_ascii_digit() || b == b'.')
    })
}

/// Zero and more than the service accepts are refused; the client's
/// [`MinorAmount`] holds no zero.
fn check_range(minor: u64, text: &str) -> Result<u64, AmountError> {
    match MinorAmount::new(minor) {
        Err(_) => Err(AmountError::NotPositive(text.to_owned())),
        Ok(m) if m.get() > MAX_AMOUNT => Err(AmountError::TooLarge(text.to_owned())),
        Ok(m) => Ok(m.get()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use payments_client::money::MAX_AMOUNT as MAX_MINOR;
    use proptest::prelude::*;

    fn myr() -> Currency {
        currency("MYR").unwrap().0
    }

    #[test]
    fn major_units_use_the_currency_exponent() {
        assert_eq!(parse_major("10.50", myr()), Ok(1050));
        assert_eq!(parse_major("10.5", myr()), Ok(1050));
        assert_eq!(parse_major("10", myr()), Ok(1000));
        assert_eq!(parse_major("0.01", myr()), Ok(1));
        assert!(matches!(
            parse_major("10.500", myr()),
            Err(AmountError::TooManyDecimals { .. })
        ));
        assert!(matches!(
            parse_major("1500.0", currency("JPY").unwrap().0),
            Err(AmountError::TooManyDecimals { .. })
        ));
        assert_eq!(parse_major("1500", currency("JPY").unwrap().0), Ok(1500));
        assert_eq!(parse_major("1.5", currency("KWD").unwrap().0), Ok(1500));
        assert_eq!(
            parse_major("90071992547409.91", myr()),
            Ok(9_007_199_254_740_991)
        );
    }

    #[test]
    fn too_many_decimals_is_refused_not_rounded() {
        assert!(matches!(
            parse_major("10.505", myr()),
            Err(AmountError::TooManyDecimals { exponent: 2, .. })
        ));
        let jpy = parse_major("1.5", currency("JPY").unwrap().0).unwrap_err();
        assert!(jpy.to_string().contains("JPY has no minor unit"), "{jpy}");
    }

    #[test]
    fn zero_negative_and_junk_are_refused_with_a_reason() {
        for (text, expected) in [
            ("0", "greater than zero"),
            ("0.00", "greater than zero"),
            ("-5", "greater than zero"),
            ("-0.5", "greater than zero"),
            ("-abc", "not an amount"),
            ("-", "not an amount"),
            ("", "not an amount"),
            (".", "not an amount"),
            (".5", "not an amount"),
            ("5.", "not an amount"),
            (".01", "not an amount"),
            ("10.", "not an amount"),
            ("abc", "not an amount"),
            ("1e3", "not an amount"),
            ("+5", "not an amount"),
            (" 5", "not an amount"),
            ("1,000", "not an amount"),
            ("1.2.3", "not an amount"),
            ("NaN", "not an amount"),
            ("١٢", "not an amount"),
            ("90071992547409.92", "too large"),
            ("99999999999999999999999999999", "too large"),
        ] {
            let err = parse_major(text, myr()).unwrap_err().to_string();
            assert!(err.contains(expected), "{text:?}: {err}");
        }
    }

    #[test]
    fn minor_units_are_plain_positive_integers() {
        assert_eq!(parse_minor("1050"), Ok(1050));
        assert_eq!(parse_minor("9007199254740991"), Ok(MAX_MINOR));
        for text in [
            "0",
            "-1",
            "10.5",
            "",
            "1e2",
            "9007199254740992",
            "18446744073709551616",
        ] {
            assert!(parse_minor(text).is_err(), "{text:?} accepted");
        }
    }

    #[test]
    fn minor_units_format_with_the_currency_digits() {
        assert_eq!(format_minor(1050, 2), "10.50");
        assert_eq!(format_minor(5, 2), "0.05");
        assert_eq!(format_minor(1500, 0), "1500");
        assert_eq!(format_minor(1500, 3), "1.500");
        assert_eq!(format_minor(MAX_MINOR, 2), "90071992547409.91");
    }

    #[test]
    fn unknown_currencies_are_named() {
        let err = currency("XYZ").unwrap_err().to_string();
        assert!(err.contains("'XYZ'"), "{err}");
        assert!(currency("myr").is_err());
        assert!(currency("XAU").is_err());
    }

    /// Withdrawn codes the client's `Currency` knows, which the service
    /// refuses, are refused, and said to be withdrawn (they are ISO 4217
    /// codes), with the code that replaced them.
    #[test]
    fn withdrawn_currencies_are_refused_as_withdrawn() {
        for (code, successor) in [
            ("HRK", "EUR"),
            ("CUC", "CUP"),
            ("SLL", "SLE"),
            ("BGN", "EUR"),
        ] {
            assert_eq!(
                currency(code),
                Err(AmountError::WithdrawnCurrency {
                    code: code.to_owned(),
                    replaced_by: Some(successor.to_owned()),
                }),
                "{code}"
            );
        }
        assert_eq!(
            currency("HRK").unwrap_err().to_string(),
            "'HRK' is a withdrawn ISO 4217 code (replaced by EUR): the service takes only \
             active ones"
        );
        assert_eq!(
            currency("XYZ").unwrap_err().to_string(),
            "'XYZ' is not an ISO 4217 currency code such as MYR"
        );
        for code in ["MYR", "EUR", "VES", "SLE"] {
            assert!(currency(code).is_ok(), "{code}");
        }
    }

    proptest! {
        #[test]
        fn minor_amounts_round_trip_through_their_display(minor in 1..=MAX_MINOR) {
            let text = format!("{}.{:02}", minor / 100, minor % 100);
            prop_assert_eq!(parse_major(&text, myr()), Ok(minor));
            prop_assert_eq!(format_minor(minor, 2), text);
            prop_assert_eq!(parse_minor(&minor.to_string()), Ok(minor));
        }

        #[test]
        fn arbitrary_text_never_panics(text in "\\PC{0,40}") {
            let _ = parse_major(&text, myr());
            let _ = parse_minor(&text);
        }

        #[test]
        fn more_than_two_significant_decimals_is_always_refused(
            whole in 0u64..1_000_000, fraction in 1u32..1000
        ) {
            prop_assume!(fraction % 10 != 0);
            let text = format!("{whole}.{fraction:03}");
            let refused = matches!(
                parse_major(&text, myr()),
                Err(AmountError::TooManyDecimals { .. })
            );
            prop_assert!(refused);
        }
    }
}
