//! Whether a job handed to the writer may still run, and the wait for its
//! answer.
//!
//! A job waits in the writer's channel, then for the write lock
//! (`BEGIN IMMEDIATE`, up to the busy timeout), before it runs. A caller
//! that stops waiting (its [`STORE_TIMEOUT`](super::STORE_TIMEOUT)) answers
//! that nothing was written, so the job must then never run: before, it
//! stayed in the channel and committed after its 503 (a confirm answered
//! "did not commit" was SUCCESSFUL a moment later). Each waited job has a
//! state that one side claims: the writer, `Pending` to `Running`, once it
//! holds the write lock and before the job's first statement; the caller,
//! `Pending` to `Abandoned`, when its time is up. Whoever claims first
//! decides: an abandoned job is dropped by the writer unrun; a caller that
//! finds its job running waits on for the real answer (the job's own
//! statements and the commit, in a transaction that already holds the
//! lock).

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use tokio::sync::oneshot;
use tokio::time::Instant;

use super::StoreError;

const PENDING: u8 = 0;
const RUNNING: u8 = 1;
const ABANDONED: u8 = 2;

/// A job's state between the writer and its caller; none for a job
/// written behind the answers (nobody waits for it: it always runs).
#[derive(Debug, Clone, Default)]
pub(super) struct Claim(Option<Arc<AtomicU8>>);

impl Claim {
    /// The state of a job its caller waits for: pending.
    pub(super) fn waited() -> Self {
        Self(Some(Arc::new(AtomicU8::new(PENDING))))
    }

    /// The writer's side, once it holds the write lock: whether the job
    /// runs (it was not abandoned; claiming it again, for a batch run a
    /// second time, says yes again).
    pub(super) fn start(&self) -> bool {
        let Some(state) = &self.0 else {
            return true;
        };
        match state.compare_exchange(PENDING, RUNNING, Ordering::SeqCst, Ordering::SeqCst) {
            Ok(_) => true,
            Err(now) => now == RUNNING,
        }
    }

    /// The caller's side, when its time is up: whether the job will never
    /// run (false: the writer has started it).
    pub(super) fn abandon(&self) -> bool {
        let Some(state) = &self.0 else {
            return false;
        };
        match state.compare_exchange(PENDING, ABANDONED, Ordering::SeqCst, Ordering::SeqCst) {
            Ok(_) => true,
            Err(now) => now == ABANDONED,
        }
    }
}

/// The writer is gone: no answer will come.
pub(super) fn writer_gone() -> StoreError {
    StoreError::new("the SQLite writer has stopped")
}

/// Waits for the answer of a job claimed by `claim` until `deadline`;
/// then `late` when the job is abandoned unrun, or the real answer when
/// the writer has already started it.
pub(super) async fn answer<T>(
    claim: &Claim,
    deadline: Instant,
    mut answer: oneshot::Receiver<Result<T, StoreError>>,
    late: impl FnOnce() -> StoreError,
) -> Result<T, StoreError> {
    match tokio::time::timeout_at(deadline, &mut answer).await {
        Ok(answered) => answered.map_err(|_| writer_gone())?,
        Err(_) if claim.abandon() => Err(late()),
        Err(_) => answer.await.map_err(|_| writer_gone())?,
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn the_first_to_claim_decides() {
        let started = Claim::waited();
        assert!(started.start());
        assert!(!started.abandon(), "a running job cannot be abandoned");
        assert!(started.start(), "a second run of its batch runs it again");

        let left = Claim::waited();
        assert!(left.abandon());
        assert!(!left.start(), "an abandoned job never runs");
        assert!(left.abandon());

        let behind = Claim::default();
        assert!(behind.start());
        assert!(!behind.abandon());
    }

    fn late() -> StoreError {
        StoreError::new("late")
    }

    /// The writer starts the job just as its caller's time is up: the
    /// caller waits on for the real answer instead of saying nothing was
    /// written.
    #[tokio::test(start_paused = true)]
    async fn a_job_started_before_the_deadline_is_answered_by_its_result() {
        let claim = Claim::waited();
        let (reply, receiver) = oneshot::channel::<Result<u32, StoreError>>();
        let deadline = Instant::now() + Duration::from_millis(50);
        assert!(claim.start());
        let waiting = tokio::spawn({
            let claim = claim.clone();
            async move { answer(&claim, deadline, receiver, late).await }
        });
        tokio::time::advance(Duration::from_secs(10)).await;
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished(), "gave up on a running job");
        reply.send(Ok(7)).expect("the caller still waits");
        let answered = waiting.await.expect("the wait");
        assert_eq!(answered.expect("its result"), 7);
    }

    /// A job still pending at the deadline is abandoned: the caller says
    /// so, and the writer's claim after it fails.
    #[tokio::test(start_paused = true)]
    async fn a_job_pending_at_the_deadline_is_abandoned() {
        let claim = Claim::waited();
        let (_reply, receiver) = oneshot::channel::<Result<u32, StoreError>>();
        let deadline = Instant::now() + Duration::from_millis(50);
        let answered = answer(&claim, deadline, receiver, late).await;
        assert_eq!(
            answered.expect_err("abandoned").to_string(),
            late().to_string()
        );
        assert!(!claim.start());
    }
}
