//! The merchant payment-transaction service in memory: every rule, state,
//! error and fault of `CONTRACT.md`, for integration tests and local work.
//!
//! # Layout
//!
//! - `lib.rs` — this overview and the public re-exports; `main.rs` — the
//!   `payments-mock-server` binary: flags, logging, signals.
//! - `config.rs` — [`Config`] and [`ApiKey`], shared by flags and builder;
//!   `mock_server.rs` — [`MockServer`], the embeddable server, and its
//!   builder; `error.rs` — [`ApiError`] (the envelope of a failure) and
//!   [`Error`]; `logging/` — the binary's log set-up and its fast text and JSON formats.
//! - `domain/` — the rules, apart from HTTP and storage: `transaction.rs`
//!   (request fields, stored form, state at an instant), `clock.rs` (the
//!   virtual clock; the only source of time), `catalog.rs` (products and the
//!   TOML format), `validate.rs` and `rules.rs` (request rules, every failure
//!   collected; shared with the document), `money.rs` (minor units to exact
//!   major-unit JSON numbers), `redirect.rs` (page tokens, payment URLs,
//!   return addresses).
//! - `store/` — the store: look-ups and the atomic transitions
//!   (`payer.rs`: the payer's decision), its containers (`records.rs`,
//!   `index.rs`: chunked records, shared codes, sharded position indexes)
//!   and the request journal (`journal.rs`).
//! - `http/` — the service over HTTP: `app.rs` (routes and layers only),
//!   `server.rs` (accept loop, injected resets, graceful shutdown),
//!   `state.rs` ([`AppState`]), `middleware.rs` (request id, request log,
//!   envelope for every response), `guard.rs` (the `/api/` guard: auth,
//!   rate limit, faults, journal), `extract.rs`, `json.rs`, `auth.rs`,
//!   `faults.rs`, and `handlers/` (`initiate`, `confirm`, `status`, `admin`).
//! - `web/` — what a person sees: `pay.rs` (the payer's payment page,
//!   `/pay/{token}`), `console/` (the web console, `/_mock/ui/`), `html.rs`
//!   (askama templates in `templates/`, auto-escaped; the stylesheet, page
//!   headers, error pages).
//! - `openapi/` — the OpenAPI 3.1 document, generated from the routes, the
//!   served types and `domain/rules.rs` (the request rules the validator checks).
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
//!   commit-then-reset | delay=<ms> | rate-limit`, [`MockServer::inject_faults`],
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
//!   sent back to `returnUrl`; [`MockServer::payer`] plays the payer in a
//!   test;
//! - the `/_mock/` controls and `/openapi.json`.
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
//!   no response. So slow (one byte at a time) and idle connections cannot
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

mod config;
mod domain;
mod error;
mod http;
mod logging;
mod mock_server;
mod openapi;
mod proxy;
mod store;
mod web;

pub use config::{
    ApiKey, Config, DEFAULT_HEADER_READ_TIMEOUT, check_replica_name, listening_url, parse_latency,
};
pub use domain::catalog::{Catalog, DEFAULT_PAYER_TIMEOUT, Flow, InitialState, Outcome, Product};
pub use domain::clock::{Clock, format_time};
pub use domain::lifecycle::{self, ConfirmAttempt, ConfirmRefusal};
pub use domain::money::{major_number, major_text};
pub use domain::redirect::{TOKEN_LEN, is_token, return_address};
pub use domain::transaction::{
    ConfirmResult, Confirmation, Fields, NewTransaction, PayerDecision, RareFields, Record, Status,
    View, id_at, issued_id,
};
pub use domain::validate::{confirm as validate_confirm, initiate as validate_initiate};
pub use error::{ApiError, Error, ErrorCode};
pub use http::app::app;
pub use http::extract::{BODY_LIMIT, decode_segment, parse_object};
pub use http::faults::Fault;
pub use http::server::{HEADER_LIMIT, run, run_with, serve_app};
pub use http::state::{AppState, Shared};
pub use logging::{JsonLines, LogFormat, PlainText, init_logging};
pub use mock_server::{MockServer, MockServerBuilder, StoredTransaction};
pub use proxy::{
    BadLine, CheckOutcome, DEFAULT_UPSTREAM_TIMEOUT, Endpoint, Exchange, Finding, JUDGE_LIMIT,
    Level, MEMORY_CAPACITY, Message, Proxy, ProxyConfig, REDACTED, Redactor, SeedError, Seeded,
    Summary, VERDICT_HEADER, Verdict, check_recording, end_to_end as end_to_end_headers, rules,
    seed_from,
};
pub use store::journal::{Capture, JournalEntry};
pub use store::settings::Given;
pub use store::{
    AnyStore, ClockReading, Decided, Durability, InsertRefusal, JournalStats, LookupError,
    MemoryStore, Order, Page, PageQuery, PayerAction, PayerRefusal, PaymentPage, PaymentPageKey,
    PostgresStore, PostgresUrl, STORE_TIMEOUT, Settings, SqliteStore, Store, StoreError, StoreSpec,
    Transition,
};
pub use web::console::PATH as CONSOLE_PATH;
pub use web::pay::{FORM_LIMIT, PayerError, PayerOutcome};
