//! Runnable examples of the payments toolkit; see the `[[example]]` targets
//! in this package's `Cargo.toml` and run them with
//! `cargo run --example NAME` from the repository root.
//!
//! This library has no API of its own. It exists so that `cargo test`
//! compiles the Rust snippets of the README and of the user documentation,
//! which keeps what a new user copies from in step with the code.

#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

#[cfg(doctest)]
#[doc = include_str!("../../docs/mock-server.md")]
pub struct MockServerDocDoctests;

#[cfg(doctest)]
#[doc = include_str!("../../docs/redirect-payments.md")]
pub struct RedirectPaymentsDocDoctests;
