//! The product catalogue (CONTRACT section 7): which product codes exist,
//! their initial state, confirm outcome and rules. Read from TOML or the
//! built-in default.
//!
//! The TOML format is documented on [`Catalog`].

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use serde::Deserialize;

use crate::error::Error;
use payments_interface::rules::QUANTITY_MAX;

/// The default catalogue as TOML; [`Catalog::default`] parses it.
pub const DEFAULT_TOML: &str = include_str!("../../catalog.example.toml");

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

/// How a confirm of the product completes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Flow {
    /// The confirm itself decides ([`Product::outcome`]).
    Direct,
    /// Redirect-based (CONTRACT section 13): the confirm answers
    /// `CONFIRMED` with a payment page, where the payer decides within
    /// `payer_timeout`; initiate requires `returnUrl`.
    Redirect {
        /// The payer window, from the confirm on (default 10 minutes).
        payer_timeout: Duration,
    },
}

/// Default payer window of a redirect product.
pub const DEFAULT_PAYER_TIMEOUT: Duration = Duration::from_secs(10 * 60);

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
    /// What confirm does (for a redirect product: nothing, the payer
    /// decides; kept as `Success`).
    pub outcome: Outcome,
    /// Direct, or redirect-based with a payment page.
    pub flow: Flow,
    /// `payerId` is required at initiate.
    pub payer_id_required: bool,
    /// Upper bound of `quantity`.
    pub max_quantity: Option<u32>,
    /// Confirm hands out one PIN per unit in `extraProperties`.
    pub pins: bool,
    /// Confirm needs a code; this one succeeds.
    pub confirmation_code: Option<String>,
}

impl Product {
    /// The payer window of a redirect-based product.
    pub fn payer_timeout(&self) -> Option<Duration> {
        match self.flow {
            Flow::Redirect { payer_timeout } => Some(payer_timeout),
            Flow::Direct => None,
        }
    }

    /// Whether initiate needs `returnUrl`: the payer is sent back there
    /// (CONTRACT section 13).
    pub fn requires_return_url(&self) -> bool {
        matches!(self.flow, Flow::Redirect { .. })
    }
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
/// | `settle_after` | duration (`"2s"`; whole milliseconds, at most 100 years), required for `async` | `CONFIRMED` → `SUCCESSFUL` after this |
/// | `decline_message` | string | `errorMessage` of a decline (default `declined by provider`) |
/// | `payer_id_required` | bool | `payerId` required at initiate |
/// | `max_quantity` | integer 1–1000 | upper bound for `quantity` |
/// | `pins` | bool | confirm `extraProperties` holds `{"pins":[...]}`, one per unit |
/// | `confirmation_code` | string | confirm needs a code; this one succeeds, any other fails |
/// | `flow` | `"direct"` (default) or `"redirect"` | `redirect`: the confirm answers `CONFIRMED` with a payment page where the payer decides; initiate requires `returnUrl`; `outcome`, `settle_after`, `decline_message`, `pins` and `confirmation_code` do not apply |
/// | `payer_timeout` | duration (`"10m"`; whole milliseconds, more than 0, at most 100 years), only with `redirect` | how long the payer has from the confirm on (default 10 minutes); then the transaction is `FAILED` |
///
/// `catalog.example.toml` next to `Cargo.toml` reproduces the default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Catalog {
    /// Every product, ordered by code.
    products: Vec<Product>,
    /// Where each code's product is in `products`: a look-up on every
    /// initiate and confirm, which the ordered map made string comparison
    /// by string comparison (~300 instructions a look-up).
    by_code: HashMap<String, usize>,
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
    #[serde(default)]
    flow: Option<String>,
    #[serde(default)]
    payer_timeout: Option<String>,
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
        let products: Vec<Product> = products.into_values().collect();
        let by_code = products
            .iter()
            .enumerate()
            .map(|(i, p)| (p.code.clone(), i))
            .collect();
        Ok(Self { products, by_code })
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
        self.by_code.get(code).and_then(|&i| self.products.get(i))
    }

    /// Every product, by code.
    pub fn products(&self) -> impl Iterator<Item = &Product> {
        self.products.iter()
    }

    /// The catalogue as TOML in the format [`Catalog::from_toml_str`]
    /// reads, every key written out: what a store keeps (CONTRACT section
    /// 15), and reads back as an equal catalogue.
    pub fn to_toml(&self) -> String {
        let mut text = String::new();
        for product in &self.products {
            text.push_str("[[product]]\n");
            for (key, value) in product.settings() {
                text.push_str(&format!("{key} = {value}\n"));
            }
            text.push('\n');
        }
        text
    }

    /// What differs between two catalogues, one line per product or key,
    /// naming both values: `BILLPAY settle_after: "2s" in the store, "5s" given`.
    pub fn differences(&self, stored: &Self) -> Vec<String> {
        let mut lines = Vec::new();
        let codes: std::collections::BTreeSet<&String> = self
            .products
            .iter()
            .chain(&stored.products)
            .map(|p| &p.code)
            .collect();
        for code in codes {
            match (stored.product(code), self.product(code)) {
                (Some(_), None) => lines.push(format!("product {code} only in the store")),
                (None, Some(_)) => {
                    lines.push(format!("product {code} only in the given catalogue"))
                }
                (Some(old), Some(new)) if old != new => {
                    let (old, new) = (old.settings(), new.settings());
                    let keys: std::collections::BTreeSet<&str> =
                        old.keys().chain(new.keys()).copied().collect();
                    for key in keys {
                        let (a, b) = (old.get(key), new.get(key));
                        if a != b {
                            let shown = |v: Option<&String>| {
                                v.map_or_else(|| "absent".to_owned(), Clone::clone)
                            };
                            lines.push(format!(
                                "{code} {key}: {} in the store, {} given",
                                shown(a),
                                shown(b)
                            ));
                        }
                    }
                }
                _ => {}
            }
        }
        lines
    }
}

