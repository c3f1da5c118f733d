//! The service over HTTP: the route table (`app.rs` for everything,
//! `route.rs` for the interface's four operations), the `/api/` guard
//! (auth, rate limit, faults, journal), middleware, extractors, the
//! handlers, and the connection set-up (`server.rs`). It calls the domain;
//! nothing below it calls it.

pub(crate) mod access;
pub(crate) mod answers;
pub(crate) mod app;
pub(crate) mod delivery;
pub(crate) mod extract;
pub(crate) mod guard;
pub(crate) mod handlers;
pub(crate) mod journal;
pub(crate) mod json;
pub(crate) mod log_path;
pub(crate) mod middleware;
#[cfg(feature = "openapi")]
pub(crate) mod openapi;
pub(crate) mod recovery;
pub(crate) mod route;
pub(crate) mod rule_facts;
#[cfg(feature = "openapi")]
pub(crate) mod schema;
pub(crate) mod server;

#[cfg(feature = "pages")]
pub use crate::web::console::PATH as CONSOLE_PATH;
pub use app::app;
pub use extract::{BODY_LIMIT, decode_segment};
pub use payments_serve::server::{DEFAULT_HEADER_READ_TIMEOUT, HEADER_LIMIT, run, run_with};
pub use server::serve_app;
#[cfg(feature = "tls")]
#[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
pub use server::serve_app_tls;
