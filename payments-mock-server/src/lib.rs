//! The merchant payment-transaction service in memory: every rule, state,
//! error and fault of the contract, for integration tests and local work.
//!
//! # Features
//!
//! Light by default: with its default features, [`MockServer::start`]
//! gives the in-memory service with every rule, state and fault, the
//! virtual clock, the request journal and the admin API (`/_mock/`), and
//! compiles little beyond axum and tokio. No argument parser, no store
//! you do not ask for, no other tool: the `payments-mock-server` binary is
//! the `payments-mock-server-cli` package, which turns on what it needs.
//!
//! | Feature | What it adds |
//! |---|---|
//! | `pages` | the payer's payment page (`/pay/{token}`) and the web console (`/_mock/ui/`) |
//! | `openapi` | the OpenAPI 3.1 document at `/openapi.json` |
//! | `sqlite` | `--store sqlite:PATH`, SQLite compiled in |
//! | `postgres` | `--store postgres://…`, replicas sharing one database |
//! | `tls` | HTTPS (`MockServerBuilder::tls_self_signed`, the `tls` module) |
//! | `metrics` | `GET /metrics` in the Prometheus text format |
//! | `otlp` | a server span per request over OTLP/HTTP (`MockServerBuilder::otlp_endpoint`, `--otlp-endpoint`) |
//! | `full` | all of the above: what the binary serves |
//! | `test-support` | opens the internal modules (hidden from these docs) to this workspace's own tests, benchmarks and fuzz targets; no stability promise |
//!
//! ```toml
//! [dev-dependencies]
//! # Not on crates.io yet: from the repository (or a path to a checkout).
//! payments-mock-server = { git = "https://example.invalid/payments-toolkit" }
//! ```
//!
//! # Example
//!
//! Start a server on a free loopback port, drive it over HTTP, move its
//! clock, and look at what it stored:
//!
//! ```
//! use std::time::Duration;
//! use payments_mock_server::MockServer;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let server = MockServer::start().await;
//! let body = serde_json::json!({
//!     "merchantId": "6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60",
//!     "referenceNo": "INV-1",
//!     "amount": 1050,
//!     "productCode": "TOPUP",
//!     "storeId": "S1",
//!     "payerId": "60123456789",
//! });
//! let reply: serde_json::Value = reqwest::Client::new()
//!     .post(format!("{}/api/payments/initiate", server.base_url()))
//!     .header("content-type", "application/json")
//!     .body(body.to_string())
//!     .send().await.unwrap()
//!     .bytes().await.map(|b| serde_json::from_slice(&b).unwrap()).unwrap();
//! assert_eq!(reply["data"]["status"], "INITIATED");
//!
//! server.advance_clock(Duration::from_secs(16 * 60)).await;
//! assert_eq!(server.transactions().await[0].status, "EXPIRED");
//! server.shutdown().await;
//! # }
//! ```
//!
//! # Behaviour
//!
//! Everything in `CONTRACT.md`:
//!
//! - validation (section 1–2): every failed rule in the order of the
//!   interface document's request table, joined by `; `;
//! - exactly-once initiate per `(merchantId, referenceNo)` and confirm per
//!   transaction, by construction (see `store.rs`);
//! - expiry (`--expiry`, default 15 minutes) and settlement derived from the
//!   virtual clock at read time;
//! - faults: `X-Mock-Fault: internal-error | commit-then-error | reset |
//!   commit-then-reset | delay=<ms> | rate-limit | answer-other`, [`Controls::inject_faults`],
//!   and the start-time fail rate, latency and rate limit. The fail-rate
//!   fault and the latency of each `/api/` request derive from the fault
//!   seed, the request's identity (route, merchantId and referenceNo, the
//!   transaction a transactionId names, or the path) and how often that
//!   request was seen, so a seed repeats a run's faults even when
//!   concurrent clients send the requests in another order; without
//!   `--fault-seed` a random seed is picked, logged, and given by
//!   [`MockServer::fault_seed`];
//! - a referenceNo of exactly `.` or `..` is a validation error: URL parsing
//!   removes such dot segments, so it could never be read back by reference;
//! - a transactionId matches only as issued (lower-case hyphenated): other
//!   spellings of the same UUID are unknown ids;
//! - the same `--api-key` twice is a configuration error;
//! - redirect-based products (`flow = "redirect"`, `ONLINEBANKING`): the
//!   confirm hands out a payment page (`GET /pay/{token}`, HTML) where the
//!   payer pays, declines or cancels once within the payer window, and is
//!   sent back to `returnUrl`; [`Controls::payer`] plays the payer in a
//!   test;
//! - the `/_mock/` controls, and `/openapi.json` (feature `openapi`);
//!   with an admin key ([`MockServerBuilder::admin_key`], `--admin-key`)
//!   the console, `/metrics` and every `/_mock/` route except
//!   `/_mock/health` need it, and an API key bound to a merchant reads that
//!   merchant's part there and changes nothing (CONTRACT section 18).
//!
//! # Catalogue
//!
//! The default catalogue is CONTRACT section 7. A TOML catalogue (`--catalog`,
//! [`Catalog::from_toml_str`]) is a list of `[[product]]` tables; the keys are
//! documented on [`Catalog`] and `catalog.example.toml` (next to the
//! crate's `Cargo.toml`) reproduces the default:
//!
//! ```toml
//! [[product]]
//! code = "BILLPAY"
//! initial = "INITIATED"        # or "PENDING"
//! outcome = "async"            # "success", "async" or "decline"
//! settle_after = "2s"
//! payer_id_required = true
//! # max_quantity = 10, pins = true, confirmation_code = "123456",
//! # decline_message = "declined by provider"
//! ```
//!
//! # Limits, and where the envelope stops
//!
//! Every answer of the router is the envelope (CONTRACT section 2). A few
//! come from hyper before a request reaches the router, and they are not:
//!
//! - a request head (request line and headers) over [`HEADER_LIMIT`]
//!   (64 KiB) or with more than 100 headers: a bare `431 Request Header
//!   Fields Too Large`, empty body, then the connection is closed;
//! - a head that is not HTTP/1.x (garbage, a bad header line, two
//!   `Content-Length`s, an unknown version): a bare `400 Bad Request`, or
//!   just a closed connection, from hyper;
//! - a client that has not sent a whole head within
//!   [`Config::header_read_timeout`] (default 30 s, `--header-read-timeout`,
//!   [`MockServerBuilder::header_read_timeout`]), counted from connect or
//!   from the end of the previous response: the connection is closed with
//!   no response (watched in ticks of an eighth of the timeout, so at most
//!   an eighth later). So slow (one byte at a time) and idle connections cannot
//!   pin the server; each costs one task and one socket until then.
//!
//! Bodies are the router's: over [`BODY_LIMIT`] (64 KiB) is the 413
//! envelope. `--rate-limit N` admits N `/api/` requests per one-second
//! window and answers the rest 429 `RATE_LIMITED` with `Retry-After: 1`.
//!
//! # Test isolation
//!
//! Each [`MockServer`] has its own port, store, clock and journal: start one
//! per test rather than sharing, and there is nothing to clean up.

