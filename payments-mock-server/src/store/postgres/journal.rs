//! The journal of one replica: written behind the answers (every 100 ms,
//! when a read on any replica asks, and when the store is dropped),
//! numbered in the order answered across replicas, reset for every
//! replica, and read exactly (`replicas.rs` makes each read wait for what
//! every replica answered before it started).

use std::collections::VecDeque;

use tokio_postgres::types::Type;

use super::*;
use rows::*;

pub(super) use super::fresh::Cleared;
pub(super) use super::pending::{Batch, Clear, Held, Pending, wall_clock};

/// The longest a read waits for the other replicas' writes (the
/// barrier is `replicas.rs`'s; its waits are the journal's promise).
pub(super) const READ_WAIT: Duration = Duration::from_secs(1);
/// The longest a reset waits for them: a replica that learns of a reset
/// only after its answer would drop what it served in between, so a reset
/// (rare) waits out a slow replica longer than a read does, and a killed
/// one until it is known gone (2 s).
pub(super) const RESET_WAIT: Duration = Duration::from_secs(3);

/// How long the write made when the store is dropped may take.
const LAST_WRITE: Duration = Duration::from_secs(2);

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
        let mut client = inner.connection().await?;
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
/// may then be written again rather than lost: its entries are not
/// inserted twice (one row per replica and stamp), but the numbers of the
/// entries it dropped unwritten may be taken twice.
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

/// One write, inside `tx`: a tick taken, the reset epoch read, a
/// watermark stamp and this replica's pending entries taken into `taken`
/// (those of an older epoch dropped); when there is anything to write,
/// the counter row locked (which orders the writes of every replica and
/// every reset), the entries inserted unnumbered, and what is due
/// numbered ([`number`]); and this replica's row moved to the tick and the
/// watermark stamp (its watermarks and heartbeat), announced to the
/// replicas listening.
///
/// The tick is taken before the entries: every request this replica
/// answered before a read took an earlier tick is in this write or an
/// earlier one. The watermark stamp is taken with the entries, under the
/// pending lock: every entry stamped before it is in this write or an
/// earlier one, every later entry has a later stamp. The epoch is read
/// after the tick: a reset that committed before a read's tick is seen by
/// a write whose tick is later. Under the counter row's lock the epoch is
/// read again: a reset that committed in between drops what this write
/// took from before it. A write with nothing to write does not wait for
/// that lock (a read numbers what it needs itself).
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
    let watermark = {
        let mut pending = lock(pending);
        pending.adopt(u64::try_from(epoch).unwrap_or(0));
        let (watermark, batch) = pending.take();
        *taken = batch;
        watermark
    };
    let moved = taken.skipped > 0 || !taken.entries.is_empty();
    if moved {
        let locked: i64 = tx
            .query_typed_one(
                "SELECT epoch FROM mock_journal_counter WHERE id = 1 FOR UPDATE",
                &[],
            )
            .await
            .map_err(|e| store_error(&e))?
            .get(0);
        if locked != epoch {
            // A reset came in between: what was taken before it goes (its
            // numbers stay taken, as for every entry dropped unwritten).
            let locked = u64::try_from(locked).unwrap_or(0);
            lock(pending).adopt(locked);
            let before = taken.entries.len();
            taken
                .entries
                .retain(|h| !h.sandbox.is_nil() || h.epoch >= locked);
            taken.skipped += (before - taken.entries.len()) as u64;
        }
        if !taken.entries.is_empty() {
            insert(tx, &taken.entries, instance).await?;
        }
    }
    tx.execute_typed(
        "WITH seen AS ( \
           INSERT INTO mock_journal_replicas (instance, replica, watermark, watermark_at, seen_at) \
           VALUES ($1, $2, $3, $4, now()) \
           ON CONFLICT (instance) DO UPDATE SET watermark = excluded.watermark, \
           watermark_at = excluded.watermark_at, seen_at = excluded.seen_at \
           RETURNING 1) \
         SELECT pg_notify('mock_journal', 'written') FROM seen",
        &[
            (&instance, Type::UUID),
            (&replica, Type::TEXT),
            (&tick, Type::INT8),
            (&watermark, Type::INT8),
        ],
    )
    .await
    .map_err(|e| store_error(&e))?;
    if moved {
        number(tx, Due::Live, taken.skipped).await?;
    }
    Ok(())
}

