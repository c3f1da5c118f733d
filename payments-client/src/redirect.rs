//! Redirect-based payments, the merchant's side (CONTRACT section 13).
//!
//! A redirect-based product's confirm hands over a payment page
//! ([`Confirmation::payment_url`]); the payer pays, declines or cancels
//! there, and the page sends the payer's browser back to the merchant's
//! `returnUrl` with `transactionId`, `referenceNo` and `status` appended.
//! [`ReturnAddress`] reads those three; [`Client::verify_return`] asks the
//! service for the truth.

use std::str::FromStr;

use url::Url;

use crate::client::Client;
use crate::error::{Error, ValidationErrors};
use crate::model::envelope::Reply;
use crate::model::ids::TransactionId;
use crate::model::status::TransactionStatus;
use crate::model::transaction::{Confirmation, PaymentStatus};

/// The return address a payer's browser arrived at, read: the transaction
/// it names and what it *claims* happened.
///
/// The claim is a convenience for showing a page quickly, never the
/// outcome: anyone can type such an address. Verify it with
/// [`Client::verify_return`] before shipping anything.
///
/// # Examples
///
/// ```
/// use payments_client::{ReturnAddress, TransactionStatus};
///
/// let back: ReturnAddress = "https://shop.example/back?order=17\
///     &transactionId=0192f7c4-2d1e-7a10-9c55-5d3a8f7b1e01&referenceNo=INV%2F17&status=SUCCESSFUL"
///     .parse()?;
/// assert_eq!(back.reference_no(), "INV/17");
/// assert_eq!(back.claimed_status(), &TransactionStatus::Successful);
///
/// // Every missing parameter is named at once.
/// let err = ReturnAddress::from_query("order=17").unwrap_err();
/// assert!(err.to_string().contains("transactionId is missing"));
/// # Ok::<(), payments_client::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReturnAddress {
    transaction_id: TransactionId,
    reference_no: String,
    claimed_status: TransactionStatus,
}

impl ReturnAddress {
    /// The longest address read, in bytes (32 KiB); a longer text is
    /// refused as no return address.
    ///
    /// It covers every address the service builds: a `returnUrl` may be
    /// 2,048 characters, non-ASCII allowed, and the return address carries
    /// each character percent-encoded, up to 12 bytes (`%F0%9F%98%80`;
    /// 9 for the characters the mock accepts). With its three parameters
    /// (a 64-character referenceNo encoded likewise) an address stays
    /// under 26 KiB. An 8 KiB bound refused real returns from a long
    /// non-ASCII `returnUrl`.
    pub const MAX_LEN: usize = 32 * 1024;

    /// Reads a whole return address (an absolute URL; the merchant's own
    /// query parameters and the fragment are ignored), as
    /// [`ReturnAddress::from_query`] reads its query.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidInput`] naming every problem: too long, not an
    /// absolute URL, or a parameter missing or empty.
    ///
    /// # Examples
    ///
    /// ```
    /// use payments_client::{ReturnAddress, TransactionStatus};
    ///
    /// let back = ReturnAddress::parse(
    ///     "https://shop.example/back?order=17&transactionId=0192f7c4-2d1e-7a10-9c55-5d3a8f7b1e01\
    ///      &referenceNo=ORDER+17&status=FAILED#top",
    /// )?;
    /// assert_eq!(back.transaction_id().as_str(), "0192f7c4-2d1e-7a10-9c55-5d3a8f7b1e01");
    /// assert_eq!(back.reference_no(), "ORDER 17"); // form decoding: + is a space
    /// assert_eq!(back.claimed_status(), &TransactionStatus::Failed);
    ///
    /// let err = ReturnAddress::parse("/back?transactionId=x").unwrap_err();
    /// assert!(err.to_string().contains("not an absolute URL"));
    /// # Ok::<(), payments_client::Error>(())
    /// ```
    pub fn parse(address: &str) -> Result<Self, Error> {
        let address = address.trim();
        check_length(address)?;
        let url = Url::parse(address).map_err(|e| {
            invalid(format!(
                "the return address is not an absolute URL ({e}); pass the whole address the browser arrived at"
            ))
        })?;
        Self::from_query(url.query().unwrap_or_default())
    }

