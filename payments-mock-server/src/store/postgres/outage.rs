//! A connection from the pool, and the log's word on the database: once
//! when it cannot be reached (with the cause, never the password), once
//! when it can again; never per request (the way the OTLP exporter says
//! it of its receiver). Once, too, when the store's tables are gone (the
//! database dropped and made again empty): every request then answers 503
//! saying to restart the mock, and the database is never said to serve
//! again.

use super::*;
use rows::pool_error;

impl Inner {
    /// A pooled connection, noting whether the database could be reached.
    pub(super) async fn connection(&self) -> Result<deadpool_postgres::Object, StoreError> {
        match self.pool.get().await {
            Ok(client) => {
                if self.down.swap(false, Ordering::Relaxed) {
                    self.back(&client).await;
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

    /// The database can be reached again: said so when it still holds the
    /// store's tables (a database dropped and made again is reached, but
    /// serves nothing: said once as such instead).
    async fn back(&self, client: &deadpool_postgres::Object) {
        let held = tokio::time::timeout(
            STORE_TIMEOUT,
            client.query_opt("SELECT 1 FROM mock_clock WHERE id = 1", &[]),
        )
        .await;
        match held {
            Ok(Err(e)) => {
                let error = store_error(&e);
                if error.kind() == crate::domain::port::StoreErrorKind::Lost {
                    self.noted(&error);
                } else {
                    // Not serving yet: said when a connection after it is.
                    self.down.store(true, Ordering::Relaxed);
                }
            }
            Err(_) => self.down.store(true, Ordering::Relaxed),
            Ok(Ok(_)) if self.tables_gone.load(Ordering::Relaxed) => {}
            Ok(Ok(_)) => tracing::info!(
                store = %self.shown,
                "the PostgreSQL store {} can be reached again: requests are served from it",
                self.shown
            ),
        }
    }

    /// A failure the log hears of once: the store's tables gone.
    pub(super) fn noted(&self, e: &StoreError) {
        if e.kind() == crate::domain::port::StoreErrorKind::Lost
            && !self.tables_gone.swap(true, Ordering::Relaxed)
        {
            tracing::error!(
                store = %self.shown,
                error = %e.reason(),
                "the PostgreSQL store {}'s tables are gone (its database dropped or emptied?): every request that needs it answers 503 STORE_UNAVAILABLE; restart the mock to make them again",
                self.shown
            );
        }
    }
}
