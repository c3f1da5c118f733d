//! Sandboxes the replicas share (CONTRACT section 19): each is a view of
//! the same tables ([`PostgresStore`] with its `sandbox` id), and
//! `mock_sandboxes` holds what each is, its clock and when it was last
//! reset, so a sandbox made on one replica is served by any.
//!
//! - Exactly once per sandbox: the unique index on (sandbox, merchant,
//!   reference) and the conditional updates, as at the root.
//! - One clock per sandbox: its row's `offset_nanos`, read per request.
//! - A reset is fenced by a stamp: the sandbox's row records the capture
//!   stamp of its reset, and a replica's journal write (under the counter
//!   row's lock, which the reset takes too) leaves out the sandbox's
//!   entries stamped before it. No wait for the other replicas: what they
//!   answered before the reset is stamped earlier, whenever they write it.
//! - Removal and expiry delete the row; the sandbox's transactions go with
//!   it (a foreign key), its journal in the same transaction; a
//!   transaction made meanwhile on another replica fails on the key, and a
//!   journal entry written later finds no row and is left out.
//! - Journal numbers are given across sandboxes (one counter): a
//!   sandbox's entries are numbered in the order answered, with gaps where
//!   another sandbox's entries took numbers.

use super::*;
use crate::store::KeptSandbox;

/// Advisory lock key: counting sandboxes against `--max-sandboxes` and
/// adding one (one replica at a time).
const SANDBOX_LOCK: i64 = 0x6d6f_636b_0002;

/// The SQLSTATE of a foreign key violation.
const FOREIGN_KEY_VIOLATION: &str = "23503";

/// What a request in a sandbox that another replica removed meets.
pub(super) fn sandbox_gone() -> StoreError {
    StoreError::sandbox_gone()
}

/// Milliseconds since the epoch of a wall-clock time (a sandbox's).
fn wall_millis(at: DateTime<Utc>) -> i64 {
    at.timestamp_millis()
}

/// A wall-clock time from milliseconds since the epoch.
fn from_wall_millis(ms: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(ms).unwrap_or(DateTime::<Utc>::MAX_UTC)
}

/// A `mock_sandboxes` row as the registry takes it.
fn kept_of(row: &tokio_postgres::Row) -> KeptSandbox {
    KeptSandbox {
        id: row.get(0),
        owner: row.get(1),
        label: row.get(2),
        created_at: from_wall_millis(row.get(3)),
        ttl: Duration::from_millis(u64::try_from(row.get::<_, i64>(4)).unwrap_or(0)),
        expires_at: from_wall_millis(row.get(5)),
    }
}

const KEPT_COLUMNS: &str = "id, owner, label, created_at, ttl_ms, expires_at";

/// Runs `work` behind the answers, when there is a runtime to run it on
/// (a store dropped outside one has nobody waiting for it).
fn later(work: impl std::future::Future<Output = Result<(), StoreError>> + Send + 'static) {
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        runtime.spawn(async move {
            if let Err(e) = work.await {
                tracing::debug!(error = %e, "a sandbox's row could not be written to PostgreSQL");
            }
        });
    }
}

impl PostgresStore {
    /// Whether this is the root (no sandbox).
    pub(super) fn is_root(&self) -> bool {
        self.view.sandbox.is_nil()
    }

    /// An insert's error: a foreign key violation means the sandbox was
    /// removed (by another replica) since the request found it.
    pub(super) fn insert_error(&self, e: &tokio_postgres::Error) -> StoreError {
        if !self.is_root() && e.code().is_some_and(|c| c.code() == FOREIGN_KEY_VIOLATION) {
            return sandbox_gone();
        }
        store_error(e)
    }

    /// The sandbox `id`'s view of the database, at clock offset `offset`.
    pub(crate) fn sandbox_view(&self, id: Uuid, offset: i64) -> Self {
        Self {
            inner: Arc::clone(&self.inner),
            view: View::new(id, offset),
        }
    }