    /// Reads the query part of a return address (with or without its
    /// leading `?`), as a web framework hands it to a return handler.
    ///
    /// Each of `transactionId`, `referenceNo` and `status` is read from its
    /// last occurrence, because the payment page appends the three after
    /// any query the merchant's `returnUrl` already had, so an earlier
    /// occurrence is the merchant's own and is ignored.
    ///
    /// # Errors
    ///
    /// As [`ReturnAddress::parse`].
    ///
    /// # Examples
    ///
    /// ```
    /// use payments_client::{ReturnAddress, TransactionStatus};
    ///
    /// let query = "transactionId=0192f7c4-2d1e-7a10-9c55-5d3a8f7b1e01&referenceNo=INV%2F17&status=SUCCESSFUL";
    /// assert_eq!(ReturnAddress::from_query(query)?.reference_no(), "INV/17");
    ///
    /// // A returnUrl with its own `status` and `referenceNo`: the appended ones count.
    /// let back = ReturnAddress::from_query(
    ///     "status=new&referenceNo=mine\
    ///      &transactionId=0192f7c4-2d1e-7a10-9c55-5d3a8f7b1e01&referenceNo=INV%2F17&status=FAILED",
    /// )?;
    /// assert_eq!(back.reference_no(), "INV/17");
    /// assert_eq!(back.claimed_status(), &TransactionStatus::Failed);
    ///
    /// let err = ReturnAddress::from_query("referenceNo=a&referenceNo=b").unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "invalid request: transactionId is missing from the return address; \
    ///      status is missing from the return address"
    /// );
    /// # Ok::<(), payments_client::Error>(())
    /// ```
    pub fn from_query(query: &str) -> Result<Self, Error> {
        let query = query.trim();
        check_length(query)?;
        let query = query.strip_prefix('?').unwrap_or(query);
        // The last occurrence of each name wins (see above): a later one
        // overwrites what an earlier one, the merchant's own, left here.
        let mut found: [Option<String>; 3] = Default::default();
        for (name, value) in url::form_urlencoded::parse(query.as_bytes()) {
            if let Some(i) = PARAMETERS.iter().position(|p| *p == name) {
                found[i] = Some(value.into_owned());
            }
        }
        let mut problems = ValidationErrors::default();
        for (name, value) in PARAMETERS.iter().zip(&found) {
            match value {
                None => problems.push(name, format!("{name} is missing from the return address")),
                Some(value) if value.trim().is_empty() => {
                    problems.push(name, format!("{name} is empty in the return address"));
                }
                Some(_) => {}
            }
        }
        match found {
            [Some(id), Some(reference), Some(status)] if problems.is_empty() => Ok(Self {
                transaction_id: TransactionId::new(id),
                reference_no: reference,
                claimed_status: TransactionStatus::from_wire(&status),
            }),
            _ => Err(Error::InvalidInput(problems)),
        }
    }

    /// The transaction the address names.
    pub fn transaction_id(&self) -> &TransactionId {
        &self.transaction_id
    }

    /// The referenceNo the address names.
    pub fn reference_no(&self) -> &str {
        &self.reference_no
    }

    /// The status the address claims: never the outcome by itself.
    pub fn claimed_status(&self) -> &TransactionStatus {
        &self.claimed_status
    }
}

/// The three parameters, in the order CONTRACT section 13 appends them.
const PARAMETERS: [&str; 3] = ["transactionId", "referenceNo", "status"];

fn invalid(message: String) -> Error {
    let mut problems = ValidationErrors::default();
    problems.push("returnAddress", message);
    Error::InvalidInput(problems)
}

fn check_length(text: &str) -> Result<(), Error> {
    if text.len() > ReturnAddress::MAX_LEN {
        return Err(invalid(format!(
            "the return address is {} bytes long, more than the {} a return address can be",
            text.len(),
            ReturnAddress::MAX_LEN
        )));
    }
    Ok(())
}

impl FromStr for ReturnAddress {
    type Err = Error;

    /// [`ReturnAddress::parse`].
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

/// A return address checked against the service: the status is the
/// service's; the address's claim is kept to compare.
///
/// Made by [`Client::verify_return`], which has an example.
#[derive(Debug, Clone)]
pub struct VerifiedReturn {
    reply: Reply<PaymentStatus>,
    claimed_status: TransactionStatus,
}

impl VerifiedReturn {
    /// The transaction's status as the service reports it: the outcome.
    pub fn status(&self) -> &TransactionStatus {
        &self.reply.data().status
    }

