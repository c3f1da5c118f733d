//! `POST /api/payments/initiate`.

use serde::Serialize;
use uuid::Uuid;

use crate::calls::{
    Call, ExtraProperties, Method, check_len, check_not_dot_segment, check_reference_no,
};
use crate::error::{Error, ValidationErrors};
use crate::model::currency::Currency;
use crate::money::{MAX_AMOUNT, MinorAmount};

/// A validated initiate request (interface document section 2.2).
///
/// Built with [`InitiateRequest::builder`], whose arguments are the required
/// fields, so none can be forgotten.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InitiateRequest {
    merchant_id: Uuid,
    reference_no: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    amount: MinorAmount,
    #[serde(skip_serializing_if = "Option::is_none")]
    currency_code: Option<Currency>,
    product_code: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    quantity: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    country_code: Option<String>,
    store_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    device_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    payer_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    return_url: Option<String>,
    /// Sent as a string holding compact JSON, as the document types it.
    #[serde(skip_serializing_if = "Option::is_none")]
    extra_properties: Option<String>,
}

impl InitiateRequest {
    /// Starts a request with every required field.
    ///
    /// # Examples
    ///
    /// ```
    /// use payments_client::{Currency, InitiateRequest, MinorAmount, Uuid};
    /// let merchant = Uuid::nil();
    /// let req = InitiateRequest::builder(merchant, "INV-1", MinorAmount::new(1050)?, "TOPUP", "STORE-1")
    ///     .currency(Currency::MYR)
    ///     .payer_id("60123456789")
    ///     .build()?;
    /// assert_eq!(req.reference_no(), "INV-1");
    /// # Ok::<(), payments_client::Error>(())
    /// ```
    pub fn builder(
        merchant_id: Uuid,
        reference_no: impl Into<String>,
        amount: MinorAmount,
        product_code: impl Into<String>,
        store_id: impl Into<String>,
    ) -> InitiateRequestBuilder {
        InitiateRequestBuilder {
            merchant_id,
            reference_no: reference_no.into(),
            description: None,
            amount,
            currency: None,
            product_code: product_code.into(),
            quantity: None,
            country_code: None,
            store_id: store_id.into(),
            device_id: None,
            payer_id: None,
            return_url: None,
            extra_properties: ExtraProperties::default(),
        }
    }

    /// The merchant.
    pub fn merchant_id(&self) -> Uuid {
        self.merchant_id
    }

    /// The merchant's reference.
    pub fn reference_no(&self) -> &str {
        &self.reference_no
    }

    /// The amount in minor units.
    pub fn amount(&self) -> MinorAmount {
        self.amount
    }

    /// The currency as sent, `None` when left to the service's default.
    pub fn currency(&self) -> Option<&Currency> {
        self.currency_code.as_ref()
    }

    /// The currency the service will use: the one set, or `MYR`.
    pub fn effective_currency(&self) -> Currency {
        self.currency_code.clone().unwrap_or_default()
    }

    /// The product.
    pub fn product_code(&self) -> &str {
        &self.product_code
    }

    /// The store.
    pub fn store_id(&self) -> &str {
        &self.store_id
    }

    /// The description, if any.
    pub fn description(&self) -> Option<&str> {
        self.description.as_deref()
    }

    /// The quantity, if any.
    pub fn quantity(&self) -> Option<u32> {
        self.quantity
    }

    /// The country code, if any.
    pub fn country_code(&self) -> Option<&str> {
        self.country_code.as_deref()
    }

    /// The device id, if any.
    pub fn device_id(&self) -> Option<&str> {
        self.device_id.as_deref()
    }

    /// The payer id, if any.
    pub fn payer_id(&self) -> Option<&str> {
        self.payer_id.as_deref()
    }

    /// The return URL, if any.
    pub fn return_url(&self) -> Option<&str> {
        self.return_url.as_deref()
    }

    /// The compact JSON string sent as `extraProperties`.
    pub fn extra_properties(&self) -> Option<&str> {
        self.extra_properties.as_deref()
    }

