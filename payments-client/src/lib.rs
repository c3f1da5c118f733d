//! Typed async client for the merchant payment-transaction API.
