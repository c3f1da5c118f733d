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

    /// Counts what a reset took as dropped: their numbers stay taken.
    pub(super) fn dropped(&mut self, taken: Pending) {
        self.skipped += taken.skipped + taken.entries.len() as u64;
    }

    /// Puts back what a failed write took, before what came since.
    pub(super) fn put_back(&mut self, mut taken: Pending) {
        taken.skipped += self.skipped;
        for entry in self.entries.drain(..) {
            taken.push(entry);
        }
        *self = taken;
    }
}

/// Writes `inner`'s pending entries in one transaction: the counter row
/// moved on by every entry taken and every one dropped since the last
/// write, the entries inserted under the numbers that gives them, the
/// table trimmed to the last [`CAPACITY`]. On failure nothing of it
/// happened (the counter included), and the entries go back to pending.
///
/// Run on a task of its own by every caller but the writer task, so a
/// request that goes away mid-write cannot drop what was taken.
pub(super) async fn flush(inner: &Inner) -> Result<(), StoreError> {
    let _one = inner.flushing.lock().await;
    let taken = std::mem::take(&mut *inner.pending.lock().unwrap_or_else(PoisonError::into_inner));
    if taken.entries.is_empty() && taken.skipped == 0 {
        return Ok(());
    }
    let written = bounded(write(inner, &taken)).await;
    if written.is_err() {
        // Kept for the next try, newest last, at most the journal's length.
        inner
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .put_back(taken);
    }
    written
}

async fn write(inner: &Inner, taken: &Pending) -> Result<(), StoreError> {
    let entries = &taken.entries;
    let count = i64::try_from(entries.len()).unwrap_or(i64::MAX);
    let moved = i64::try_from(taken.skipped)
        .unwrap_or(i64::MAX)
        .saturating_add(count);
    let mut client = inner.pool.get().await.map_err(|e| pool_error(&e))?;
    let tx = client.transaction().await.map_err(|e| store_error(&e))?;
    // The row lock orders writers of every replica: numbers follow commits.
    let last: i64 = tx
        .query_one(
            "UPDATE mock_journal_counter SET last = last + $1 WHERE id = 1 RETURNING last",
            &[&moved],
        )
        .await
        .map_err(|e| store_error(&e))?
        .get(0);
    if !entries.is_empty() {
        let seq: Vec<i64> = (last - count + 1..=last).collect();
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
            "INSERT INTO mock_journal (seq, at, method, path, query, headers, body, status, error_code, request_id, fault, replica) \
             SELECT * FROM UNNEST($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], \
             $8::integer[], $9::text[], $10::text[], $11::text[], $12::text[])",
            &[&seq, &at, &method, &path, &query, &headers, &body, &status, &error_code, &request_id, &fault, &replica],
        )
        .await
        .map_err(|e| store_error(&e))?;
        tx.execute(
            "DELETE FROM mock_journal WHERE seq <= $1",
            &[&(last - CAPACITY as i64)],
        )
        .await
        .map_err(|e| store_error(&e))?;
    }
    tx.commit().await.map_err(|e| store_error(&e))
}

/// What a clear of the whole state does to the journal's numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Clear {
    /// `POST /_mock/reset`: numbers go on.
    Reset,
    /// `--fresh`: numbers start from 1 again.
    Erase,
}

/// Runs `work` on a task of its own and waits for it: a caller that goes
/// away (a client that disconnects) cannot stop it half done.
pub(super) async fn detached<T: Send + 'static>(
    work: impl std::future::Future<Output = Result<T, StoreError>> + Send + 'static,
) -> Result<T, StoreError> {
    tokio::spawn(work)
        .await
        .map_err(|_| StoreError::new("the store's task stopped"))?
}

impl PostgresStore {
    /// Empties the transactions and the journal and zeroes the clock, for
    /// every replica. This replica's journal writes wait meanwhile, and the
    /// counter row's lock makes another replica's write in flight finish
    /// first (it is emptied with the rest; one that starts after shows up
    /// after, as entries written behind the answers do).
    pub(super) async fn clear_journal(&self, how: Clear) -> Result<(), StoreError> {
        let _one = self.inner.flushing.lock().await;
        let taken = std::mem::take(
            &mut *self
                .inner
                .pending
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        let cleared = bounded(async {
            let mut client = self.client().await?;
            let tx = client.transaction().await.map_err(|e| store_error(&e))?;
            let counter = match how {
                Clear::Reset => "SELECT last FROM mock_journal_counter WHERE id = 1 FOR UPDATE",
                Clear::Erase => "UPDATE mock_journal_counter SET last = 0 WHERE id = 1",
            };
            tx.batch_execute(counter)
                .await
                .map_err(|e| store_error(&e))?;
            let clear = match how {
                Clear::Reset => {
                    "TRUNCATE mock_transactions, mock_journal; \
                     UPDATE mock_clock SET offset_nanos = 0 WHERE id = 1;"
                }
                Clear::Erase => {
                    "TRUNCATE mock_transactions, mock_journal RESTART IDENTITY; \
                     DELETE FROM mock_settings; UPDATE mock_clock SET offset_nanos = 0 WHERE id = 1;"
                }
            };
            tx.batch_execute(clear)
                .await
                .map_err(|e| store_error(&e))?;
            tx.commit().await.map_err(|e| store_error(&e))
        })
        .await;
        let mut pending = self
            .inner
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        match (&cleared, how) {
            (Ok(()), Clear::Reset) => pending.dropped(taken),
            (Ok(()), Clear::Erase) => {}
            (Err(_), _) => pending.put_back(taken),
        }
        if cleared.is_ok() {
            self.inner.offset_hint.store(0, Ordering::Relaxed);
        }
        cleared
    }
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
            // The counter numbers entries across resets; one statement, one
            // snapshot: every entry up to `last` is committed and seen.
            let row = client
                .query_one(
                    "SELECT (SELECT count(*) FROM mock_journal), \
                     (SELECT last FROM mock_journal_counter WHERE id = 1)",
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
