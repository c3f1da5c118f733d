//! A connection from the pool, and the log's word on the database: once
//! when it cannot be reached (with the cause, never the password), once
//! when it can again; never per request (the way the OTLP exporter says
//! it of its receiver).

use super::*;
use rows::pool_error;

impl Inner {
    /// A pooled connection, noting whether the database could be reached.
    pub(super) async fn connection(&self) -> Result<deadpool_postgres::Object, StoreError> {
        match self.pool.get().await {
            Ok(client) => {
                if self.down.swap(false, Ordering::Relaxed) {
                    tracing::info!(
                        store = %self.shown,
                        "the PostgreSQL store {} can be reached again: requests are served from it",
                        self.shown
                    );
                }
                Ok(client)
            }
            Err(e) => {
                let error = pool_error(&e);
                if !self.down.swap(true, Ordering::Relaxed) {
                    tracing::warn!(
                        store = %self.shown,
                        error = %error.reason(),
                        "the PostgreSQL store {} cannot be reached: requests that need it answer 503 STORE_UNAVAILABLE until it is back",
                        self.shown
                    );
                }
                Err(error)
            }
        }
    }
}
