//! The service's rules, apart from HTTP and from where state is kept, and
//! the ports they need: a transaction and its states, the virtual clock and
//! its advance, the catalogue, request validation, who may do what
//! (API keys bound to merchants), redirect-based payments and the payer's
//! decision, the request journal's entries, and the store they are kept in
//! (`port.rs`: the trait the stores implement).

pub mod access;
pub mod catalog;
pub mod clock;
pub(crate) mod extra;
pub(crate) mod fields;
pub mod invalid;
pub mod journal;
pub mod lifecycle;
pub mod payer;
pub mod port;
pub mod redirect;
pub mod rules;
mod scan;
pub mod settings;
pub mod transaction;
pub mod validate;
