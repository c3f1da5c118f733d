//! `POST /api/payments/initiate`.

use serde::Serialize;
use uuid::Uuid;

use crate::calls::{Call, ExtraProperties, Method, check_path_value, check_required};
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
    /// Purpose of the payment (its length is the service's to limit; the
    /// mock takes at most 255 characters).
    pub fn description(mut self, v: impl Into<String>) -> Self {
        self.description = Some(v.into());
        self
    }

    /// ISO 4217 currency; the service defaults to `MYR`.
    pub fn currency(mut self, v: Currency) -> Self {
        self.currency = Some(v);
        self
    }

    /// Number of items (its range is the service's to decide; the mock
    /// takes 1–1000, within the product's limit).
    pub fn quantity(mut self, v: u32) -> Self {
        self.quantity = Some(v);
        self
    }

    /// ISO 3166-1 alpha-2 country, upper case.
    pub fn country_code(mut self, v: impl Into<String>) -> Self {
        self.country_code = Some(v.into());
        self
    }

    /// Terminal or device (the mock takes 1–64 characters).
    pub fn device_id(mut self, v: impl Into<String>) -> Self {
        self.device_id = Some(v.into());
        self
    }

    /// Payer account; some products require it (the mock takes 1–128
    /// characters).
    pub fn payer_id(mut self, v: impl Into<String>) -> Self {
        self.payer_id = Some(v.into());
        self
    }

    /// Absolute URL the payer is sent back to in redirect flows (the mock
    /// takes `http` and `https` URLs of at most 2048 characters).
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

    /// Checks, before anything is sent, only what the interface document
    /// states and what the client needs, and reports every problem at
    /// once:
    ///
    /// - `referenceNo`, `productCode` and `storeId` (required) are not
    ///   empty; `referenceNo` is not `.` or `..`, since status by reference
    ///   (and the read-back after an ambiguous attempt) puts it in a URL
    ///   path;
    /// - `amount` is at most [`MAX_AMOUNT`] (2^53 − 1);
    /// - `currencyCode` is an ISO 4217 code with a minor unit;
    /// - `countryCode` is an ISO 3166-1 alpha-2 code (upper case);
    /// - `returnUrl` is an absolute URL;
    /// - `extraProperties` is a JSON object.
    ///
    /// Everything else is the service's to decide, and it answers
    /// `VALIDATION_ERROR` for what it does not take: the lengths of the
    /// strings, the form and set of product codes (`Topup` is sent as it
    /// is), the quantity's range, the return URL's scheme and length, the
    /// size of `extraProperties`. The mock's limits (CONTRACT section 1)
    /// are not applied here.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidInput`] listing each problem, in the order of the
    /// document's request table.
    ///
    /// # Examples
    ///
    /// ```
    /// use payments_client::{InitiateRequest, MinorAmount, Uuid};
    /// let req = InitiateRequest::builder(Uuid::nil(), "INV-1", MinorAmount::new(100)?, "Topup", "S1")
    ///     .description("d".repeat(300))
    ///     .build()?;
    /// assert_eq!(req.product_code(), "Topup");
    /// let bad = InitiateRequest::builder(Uuid::nil(), "..", MinorAmount::new(100)?, "Topup", "")
    ///     .build()
    ///     .unwrap_err();
    /// assert_eq!(
    ///     bad.to_string(),
    ///     "invalid request: referenceNo must not be \".\" or \"..\" (it cannot be sent in a URL path); \
    ///      storeId must not be empty"
    /// );
    /// # Ok::<(), payments_client::Error>(())
    /// ```
    pub fn build(self) -> Result<InitiateRequest, Error> {
        let mut errors = ValidationErrors::default();
        check_path_value(&mut errors, "referenceNo", &self.reference_no);
        // The amount is > 0 by its type (MinorAmount). It must also be at
        // most 2^53 - 1: the document types it as a JSON integer, and JSON
        // numbers beyond that are not exact in every peer (RFC 8259
        // section 6; a JavaScript or double-based service would round
        // them), so a larger one could be charged as another amount.
        if self.amount.get() > MAX_AMOUNT {
            errors.push("amount", format!("amount must be at most {MAX_AMOUNT}"));
        }
        // The document: "ISO 4217 code".
        if let Some(c) = &self.currency
            && !c.is_known()
        {
            errors.push("currencyCode", "currencyCode must be an ISO 4217 code");
        } else if let Some(c) = &self.currency
            && c.exponent().is_none()
        {
            // Without a minor-unit exponent (XAU, XDR, ...) an amount in
            // minor units has no meaning, and the client cannot convert the
            // major-unit amounts of the answers back to compare them.
            errors.push(
                "currencyCode",
                format!("currencyCode {c} has no minor unit and cannot be used for payments"),
            );
        }
        check_required(&mut errors, "productCode", &self.product_code);
        // The document: "ISO 3166-1 alpha-2 country code"; the standard's
        // codes are upper case.
        if let Some(cc) = &self.country_code
            && !is_country_code(cc)
        {
            errors.push(
                "countryCode",
                "countryCode must be an ISO 3166-1 alpha-2 code",
            );
        }
        check_required(&mut errors, "storeId", &self.store_id);
        // The document: a "URL to which the payer is redirected", which a
        // relative reference cannot be (there is nothing to resolve it
        // against). Its scheme (an app's own, say) and length are the
        // service's to decide.
        if let Some(u) = &self.return_url
            && url::Url::parse(u).is_err()
        {
            errors.push("returnUrl", "returnUrl must be an absolute URL");
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
