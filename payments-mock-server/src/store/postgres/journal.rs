//! The journal of one replica: written behind the answers (every 100 ms,
//! when a read on any replica asks, and when the store is dropped), reset
//! for every replica, and read exactly (`replicas.rs` makes each read wait
//! for what every replica answered before it started).

use std::collections::VecDeque;

use tokio_postgres::types::Type;

use super::*;
use rows::*;

/// How long the write made when the store is dropped may take.
const LAST_WRITE: Duration = Duration::from_secs(2);

/// This replica's journal entries not yet written, and how many were
/// dropped unwritten (the oldest, past [`CAPACITY`] while the database was
/// slow or gone, and those served before a reset): their numbers are still
/// taken, so entries are numbered as every store numbers them, one per
/// request.
#[derive(Debug, Default)]
pub(super) struct Pending {
    /// Oldest first, at most [`CAPACITY`], each with the reset epoch it was
    /// captured under.
    entries: VecDeque<(u64, JournalEntry)>,
    skipped: u64,
    /// The newest reset epoch this replica knows of: a new entry carries
    /// it.
    epoch: u64,
}

/// What one write takes from [`Pending`].
#[derive(Debug, Default)]
pub(super) struct Batch {
    entries: VecDeque<(u64, JournalEntry)>,
    skipped: u64,
}

impl Pending {
    /// Nothing pending, in the reset epoch `epoch`.
    pub(super) fn new(epoch: u64) -> Self {
        Self {
            epoch,
            ..Self::default()
        }
    }

    pub(super) fn push(&mut self, entry: JournalEntry) {
        let epoch = self.epoch;
        self.push_tagged(epoch, entry);
    }

    fn push_tagged(&mut self, epoch: u64, entry: JournalEntry) {
        if self.entries.len() == CAPACITY {
            self.entries.pop_front();
            self.skipped += 1;
        }
        self.entries.push_back((epoch, entry));
    }

    /// Whether a write would have nothing to write.
    pub(super) fn is_empty(&self) -> bool {
        self.entries.is_empty() && self.skipped == 0
    }

    /// Learns of the reset epoch `epoch` (read from the database): the
    /// entries captured under an older one were served before that reset,
    /// and are dropped instead of written after it.
    pub(super) fn adopt(&mut self, epoch: u64) {
        self.epoch = self.epoch.max(epoch);
        let before = self.entries.len();
        let current = self.epoch;
        self.entries.retain(|(e, _)| *e >= current);
        self.skipped += (before - self.entries.len()) as u64;
    }

    /// Everything, for one write.
    pub(super) fn take(&mut self) -> Batch {
        Batch {
            entries: std::mem::take(&mut self.entries),
            skipped: std::mem::take(&mut self.skipped),
        }
    }

    /// Puts back what a failed write took, before what came since.
    pub(super) fn put_back(&mut self, taken: Batch) {
        let newer = std::mem::replace(&mut self.entries, taken.entries);
        self.skipped += taken.skipped;
        for (epoch, entry) in newer {
            self.push_tagged(epoch, entry);
        }
        self.adopt(self.epoch);
    }

    /// A reset answered by this replica, which moved the epoch to `epoch`:
    /// what is pending was served before it. After `POST /_mock/reset` the
    /// numbers go on (theirs stay taken); after `--fresh` they start again
    /// from 1.
    fn reset(&mut self, epoch: u64, how: Clear) {
        match how {
            Clear::Reset => self.adopt(epoch),
            Clear::Erase => *self = Self::new(epoch),
        }
    }
}

/// Writes `inner`'s pending entries in one transaction (see [`write`]); on
/// failure nothing of it happened, and the entries go back to pending.
/// With `heartbeat` false and nothing pending, writes nothing.
///
/// Run on a task of its own by every caller but the writer task, so a
/// request that goes away mid-write cannot drop what was taken.
pub(super) async fn flush(inner: &Inner, heartbeat: bool) -> Result<(), StoreError> {
    // One write at a time: a write in flight holds entries already taken,
    // so "nothing pending" means something only once it is done.
    let _one = inner.flushing.lock().await;
    if !heartbeat && lock(&inner.pending).is_empty() {
        return Ok(());
    }
    let mut taken = Taken {
        pending: &inner.pending,
        batch: Batch::default(),
        written: false,
    };
    let written = bounded(async {
        let mut client = inner.pool.get().await.map_err(|e| pool_error(&e))?;
        let tx = client.transaction().await.map_err(|e| store_error(&e))?;
        write(
            &tx,
            &inner.pending,
            inner.instance,
            &inner.replica,
            &mut taken.batch,
        )
        .await?;
        tx.commit().await.map_err(|e| store_error(&e))
    })
    .await;
    taken.written = written.is_ok();
    written
}

