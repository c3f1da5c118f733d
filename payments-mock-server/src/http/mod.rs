//! The service over HTTP: routes and layers, the connection loop, the
//! `/api/` guard, extractors, and the JSON handlers.

pub mod app;
pub mod auth;
pub mod extract;
pub mod faults;
pub mod guard;
pub mod handlers;
pub mod json;
pub mod middleware;
pub mod route;
pub mod server;
pub mod state;