#![cfg_attr(docsrs, feature(doc_cfg))]

// Layout, for contributors. Every dependency points down this list; a
// module imports nothing from one below it in the list (scripts/layers.sh
// checks it):
//
// - `error.rs` — [`Error`], what a start can fail with. The bottom.
// - `domain/` — the rules and the ports they need, apart from HTTP and
//   storage: `transaction.rs` (request fields, stored form, state at an
//   instant), `clock.rs` (the virtual clock, the only source of time, and
//   its advance), `catalog.rs` (products, the TOML format), `validate.rs`,
//   `fields/` and `rules.rs` (request rules, every failure collected),
//   `lifecycle.rs` (the state machine: initiate, confirm, the payer's
//   submit), `payer.rs` (playing the payer), `redirect.rs` (page tokens,
//   payment URLs, return addresses), `access.rs` (API keys and the
//   merchant they bind; `access/` the admin side's keys and roles, the
//   console's sessions, whose journaled request is whose), `journal.rs` (the request journal's entries),
//   `settings.rs` (what a store keeps of the start's settings), `port.rs`
//   (the store trait and the types it takes and returns).
// - `store/` — the stores implementing the port: memory, SQLite
//   (`sqlite`), PostgreSQL (`postgres`), and `AnyStore`.
// - `config.rs` — [`Config`], shared by the binary's flags and the
//   builder; `faults.rs` — [`Fault`]s and their sources.
// - `admin.rs` — the admin side's keys and the console's sessions.
// - `forms.rs` (`pages`, `openapi`) — the bounds of the HTML forms, for the
//   pages that read them and the document that declares them.
// - `state.rs` — `AppState`: one server's store, settings, keys, faults.
// - `web/` (`pages`) — what a person sees: the payment page, the console.
// - `http/` — the service over HTTP: the route table (`app.rs`, and
//   `route.rs` for `/api/`), the `/api/` guard, middleware, handlers, the
//   connection set-up (`server.rs`), and `openapi/` (feature `openapi`):
//   the document, generated from the handlers.
// - `mock_server.rs` — [`MockServer`], the embeddable server
//   (`mock_server/tls.rs`: its HTTPS, feature `tls`).
// - `seed.rs` — a store seeded with what was seen elsewhere
//   ([`seed::Sighting`]: the binary's `--seed-from` reads them from a proxy
//   recording).
// - `service.rs` — [`Service`]: the mock opened on its store and served on
//   a listener, as the binary runs it.
// The binary is the `payments-mock-server-cli` package.