    /// The service's answer in full (amount, message, request id...).
    pub fn reply(&self) -> &Reply<PaymentStatus> {
        &self.reply
    }

    /// The service's answer, owned.
    pub fn into_reply(self) -> Reply<PaymentStatus> {
        self.reply
    }

    /// The status the return address claimed.
    pub fn claimed_status(&self) -> &TransactionStatus {
        &self.claimed_status
    }

    /// Whether the address's claim agrees with the service.
    pub fn status_matches(&self) -> bool {
        self.claimed_status == *self.status()
    }
}

impl Client {
    /// Verifies a return address: reads the transaction's status by its
    /// id (with the client's retries) and checks the address's
    /// referenceNo against it. The result's status is the service's, never
    /// the address's, because anyone can forge the query of a return
    /// address.
    ///
    /// # Errors
    ///
    /// [`Error::ReturnMismatch`] when the service's referenceNo for that
    /// transaction is another one (a forged address, or one of another
    /// payment); otherwise the status call's errors
    /// (`TRANSACTION_NOT_FOUND` for an id the service does not know).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use payments_client::{Client, ReturnAddress, TransactionStatus};
    ///
    /// # async fn run(client: Client, query: &str) -> Result<(), payments_client::Error> {
    /// // In the merchant's return handler, with the query it was called with:
    /// let address = ReturnAddress::from_query(query)?;
    /// let verified = client.verify_return(&address).await?;
    /// if *verified.status() == TransactionStatus::Successful {
    ///     println!("paid: ship order {}", address.reference_no());
    /// }
    /// if !verified.status_matches() {
    ///     println!("the address claimed {}", verified.claimed_status());
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn verify_return(&self, address: &ReturnAddress) -> Result<VerifiedReturn, Error> {
        let reply = self.status(address.transaction_id()).await?;
        if reply.data().reference_no != address.reference_no {
            return Err(Error::ReturnMismatch {
                claimed: address.reference_no.clone(),
                found: Box::new(reply),
            });
        }
        Ok(VerifiedReturn {
            reply,
            claimed_status: address.claimed_status.clone(),
        })
    }
}

/// `paymentUrl` out of an `extraProperties` JSON text: an absolute http or
/// https URL, or nothing.
fn payment_url_in(extra_properties: Option<&str>) -> Option<Url> {
    let extra: serde_json::Value = serde_json::from_str(extra_properties?).ok()?;
    let url = Url::parse(extra.get("paymentUrl")?.as_str()?).ok()?;
    matches!(url.scheme(), "http" | "https").then_some(url)
}

impl Confirmation {
    /// The payment page of a redirect-based product: where to send the
    /// payer (`paymentUrl` in `extraProperties`). `None` for other
    /// products, and when the value is not an absolute http(s) URL.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # use payments_client::{Client, ConfirmRequest};
    /// # async fn run(client: Client, request: ConfirmRequest) -> Result<(), payments_client::Error> {
    /// let confirmed = client.confirm(request).await?;
    /// if let Some(page) = confirmed.data().payment_url() {
    ///     println!("send the payer to {page}");
    /// }
    /// # Ok(()) }
    /// ```
    pub fn payment_url(&self) -> Option<Url> {
        payment_url_in(self.extra_properties.as_deref())
    }
}

impl PaymentStatus {
    /// The payment page of a confirmed redirect-based transaction, as
    /// [`Confirmation::payment_url`]: status reads carry it while the payer
    /// has not decided (`CONFIRMED`, message `awaiting the payer`).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # use payments_client::{Client, TransactionStatus};
    /// # async fn run(client: Client, id: &str) -> Result<(), payments_client::Error> {
    /// let status = client.status(id).await?;
    /// if status.data().status == TransactionStatus::Confirmed {
    ///     if let Some(page) = status.data().payment_url() {
    ///         println!("the payer has not decided yet; their page is {page}");
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    pub fn payment_url(&self) -> Option<Url> {
        payment_url_in(self.extra_properties.as_deref())
    }
}

#[cfg(test)]
mod tests;
