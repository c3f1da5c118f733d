//! The vocabulary of the merchant payment-transaction interface, written
//! once: its four endpoints and how a path names one, its error codes
//! (the interface document's, and the extensions, each marked as whose),
//! transaction statuses, the response envelope, the request and response
//! field tables with their rules, and currency exponents.
//!
//! The payments mock server and the contract proxy both read it, so they
//! cannot disagree about a path, a code or a field. The client crate reads
//! only its [`timestamp`] reader (without the default feature `full`, so
//! with no dependency): it and the mock are otherwise written apart on
//! purpose, so each checks the other, and what the proxy passes as a
//! timestamp the client reads.
//!
//! Feature `full` (on by default): everything but [`timestamp`],
//! [`fields`], [`ErrorCode`] and [`Status`], which need no dependency.
//!
//! # Example
//!
//! ```
//! # #[cfg(feature = "full")] {
//! use payments_interface::{Endpoint, ErrorCode, Whose, route};
//!
//! let matched = route("/api/payments/reference/INV%2F7/status").expect("an endpoint");
//! assert_eq!(matched.endpoint, Endpoint::StatusByReference);
//! assert_eq!(matched.decoded().as_deref(), Some("INV/7"));
//! assert!(!matched.endpoint.takes_method("POST"));
//! assert_eq!(matched.endpoint.allow(), "GET,HEAD");
//!
//! assert_eq!(ErrorCode::parse("TRANSACTION_NOT_FOUND"), Some(ErrorCode::TransactionNotFound));
//! assert_eq!(ErrorCode::DuplicateReferenceNo.whose(), Whose::Mock);
//! assert!(Endpoint::Confirm.documented_codes().contains(&ErrorCode::TransactionNotFound));
//! # }
//! ```

// Layout, for contributors (the bottom of the workspace: nothing here
// imports another crate of it):
// - `endpoint.rs`: the four operations, their methods, path templates and
//   matching, what the document lets each answer, percent-decoding of a
//   path parameter.
// - `code.rs`: `ErrorCode` and whose each code is.
// - `status.rs`: `Status`, the transaction states.
// - `envelope.rs`: the response envelope every answer is.
// - `fields.rs`: the request and `data` field tables, in document order;
//   `fields/timestamp.rs`: the one reader of the interface's timestamps
//   (the client's and the proxy's), with no dependency.
// - `rules.rs`: lengths, limits, patterns and code lists (the mock's
//   validator checks them and its OpenAPI document publishes them).
// - `money.rs`: minor units to exact major-unit text, currency exponents.
// - `readable.rs`: a request's target decoded for reading (RFC 3987's
//   way), as the mock's console and `payments tail` show it.
// - `coverage.rs`: the interface's answers and transitions as a matrix of
//   cells, and what a tool saw of each (CONTRACT section 20).

mod code;
#[cfg(feature = "full")]
pub mod coverage;
#[cfg(feature = "full")]
mod endpoint;
#[cfg(feature = "full")]
mod envelope;
pub mod fields;
#[cfg(feature = "full")]
pub mod money;
pub mod readable;
#[cfg(feature = "full")]
pub mod rules;
mod status;

pub use code::{ErrorCode, Whose};
#[cfg(feature = "full")]
pub use endpoint::{API_PREFIX, Endpoint, Route, decode_segment, route, route_as};
#[cfg(feature = "full")]
pub use envelope::{ENVELOPE_FIELDS, Envelope};
pub use fields::timestamp;
pub use fields::{Field, Kind};
pub use status::{Status, TRANSITIONS};

/// The README's examples, compiled as doc tests.
#[doc = include_str!("../README.md")]
#[cfg(all(doctest, feature = "full"))]
pub struct ReadmeDoctests;
