//! What a money conversion or a currency code can get wrong: the bottom of
//! the money vocabulary, which [`Currency`](crate::Currency), the decimal
//! decoders and [`money`](crate::money) all report with (re-exported as
//! `money::MoneyError`).

use rust_decimal::Decimal;

/// A money problem found locally.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MoneyError {
    /// Amounts must be greater than zero.
    #[error("amount must be greater than 0")]
    NotPositive,
    /// The value has more fraction digits than the currency allows.
    #[error("amount {amount} has more fraction digits than {currency} allows ({exponent})")]
    TooManyFractionDigits {
        /// The amount as given.
        amount: Decimal,
        /// The currency code.
        currency: String,
        /// The currency's exponent.
        exponent: u32,
    },
    /// The amount does not fit in the minor-unit integer.
    #[error("amount {0} is too large")]
    Overflow(String),
    /// The currency has no known minor-unit exponent.
    #[error("currency {0} has no known minor-unit exponent")]
    UnknownExponent(String),
    /// Not a known ISO 4217 alphabetic code.
    #[error("unknown currency code {0:?}")]
    UnknownCurrency(String),
    /// Text that is not a decimal number.
    #[error("invalid amount {0:?}")]
    Invalid(String),
}
