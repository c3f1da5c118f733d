//! The OpenAPI 3 description served at `/openapi.json`.

/// The document, as static JSON text.
pub const DOCUMENT: &str = include_str!("openapi.json");