/// What a write took, put back unless it was written: after a failure, and
/// also when the write is dropped half done (a timeout, or the runtime
/// shutting down with SIGTERM, before the store's last write: the entries
/// must be there for it). A write dropped while its commit was under way
/// may then be written twice (two `seq`s, one request id) rather than lost.
struct Taken<'a> {
    pending: &'a Mutex<Pending>,
    batch: Batch,
    written: bool,
}

impl Drop for Taken<'_> {
    fn drop(&mut self) {
        if !self.written {
            lock(self.pending).put_back(std::mem::take(&mut self.batch));
        }
    }
}

pub(super) fn lock(pending: &Mutex<Pending>) -> std::sync::MutexGuard<'_, Pending> {
    pending.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One write, inside `tx`: a tick taken, the reset epoch read, this
/// replica's pending entries taken into `taken` (those of an older epoch
/// dropped); when there is anything to number, the counter row moved on
/// by every entry taken and every one dropped since the last write, under
/// its lock (which orders the writes of every replica and every reset),
/// and the entries inserted under the numbers that gives them, the table
/// trimmed to the last [`CAPACITY`]; and this replica's row moved to the
/// tick (its watermark and heartbeat), announced to the replicas
/// listening.
///
/// The tick is taken before the entries: every request this replica
/// answered before a read took an earlier tick is in this write or an
/// earlier one. The epoch is read after the tick: a reset that committed
/// before a read's tick is seen by a write whose tick is later. Under the
/// counter row's lock the epoch is read again: a reset that committed in
/// between drops what this write took from before it. A write with
/// nothing to number does not wait for that lock.
async fn write(
    tx: &tokio_postgres::Transaction<'_>,
    pending: &Mutex<Pending>,
    instance: Uuid,
    replica: &str,
    taken: &mut Batch,
) -> Result<(), StoreError> {
    // Typed statements, and these two pipelined (one round trip, run in
    // this order): a read waits for this write, which should be quick.
    let (tick, epoch) = futures_util::future::try_join(
        tx.query_typed_one("SELECT nextval('mock_journal_tick')", &[]),
        tx.query_typed_one("SELECT epoch FROM mock_journal_counter WHERE id = 1", &[]),
    )
    .await
    .map_err(|e| store_error(&e))?;
    let (tick, epoch): (i64, i64) = (tick.get(0), epoch.get(0));
    *taken = {
        let mut pending = lock(pending);
        pending.adopt(u64::try_from(epoch).unwrap_or(0));
        pending.take()
    };
    let moved = i64::try_from(taken.skipped)
        .unwrap_or(i64::MAX)
        .saturating_add(i64::try_from(taken.entries.len()).unwrap_or(i64::MAX));
    if moved > 0 {
        let row = tx
            .query_typed_one(
                "UPDATE mock_journal_counter SET last = last + $1 WHERE id = 1 RETURNING last, epoch",
                &[(&moved, Type::INT8)],
            )
            .await
            .map_err(|e| store_error(&e))?;
        let (last, locked): (i64, i64) = (row.get(0), row.get(1));
        if locked != epoch {
            // A reset came in between: what was taken before it goes (its
            // numbers stay taken, as for every entry dropped unwritten).
            let locked = u64::try_from(locked).unwrap_or(0);
            lock(pending).adopt(locked);
            let before = taken.entries.len();
            taken.entries.retain(|(e, _)| *e >= locked);
            taken.skipped += (before - taken.entries.len()) as u64;
        }
        if !taken.entries.is_empty() {
            insert(tx, &taken.entries, last).await?;
        }
    }
    tx.execute_typed(
        "WITH seen AS ( \
           INSERT INTO mock_journal_replicas (instance, replica, watermark, seen_at) \
           VALUES ($1, $2, $3, now()) \
           ON CONFLICT (instance) DO UPDATE SET watermark = excluded.watermark, seen_at = excluded.seen_at \
           RETURNING 1) \
         SELECT pg_notify('mock_journal', 'written') FROM seen",
        &[
            (&instance, Type::UUID),
            (&replica, Type::TEXT),
            (&tick, Type::INT8),
        ],
    )
    .await
    .map_err(|e| store_error(&e))?;
    Ok(())
}

