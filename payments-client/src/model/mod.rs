//! Wire models: what the service sends and receives, typed.
//!
//! Everything here is tolerant on input (CONTRACT section 11) and exact on
//! output. Numbers never pass through `f64`; see [`money`](crate::money)
//! and [`wire`].

pub mod currency;
pub mod envelope;
pub mod ids;
pub mod money_error;
pub mod status;
pub mod transaction;
pub(crate) mod wire;
