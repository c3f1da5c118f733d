//! A start's waits on threads (SQLite's writer, the store of a server
//! just dropped closing) measured in real time, also on a paused Tokio
//! clock (`#[tokio::test(start_paused = true)]`).
//!
//! A paused clock jumps to the next timer whenever its runtime has nothing
//! to run: a start waiting for SQLite's writer thread saw the store's 4 s
//! limit pass at once ("SQLite did not commit within 4 s"), and its wait
//! for a dropped server's store end before that store had closed. Tokio
//! does not move a paused clock while a blocking task of the runtime runs
//! (`spawn_blocking`, on a current-thread runtime, the only one a clock
//! can be paused on), so a start holds one that waits out at most the
//! limit in real time: past it, the clock moves on and the limit's timer
//! fires, as it would have in real time.

use std::sync::mpsc;
use std::time::Duration;

/// Held while a start waits; its blocking task ends when it is dropped.
pub(super) struct RealTime {
    _done: mpsc::Sender<()>,
}

impl RealTime {
    /// Keeps a paused clock still for at most `within` of real time, or
    /// until the guard is dropped; on a clock that is not paused, a thread
    /// of the blocking pool waits meanwhile. Only on a current-thread
    /// runtime (none elsewhere: a multi-thread runtime's clock cannot be
    /// paused).
    pub(super) fn hold(within: Duration) -> Option<Self> {
        let flavor = tokio::runtime::Handle::try_current().ok()?.runtime_flavor();
        if flavor != tokio::runtime::RuntimeFlavor::CurrentThread {
            return None;
        }
        let (done, wait) = mpsc::channel::<()>();
        // Not awaited: it ends at the drop (disconnected) or at `within`.
        drop(tokio::task::spawn_blocking(move || {
            let _ = wait.recv_timeout(within);
        }));
        Some(Self { _done: done })
    }
}