/// Inserts `entries` numbered up to `last`, and trims the table.
async fn insert(
    tx: &tokio_postgres::Transaction<'_>,
    entries: &VecDeque<(u64, JournalEntry)>,
    last: i64,
) -> Result<(), StoreError> {
    let count = i64::try_from(entries.len()).unwrap_or(i64::MAX);
    let seq: Vec<i64> = (last - count + 1..=last).collect();
    let rows: Vec<JournalRow> = entries.iter().map(|(_, e)| JournalRow::of(e)).collect();
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
    Ok(())
}

/// The write made when a store is dropped (the process stops): what is
/// pending, and this replica's row removed so that no read waits for it.
/// On a thread and a connection of its own: the store's pool lives on a
/// runtime that may be shutting down. At most [`LAST_WRITE`].
pub(super) fn last_write(
    config: &tokio_postgres::Config,
    pending: Pending,
    instance: Uuid,
    replica: &str,
) {
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return;
    };
    let pending = Mutex::new(pending);
    let written = runtime.block_on(async {
        let work = async {
            let (mut client, connection) =
                config.connect(NoTls).await.map_err(|e| store_error(&e))?;
            tokio::spawn(connection);
            let tx = client.transaction().await.map_err(|e| store_error(&e))?;
            if !lock(&pending).is_empty() {
                write(&tx, &pending, instance, replica, &mut Batch::default()).await?;
            }
            tx.execute(
                "DELETE FROM mock_journal_replicas WHERE instance = $1",
                &[&instance],
            )
            .await
            .map_err(|e| store_error(&e))?;
            tx.commit().await.map_err(|e| store_error(&e))
        };
        tokio::time::timeout(LAST_WRITE, work)
            .await
            .map_err(|_| StoreError::new("PostgreSQL did not answer within 2 s"))?
    });
    if let Err(e) = written {
        tracing::warn!(error = %e, "the last request journal entries could not be written to PostgreSQL");
    }
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
    /// Empties the transactions and the journal, zeroes the clock and moves
    /// the reset epoch on, for every replica; then waits (at most 3 s) until
    /// every other live replica has written since, and so has seen the new
    /// epoch.
    ///
    /// No entry served before the reset appears after it, anywhere: this
    /// replica's pending ones are dropped here; another replica's were
    /// captured under the old epoch, and its next write reads the new one
    /// (at the latest under the counter row's lock, which this holds until
    /// it commits) and drops them, or committed before this and is emptied
    /// with the rest. Entries captured once a replica has seen the new
    /// epoch are kept: by the answer, every live replica has.
    pub(super) async fn clear_journal(&self, how: Clear) -> Result<(), StoreError> {
        {
            let _one = self.inner.flushing.lock().await;
            let epoch = bounded(async {
                let mut client = self.client().await?;
                let tx = client.transaction().await.map_err(|e| store_error(&e))?;
                let counter = match how {
                    Clear::Reset => {
                        "UPDATE mock_journal_counter SET epoch = epoch + 1 WHERE id = 1 RETURNING epoch"
                    }
                    Clear::Erase => {
                        "UPDATE mock_journal_counter SET epoch = epoch + 1, last = 0 WHERE id = 1 RETURNING epoch"
                    }
                };
                let epoch: i64 = tx
                    .query_one(counter, &[])
                    .await
                    .map_err(|e| store_error(&e))?
                    .get(0);
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
                tx.commit().await.map_err(|e| store_error(&e))?;
                Ok(u64::try_from(epoch).unwrap_or(0))
            })
            .await?;
            lock(&self.inner.pending).reset(epoch, how);
            self.inner.offset_hint.store(0, Ordering::Relaxed);
        }
        // Committed: the reset stands whatever the wait below finds.
        if let Err(e) = self.barrier(replicas::RESET_WAIT).await {
            tracing::warn!(error = %e, "after a reset, the other replicas could not be waited for");
        }
        Ok(())
    }
}

/// The journal's reads, each behind a barrier: it includes every request
/// any live replica answered before the read started.
impl PostgresStore {
    pub(super) async fn read_since(
        &self,
        after: u64,
        limit: usize,
    ) -> Result<Vec<JournalEntry>, StoreError> {
        let after = i64::try_from(after).unwrap_or(i64::MAX);
        let limit = i64::try_from(limit.min(CAPACITY)).unwrap_or(0);
        bounded(async {
            self.barrier(replicas::READ_WAIT).await?;
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
        let seq = i64::try_from(seq).unwrap_or(i64::MAX);
        bounded(async {
            self.barrier(replicas::READ_WAIT).await?;
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
        bounded(async {
            self.barrier(replicas::READ_WAIT).await?;
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
