//! Sandboxes in whichever store a server runs on (CONTRACT section 19):
//! the memory store makes each sandbox a store of its own and forgets them
//! with the process; the SQLite store keeps each as a view of its file and
//! finds them again at a restart; the PostgreSQL store keeps none yet.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{AnyStore, KeptSandbox, MemoryStore, StoreError};

impl AnyStore {
    /// The store of a new sandbox `id` of this (root) store, empty; `None`
    /// when this store cannot hold sandboxes (PostgreSQL: its replicas
    /// would not find each other's).
    pub(crate) fn new_sandbox(&self, id: Uuid, replica: &str) -> Option<Self> {
        #[cfg(not(feature = "sqlite"))]
        let _ = id;
        match self {
            Self::Memory(_) => Some(Self::Memory(MemoryStore::new(replica))),
            #[cfg(feature = "sqlite")]
            Self::Sqlite(s) => Some(Self::Sqlite(s.new_sandbox(id))),
            #[cfg(feature = "postgres")]
            Self::Postgres(_) => None,
        }
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
    /// answered (nothing to do where sandboxes die with the process).
    ///
    /// # Errors
    ///
    /// [`StoreError`] when the store cannot be written.
    pub(crate) async fn keep_sandbox(&self, kept: &KeptSandbox) -> Result<(), StoreError> {
        #[cfg(feature = "sqlite")]
        if let Self::Sqlite(s) = self {
            return Box::pin(s.keep_sandbox(kept)).await;
        }
        let _ = kept;
        Ok(())
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
        #[cfg(feature = "sqlite")]
        if let Self::Sqlite(s) = self {
            return Box::pin(s.forget_sandbox()).await;
        }
        Ok(())
    }

    /// Removes the sandbox this store is, behind the answers (it expired,
    /// or a test's sandbox was dropped).
    pub(crate) fn forget_sandbox_later(&self) {
        #[cfg(feature = "sqlite")]
        if let Self::Sqlite(s) = self {
            s.forget_sandbox_later();
        }
    }

    /// Writes down, behind the answers, that the sandbox this store is now
    /// expires at `expires_at`.
    pub(crate) fn renew_sandbox(&self, expires_at: DateTime<Utc>) {
        #[cfg(feature = "sqlite")]
        if let Self::Sqlite(s) = self {
            s.renew_sandbox(expires_at);
        }
        let _ = expires_at;
    }
}
