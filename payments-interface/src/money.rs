//! Minor units to major-unit JSON numbers (CONTRACT section 1): exactly the
//! currency exponent's fraction digits, computed on integers so
//! 9007199254740991 MYR cents is `90071992547409.91`, never through `f64`.

use serde_json::Number;

/// The decimal text of `minor / 10^exponent` with exactly `exponent`
/// fraction digits.
pub fn major_text(minor: u64, exponent: u16) -> String {
    let digits = minor.to_string();
    let e = usize::from(exponent);
    if e == 0 {
        return digits;
    }
    let padded = if digits.len() <= e {
        format!("{}{digits}", "0".repeat(e + 1 - digits.len()))
    } else {
        digits
    };
    let (int, frac) = padded.split_at(padded.len() - e);
    format!("{int}.{frac}")
}

/// [`major_text`] as a JSON number that prints back exactly that text
/// (`serde_json`'s `arbitrary_precision` keeps the literal).
pub fn major_number(minor: u64, exponent: u16) -> Number {
    let text = major_text(minor, exponent);
    // The text is digits with at most one inner '.', always a valid number.
    serde_json::from_str::<Number>(&text).unwrap_or_else(|_| Number::from(minor))
}

/// The minor-unit exponent of the active ISO 4217 currency `code` (upper
/// case): MYR 2, JPY 0, KWD 3; `None` for a code that is not one.
pub fn exponent(code: &str) -> Option<u16> {
    crate::rules::active_currency(code)?.exponent()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_with_the_exponent() {
        assert_eq!(major_text(15000, 2), "150.00");
        assert_eq!(major_text(1500, 0), "1500");
        assert_eq!(major_text(1500, 3), "1.500");
        assert_eq!(major_text(5, 2), "0.05");
        assert_eq!(major_text(9_007_199_254_740_991, 2), "90071992547409.91");
        assert_eq!(major_number(15000, 2).to_string(), "150.00");
    }

    #[test]
    fn exponents_are_iso_4217s() {
        assert_eq!(exponent("MYR"), Some(2));
        assert_eq!(exponent("JPY"), Some(0));
        assert_eq!(exponent("KWD"), Some(3));
        assert_eq!(exponent("myr"), None);
        assert_eq!(exponent("XXX"), None);
    }
}
