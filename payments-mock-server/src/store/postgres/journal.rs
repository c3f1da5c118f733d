//! The journal of one replica: written behind the answers (every 100 ms,
//! and before this replica reads it), and read by the console and the
//! requests API.

use std::collections::VecDeque;

use super::*;
use rows::*;

/// This replica's journal entries not yet written, and how many were
/// dropped unwritten (the oldest, past [`CAPACITY`] while the database was
/// slow or gone, or at a reset): their numbers are still taken, so entries
/// are numbered as every store numbers them, one per request.
#[derive(Debug, Default)]
pub(super) struct Pending {
    /// Oldest first, at most [`CAPACITY`].
    entries: VecDeque<JournalEntry>,
    skipped: u64,
}

impl Pending {
    pub(super) fn push(&mut self, entry: JournalEntry) {
        if self.entries.len() == CAPACITY {
            self.entries.pop_front();
            self.skipped += 1;
        }
        self.entries.push_back(entry);
    }

    /// Drops every entry; their numbers stay taken.
    pub(super) fn drop_all(&mut self) {
        self.skipped += self.entries.len() as u64;
        self.entries.clear();
    }

    /// Puts back what a failed write took, before what came since.
    fn put_back(&mut self, mut taken: Pending) {
        taken.skipped += self.skipped;
        for entry in self.entries.drain(..) {
            taken.push(entry);
        }
        *self = taken;
    }
}

pub(super) async fn flush(inner: &Inner) -> Result<(), StoreError> {
    let _one = inner.flushing.lock().await;
    let mut taken =
        std::mem::take(&mut *inner.pending.lock().unwrap_or_else(PoisonError::into_inner));
    if taken.entries.is_empty() && taken.skipped == 0 {
        return Ok(());
    }
    // Whether the numbers of dropped entries were taken: `setval` is not
    // undone by a rollback, so a failed write keeps them taken.
    let mut numbers_taken = false;
    let entries = &taken.entries;
    let skipped = taken.skipped;
    let written = bounded(async {
        let mut client = inner.pool.get().await.map_err(|e| pool_error(&e))?;
        let tx = client.transaction().await.map_err(|e| store_error(&e))?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&JOURNAL_LOCK])
            .await
            .map_err(|e| store_error(&e))?;
        if skipped > 0 {
            let skipped = i64::try_from(skipped).unwrap_or(i64::MAX);
            tx.execute(
                "SELECT setval('mock_journal_seq_seq', \
                 (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM mock_journal_seq_seq) + $1, true)",
                &[&skipped],
            )
            .await
            .map_err(|e| store_error(&e))?;
            numbers_taken = true;
        }
        if entries.is_empty() {
            return tx.commit().await.map_err(|e| store_error(&e));
        }
        let rows: Vec<JournalRow> = entries.iter().map(JournalRow::of).collect();
        let column = |f: fn(&JournalRow) -> Option<String>| rows.iter().map(f).collect::<Vec<_>>();
        let at: Vec<i64> = rows.iter().map(|r| r.at).collect();
        let status: Vec<Option<i32>> = rows.iter().map(|r| r.status).collect();
        let method = column(|r| Some(r.method.clone()));
        let path = column(|r| Some(r.path.clone()));
        let query = column(|r| r.query.clone());
        let headers = column(|r| Some(r.headers.clone()));
        let body = column(|r| Some(r.body.clone()));
        let error_code = column(|r| r.error_code.clone());
        let request_id = column(|r| Some(r.request_id.clone()));
        let fault = column(|r| r.fault.clone());
        let replica = column(|r| Some(r.replica.clone()));
        tx.execute(
            "INSERT INTO mock_journal (at, method, path, query, headers, body, status, error_code, request_id, fault, replica) \
             SELECT * FROM UNNEST($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], \
             $7::integer[], $8::text[], $9::text[], $10::text[], $11::text[])",
            &[&at, &method, &path, &query, &headers, &body, &status, &error_code, &request_id, &fault, &replica],
        )
        .await
        .map_err(|e| store_error(&e))?;
        tx.execute(
            "DELETE FROM mock_journal WHERE seq <= (SELECT MAX(seq) FROM mock_journal) - $1",
            &[&(CAPACITY as i64)],
        )
        .await
        .map_err(|e| store_error(&e))?;
        tx.commit().await.map_err(|e| store_error(&e))
    })
    .await;
    if written.is_err() {
        // Kept for the next try, newest last, at most the journal's length.
        if numbers_taken {
            taken.skipped = 0;
        }
        inner
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .put_back(taken);
    }
    written
}

/// This replica's journal writer: every [`JOURNAL_EVERY`], until the store
/// is dropped.
pub(super) async fn write_journal(inner: Weak<Inner>) {
    let mut tick = tokio::time::interval(JOURNAL_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let Some(inner) = inner.upgrade() else {
            return;
        };
        if let Err(e) = flush(&inner).await {
            tracing::debug!(error = %e, "the request journal could not be written to PostgreSQL yet");
        }
    }
}

/// The journal's reads, each after this replica's pending entries are
/// written.
impl PostgresStore {
    pub(super) async fn read_since(
        &self,
        after: u64,
        limit: usize,
    ) -> Result<Vec<JournalEntry>, StoreError> {
        self.flush().await?;
        let after = i64::try_from(after).unwrap_or(i64::MAX);
        let limit = i64::try_from(limit.min(CAPACITY)).unwrap_or(0);
        bounded(async {
            let client = self.client().await?;
            let rows = client
                .query(
                    &format!(
                        "SELECT {JOURNAL_COLUMNS} FROM (SELECT {JOURNAL_COLUMNS} FROM mock_journal \
                         WHERE seq > $1 ORDER BY seq DESC LIMIT $2) newest ORDER BY seq"
                    ),
                    &[&after, &limit],
                )
                .await
                .map_err(|e| store_error(&e))?;
            rows.iter()
                .map(|r| journal_row_of(r).map(JournalRow::into_entry))
                .collect()
        })
        .await
    }

    pub(super) async fn read_one(&self, seq: u64) -> Result<Option<JournalEntry>, StoreError> {
        self.flush().await?;
        let seq = i64::try_from(seq).unwrap_or(i64::MAX);
        bounded(async {
            let client = self.client().await?;
            let row = client
                .query_opt(
                    &format!("SELECT {JOURNAL_COLUMNS} FROM mock_journal WHERE seq = $1"),
                    &[&seq],
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
        self.flush().await?;
        bounded(async {
            let client = self.client().await?;
            // The sequence's last value numbers entries across resets.
            let row = client
                .query_one(
                    "SELECT (SELECT count(*) FROM mock_journal), \
                     (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM mock_journal_seq_seq)",
                    &[],
                )
                .await
                .map_err(|e| store_error(&e))?;
            let len: i64 = row.get(0);
            let last: i64 = row.get(1);
            Ok(JournalStats {
                last_seq: u64::try_from(last).unwrap_or(0),
                len: usize::try_from(len).unwrap_or(0),
            })
        })
        .await
    }
}
