//! Exact money: minor units as integers, major units as [`Decimal`].
//!
//! Conversions use the currency's ISO 4217 exponent and integer arithmetic
//! only; nothing here ever touches `f64`.

use std::borrow::Borrow;
use std::fmt;
use std::num::NonZeroU64;

use rust_decimal::Decimal;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

pub use crate::model::currency::Currency;
pub use crate::model::money_error::MoneyError;
pub use crate::model::wire::parse_decimal;

/// The largest amount the client sends, 2^53 − 1 minor units: the largest
/// integer every JSON peer keeps exact (RFC 8259 section 6), so that a
/// service that reads numbers as doubles (JavaScript's do) never charges a
/// rounded amount. The mock takes no more either.
// CONTRACT section 1.
pub const MAX_AMOUNT: u64 = 9_007_199_254_740_991;

/// An amount in the currency's smallest unit (cents for MYR), always > 0.
///
/// The service only ever sends and accepts positive minor-unit amounts, so
/// zero and negatives are unrepresentable.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MinorAmount(NonZeroU64);

impl MinorAmount {
    /// # Errors
    ///
    /// [`MoneyError::NotPositive`] for 0.
    ///
    /// # Examples
    ///
    /// ```
    /// use payments_client::MinorAmount;
    /// assert_eq!(MinorAmount::new(1050)?.get(), 1050);
    /// assert!(MinorAmount::new(0).is_err());
    /// # Ok::<(), payments_client::money::MoneyError>(())
    /// ```
    pub fn new(minor: u64) -> Result<Self, MoneyError> {
        NonZeroU64::new(minor)
            .map(Self)
            .ok_or(MoneyError::NotPositive)
    }

    /// The integer number of minor units.
    pub fn get(self) -> u64 {
        self.0.get()
    }

    /// The amount in major units of `currency`; see [`to_major`].
    ///
    /// # Errors
    ///
    /// As [`to_major`].
    pub fn to_major(self, currency: impl Borrow<Currency>) -> Result<Decimal, MoneyError> {
        to_major(self, currency)
    }
}

impl fmt::Debug for MinorAmount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MinorAmount({})", self.0)
    }
}

impl fmt::Display for MinorAmount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl From<MinorAmount> for u64 {
    fn from(a: MinorAmount) -> u64 {
        a.get()
    }
}

impl TryFrom<u64> for MinorAmount {
    type Error = MoneyError;

    fn try_from(v: u64) -> Result<Self, MoneyError> {
        MinorAmount::new(v)
    }
}

impl std::str::FromStr for MinorAmount {
    type Err = MoneyError;

    fn from_str(s: &str) -> Result<Self, MoneyError> {
        let v: u64 = s.parse().map_err(|_| MoneyError::Invalid(s.to_owned()))?;
        MinorAmount::new(v)
    }
}

impl Serialize for MinorAmount {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(self.get())
    }
}

impl<'de> Deserialize<'de> for MinorAmount {
    /// A JSON integer or an integer string, greater than zero.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let dec = crate::model::wire::decimal(d)?;
        minor_from_integer_decimal(dec).map_err(serde::de::Error::custom)
    }
}

fn minor_from_integer_decimal(dec: Decimal) -> Result<MinorAmount, MoneyError> {
    let n = dec.normalize();
    if n.scale() != 0 {
        return Err(MoneyError::Invalid(dec.to_string()));
    }
    if n <= Decimal::ZERO {
        return Err(MoneyError::NotPositive);
    }
    let m = u64::try_from(n.mantissa()).map_err(|_| MoneyError::Overflow(dec.to_string()))?;
    MinorAmount::new(m)
}

fn exponent_of(currency: &Currency) -> Result<u32, MoneyError> {
    currency
        .exponent()
        .ok_or_else(|| MoneyError::UnknownExponent(currency.code().to_owned()))
}

/// Major units to minor units, exactly: `150.00` MYR is 15000, `1500` JPY is
/// 1500, `1.5` KWD is 1500.
///
/// # Errors
///
/// Zero or negative amounts, more fraction digits than the currency has
/// (`1.005` MYR), overflow, or a currency without a known exponent.
///
/// # Examples
///
/// ```
/// use payments_client::{money, Currency};
/// use rust_decimal::Decimal;
/// let minor = money::to_minor(Decimal::new(15000, 2), Currency::MYR)?;
/// assert_eq!(minor.get(), 15000);
/// assert!(money::to_minor(Decimal::new(1005, 3), Currency::MYR).is_err());
/// # Ok::<(), money::MoneyError>(())
/// ```
pub fn to_minor(
    major: Decimal,
    currency: impl Borrow<Currency>,
) -> Result<MinorAmount, MoneyError> {
    let currency = currency.borrow();
    let exponent = exponent_of(currency)?;
    if major <= Decimal::ZERO {
        return Err(MoneyError::NotPositive);
    }
    let n = major.normalize();
    let scale = n.scale();
    if scale > exponent {
        return Err(MoneyError::TooManyFractionDigits {
            amount: major,
            currency: currency.code().to_owned(),
            exponent,
        });
    }
    let factor = 10i128
        .checked_pow(exponent - scale)
        .ok_or_else(|| MoneyError::Overflow(major.to_string()))?;
    let minor = n
        .mantissa()
        .checked_mul(factor)
        .and_then(|m| u64::try_from(m).ok())
        .ok_or_else(|| MoneyError::Overflow(major.to_string()))?;
    MinorAmount::new(minor)
}

/// Minor units to major units with exactly the currency's number of fraction
/// digits: 15000 MYR cents is `150.00`, 1500 JPY is `1500`.
///
/// Accepts a [`MinorAmount`] or a plain `u64` (0 gives `0.00`).
///
/// # Errors
///
/// [`MoneyError::UnknownExponent`] for a currency without a known exponent.
///
/// # Examples
///
/// ```
/// use payments_client::{money, Currency};
/// assert_eq!(money::to_major(15000u64, Currency::MYR)?.to_string(), "150.00");
/// assert_eq!(money::to_major(1500u64, Currency::KWD)?.to_string(), "1.500");
/// # Ok::<(), money::MoneyError>(())
/// ```
pub fn to_major(
    minor: impl Into<u64>,
    currency: impl Borrow<Currency>,
) -> Result<Decimal, MoneyError> {
    let exponent = exponent_of(currency.borrow())?;
    let minor: u64 = minor.into();
    Decimal::try_from_i128_with_scale(i128::from(minor), exponent)
        .map_err(|_| MoneyError::Overflow(minor.to_string()))
}
