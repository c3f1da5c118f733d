//! The journal's reads (`requests_since`, `requests_after`, `request`,
//! `journal_stats`): each waits for what every live replica answered before it
//! started, numbers what is due, then reads.

use tokio_postgres::types::Type;

use super::journal::{Due, READ_WAIT, lock_counter, number};
use super::*;
use rows::*;

/// Which end of the entries above a position a read takes.
#[derive(Debug, Clone, Copy)]
pub(super) enum Taking {
    /// The newest (a reader polling for what is new).
    Newest,
    /// The oldest (a page after a position).
    Oldest,
}

/// The journal's reads, each behind a barrier and the numbering it makes
/// due: it includes every request any live replica answered before the
/// read started.
impl PostgresStore {
    /// Waits for the writes a read must see ([`PostgresStore::barrier`]),
    /// then numbers every entry stamped before the watermarks of the
    /// replicas that wrote since the read started (unless nothing is
    /// due: no lock taken then). Each of those took its watermark after the
    /// read started, so every request answered before it is numbered, and
    /// so in the journal.
    async fn settle(&self) -> Result<(), StoreError> {
        let tick = self.barrier(READ_WAIT).await?;
        let due = Due::WrittenSince(tick);
        let mut client = self.client().await?;
        // What `Due::WrittenSince` numbers, if anything.
        let any: bool = client
            .query_typed_one(
                "SELECT EXISTS (SELECT 1 FROM mock_journal WHERE seq IS NULL AND stamp < \
                 (SELECT min(watermark_at) FROM mock_journal_replicas WHERE watermark > $1))",
                &[(&tick, Type::INT8)],
            )
            .await
            .map_err(|e| store_error(&e))?
            .get(0);
        if !any {
            return Ok(());
        }
        let tx = client.transaction().await.map_err(|e| store_error(&e))?;
        lock_counter(&tx).await?;
        number(&tx, due, 0).await?;
        tx.commit().await.map_err(|e| store_error(&e))
    }

    /// The newest or the oldest `limit` entries above `after` (as
    /// `taking` says), oldest first.
    pub(super) async fn read_since(
        &self,
        after: u64,
        limit: usize,
        taking: Taking,
    ) -> Result<Vec<JournalEntry>, StoreError> {
        let after = i64::try_from(after).unwrap_or(i64::MAX);
        let limit = i64::try_from(limit.min(CAPACITY)).unwrap_or(0);
        let query = match taking {
            Taking::Newest => format!(
                "SELECT {JOURNAL_COLUMNS} FROM (SELECT {JOURNAL_COLUMNS} FROM mock_journal \
                 WHERE sandbox = $3 AND seq > $1 ORDER BY seq DESC LIMIT $2) newest ORDER BY seq"
            ),
            // Each sandbox keeps its last CAPACITY numbered entries
            // (`number` trims them in the transaction that numbers): the
            // oldest above `after` are among them.
            Taking::Oldest => format!(
                "SELECT {JOURNAL_COLUMNS} FROM mock_journal \
                 WHERE sandbox = $3 AND seq > $1 ORDER BY seq LIMIT $2"
            ),
        };
        bounded(async {
            self.settle().await?;
            let client = self.client().await?;
            let rows = client
                .query(&query, &[&after, &limit, &self.view.sandbox])
                .await
                .map_err(|e| store_error(&e))?;
            rows.iter()
                .map(|r| journal_row_of(r).map(JournalRow::into_entry))
                .collect()
        })
        .await
    }

    pub(super) async fn read_one(&self, seq: u64) -> Result<Option<JournalEntry>, StoreError> {
        let seq = i64::try_from(seq).unwrap_or(i64::MAX);
        bounded(async {
            self.settle().await?;
            let client = self.client().await?;
            let row = client
                .query_opt(
                    &format!(
                        "SELECT {JOURNAL_COLUMNS} FROM mock_journal WHERE seq = $1 AND sandbox = $2"
                    ),
                    &[&seq, &self.view.sandbox],
                )
                .await
                .map_err(|e| store_error(&e))?;
            row.as_ref()
                .map(|r| journal_row_of(r).map(JournalRow::into_entry))
                .transpose()
        })
        .await
    }

    pub(super) async fn read_stats(&self) -> Result<JournalStats, StoreError> {
        bounded(async {
            self.settle().await?;
            let client = self.client().await?;
            // The counter numbers entries across resets; one statement, one
            // snapshot: every entry up to `last` is committed and seen
            // (those not numbered yet are not in the journal yet).
            let row = client
                .query_one(
                    "SELECT (SELECT count(seq) FROM mock_journal WHERE sandbox = $1), \
                     (SELECT last FROM mock_journal_counter WHERE id = 1), \
                     (SELECT min(seq) FROM mock_journal WHERE sandbox = $1)",
                    &[&self.view.sandbox],
                )
                .await
                .map_err(|e| store_error(&e))?;
            let len: i64 = row.get(0);
            let last: i64 = row.get(1);
            let oldest: Option<i64> = row.get(2);
            Ok(JournalStats {
                last_seq: u64::try_from(last).unwrap_or(0),
                len: usize::try_from(len).unwrap_or(0),
                oldest_seq: oldest.and_then(|s| u64::try_from(s).ok()).unwrap_or(0),
            })
        })
        .await
    }
}