    /// Writes down a new sandbox before its creation is answered, unless
    /// `max` sandboxes live already in the database (counted across the
    /// replicas, under a lock): `false` then. Sandboxes whose time ran out
    /// go first.
    ///
    /// # Errors
    ///
    /// [`StoreError`] when the database cannot be written.
    pub(crate) async fn keep_sandbox(
        &self,
        kept: &KeptSandbox,
        max: usize,
    ) -> Result<bool, StoreError> {
        let store = self.clone();
        let kept = kept.clone();
        detached(async move {
            bounded(async {
                store.forget_expired().await?;
                let mut client = store.client().await?;
                let tx = client.transaction().await.map_err(|e| store_error(&e))?;
                tx.execute("SELECT pg_advisory_xact_lock($1)", &[&SANDBOX_LOCK])
                    .await
                    .map_err(|e| store_error(&e))?;
                let now = wall_millis(Utc::now());
                let live: i64 = tx
                    .query_one(
                        "SELECT count(*) FROM mock_sandboxes WHERE id <> $1 AND expires_at > $2",
                        &[&Uuid::nil(), &now],
                    )
                    .await
                    .map_err(|e| store_error(&e))?
                    .get(0);
                if usize::try_from(live).unwrap_or(usize::MAX) >= max {
                    return Ok(false);
                }
                let ttl = i64::try_from(kept.ttl.as_millis()).unwrap_or(i64::MAX);
                tx.execute(
                    "INSERT INTO mock_sandboxes (id, owner, label, created_at, ttl_ms, expires_at) \
                     VALUES ($1, $2, $3, $4, $5, $6)",
                    &[
                        &kept.id,
                        &kept.owner,
                        &kept.label,
                        &wall_millis(kept.created_at),
                        &ttl,
                        &wall_millis(kept.expires_at),
                    ],
                )
                .await
                .map_err(|e| store_error(&e))?;
                tx.commit().await.map_err(|e| store_error(&e))?;
                Ok(true)
            })
            .await
        })
        .await
    }

    /// The live sandbox `id` as the database holds it, with its clock
    /// offset; `None` when there is none (never made, removed, or its time
    /// ran out).
    ///
    /// # Errors
    ///
    /// [`StoreError`] when the database cannot be read.
    pub(crate) async fn find_sandbox(
        &self,
        id: Uuid,
    ) -> Result<Option<(KeptSandbox, i64)>, StoreError> {
        if id.is_nil() {
            return Ok(None);
        }
        bounded(async {
            let client = self.client().await?;
            let statement = client
                .prepare_cached(&format!(
                    "SELECT {KEPT_COLUMNS}, offset_nanos FROM mock_sandboxes \
                     WHERE id = $1 AND expires_at > $2"
                ))
                .await
                .map_err(|e| store_error(&e))?;
            let row = client
                .query_opt(&statement, &[&id, &wall_millis(Utc::now())])
                .await
                .map_err(|e| store_error(&e))?;
            Ok(row.map(|r| (kept_of(&r), r.get(6))))
        })
        .await
    }

    /// Every live sandbox the database holds, oldest first, with its clock
    /// offset.
    ///
    /// # Errors
    ///
    /// [`StoreError`] when the database cannot be read.
    pub(crate) async fn live_sandboxes(&self) -> Result<Vec<(KeptSandbox, i64)>, StoreError> {
        bounded(async {
            let client = self.client().await?;
            let rows = client
                .query(
                    &format!(
                        "SELECT {KEPT_COLUMNS}, offset_nanos FROM mock_sandboxes \
                         WHERE id <> $1 AND expires_at > $2 ORDER BY created_at, id"
                    ),
                    &[&Uuid::nil(), &wall_millis(Utc::now())],
                )
                .await
                .map_err(|e| store_error(&e))?;
            Ok(rows.iter().map(|r| (kept_of(r), r.get(6))).collect())
        })
        .await
    }

    /// Removes the sandbox this store is, with its transactions and
    /// journal, before the removal is answered; with `only_expired`, only
    /// if its time ran out by the database's row (another replica may have
    /// renewed it).
    async fn remove(&self, only_expired: bool) -> Result<(), StoreError> {
        if self.is_root() {
            return Ok(());
        }
        let sandbox = self.view.sandbox;
        bounded(async {
            let mut client = self.client().await?;
            let tx = client.transaction().await.map_err(|e| store_error(&e))?;
            // The journal's writers insert under this lock, checking the
            // row: none adds an entry of this sandbox once it is gone.
            journal::lock_counter(&tx).await?;
            let until = if only_expired {
                wall_millis(Utc::now())
            } else {
                i64::MAX
            };
            let removed = tx
                .execute(
                    "DELETE FROM mock_sandboxes WHERE id = $1 AND expires_at <= $2",
                    &[&sandbox, &until],
                )
                .await
                .map_err(|e| store_error(&e))?;
            if removed > 0 {
                tx.execute("DELETE FROM mock_journal WHERE sandbox = $1", &[&sandbox])
                    .await
                    .map_err(|e| store_error(&e))?;
            }
            tx.commit().await.map_err(|e| store_error(&e))?;
            if removed > 0 {
                journal::lock(&self.inner.pending).reset_sandbox(sandbox, i64::MAX);
            }
            Ok(())
        })
        .await
    }

