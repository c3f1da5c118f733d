//! ISO 4217 currencies, with room for codes this crate does not know.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::model::money_error::MoneyError;

/// A currency code.
///
/// Either an ISO 4217 currency known to [`iso_currency`] (with its minor-unit
/// exponent) or, when decoding a response, a code this crate does not know.
/// Unknown codes are kept as received so that a newer service never breaks
/// decoding; they have no [`exponent`](Self::exponent).
///
/// Requests only accept known codes: [`Currency::from_code`] is strict,
/// [`Currency::from_wire`] is lenient.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Currency(Repr);

#[derive(Clone, PartialEq, Eq, Hash)]
enum Repr {
    Iso(iso_currency::Currency),
    Other(Box<str>),
}

impl Currency {
    /// Malaysian ringgit, the service's default currency (2 decimals).
    pub const MYR: Currency = Currency(Repr::Iso(iso_currency::Currency::MYR));
    /// US dollar (2 decimals).
    pub const USD: Currency = Currency(Repr::Iso(iso_currency::Currency::USD));
    /// Euro (2 decimals).
    pub const EUR: Currency = Currency(Repr::Iso(iso_currency::Currency::EUR));
    /// Japanese yen (0 decimals).
    pub const JPY: Currency = Currency(Repr::Iso(iso_currency::Currency::JPY));
    /// Kuwaiti dinar (3 decimals).
    pub const KWD: Currency = Currency(Repr::Iso(iso_currency::Currency::KWD));

    /// A known ISO 4217 alphabetic code, upper case, as the service
    /// requires in requests.
    ///
    /// # Errors
    ///
    /// [`MoneyError::UnknownCurrency`] for anything else.
    ///
    /// # Examples
    ///
    /// ```
    /// use payments_client::Currency;
    /// assert_eq!(Currency::from_code("MYR")?.exponent(), Some(2));
    /// assert!(Currency::from_code("myr").is_err());
    /// # Ok::<(), payments_client::money::MoneyError>(())
    /// ```
    pub fn from_code(code: &str) -> Result<Self, MoneyError> {
        iso_currency::Currency::from_code(code)
            .map(|c| Currency(Repr::Iso(c)))
            .ok_or_else(|| MoneyError::UnknownCurrency(code.to_owned()))
    }

    /// Any code as received from the service: known ones become ISO
    /// currencies, anything else is kept verbatim.
    pub fn from_wire(code: &str) -> Self {
        match iso_currency::Currency::from_code(code) {
            Some(c) => Currency(Repr::Iso(c)),
            None => Currency(Repr::Other(code.into())),
        }
    }

    /// The code as sent on the wire (`MYR`).
    pub fn code(&self) -> &str {
        match &self.0 {
            Repr::Iso(c) => c.code(),
            Repr::Other(code) => code,
        }
    }

    /// The ISO 4217 minor-unit exponent (MYR 2, JPY 0, KWD 3); `None` for
    /// unknown codes and for ISO entries without one (such as `XAU`).
    pub fn exponent(&self) -> Option<u32> {
        match &self.0 {
            Repr::Iso(c) => c.exponent().map(u32::from),
            Repr::Other(_) => None,
        }
    }

    /// Whether this is an ISO 4217 currency known to this crate.
    pub fn is_known(&self) -> bool {
        matches!(self.0, Repr::Iso(_))
    }

    /// Every ISO 4217 currency [`iso_currency`] knows, in numeric-code
    /// order (enumerated through the numeric codes 000–999, so no extra
    /// crate feature is needed).
    pub fn all_known() -> impl Iterator<Item = Currency> {
        (0u16..1000)
            .filter_map(iso_currency::Currency::from_numeric)
            .map(Currency::from)
    }

    /// The [`iso_currency`] value, when known.
    pub fn iso(&self) -> Option<iso_currency::Currency> {
        match &self.0 {
            Repr::Iso(c) => Some(*c),
            Repr::Other(_) => None,
        }
    }
}

impl Default for Currency {
    /// `MYR`, the service's default (interface document section 2.2).
    fn default() -> Self {
        Currency::MYR
    }
}

impl From<iso_currency::Currency> for Currency {
    fn from(c: iso_currency::Currency) -> Self {
        Currency(Repr::Iso(c))
    }
}

impl std::str::FromStr for Currency {
    type Err = MoneyError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Currency::from_code(s)
    }
}

impl fmt::Display for Currency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

impl fmt::Debug for Currency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::Iso(_) => write!(f, "Currency({})", self.code()),
            Repr::Other(code) => write!(f, "Currency::Other({code:?})"),
        }
    }
}

impl Serialize for Currency {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.code())
    }
}

impl<'de> Deserialize<'de> for Currency {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let code = String::deserialize(d)?;
        Ok(Currency::from_wire(&code))
    }
}