impl Product {
    /// The product's keys in the TOML format, each value as TOML text
    /// (strings quoted and escaped), in the order the format documents them.
    fn settings(&self) -> BTreeMap<&'static str, String> {
        let text = |s: &str| toml::Value::String(s.to_owned()).to_string();
        let duration = |d: Duration| text(&humantime::format_duration(d).to_string());
        let mut keys = BTreeMap::new();
        keys.insert("code", text(&self.code));
        keys.insert("description", text(&self.description));
        keys.insert("initial", text(self.initial.as_str()));
        match &self.flow {
            Flow::Direct => {
                keys.insert("flow", text("direct"));
                match &self.outcome {
                    Outcome::Success => {
                        keys.insert("outcome", text("success"));
                    }
                    Outcome::Async { settle_after } => {
                        keys.insert("outcome", text("async"));
                        keys.insert("settle_after", duration(*settle_after));
                    }
                    Outcome::Decline { message } => {
                        keys.insert("outcome", text("decline"));
                        keys.insert("decline_message", text(message));
                    }
                }
                keys.insert("pins", self.pins.to_string());
                if let Some(code) = &self.confirmation_code {
                    keys.insert("confirmation_code", text(code));
                }
            }
            Flow::Redirect { payer_timeout } => {
                keys.insert("flow", text("redirect"));
                keys.insert("payer_timeout", duration(*payer_timeout));
            }
        }
        keys.insert("payer_id_required", self.payer_id_required.to_string());
        if let Some(max) = self.max_quantity {
            keys.insert("max_quantity", max.to_string());
        }
        keys
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
        // As `--expiry`: whole milliseconds, at most 100 years.
        let duration = |key: &str, text: &Option<String>| match text {
            Some(text) => {
                let d = humantime::parse_duration(text)
                    .map_err(|e| bad(format!("{key} {text:?}: {e}")))?;
                match crate::domain::clock::setting_problem(d) {
                    Some(problem) => Err(bad(format!("{key} {text:?}: {problem}"))),
                    None => Ok(Some(d)),
                }
            }
            None => Ok(None),
        };
        let settle_after = duration("settle_after", &self.settle_after)?;
        let payer_timeout = duration("payer_timeout", &self.payer_timeout)?;
        let flow = match self.flow.as_deref().unwrap_or("direct") {
            "direct" => {
                if payer_timeout.is_some() {
                    return Err(bad("payer_timeout needs flow = \"redirect\"".to_owned()));
                }
                Flow::Direct
            }
            "redirect" => {
                // The payer decides: nothing else may decide the outcome.
                let conflicting = [
                    ("outcome", self.outcome.is_some()),
                    ("settle_after", self.settle_after.is_some()),
                    ("decline_message", self.decline_message.is_some()),
                    ("pins", self.pins),
                    ("confirmation_code", self.confirmation_code.is_some()),
                ];
                if let Some((key, _)) = conflicting.iter().find(|(_, set)| *set) {
                    return Err(bad(format!(
                        "{key} does not apply to flow = \"redirect\" (the payer decides on the payment page)"
                    )));
                }
                let payer_timeout = payer_timeout.unwrap_or(DEFAULT_PAYER_TIMEOUT);
                if payer_timeout.is_zero() {
                    return Err(bad("payer_timeout must be greater than 0".to_owned()));
                }
                Flow::Redirect { payer_timeout }
            }
            other => {
                return Err(bad(format!(
                    "flow {other:?} is not one of \"direct\", \"redirect\""
                )));
            }
        };
        // A key of another outcome would be dropped without a word.
        let outcome_name = self.outcome.as_deref().unwrap_or("success");
        if self.settle_after.is_some() && outcome_name != "async" {
            return Err(bad(format!(
                "settle_after applies to outcome = \"async\" only, not {outcome_name:?}"
            )));
        }
        if self.decline_message.is_some() && outcome_name != "decline" {
            return Err(bad(format!(
                "decline_message applies to outcome = \"decline\" only, not {outcome_name:?}"
            )));
        }
        let outcome = match outcome_name {
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
            .is_some_and(|max| !(1..=QUANTITY_MAX).contains(&max))
        {
            return Err(bad(format!(
                "max_quantity must be between 1 and {QUANTITY_MAX}"
            )));
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
            flow,
            payer_id_required: self.payer_id_required,
            max_quantity: self.max_quantity,
            pins: self.pins,
            confirmation_code: self.confirmation_code,
            code,
        })
    }
}

#[cfg(test)]
mod tests;
