//! The product catalogue (CONTRACT section 7): which product codes exist,
//! their initial state, confirm outcome and rules. Read from TOML or the
//! built-in default.
//!
//! The TOML format is documented on [`Catalog`].

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;

use crate::error::Error;

/// The default catalogue as TOML; [`Catalog::default`] parses it.
pub const DEFAULT_TOML: &str = include_str!("../catalog.example.toml");

/// The state a product's transactions start in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum InitialState {
    /// Waits on the payer (e.g. an OTP).
    Pending,
    /// Ready to confirm.
    Initiated,
}

impl InitialState {
    /// The wire status.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "PENDING",
            Self::Initiated => "INITIATED",
        }
    }
}

/// What a successful confirm (right code, if any) does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// `SUCCESSFUL` at once.
    Success,
    /// `CONFIRMED`, then `SUCCESSFUL` after the delay.
    Async {
        /// Time from confirm to settlement.
        settle_after: Duration,
    },
    /// `FAILED` with this `errorMessage`.
    Decline {
        /// The `errorMessage`.
        message: String,
    },
}

/// One product of the catalogue.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Product {
    /// The `productCode`.
    pub code: String,
    /// Free text.
    pub description: String,
    /// State after initiate.
    pub initial: InitialState,
    /// What confirm does.
    pub outcome: Outcome,
    /// `payerId` is required at initiate.
    pub payer_id_required: bool,
    /// Upper bound of `quantity`.
    pub max_quantity: Option<u32>,
    /// Confirm hands out one PIN per unit in `extraProperties`.
    pub pins: bool,
    /// Confirm needs a code; this one succeeds.
    pub confirmation_code: Option<String>,
}

/// The products the server offers, by code.
///
/// # TOML format
///
/// One `[[product]]` table per product:
///
/// | Key | Type | Meaning |
/// |---|---|---|
/// | `code` | string, required | 1–32 of `A-Z 0-9 _ -` |
/// | `description` | string | free text |
/// | `initial` | `"INITIATED"` (default) or `"PENDING"` | state after initiate |
/// | `outcome` | `"success"` (default), `"async"` or `"decline"` | what confirm does |
/// | `settle_after` | duration (`"2s"`), required for `async` | `CONFIRMED` → `SUCCESSFUL` after this |
/// | `decline_message` | string | `errorMessage` of a decline (default `declined by provider`) |
/// | `payer_id_required` | bool | `payerId` required at initiate |
/// | `max_quantity` | integer 1–1000 | upper bound for `quantity` |
/// | `pins` | bool | confirm `extraProperties` holds `{"pins":[...]}`, one per unit |
/// | `confirmation_code` | string | confirm needs a code; this one succeeds, any other fails |
///
/// `catalog.example.toml` next to `Cargo.toml` reproduces the default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Catalog {
    products: BTreeMap<String, Product>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCatalog {
    #[serde(default)]
    product: Vec<RawProduct>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProduct {
    code: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    initial: Option<InitialState>,
    #[serde(default)]
    outcome: Option<String>,
    #[serde(default)]
    settle_after: Option<String>,
    #[serde(default)]
    decline_message: Option<String>,
    #[serde(default)]
    payer_id_required: bool,
    #[serde(default)]
    max_quantity: Option<u32>,
    #[serde(default)]
    pins: bool,
    #[serde(default)]
    confirmation_code: Option<String>,
}

pub(crate) fn is_product_code(code: &str) -> bool {
    (1..=32).contains(&code.len())
        && code
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
}

impl Catalog {
    /// Parses and checks a TOML catalogue (format in the module docs).
    ///
    /// # Errors
    ///
    /// [`Error::Catalog`] naming the problem: TOML syntax (with the line),
    /// an unknown key, a bad code, a duplicate, an `async` product without
    /// `settle_after`, a quantity limit out of 1–1000, or no product at all.
    ///
    /// # Examples
    ///
    /// ```
    /// let catalog = payments_mock_server::Catalog::from_toml_str(r#"
    /// [[product]]
    /// code = "TOPUP"
    /// payer_id_required = true
    /// "#)?;
    /// assert!(catalog.product("TOPUP").is_some());
    /// # Ok::<(), payments_mock_server::Error>(())
    /// ```
    pub fn from_toml_str(text: &str) -> Result<Self, Error> {
        let raw: RawCatalog = toml::from_str(text)
            .map_err(|e| Error::Catalog(e.to_string().trim_end().to_owned()))?;
        if raw.product.is_empty() {
            return Err(Error::Catalog(
                "no products: add at least one [[product]] table".to_owned(),
            ));
        }
        let mut products = BTreeMap::new();
        for p in raw.product {
            let product = p.into_product()?;
            if products.contains_key(&product.code) {
                return Err(Error::Catalog(format!(
                    "product {} is listed twice",
                    product.code
                )));
            }
            products.insert(product.code.clone(), product);
        }
        Ok(Self { products })
    }

    /// Reads and parses a TOML catalogue file.
    ///
    /// # Errors
    ///
    /// [`Error::CatalogFile`] when the file cannot be read, otherwise as
    /// [`Catalog::from_toml_str`], prefixed with the path.
    pub fn from_path(path: impl AsRef<std::path::Path>) -> Result<Self, Error> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| Error::CatalogFile {
            path: path.display().to_string(),
            source,
        })?;
        Self::from_toml_str(&text).map_err(|e| match e {
            Error::Catalog(m) => Error::Catalog(format!("{}: {m}", path.display())),
            other => other,
        })
    }

    /// The product with this code.
    pub fn product(&self, code: &str) -> Option<&Product> {
        self.products.get(code)
    }

    /// Every product, by code.
    pub fn products(&self) -> impl Iterator<Item = &Product> {
        self.products.values()
    }
}