// The internal modules are private: the crate root below is its surface.
// The `test-support` feature opens them (hidden from the docs) to this
// workspace's own tests, benchmarks and fuzz targets, which drive the
// router, the stores and the validator directly; no promise of stability
// goes with that. Without it, what only those use (the reference
// validator, the router as a tower service, re-exports for them) is not
// dead code but their door: it stays, unlinted, as it was while public.
macro_rules! internal {
    ($($name:ident),* $(,)?) => {$(
        #[cfg(feature = "test-support")]
        #[doc(hidden)]
        pub mod $name;
        #[cfg(not(feature = "test-support"))]
        #[allow(dead_code, unused_imports)]
        mod $name;
    )*};
}

mod config;
mod coverage;
mod error;
mod fault_rules;
mod faults;
#[cfg(any(feature = "pages", feature = "openapi"))]
mod forms;
mod metrics;
mod mock_server;
mod sandboxes;
pub mod seed;
mod service;
internal!(admin, domain, http, state, store);
/// HTTPS (feature `tls`, CONTRACT section 18): the listener's
/// configuration and the local CA that issues server and client
/// certificates, for [`MockServerBuilder::tls_self_signed`] and tests of
/// mutual TLS.
#[cfg(feature = "tls")]
#[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
pub mod tls {
    pub use payments_serve::tls::{
        Issued, LocalCa, Pem, SelfSignedFiles, ServerTls, TlsError, self_signed_dir,
    };
}
#[cfg(feature = "pages")]
mod web;

pub use crate::config::{
    AdminKey, ApiKey, Config, DEFAULT_SESSION_LIFETIME, PublicUrl, check_replica_name,
    listening_url, listening_url_with, open_admin_warning, parse_latency,
};
pub use crate::coverage::{CoverageReport, FaultCell};
pub use crate::domain::catalog::{Catalog, Flow, InitialState, Outcome, Product};
pub use crate::domain::journal::{HEADERS_CUT, JournalEntry};
pub use crate::domain::payer::{PayerError, PayerOutcome};
pub use crate::domain::transaction::PayerAction;
pub use crate::error::Error;
pub use crate::fault_rules::{FaultRule, RuleError, RuleView};
pub use crate::faults::{Fault, HANG_LIMIT};
#[cfg(feature = "pages")]
#[cfg_attr(docsrs, doc(cfg(feature = "pages")))]
pub use crate::http::CONSOLE_PATH;
pub use crate::http::{BODY_LIMIT, HEADER_LIMIT};
pub use crate::mock_server::{
    Controls, MockServer, MockServerBuilder, Sandbox, SandboxError, StoredTransaction,
};
pub use crate::sandboxes::{
    DEFAULT_MAX_SANDBOXES, DEFAULT_SANDBOX_TTL, MAX_SANDBOX_TTL, SandboxInfo,
};
pub use crate::service::Service;
pub use crate::store::{Durability, StoreSpec};
pub use payments_interface::{Endpoint, ErrorCode, Status};

/// The README's examples, compiled as doc tests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
