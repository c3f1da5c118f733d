//! The service's data, typed: what a call sends (the requests and their
//! builders) and what it answers (payloads, ids, statuses, error codes, and
//! the [`Reply`] around them). The common ones are also at the crate root;
//! amounts are in [`money`](crate::money).
//!
//! Everything here is tolerant on input (CONTRACT section 11) and exact on
//! output: numbers never pass through `f64`.

pub(crate) mod currency;
pub(crate) mod envelope;
pub(crate) mod ids;
pub(crate) mod money_error;
pub(crate) mod status;
pub(crate) mod transaction;
pub(crate) mod wire;

pub use crate::calls::confirm::{ConfirmRequest, ConfirmRequestBuilder};
pub use crate::calls::initiate::{InitiateRequest, InitiateRequestBuilder};
pub use crate::money::MinorAmount;
pub use currency::Currency;
pub use envelope::{Reconciled, Reply};
pub use ids::TransactionId;
pub use status::{ErrorCode, TransactionStatus};
pub use transaction::{Confirmation, Initiated, PaymentStatus};