    pub(crate) fn call(&self) -> Result<Call, Error> {
        let body = serde_json::to_vec(self)
            .map_err(|e| Error::config(format!("cannot serialise the request: {e}")))?;
        Ok(Call {
            name: "initiate",
            method: Method::Post,
            template: "/api/payments/initiate",
            path: "/api/payments/initiate".to_owned(),
            query: Vec::new(),
            body: Some(body.into()),
        })
    }
}

/// Builder of an [`InitiateRequest`]; see [`InitiateRequest::builder`].
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until build() is called"]
pub struct InitiateRequestBuilder {
    merchant_id: Uuid,
    reference_no: String,
    description: Option<String>,
    amount: MinorAmount,
    currency: Option<Currency>,
    product_code: String,
    quantity: Option<u32>,
    country_code: Option<String>,
    store_id: String,
    device_id: Option<String>,
    payer_id: Option<String>,
    return_url: Option<String>,
    extra_properties: ExtraProperties,
}

impl InitiateRequestBuilder {
    /// Purpose of the payment, at most 255 characters.
    pub fn description(mut self, v: impl Into<String>) -> Self {
        self.description = Some(v.into());
        self
    }

    /// ISO 4217 currency; the service defaults to `MYR`.
    pub fn currency(mut self, v: Currency) -> Self {
        self.currency = Some(v);
        self
    }

    /// Number of items, 1–1000.
    pub fn quantity(mut self, v: u32) -> Self {
        self.quantity = Some(v);
        self
    }

    /// ISO 3166-1 alpha-2 country, upper case.
    pub fn country_code(mut self, v: impl Into<String>) -> Self {
        self.country_code = Some(v.into());
        self
    }

    /// Terminal or device, 1–64 characters.
    pub fn device_id(mut self, v: impl Into<String>) -> Self {
        self.device_id = Some(v.into());
        self
    }

    /// Payer account, 1–128 characters; some products require it.
    pub fn payer_id(mut self, v: impl Into<String>) -> Self {
        self.payer_id = Some(v.into());
        self
    }

    /// Absolute `http`/`https` URL for redirect flows.
    pub fn return_url(mut self, v: impl Into<String>) -> Self {
        self.return_url = Some(v.into());
        self
    }

    /// Product-specific properties: a JSON object, sent as a JSON string.
    /// Replaces any set before; [`extra_property`](Self::extra_property)
    /// adds to it.
    pub fn extra_properties(mut self, v: serde_json::Value) -> Self {
        self.extra_properties.set(v);
        self
    }

    /// One product-specific property: a string, number, boolean, list or
    /// any `Serialize` value of your own. Repeat for more; no `serde_json`
    /// needed. Write amounts as strings (`"75.00"`) or [`Decimal`]s, never
    /// as floats.
    ///
    /// [`Decimal`]: crate::Decimal
    ///
    /// # Examples
    ///
    /// ```
    /// use payments_client::{InitiateRequest, MinorAmount, Uuid};
    /// let req = InitiateRequest::builder(Uuid::nil(), "GC-1", MinorAmount::new(7500)?, "GIFTCARD", "S1")
    ///     .extra_property("denominations", ["25.00", "50.00"])
    ///     .extra_property("recipient", "Ana")
    ///     .extra_property("wrapped", true)
    ///     .build()?;
    /// assert_eq!(
    ///     req.extra_properties(),
    ///     Some(r#"{"denominations":["25.00","50.00"],"recipient":"Ana","wrapped":true}"#)
    /// );
    /// # Ok::<(), payments_client::Error>(())
    /// ```
    pub fn extra_property(mut self, key: impl Into<String>, value: impl serde::Serialize) -> Self {
        self.extra_properties.insert(key.into(), value);
        self
    }

