//! [`Sandbox`]: a test's own part of a shared [`crate::MockServer`]
//! (CONTRACT section 19).

use uuid::Uuid;

use crate::mock_server::{Controls, MockServer};
use crate::state::AppState;

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

impl MockServer {
    /// A new sandbox of this server, for one test: its own base URL,
    /// clock, reset, faults and journal (see [`Sandbox`]). It lives until
    /// dropped, or until unused for the server's sandbox time to live
    /// (`--sandbox-ttl`, default an hour).
    ///
    /// # Panics
    ///
    /// When the server has `--max-sandboxes` live already, or keeps its
    /// state in PostgreSQL (it makes the sandbox without waiting, and the
    /// other replicas would not find it yet: make those with
    /// `POST /_mock/sandboxes`).
    pub fn sandbox(&self) -> Sandbox {
        let root = self.controls.state.clone();
        let (info, state) = match root.create_sandbox_now() {
            Ok(made) => made,
            Err(refusal) => panic!("payments-mock-server: no sandbox: {refusal:?}"),
        };
        Sandbox {
            controls: Controls::new(state, format!("{}/sandboxes/{}", self.base_url(), info.id)),
            id: info.id,
            root,
        }
    }
}
