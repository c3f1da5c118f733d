//! The settings every replica shares (CONTRACT section 15): the
//! catalogue and the expiry, stored by the first replica to start on an
//! empty database and read back by every other.

use super::*;
use rows::*;

impl PostgresStore {
    pub(super) async fn read_settings(&self) -> Result<Option<Settings>, StoreError> {
        bounded(async {
            let client = self.client().await?;
            let rows = client
                .query(
                    "SELECT key, value FROM mock_settings WHERE key IN ('catalog', 'expiry_ms')",
                    &[],
                )
                .await
                .map_err(|e| store_error(&e))?;
            let value = |key: &str| {
                rows.iter()
                    .find(|r| r.get::<_, &str>(0) == key)
                    .map(|r| r.get::<_, String>(1))
            };
            crate::store::stored_settings::from_texts(value("catalog"), value("expiry_ms"))
                .map_err(StoreError::new)
        })
        .await
    }

    pub(super) async fn write_settings(&self, settings: &Settings) -> Result<(), StoreError> {
        let catalog = settings.catalog.to_toml();
        let expiry = crate::store::stored_settings::expiry_millis(settings).to_string();
        bounded(async {
            let mut client = self.client().await?;
            let tx = client.transaction().await.map_err(|e| store_error(&e))?;
            // Only where none are stored: of replicas starting together on
            // an empty database, the first one's settings stay, and every
            // other reads them back and compares.
            for (key, value) in [("catalog", &catalog), ("expiry_ms", &expiry)] {
                tx.execute(
                    "INSERT INTO mock_settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING",
                    &[&key, value],
                )
                .await
                .map_err(|e| store_error(&e))?;
            }
            tx.commit().await.map_err(|e| store_error(&e))
        })
        .await
    }
}