    /// Removes the sandboxes whose time ran out, with all they hold.
    async fn forget_expired(&self) -> Result<(), StoreError> {
        let client = self.client().await?;
        let expired = client
            .query(
                "SELECT id FROM mock_sandboxes WHERE id <> $1 AND expires_at <= $2",
                &[&Uuid::nil(), &wall_millis(Utc::now())],
            )
            .await
            .map_err(|e| store_error(&e))?;
        drop(client);
        for row in expired {
            self.sandbox_view(row.get(0), 0).remove(true).await?;
        }
        Ok(())
    }

    /// Removes the sandbox this store is, with all it holds, before the
    /// removal is answered.
    ///
    /// # Errors
    ///
    /// [`StoreError`] when the database cannot be written.
    pub(crate) async fn forget_sandbox(&self) -> Result<(), StoreError> {
        let store = self.clone();
        detached(async move { store.remove(false).await }).await
    }

    /// Removes the sandbox this store is behind the answers, whatever its
    /// row's expiry (an in-process test's sandbox, dropped).
    pub(crate) fn forget_sandbox_later(&self) {
        let store = self.clone();
        later(async move { store.remove(false).await });
    }

    /// Removes the sandbox this store is behind the answers, if its time
    /// ran out by the database's row: this replica saw no use of it for its
    /// time to live, another one may have.
    pub(crate) fn forget_sandbox_if_expired(&self) {
        let store = self.clone();
        later(async move { store.remove(true).await });
    }

    /// Moves the expiry of the sandbox this store is on to `expires_at`,
    /// behind the answers (never back: another replica may have moved it
    /// further).
    pub(crate) fn renew_sandbox(&self, expires_at: DateTime<Utc>) {
        if self.is_root() {
            return;
        }
        let store = self.clone();
        later(async move {
            bounded(async {
                let client = store.client().await?;
                client
                    .execute(
                        "UPDATE mock_sandboxes SET expires_at = GREATEST(expires_at, $2) WHERE id = $1",
                        &[&store.view.sandbox, &wall_millis(expires_at)],
                    )
                    .await
                    .map_err(|e| store_error(&e))?;
                Ok(())
            })
            .await
        });
    }

    /// Empties the sandbox this store is (transactions, journal, clock),
    /// for every replica: its row records the reset's stamp, and no
    /// replica writes an entry of it stamped before (captured before the
    /// reset) from then on.
    pub(super) async fn reset_sandbox(&self) -> Result<(), StoreError> {
        let sandbox = self.view.sandbox;
        bounded(async {
            let mut client = self.client().await?;
            let tx = client.transaction().await.map_err(|e| store_error(&e))?;
            journal::lock_counter(&tx).await?;
            let stamp = journal::lock(&self.inner.pending).reset_stamp();
            let found = tx
                .execute(
                    "UPDATE mock_sandboxes SET offset_nanos = 0, reset_stamp = $2 WHERE id = $1",
                    &[&sandbox, &stamp],
                )
                .await
                .map_err(|e| store_error(&e))?;
            if found == 0 {
                return Err(sandbox_gone());
            }
            tx.execute(
                "DELETE FROM mock_transactions WHERE sandbox = $1",
                &[&sandbox],
            )
            .await
            .map_err(|e| store_error(&e))?;
            tx.execute("DELETE FROM mock_journal WHERE sandbox = $1", &[&sandbox])
                .await
                .map_err(|e| store_error(&e))?;
            tx.commit().await.map_err(|e| store_error(&e))?;
            journal::lock(&self.inner.pending).reset_sandbox(sandbox, stamp);
            self.view.offset_hint.store(0, Ordering::Relaxed);
            Ok(())
        })
        .await
    }
}
