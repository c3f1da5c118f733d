//! [`Sandbox`]: a test's own part of a shared [`crate::MockServer`]
//! (CONTRACT section 19).

use uuid::Uuid;

use crate::mock_server::{Controls, MockServer};
use crate::state::{AppState, SandboxRefusal};

/// A sandbox of a running [`MockServer`]: its own transactions,
/// references, virtual clock, journal, fault rules and coverage under its
/// own base URL (`{server}/sandboxes/{id}`), on a server other tests share.
/// Everything [`Controls`] does acts on this sandbox alone. Dropping it
/// removes the sandbox with all it holds.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// use payments_mock_server::MockServer;
///
/// let server = MockServer::start().await;
/// let mine = server.sandbox();
/// let theirs = server.sandbox();
/// // Each test gives its application its own base URL...
/// assert!(mine.base_url().starts_with(&server.base_url()));
/// assert_ne!(mine.base_url(), theirs.base_url());
/// // ...and moves its own clock: the other sandbox's time stands still.
/// mine.advance_clock(std::time::Duration::from_secs(901)).await;
/// assert!(mine.now().await > theirs.now().await);
/// # }
/// ```
#[derive(Debug)]
pub struct Sandbox {
    controls: Controls,
    id: Uuid,
    root: AppState,
}

impl Sandbox {
    /// Its id (the path segment after `/sandboxes/`).
    pub fn id(&self) -> Uuid {
        self.id
    }
}

impl std::ops::Deref for Sandbox {
    type Target = Controls;

    fn deref(&self) -> &Controls {
        &self.controls
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        self.root.drop_sandbox(self.id);
    }
}

/// Why [`MockServer::create_sandbox`] made no sandbox.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SandboxError {
    /// The server holds `--max-sandboxes` live sandboxes already (on a
    /// store the replicas share: all the replicas together).
    #[error("the server holds {max} live sandboxes already (--max-sandboxes)")]
    TooMany {
        /// The limit.
        max: usize,
    },
    /// The store could not write the sandbox down or remove it; the
    /// reason names no password.
    #[error("the store failed: {reason}")]
    Store {
        /// Why, without secrets.
        reason: String,
    },
}

impl SandboxError {
    fn of(refusal: SandboxRefusal) -> Self {
        match refusal {
            SandboxRefusal::TooMany { max, .. } => Self::TooMany { max },
            SandboxRefusal::Unavailable(e) => Self::Store {
                reason: e.to_string(),
            },
            // A `MockServer` is the root: neither can happen here, but say
            // what it was rather than nothing.
            SandboxRefusal::Nested | SandboxRefusal::Store => Self::Store {
                reason: format!("{refusal:?}"),
            },
        }
    }
}

impl Sandbox {
    fn of(server: &MockServer, info: &crate::sandboxes::SandboxInfo, state: AppState) -> Self {
        Sandbox {
            controls: Controls::new(
                state,
                format!("{}/sandboxes/{}", server.base_url(), info.id),
            ),
            id: info.id,
            root: server.controls.state.clone(),
        }
    }

    /// Removes this sandbox with all it holds, and waits until its store
    /// has forgotten it (on PostgreSQL: every replica then answers 404
    /// `SANDBOX_NOT_FOUND` under its base URL). Dropping it does the same
    /// without waiting.
    ///
    /// # Errors
    ///
    /// [`SandboxError::Store`] when the store could not remove it (it is
    /// gone from this server all the same).
    pub async fn remove(self) -> Result<(), SandboxError> {
        // Removed here, waiting: the drop then finds nothing left to do.
        match self.root.remove_sandbox(self.id, None).await {
            Ok(_) => Ok(()),
            Err(e) => Err(SandboxError::Store {
                reason: e.to_string(),
            }),
        }
    }
}

impl MockServer {
    /// A new sandbox of this server, for one test: its own base URL,
    /// clock, reset, faults and journal (see [`Sandbox`]). It lives until
    /// dropped, or until unused for the server's sandbox time to live
    /// (`--sandbox-ttl`, default an hour). It is made without waiting for
    /// the store; [`MockServer::create_sandbox`] waits, and is the one
    /// for a server that keeps its state in PostgreSQL.
    ///
    /// # Panics
    ///
    /// When the server has `--max-sandboxes` live already, or keeps its
    /// state in PostgreSQL (the other replicas would not find a sandbox
    /// made without waiting: use [`MockServer::create_sandbox`]). When the
    /// server no longer serves: the Tokio runtime it was started on has
    /// ended (see [`MockServer`]).
    pub fn sandbox(&self) -> Sandbox {
        self.assert_serving("sandbox");
        match self.controls.state.create_sandbox_now() {
            Ok((info, state)) => Sandbox::of(self, &info, state),
            Err(SandboxRefusal::Store) => panic!(
                "payments-mock-server: MockServer::sandbox() on a PostgreSQL store: use `server.create_sandbox().await`"
            ),
            Err(refusal) => panic!(
                "payments-mock-server: no sandbox: {}",
                SandboxError::of(refusal)
            ),
        }
    }

    /// A new sandbox of this server, as [`MockServer::sandbox`], written
    /// down by the store before this returns: on every store, PostgreSQL
    /// included, where every replica sharing the database serves it under
    /// its own base URL at once (`{replica}/sandboxes/{id}`).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use payments_mock_server::{MockServer, SandboxError};
    ///
    /// let mut config = payments_mock_server::Config::default();
    /// config.max_sandboxes = 1;
    /// let server = MockServer::builder().config(config).start().await?;
    /// let mine = server.create_sandbox().await?;
    /// assert!(mine.base_url().ends_with(&mine.id().to_string()));
    /// // The limit is an error to handle, not a panic.
    /// assert_eq!(server.create_sandbox().await.err(), Some(SandboxError::TooMany { max: 1 }));
    /// mine.remove().await?;
    /// assert!(server.create_sandbox().await.is_ok());
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// [`SandboxError::TooMany`] at `--max-sandboxes`;
    /// [`SandboxError::Store`] when the store could not write it.
    ///
    /// # Panics
    ///
    /// When the server no longer serves: the Tokio runtime it was started
    /// on has ended (see [`MockServer`]).
    pub async fn create_sandbox(&self) -> Result<Sandbox, SandboxError> {
        self.assert_serving("create_sandbox");
        let root = &self.controls.state;
        let (info, state) = root
            .create_sandbox(None, None, None)
            .await
            .map_err(SandboxError::of)?;
        Ok(Sandbox::of(self, &info, state))
    }
}
