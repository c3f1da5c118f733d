//! Sandboxes in whichever store a server runs on (CONTRACT section 19):
//! the memory store makes each sandbox a store of its own and forgets them
//! with the process; the SQLite store keeps each as a view of its file and
//! finds them again at a restart; the PostgreSQL store keeps each as a view
//! of the database, which every replica asks (`postgres/sandboxes.rs`).

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{AnyStore, KeptSandbox, MemoryStore, StoreError};

impl AnyStore {
    /// The store of a new sandbox `id` of this (root) store, empty.
    pub(crate) fn new_sandbox(&self, id: Uuid, replica: &str) -> Self {
        #[cfg(not(any(feature = "sqlite", feature = "postgres")))]
        let _ = id;
        match self {
            Self::Memory(_) => Self::Memory(MemoryStore::new(replica)),
            #[cfg(feature = "sqlite")]
            Self::Sqlite(s) => Self::Sqlite(s.new_sandbox(id)),
            #[cfg(feature = "postgres")]
            Self::Postgres(s) => Self::Postgres(s.sandbox_view(id, 0)),
        }
    }

    /// The live sandbox `id` as a store the replicas share holds it
    /// (made on any replica), with its store; `None` when it holds none
    /// (or the store is not shared).
    ///
    /// # Errors
    ///
    /// [`StoreError`] when the store cannot be read.
    pub(crate) async fn shared_sandbox(
        &self,
        id: Uuid,
    ) -> Result<Option<(KeptSandbox, Self)>, StoreError> {
        #[cfg(feature = "postgres")]
        if let Self::Postgres(s) = self {
            return Ok(s
                .find_sandbox(id)
                .await?
                .map(|(kept, offset)| (kept, Self::Postgres(s.sandbox_view(id, offset)))));
        }
        let _ = id;
        Ok(None)
    }

    /// Every live sandbox a store the replicas share holds, oldest first,
    /// each with its store; none for a store that is not shared.
    ///
    /// # Errors
    ///
    /// [`StoreError`] when the store cannot be read.
    pub(crate) async fn shared_sandboxes(&self) -> Result<Vec<(KeptSandbox, Self)>, StoreError> {
        #[cfg(feature = "postgres")]
        if let Self::Postgres(s) = self {
            return Ok(s
                .live_sandboxes()
                .await?
                .into_iter()
                .map(|(kept, offset)| {
                    let view = Self::Postgres(s.sandbox_view(kept.id, offset));
                    (kept, view)
                })
                .collect());
        }
        Ok(Vec::new())
    }

    /// The sandboxes this (root) store kept from an earlier run, each with
    /// its store, oldest first; none for a store that keeps none.
    ///
    /// # Errors
    ///
    /// [`StoreError`] when the store cannot be read.
    pub(crate) fn kept_sandboxes(&self) -> Result<Vec<(KeptSandbox, Self)>, StoreError> {
        #[cfg(feature = "sqlite")]
        if let Self::Sqlite(s) = self {
            return Ok(s
                .kept_sandboxes()?
                .into_iter()
                .map(|(kept, view)| (kept, Self::Sqlite(view)))
                .collect());
        }
        Ok(Vec::new())
    }

    /// Writes down the sandbox this store is, before its creation is
    /// answered (nothing to do where sandboxes die with the process);
    /// `false` when a store the replicas share holds `max` live sandboxes
    /// already (one process's limit is its registry's).
    ///
    /// # Errors
    ///
    /// [`StoreError`] when the store cannot be written.
    pub(crate) async fn keep_sandbox(
        &self,
        kept: &KeptSandbox,
        max: usize,
    ) -> Result<bool, StoreError> {
        #[cfg(feature = "sqlite")]
        if let Self::Sqlite(s) = self {
            Box::pin(s.keep_sandbox(kept)).await?;
            return Ok(true);
        }
        #[cfg(feature = "postgres")]
        if let Self::Postgres(s) = self {
            return Box::pin(s.keep_sandbox(kept, max)).await;
        }
        let _ = (kept, max);
        Ok(true)
    }

    /// Writes down the sandbox this store is, behind the answers (a test's
    /// in-process sandbox, made without waiting).
    pub(crate) fn keep_sandbox_later(&self, kept: &KeptSandbox) {
        #[cfg(feature = "sqlite")]
        if let Self::Sqlite(s) = self {
            s.keep_sandbox_later(kept);
        }
        let _ = kept;
    }

    /// Removes the sandbox this store is, with all it holds, before the
    /// removal is answered.
    ///
    /// # Errors
    ///
    /// [`StoreError`] when the store cannot be written.
    pub(crate) async fn forget_sandbox(&self) -> Result<(), StoreError> {
        match self {
            Self::Memory(m) => {
                m.forget();
                Ok(())
            }
            #[cfg(feature = "sqlite")]
            Self::Sqlite(s) => Box::pin(s.forget_sandbox()).await,
            #[cfg(feature = "postgres")]
            Self::Postgres(s) => Box::pin(s.forget_sandbox()).await,
        }
    }

    /// Removes the sandbox this store is, behind the answers (it expired,
    /// or a test's sandbox was dropped). A store the replicas share
    /// removes it only if its time ran out there too: another replica may
    /// have used it.
    pub(crate) fn forget_sandbox_later(&self) {
        match self {
            Self::Memory(m) => m.forget(),
            #[cfg(feature = "sqlite")]
            Self::Sqlite(s) => s.forget_sandbox_later(),
            #[cfg(feature = "postgres")]
            Self::Postgres(s) => s.forget_sandbox_if_expired(),
        }
    }

    /// Removes the sandbox this store is, behind the answers, on every
    /// store (an in-process test's sandbox, dropped: on a store the
    /// replicas share too, since the test that made it is done with it).
    pub(crate) fn forget_dropped_sandbox(&self) {
        match self {
            Self::Memory(m) => m.forget(),
            #[cfg(feature = "sqlite")]
            Self::Sqlite(s) => s.forget_sandbox_later(),
            #[cfg(feature = "postgres")]
            Self::Postgres(s) => s.forget_sandbox_later(),
        }
    }

    /// Writes down, behind the answers, that the sandbox this store is now
    /// expires at `expires_at`.
    pub(crate) fn renew_sandbox(&self, expires_at: DateTime<Utc>) {
        #[cfg(feature = "sqlite")]
        if let Self::Sqlite(s) = self {
            s.renew_sandbox(expires_at);
        }
        #[cfg(feature = "postgres")]
        if let Self::Postgres(s) = self {
            s.renew_sandbox(expires_at);
        }
        let _ = expires_at;
    }
}