    /// Product-specific properties from the text of a JSON object (as
    /// stored in a config file, say). Replaces any set before; text that
    /// is not JSON is reported by [`build`](Self::build).
    ///
    /// # Examples
    ///
    /// ```
    /// use payments_client::{InitiateRequest, MinorAmount, Uuid};
    /// let builder = InitiateRequest::builder(Uuid::nil(), "GC-2", MinorAmount::new(7500)?, "GIFTCARD", "S1");
    /// let req = builder.clone().extra_properties_json(r#"{"recipient": "Ana"}"#).build()?;
    /// assert_eq!(req.extra_properties(), Some(r#"{"recipient":"Ana"}"#));
    /// assert!(builder.extra_properties_json("{oops").build().is_err());
    /// # Ok::<(), payments_client::Error>(())
    /// ```
    pub fn extra_properties_json(mut self, text: &str) -> Self {
        self.extra_properties.set_json(text);
        self
    }

    /// Checks the service's field rules (lengths, formats, currency,
    /// product code, amount limit) and reports every broken rule at once.
    // CONTRACT section 1.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidInput`] listing each problem, in the order of the
    /// document's request table.
    pub fn build(self) -> Result<InitiateRequest, Error> {
        let mut errors = ValidationErrors::default();
        check_reference_no(&mut errors, &self.reference_no);
        // Status by reference (and reconciliation) puts it in a URL path.
        check_not_dot_segment(&mut errors, "referenceNo", &self.reference_no);
        if let Some(d) = &self.description {
            check_len(&mut errors, "description", d, 0, 255);
        }
        if self.amount.get() > MAX_AMOUNT {
            errors.push("amount", format!("amount must be at most {MAX_AMOUNT}"));
        }
        if let Some(c) = &self.currency
            && !c.is_known()
        {
            errors.push("currencyCode", "currencyCode must be an ISO 4217 code");
        } else if let Some(c) = &self.currency
            && c.exponent().is_none()
        {
            // Without a minor-unit exponent (XAU, XDR, ...) an amount in
            // minor units has no meaning and cannot be reconciled.
            errors.push(
                "currencyCode",
                format!("currencyCode {c} has no minor unit and cannot be used for payments"),
            );
        }
        let pc = &self.product_code;
        if pc.is_empty()
            || pc.len() > 32
            || !pc
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
        {
            errors.push(
                "productCode",
                "productCode must be 1-32 characters of A-Z, 0-9, _ and -",
            );
        }
        if let Some(q) = self.quantity
            && !(1..=1000).contains(&q)
        {
            errors.push("quantity", "quantity must be between 1 and 1000");
        }
        if let Some(cc) = &self.country_code
            && !is_country_code(cc)
        {
            errors.push(
                "countryCode",
                "countryCode must be an ISO 3166-1 alpha-2 code",
            );
        }
        check_len(&mut errors, "storeId", &self.store_id, 1, 64);
        if let Some(d) = &self.device_id {
            check_len(&mut errors, "deviceId", d, 1, 64);
        }
        if let Some(p) = &self.payer_id {
            check_len(&mut errors, "payerId", p, 1, 128);
        }
        if let Some(u) = &self.return_url {
            let ok = u.chars().count() <= 2048
                && url::Url::parse(u)
                    .is_ok_and(|p| matches!(p.scheme(), "http" | "https") && p.has_host());
            if !ok {
                errors.push(
                    "returnUrl",
                    "returnUrl must be an absolute http or https URL of at most 2048 characters",
                );
            }
        }
        let extra = self.extra_properties.check(&mut errors);
        errors.into_result()?;
        Ok(InitiateRequest {
            merchant_id: self.merchant_id,
            reference_no: self.reference_no,
            description: self.description,
            amount: self.amount,
            currency_code: self.currency,
            product_code: self.product_code,
            quantity: self.quantity,
            country_code: self.country_code,
            store_id: self.store_id,
            device_id: self.device_id,
            payer_id: self.payer_id,
            return_url: self.return_url,
            extra_properties: extra,
        })
    }
}

/// An assigned ISO 3166-1 alpha-2 code, upper case (the crate's table also
/// maps `""` to its `Unspecified`, hence the length check).
fn is_country_code(code: &str) -> bool {
    code.len() == 2 && code.parse::<iso_country::Country>().is_ok()
}
