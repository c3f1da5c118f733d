//! End to end: `payments-client` against the real `payments-mock-server`,
//! started in-process on port 0 per test. Time moves through the mock's
//! virtual clock, never by sleeping.

mod support;
// The wiremock suites' helpers, for what the topics share with them.
#[path = "../common/mod.rs"]
mod common;

// Every product's flow (CONTRACT section 7).
mod products;
// Expiry and the confirm rules around it (CONTRACT section 6).
mod expiry;
// References: uniqueness, merchant scope, path encoding (sections 3–5).
mod references;
// API keys, open and bound (section 9).
mod auth;
// Injected faults, retries and reconciliation (sections 10 and 12).
mod faults;
// Scripted faults over a real socket: commit-then-hang, truncate, gateway, hang.
mod scripted_faults;
// Exact amounts in every currency scale (section 1).
mod amounts;
// Reconciled results, field by field (section 12).
mod reconciliation;
// Redirect-based payments: payment page, payer, verified return (section 13).
mod redirect;
// The scenarios above through the contract proxy: the mock is a verified fake.
mod through_proxy;
// The answer guard against a mock that answers about another transaction.
mod lying;
// HTTPS: trusted and unknown CAs, expiry, mutual TLS (section 18).
mod tls;
// Answers that are not valid HTTP, content types that are not ASCII.
mod invalid_http;