/// Inserts `entries`, captured by the replica `instance`, unnumbered. An
/// entry already there (a write whose commit was cut off, retried) is not
/// inserted again; nor is a sandbox's entry stamped before its last reset
/// (served before it), or one of a sandbox that is gone. Under the counter
/// row's lock, which a sandbox's reset and removal also take.
async fn insert(
    tx: &tokio_postgres::Transaction<'_>,
    entries: &VecDeque<Held>,
    instance: Uuid,
) -> Result<(), StoreError> {
    let stamp: Vec<i64> = entries.iter().map(|h| h.stamp).collect();
    let sandbox: Vec<Uuid> = entries.iter().map(|h| h.sandbox).collect();
    let rows: Vec<JournalRow> = entries
        .iter()
        .map(|h| nul_escape::journal_row(&h.entry))
        .collect();
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
    let caller: Vec<Option<Uuid>> = rows.iter().map(|r| r.caller).collect();
    let texts = Type::TEXT_ARRAY;
    tx.execute_typed(
        "INSERT INTO mock_journal (instance, stamp, at, method, path, query, headers, body, status, \
         error_code, request_id, fault, replica, sandbox, caller) \
         SELECT $1, u.* FROM UNNEST($2::bigint[], $3::bigint[], $4::text[], $5::text[], $6::text[], \
         $7::text[], $8::text[], $9::integer[], $10::text[], $11::text[], $12::text[], $13::text[], \
         $14::uuid[], $15::uuid[]) AS u(stamp, at, method, path, query, headers, body, status, \
         error_code, request_id, fault, replica, sandbox, caller) \
         WHERE EXISTS (SELECT 1 FROM mock_sandboxes s WHERE s.id = u.sandbox AND s.reset_stamp <= u.stamp) \
         ON CONFLICT (instance, stamp) DO NOTHING",
        &[
            (&instance, Type::UUID),
            (&stamp, Type::INT8_ARRAY),
            (&at, Type::INT8_ARRAY),
            (&method, texts.clone()),
            (&path, texts.clone()),
            (&query, texts.clone()),
            (&headers, texts.clone()),
            (&body, texts.clone()),
            (&status, Type::INT4_ARRAY),
            (&error_code, texts.clone()),
            (&request_id, texts.clone()),
            (&fault, texts.clone()),
            (&replica, texts),
            (&sandbox, Type::UUID_ARRAY),
            (&caller, Type::UUID_ARRAY),
        ],
    )
    .await
    .map_err(|e| store_error(&e))?;
    Ok(())
}

/// Which unnumbered entries are due a number: those stamped before every
/// replica in question has written all it captured (the least of their
/// watermark stamps).
#[derive(Debug, Clone, Copy)]
pub(super) enum Due {
    /// The replicas that are live (written in the last 2 s, as for
    /// [`PostgresStore::barrier`]): what any write numbers.
    Live,
    /// The replicas that have written since the tick: what a read that
    /// took that tick numbers once it has waited for them. After a wait
    /// that gave up on a replica, this goes past that one's watermark:
    /// what it writes later with an earlier stamp is numbered after
    /// entries stamped later, rather than missing from the read.
    WrittenSince(i64),
}

impl Due {
    /// The SQL of the bound (`below`), and the tick (`$2`) it needs.
    fn bound(&self) -> (&'static str, Option<&i64>) {
        match self {
            Self::Live => (
                "SELECT min(watermark_at) AS below FROM mock_journal_replicas \
                 WHERE seen_at > now() - interval '2 seconds'",
                None,
            ),
            Self::WrittenSince(tick) => (
                "SELECT min(watermark_at) AS below FROM mock_journal_replicas WHERE watermark > $2",
                Some(tick),
            ),
        }
    }
}

