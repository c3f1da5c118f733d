//! The service's rules, apart from HTTP and from where state is kept: a
//! transaction and its states, the virtual clock, the catalogue, request
//! validation, money and redirect-based payments.

pub mod catalog;
pub mod clock;
pub(crate) mod extra;
pub(crate) mod fields;
pub mod lifecycle;
pub mod money;
pub mod redirect;
pub mod rules;
mod scan;
pub mod transaction;
pub mod validate;
