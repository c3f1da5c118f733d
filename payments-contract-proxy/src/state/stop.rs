//! The stop's cut-off: when the stop's grace period ends, every exchange
//! still under way is told ([`Stop::cut_off`]), answers its client with
//! the proxy's own 502 and is recorded as such; the stop waits, briefly,
//! until none is open ([`Stop::settled`]) before it flushes the files.

use std::sync::Arc;

use tokio::sync::watch;

/// The cut-off signal and the count of exchanges under way.
#[derive(Debug)]
pub(crate) struct Stop {
    cut: watch::Sender<bool>,
    open: Arc<watch::Sender<usize>>,
}

impl Default for Stop {
    fn default() -> Self {
        Self {
            cut: watch::Sender::new(false),
            open: Arc::new(watch::Sender::new(0)),
        }
    }
}

/// One exchange under way: counted until it is dropped (answered and
/// recorded, or dropped with its connection).
#[derive(Debug)]
pub(crate) struct Open {
    cut: watch::Receiver<bool>,
    open: Arc<watch::Sender<usize>>,
}

impl Stop {
    /// An exchange begins.
    pub(crate) fn enter(&self) -> Open {
        self.open.send_modify(|n| *n += 1);
        Open {
            cut: self.cut.subscribe(),
            open: Arc::clone(&self.open),
        }
    }

    /// The grace period is over: every exchange under way is cut off.
    pub(crate) fn cut_off(&self) {
        self.cut.send_replace(true);
    }

    /// How many exchanges are under way.
    pub(crate) fn open(&self) -> usize {
        *self.open.borrow()
    }

    /// Resolves once no exchange is under way.
    pub(crate) async fn settled(&self) {
        let mut open = self.open.subscribe();
        // The sender is `self`'s: it outlives this wait.
        let _ = open.wait_for(|n| *n == 0).await;
    }
}

impl Open {
    /// Resolves when the stop cuts the exchange off (never before).
    pub(crate) async fn cut(&mut self) {
        if self.cut.wait_for(|cut| *cut).await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        self.open.send_modify(|n| *n = n.saturating_sub(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_exchange_is_told_of_the_cut_and_the_stop_sees_it_end() {
        let stop = Stop::default();
        let mut open = stop.enter();
        assert_eq!(stop.open(), 1);
        use futures::FutureExt as _;
        assert!(
            open.cut().now_or_never().is_none(),
            "not cut before the stop says so"
        );
        stop.cut_off();
        open.cut().await;
        drop(open);
        stop.settled().await;
        assert_eq!(stop.open(), 0);
    }
}
