//! A duplicate of the server's listening socket, kept beside the serving
//! task, so that dropping a [`crate::MockServer`] stops the port listening
//! at once (on Linux): the listener itself lives in the serving task,
//! which may not run again before the test's next connect (it then
//! accepted that connect, or served it from the backlog). Only for a
//! socket the server bound itself: one the caller supplied may have other
//! descriptors the caller still uses, which a shutdown would stop too.

use std::net::{Shutdown, TcpListener};
use std::sync::{Arc, Mutex, PoisonError};

/// The duplicate, until the server is dropped or its task ends.
#[derive(Debug, Clone, Default)]
pub(super) struct Listening(Arc<Mutex<Option<TcpListener>>>);

impl Listening {
    /// A duplicate of `listener`'s socket (none when no descriptor is left
    /// for it: a drop then stops the port as before, once the serving
    /// task runs).
    pub(super) fn of(listener: &TcpListener) -> Self {
        Self(Arc::new(Mutex::new(listener.try_clone().ok())))
    }

    fn take(&self) -> Option<TcpListener> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take()
    }

    /// Stops the socket listening, now: on Linux a listening socket shut
    /// down stops listening, the connections waiting in its backlog are
    /// reset, and every connect after it is refused (elsewhere this may do
    /// nothing: the port then stops once the serving task has dropped its
    /// listener). Connections already accepted are not touched.
    pub(super) fn shut(&self) {
        if let Some(socket) = self.take() {
            let _ = socket2::SockRef::from(&socket).shutdown(Shutdown::Both);
        }
    }

    /// Lets the duplicate go without shutting the socket down: the
    /// serving task's listener keeps it, until that task drops it.
    pub(super) fn release(&self) {
        drop(self.take());
    }

    /// Lets the duplicate go when the returned guard is dropped: moved
    /// into the serving task, it goes with the task (at its end, or when
    /// its runtime ends), so the duplicate never keeps a port listening
    /// that nobody serves.
    pub(super) fn released_with_task(&self) -> ReleasedWithTask {
        ReleasedWithTask(self.clone())
    }
}

/// See [`Listening::released_with_task`].
pub(super) struct ReleasedWithTask(Listening);

impl Drop for ReleasedWithTask {
    fn drop(&mut self) {
        self.0.release();
    }
}