/// Numbers the entries that are `due`, inside `tx`, which holds the
/// counter row's lock: first `skipped` numbers (entries dropped unwritten;
/// their numbers are taken), then one each for the due entries in stamp
/// order (by replica instance where two stamps are equal), after the last
/// number given; then trims the journal of each sandbox (the root
/// included) that grew to its last [`CAPACITY`] entries.
///
/// An entry is due when it is stamped before the watermark stamp of every
/// replica in question: each of those has written (committed, so this
/// sees it) every entry it stamped earlier, and will stamp every later
/// entry later. So an entry is never numbered before one stamped earlier,
/// on any replica in question: a request answered before another was
/// received is numbered before it. Numbers are given under the counter
/// row's lock and committed with it, so they follow commit order and a
/// reader that sees a number sees every smaller one.
pub(super) async fn number(
    tx: &tokio_postgres::Transaction<'_>,
    due: Due,
    skipped: u64,
) -> Result<(), StoreError> {
    let skipped = i64::try_from(skipped).unwrap_or(i64::MAX);
    let (bound, tick) = due.bound();
    let numbered = format!(
        "WITH bound AS ({bound}), \
         todo AS ( \
           SELECT j.instance, j.stamp, row_number() OVER (ORDER BY j.stamp, j.instance) AS k \
           FROM mock_journal j, bound WHERE j.seq IS NULL AND j.stamp < bound.below), \
         base AS (SELECT last + $1 AS last FROM mock_journal_counter WHERE id = 1), \
         numbered AS ( \
           UPDATE mock_journal j SET seq = base.last + todo.k FROM todo, base \
           WHERE j.seq IS NULL AND j.instance = todo.instance AND j.stamp = todo.stamp \
           RETURNING j.sandbox), \
         counted AS ( \
           UPDATE mock_journal_counter SET last = last + $1 + (SELECT count(*) FROM numbered) \
           WHERE id = 1 RETURNING 1) \
         SELECT DISTINCT sandbox FROM numbered"
    );
    let mut params: Vec<(&(dyn ToSql + Sync), Type)> = vec![(&skipped, Type::INT8)];
    if let Some(tick) = tick {
        params.push((tick, Type::INT8));
    }
    let capacity = i64::try_from(CAPACITY).unwrap_or(i64::MAX);
    let grown: Vec<Uuid> = tx
        .query_typed(&numbered, &params)
        .await
        .map_err(|e| store_error(&e))?
        .iter()
        .map(|r| r.get(0))
        .collect();
    if grown.is_empty() {
        return Ok(());
    }
    // Each sandbox that grew keeps its last CAPACITY entries.
    tx.execute_typed(
        "DELETE FROM mock_journal j USING ( \
           SELECT g.sandbox, (SELECT x.seq FROM mock_journal x \
             WHERE x.sandbox = g.sandbox AND x.seq IS NOT NULL \
             ORDER BY x.seq DESC OFFSET $2 LIMIT 1) AS floor \
           FROM UNNEST($1::uuid[]) AS g(sandbox)) f \
         WHERE j.sandbox = f.sandbox AND j.seq <= f.floor",
        &[(&grown, Type::UUID_ARRAY), (&capacity, Type::INT8)],
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
    /// Empties the root's transactions and journal, zeroes its clock and
    /// moves the reset epoch on, for every replica (with [`Clear::Erase`]:
    /// every sandbox's too, the sandboxes and the settings, and only when
    /// no other replica is live: [`Cleared::Served`] otherwise, nothing
    /// changed); then waits (at most 3 s) until every other live replica
    /// has written since, and so has seen the new epoch. The journal's
    /// numbering goes on either way.
    ///
    /// No entry served before the reset appears after it, anywhere: this
    /// replica's pending ones are dropped here; another replica's were
    /// captured under the old epoch, and its next write reads the new one
    /// (at the latest under the counter row's lock, which this holds until
    /// it commits) and drops them, or committed before this and is emptied
    /// with the rest. Entries captured once a replica has seen the new
    /// epoch are kept: by the answer, every live replica has.
    pub(super) async fn clear_journal(&self, how: Clear) -> Result<Cleared, StoreError> {
        let deleted = {
            let _one = self.inner.flushing.lock().await;
            let cleared = bounded(async {
                let mut client = self.client().await?;
                let tx = client.transaction().await.map_err(|e| store_error(&e))?;
                let epoch: i64 = tx
                    .query_one(
                        "UPDATE mock_journal_counter SET epoch = epoch + 1 WHERE id = 1 RETURNING epoch",
                        &[],
                    )
                    .await
                    .map_err(|e| store_error(&e))?
                    .get(0);
                // `--fresh` deletes the whole service's state: not under
                // replicas that serve it (dropping `tx` undoes the epoch).
                if how == Clear::Erase {
                    let served = fresh::live_others(&tx, self.inner.instance).await?;
                    if !served.is_empty() {
                        return Ok(Err(served));
                    }
                }
                // Under the counter row's lock (taken above): the entries
                // written but not yet numbered go with the rest, and their
                // numbers are taken, as for every entry dropped unwritten.
                //
                // A reset empties the root alone. Without sandboxes (no
                // new one can be made meanwhile: the table is locked) the
                // tables are truncated, quicker than a delete.
                tx.batch_execute("LOCK TABLE mock_sandboxes IN SHARE MODE")
                    .await
                    .map_err(|e| store_error(&e))?;
                let mut deleted = match how {
                    Clear::Reset => fresh::Deleted::default(),
                    Clear::Erase => fresh::count(&tx).await?,
                };
                let sandboxes: bool = tx
                    .query_one(
                        "SELECT EXISTS (SELECT 1 FROM mock_sandboxes WHERE id <> $1)",
                        &[&Uuid::nil()],
                    )
                    .await
                    .map_err(|e| store_error(&e))?
                    .get(0);
                let clear = match (how, sandboxes) {
                    (Clear::Reset, false) => {
                        "UPDATE mock_journal_counter \
                         SET last = last + (SELECT count(*) FROM mock_journal WHERE seq IS NULL) WHERE id = 1; \
                         TRUNCATE mock_transactions, mock_journal; \
                         UPDATE mock_clock SET offset_nanos = 0 WHERE id = 1;"
                    }
                    (Clear::Reset, true) => {
                        "UPDATE mock_journal_counter SET last = last + (SELECT count(*) FROM mock_journal \
                         WHERE seq IS NULL AND sandbox = '00000000-0000-0000-0000-000000000000') WHERE id = 1; \
                         DELETE FROM mock_transactions WHERE sandbox = '00000000-0000-0000-0000-000000000000'; \
                         DELETE FROM mock_journal WHERE sandbox = '00000000-0000-0000-0000-000000000000'; \
                         UPDATE mock_clock SET offset_nanos = 0 WHERE id = 1;"
                    }
                    (Clear::Erase, _) => {
                        "UPDATE mock_journal_counter \
                         SET last = last + (SELECT count(*) FROM mock_journal WHERE seq IS NULL) WHERE id = 1; \
                         TRUNCATE mock_transactions, mock_journal; \
                         DELETE FROM mock_sandboxes WHERE id <> '00000000-0000-0000-0000-000000000000'; \
                         DELETE FROM mock_settings; UPDATE mock_clock SET offset_nanos = 0 WHERE id = 1;"
                    }
                };
                tx.batch_execute(clear)
                    .await
                    .map_err(|e| store_error(&e))?;
                if how == Clear::Erase {
                    deleted.last_seq = fresh::last_seq(&tx).await?;
                }
                tx.commit().await.map_err(|e| store_error(&e))?;
                Ok(Ok((u64::try_from(epoch).unwrap_or(0), deleted)))
            })
            .await?;
            let (epoch, deleted) = match cleared {
                Ok(done) => done,
                Err(served) => return Ok(Cleared::Served(served)),
            };
            lock(&self.inner.pending).reset(epoch, how);
            self.view.offset_hint.store(0, Ordering::Relaxed);
            deleted
        };
        // Committed: the reset stands whatever the wait below finds.
        if let Err(e) = self.barrier(RESET_WAIT).await {
            tracing::warn!(error = %e, "after a reset, the other replicas could not be waited for");
        }
        Ok(Cleared::Done(deleted))
    }
}

/// Takes the journal counter's row lock for the rest of `tx`: the journal's
/// writers number and insert under it, so what `tx` removes or fences
/// (a sandbox gone, a reset's stamp) no writer races.
pub(super) async fn lock_counter(tx: &tokio_postgres::Transaction<'_>) -> Result<(), StoreError> {
    tx.execute_typed(
        "SELECT 1 FROM mock_journal_counter WHERE id = 1 FOR UPDATE",
        &[],
    )
    .await
    .map(|_| ())
    .map_err(|e| store_error(&e))
}
