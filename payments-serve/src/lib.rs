//! The serving shell of the payments mock server and the contract proxy:
//! what both servers do the same way, and nothing of either's rules.
//!
//! - [`server`]: the connection loop, [`ConnectionAbort`] (a connection
//!   closed without an answer), header read timeouts, graceful shutdown.
//! - [`ApiError`] and [`success`]: every answer is the interface's
//!   envelope, and a failure becomes one in exactly one place.
//! - [`trace`]: the W3C `traceparent` a caller sends, read (CONTRACT
//!   section 21).
//! - [`unfinished`]: temporary files being written, removed should the
//!   process stop at once (a second signal).
//! - `pages` (feature `pages`): the chrome of server-rendered pages.
//! - `logging` (feature `logging`): the binaries' stderr log.
//! - `tls` (feature `tls`): HTTPS listeners (`server::serve_tls`), a
//!   local CA for a sandbox and its tests.
//! - `metrics` (feature `metrics`): what both servers' `GET /metrics` share.
//! - `admin` (feature `admin`): admin keys and their checks
//!   (`check_config`), the bearer token, the console's sign-in sessions and
//!   their cookie, its forms read once checked; with `pages` too, the
//!   consoles' sign-in page and flow (`admin::sign_in`), written once for
//!   the mock and the proxy.
//! - `cli` (feature `cli`): what the two binaries' command lines share:
//!   the `--tls-*` flags, the log format flag, the shutdown signal.
//! - `otlp` (feature `otlp`): a server span per request, a child of the
//!   caller's `traceparent`, exported over OTLP/HTTP (`--otlp-endpoint`).
//!
//! # Example
//!
//! A router whose unknown routes answer the envelope, served on a free
//! loopback port until told to stop:
//!
//! ```
//! use axum::Router;
//! use payments_serve::{ApiError, server};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> std::io::Result<()> {
//! let router = Router::new().fallback(|| async { ApiError::not_found() });
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
//! let served = tokio::spawn(server::run(listener, router, async {
//!     let _ = stopped.await;
//! }));
//! let _ = stop.send(());
//! served.await.expect("the server stops");
//! # Ok(()) }
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]

// Layout, for contributors: `answer.rs` (ApiError, the envelope of a
// success), `server.rs` (the accept loop), `pages.rs` (feature `pages`),
// `tls/` (feature `tls`: the server's configuration; `local_ca.rs`, the
// certificates rcgen makes), `logging/` (feature `logging`: `text.rs` and `json.rs` hold the two
// formats, `tests.rs` holds them to tracing-subscriber's own).

#[cfg(feature = "admin")]
#[cfg_attr(docsrs, doc(cfg(feature = "admin")))]
pub mod admin;
mod answer;
#[cfg(feature = "cli")]
#[cfg_attr(docsrs, doc(cfg(feature = "cli")))]
pub mod cli;
mod credentials;
#[cfg(feature = "logging")]
#[cfg_attr(docsrs, doc(cfg(feature = "logging")))]
pub mod logging;
#[cfg(feature = "metrics")]
#[cfg_attr(docsrs, doc(cfg(feature = "metrics")))]
pub mod metrics;
#[cfg(feature = "otlp")]
#[cfg_attr(docsrs, doc(cfg(feature = "otlp")))]
pub mod otlp;
#[cfg(feature = "pages")]
#[cfg_attr(docsrs, doc(cfg(feature = "pages")))]
pub mod pages;
mod request_log;
pub mod server;
#[cfg(feature = "tls")]
#[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
pub mod tls;
pub mod trace;
pub mod unfinished;

pub use answer::{ApiError, ErrorCodeTag, success};
pub use credentials::is_credential_header;
pub use credentials::query::{
    QueryParam, form_decoded, query_params, redacted_query, rewrite_query,
};
pub use payments_interface::ErrorCode;
pub use request_log::{RequestLine, log_request};
pub use server::{ConnectionAbort, DEFAULT_HEADER_READ_TIMEOUT, HEADER_LIMIT};

/// The README's examples, compiled as doc tests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
