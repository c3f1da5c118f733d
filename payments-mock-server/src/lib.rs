//! The payment-transaction service in memory.