impl Default for Catalog {
    /// The catalogue of CONTRACT section 7.
    fn default() -> Self {
        Self::from_toml_str(DEFAULT_TOML).expect("the built-in catalogue is valid (unit-tested)")
    }
}

impl RawProduct {
    fn into_product(self) -> Result<Product, Error> {
        let code = self.code;
        let bad = |m: String| Error::Catalog(format!("product {code:?}: {m}"));
        if !is_product_code(&code) {
            return Err(bad("code must be 1-32 of A-Z 0-9 _ -".to_owned()));
        }
        let settle_after = match &self.settle_after {
            Some(text) => Some(
                humantime::parse_duration(text)
                    .map_err(|e| bad(format!("settle_after {text:?}: {e}")))?,
            ),
            None => None,
        };
        let outcome = match self.outcome.as_deref().unwrap_or("success") {
            "success" => Outcome::Success,
            "async" => Outcome::Async {
                settle_after: settle_after
                    .ok_or_else(|| bad("outcome \"async\" needs settle_after".to_owned()))?,
            },
            "decline" => Outcome::Decline {
                message: self
                    .decline_message
                    .unwrap_or_else(|| "declined by provider".to_owned()),
            },
            other => {
                return Err(bad(format!(
                    "outcome {other:?} is not one of \"success\", \"async\", \"decline\""
                )));
            }
        };
        if self
            .max_quantity
            .is_some_and(|max| !(1..=1000).contains(&max))
        {
            return Err(bad("max_quantity must be between 1 and 1000".to_owned()));
        }
        if self
            .confirmation_code
            .as_ref()
            .is_some_and(|c| !(1..=32).contains(&c.chars().count()))
        {
            return Err(bad(
                "confirmation_code must be between 1 and 32 characters".to_owned()
            ));
        }
        Ok(Product {
            description: self.description,
            initial: self.initial.unwrap_or(InitialState::Initiated),
            outcome,
            payer_id_required: self.payer_id_required,
            max_quantity: self.max_quantity,
            pins: self.pins,
            confirmation_code: self.confirmation_code,
            code,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_catalogue_is_section_7() {
        let c = Catalog::default();
        let codes: Vec<_> = c.products().map(|p| p.code.as_str()).collect();
        assert_eq!(
            codes,
            ["BILLPAY", "DECLINED", "EWALLET", "GIFTCARD", "TOPUP"]
        );
        assert_eq!(
            c.product("BILLPAY").map(|p| p.outcome.clone()),
            Some(Outcome::Async {
                settle_after: Duration::from_secs(2)
            })
        );
    }

    #[test]
    fn syntax_errors_name_the_line() {
        let e = Catalog::from_toml_str("[[product]]\ncode = \n").unwrap_err();
        assert!(e.to_string().contains("line 2"), "{e}");
    }
}
