//! The SQLite writer thread: jobs taken in batches, one transaction, one
//! commit, then the answers; and the journal's write-behind. What each job
//! does inside the transaction is in `writer/job.rs`.

use super::*;
use rows::*;

/// One job inside the transaction: its statements, effect and answer.
mod job;

/// The writer thread's state: the connection, the statements it runs for
/// nearly every job, and what to put back when a batch is rolled back.
///
/// Each view keeps the writer's clock offset, journal floor and journal
/// reservation as of the jobs it has run (committed or about to be):
/// `Shared::writer_offset`, `Shared::writer_reserved` and
/// `Shared::journal_floor`, the newest `seq` a reset has forgotten (a
/// journal job taken before that reset and run after it, the flusher and a
/// reset racing, writes only what is newer, so no entry from before a
/// reset comes back, not even after a restart).
pub(super) struct Writer<'c> {
    conn: &'c Connection,
    statements: Statements<'c>,
    /// The offsets, floors and reservations of the views the running
    /// batch changed, as they were before it.
    undo: Vec<(Arc<Shared>, i64, u64, u64)>,
    /// Whether the file is still the one opened; what the last commit did.
    watch: Arc<watch::Watch>,
    /// Whether the log was copied into the database file once the watch
    /// found the store's files removed or replaced.
    checkpointed: bool,
    /// Whether the last journal write failed: said once per outage, and
    /// once when a write succeeds again.
    journal_failing: bool,
}

/// The statements of creates and confirms, prepared on first use and
/// kept: `prepare_cached` hashed the text of each (the insert's is ~600
/// bytes) and cleared its bindings on every return to the cache, ~4k
/// instructions of a create's ~50k in the writer (BENCHMARKS.md, "The
/// fourth stop").
#[derive(Default)]
struct Statements<'c> {
    insert: Option<rusqlite::Statement<'c>>,
    confirm: Option<rusqlite::Statement<'c>>,
    select_id: Option<rusqlite::Statement<'c>>,
}

/// Runs one statement without parameters, prepared once per connection:
/// `execute_batch` parsed `SAVEPOINT job` and `RELEASE job` again for every
/// job, and `BEGIN` and `COMMIT` for every batch (BENCHMARKS.md, "Keeping
/// state").
fn step(conn: &Connection, sql: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(sql)?.execute([]).map(|_| ())
}

impl<'c> Writer<'c> {
    /// The writer of `conn`.
    pub(super) fn new(conn: &'c Connection, watch: Arc<watch::Watch>) -> Self {
        Self {
            conn,
            statements: Statements::default(),
            undo: Vec::new(),
            watch,
            checkpointed: false,
            journal_failing: false,
        }
    }

    /// A job that failed: answered with `error`; a journal write's
    /// entries are kept for the next one instead (a view's last
    /// [`CAPACITY`]), and the log says so once per outage (not for a lost
    /// or damaged file, which the watch says).
    fn failed(&mut self, view: &Shared, job: Job, error: &StoreError) {
        let Job::Journal { entries, .. } = job else {
            return fail(job, error);
        };
        view.keep_pending(entries);
        let said_by_watch = error.kind() == crate::domain::port::StoreErrorKind::Lost
            || error.reason().starts_with(DAMAGED);
        if !said_by_watch && !std::mem::replace(&mut self.journal_failing, true) {
            tracing::warn!(
                error = %error,
                "the request journal could not be written to the SQLite store: its entries are kept (each view's last 1,000) and written with the next write that succeeds, or at the stop; said once until then"
            );
        }
    }

    /// A journal write of `view` committed: the entries kept from failed
    /// ones up to `last_seq` went with it.
    fn journal_written(&mut self, view: &Shared, last_seq: u64) {
        view.pending_written(last_seq);
        if std::mem::replace(&mut self.journal_failing, false) {
            tracing::info!(
                "the request journal is written to the SQLite store again, with the entries kept while it could not be"
            );
        }
    }

    /// Once the store's files are found removed or replaced: copies the
    /// write-ahead log, still open here, into the database file, so that
    /// what was answered before survives a restart even when only the log
    /// was removed (it lived in the removed log alone, and a `kill -9`
    /// then lost it). Once: nothing is committed after.
    fn keep_what_was_answered(&mut self) {
        if std::mem::replace(&mut self.checkpointed, true) {
            return;
        }
        let copied = self
            .conn
            .query_row("PRAGMA wal_checkpoint(FULL)", [], |r| r.get::<_, i64>(0));
        match copied {
            Ok(0) => {}
            Ok(_) => tracing::warn!(
                "the SQLite store's log could not be copied whole into its file (readers busy)"
            ),
            Err(e) => {
                tracing::warn!(error = %e, "the SQLite store's log could not be copied into its file")
            }
        }
    }

    /// Notes `view`'s offset and floor before the batch changes them.
    fn changing(&mut self, view: &Arc<Shared>) {
        if !self.undo.iter().any(|(v, ..)| Arc::ptr_eq(v, view)) {
            self.undo.push((
                Arc::clone(view),
                view.writer_offset.load(Ordering::SeqCst),
                view.journal_floor.load(Ordering::SeqCst),
                view.writer_reserved.load(Ordering::SeqCst),
            ));
        }
    }

    /// Puts back what the batch changed in the views' offsets and floors.
    fn undo(&mut self) {
        for (view, offset, floor, reserved) in self.undo.drain(..).rev() {
            view.writer_offset.store(offset, Ordering::SeqCst);
            view.journal_floor.store(floor, Ordering::SeqCst);
            view.writer_reserved.store(reserved, Ordering::SeqCst);
        }
    }

    pub(super) fn run(mut self, mut jobs: mpsc::Receiver<Sent>) {
        let mut batch = Vec::with_capacity(BATCH);
        while let Some(first) = jobs.blocking_recv() {
            batch.push(first);
            while batch.len() < BATCH {
                match jobs.try_recv() {
                    Ok(job) => batch.push(job),
                    Err(_) => break,
                }
            }
            self.commit(&mut batch);
        }
    }

    /// Runs `batch` in one transaction and answers each job after the
    /// commit (or with the failure, when it fails).
    ///
    /// The jobs first run one after another without savepoints: a
    /// savepoint and its release per job cost more than a create's own
    /// insert, and nearly always nothing fails. When a job does fail, the
    /// transaction is rolled back (nothing has been answered or applied
    /// yet) and the batch runs again with each job in its own savepoint, so
    /// that the failure is that job's alone.
    ///
    /// The store's file is checked to be the one opened before the
    /// commit (a batch for a removed file is rolled back) and after it,
    /// before any answer (a file removed while it committed): an answer
    /// never reports a change that a restart would not find.
    pub(super) fn commit(&mut self, batch: &mut Vec<Sent>) {
        self.undo.clear();
        if let Err(lost) = self.watch.still_ours() {
            self.keep_what_was_answered();
            for (view, job, _) in batch.drain(..) {
                self.failed(&view, job, &lost);
            }
            return;
        }
        let mut run = self.run_batch(batch, false);
        if matches!(run, Err(Stop::JobFailed)) {
            self.undo();
            run = self.run_batch(batch, true);
        }
        let run = run
            .and_then(|done| match self.watch.still_ours() {
                Ok(()) => Ok(done),
                Err(lost) => Err(Stop::Batch(lost)),
            })
            .and_then(|done| match step(self.conn, "COMMIT") {
                Ok(()) => Ok(done),
                Err(e) => Err(Stop::Batch(store_error(&e))),
            });
        let run = match run {
            Ok(done) => match self.watch.still_ours() {
                // Committed to a file no restart will open: not kept.
                Err(lost) => Err(Stop::Batch(lost)),
                Ok(()) => Ok(done),
            },
            Err(stop) => Err(stop),
        };
        let done = match run {
            Ok(done) => done,
            Err(stop) => {
                self.roll_back();
                self.undo();
                let error = match stop {
                    Stop::Batch(error) => {
                        if error.kind() == crate::domain::port::StoreErrorKind::Lost {
                            self.keep_what_was_answered();
                        }
                        self.watch.committed(Err(&error));
                        error
                    }
                    Stop::JobFailed => {
                        StoreError::new("a job failed with each job in its own savepoint")
                    }
                };
                for (view, job, _) in batch.drain(..) {
                    self.failed(&view, job, &error);
                }
                return;
            }
        };
        self.watch.committed(Ok(()));
        // The copies of changed rows go before any answer does.
        for ((view, job, _), (effect, _)) in batch.iter().zip(&done) {
            let Some(cache) = view.cache.as_ref().filter(|_| effect.is_ok()) else {
                continue;
            };
            match job {
                Job::Confirm { id, .. } => cache.changed(*id),
                Job::Decide { .. } | Job::Reset { .. } => cache.changed_all(),
                Job::Seed { .. }
                | Job::Create { .. }
                | Job::Advance { .. }
                | Job::SaveSettings { .. }
                | Job::Journal { .. }
                | Job::Reserve { .. }
                | Job::KeepSandbox { .. }
                | Job::Probe { .. }
                | Job::ForgetSandbox { .. }
                | Job::RenewSandbox { .. } => {}
            }
        }
        for ((view, job, _), (effect, outcome)) in batch.drain(..).zip(done) {
            match (&effect, &job) {
                (Ok(effect), Job::Journal { last_seq, .. }) => {
                    view.apply(*effect);
                    self.journal_written(&view, *last_seq);
                }
                (Ok(effect), _) => view.apply(*effect),
                (Err(error), _) => {
                    // A damaged file: said once, by the watch.
                    self.watch.unreadable(error);
                    self.failed(&view, job, error);
                    continue;
                }
            }
            answer(job, effect, outcome);
        }
    }

    /// Runs `jobs` in one transaction, up to but not including its commit.
    /// Without savepoints (`isolated` false), the first failing job rolls
    /// the transaction back and ends the run with [`Stop::JobFailed`]; with
    /// them, a failing job's changes are undone and its failure is its
    /// answer. Either way, when SQLite has rolled the whole transaction
    /// back by itself (a full disk, an I/O error, a `RAISE(ROLLBACK)`),
    /// nothing of the batch stands and the run ends with [`Stop::Batch`].
    ///
    /// Once it holds the write lock, it claims each job before running
    /// any (`claim.rs`): a job whose caller stopped waiting (for the lock,
    /// or in the channel) is dropped unrun, since its answer already said
    /// nothing was written.
    fn run_batch(&mut self, jobs: &mut Vec<Sent>, isolated: bool) -> Result<Vec<Done>, Stop> {
        step(self.conn, "BEGIN IMMEDIATE").map_err(|e| Stop::Batch(store_error(&e)))?;
        jobs.retain(|(_, _, claim)| claim.start());
        let mut done = Vec::with_capacity(jobs.len());
        for (view, job, _) in jobs.iter() {
            if isolated {
                let _ = step(self.conn, "SAVEPOINT job");
            }
            match self.apply(view, job) {
                Ok((effect, outcome)) => {
                    if isolated {
                        let _ = step(self.conn, "RELEASE job");
                    }
                    done.push((Ok(effect), outcome));
                }
                Err(error) => {
                    if self.conn.is_autocommit() {
                        return Err(Stop::Batch(error));
                    }
                    if !isolated {
                        self.roll_back();
                        return Err(Stop::JobFailed);
                    }
                    let _ = self.conn.execute_batch("ROLLBACK TO job; RELEASE job");
                    done.push((Err(error), Outcome::None));
                }
            }
        }
        Ok(done)
    }

    /// Rolls back the open transaction, if SQLite has not already.
    fn roll_back(&self) {
        if !self.conn.is_autocommit() {
            let _ = step(self.conn, "ROLLBACK");
        }
    }
}

/// A job's result inside the transaction: what it changes in the process
/// and what it answers, both held until the commit.
type Done = (Result<Effect, StoreError>, Outcome);

/// Why a run of a batch stopped before its commit.
enum Stop {
    /// A job failed while the jobs ran without savepoints: the transaction
    /// was rolled back, and the batch runs again with them.
    JobFailed,
    /// Nothing of the batch can stand: every job is answered with this.
    Batch(StoreError),
}

/// A job's answer, made inside the transaction and sent after the commit.
pub(super) enum Outcome {
    None,
    Done,
    Created(Result<Record, InsertRefusal>),
    Confirmed(Transition),
    Decided(Result<Decided, PayerRefusal>),
    Clock(Result<ClockReading, NoRoom>),
    Seeded(Result<(), InsertRefusal>),
}

pub(super) fn fail(job: Job, error: &StoreError) {
    answer(job, Err(error.clone()), Outcome::None);
}

pub(super) fn answer(job: Job, effect: Result<Effect, StoreError>, outcome: Outcome) {
    fn send<T>(reply: Reply<T>, value: Result<T, StoreError>) {
        let _ = reply.send(value);
    }
    let missing = || StoreError::new("the writer gave no answer");
    match (job, effect, outcome) {
        (Job::Create { reply, .. }, Ok(_), Outcome::Created(r)) => send(reply, Ok(r)),
        (Job::Seed { reply, .. }, Ok(_), Outcome::Seeded(r)) => send(reply, Ok(r)),
        (Job::Confirm { reply, .. }, Ok(_), Outcome::Confirmed(r)) => send(reply, Ok(r)),
        (Job::Decide { reply, .. }, Ok(_), Outcome::Decided(r)) => send(reply, Ok(r)),
        (Job::Advance { reply, .. }, Ok(_), Outcome::Clock(r)) => send(reply, Ok(r)),
        (
            Job::Reset { reply, .. }
            | Job::SaveSettings { reply, .. }
            | Job::KeepSandbox { reply, .. }
            | Job::Probe { reply }
            | Job::Reserve { reply }
            | Job::ForgetSandbox {
                reply: Some(reply), ..
            },
            Ok(_),
            Outcome::Done,
        ) => {
            send(reply, Ok(()));
        }
        // Written behind the answers: nobody waits for it, nothing to say.
        (
            Job::Journal { .. } | Job::RenewSandbox { .. } | Job::ForgetSandbox { reply: None },
            Ok(_),
            _,
        ) => {}
        (job, effect, _) => {
            let error = effect.err().unwrap_or_else(missing);
            match job {
                Job::Create { reply, .. } => send(reply, Err(error)),
                Job::Seed { reply, .. } => send(reply, Err(error)),
                Job::Confirm { reply, .. } => send(reply, Err(error)),
                Job::Decide { reply, .. } => send(reply, Err(error)),
                Job::Advance { reply, .. } => send(reply, Err(error)),
                Job::Reset { reply, .. }
                | Job::SaveSettings { reply, .. }
                | Job::KeepSandbox { reply, .. }
                | Job::Probe { reply }
                | Job::Reserve { reply }
                | Job::ForgetSandbox {
                    reply: Some(reply), ..
                } => {
                    send(reply, Err(error));
                }
                // Kept for the next write and said by the writer
                // (`Writer::failed`).
                Job::Journal { .. } => {}
                // Its file lost or damaged: said once, by the watch.
                Job::RenewSandbox { .. } | Job::ForgetSandbox { reply: None }
                    if error.kind() == crate::domain::port::StoreErrorKind::Lost
                        || error.reason().starts_with(DAMAGED) => {}
                Job::RenewSandbox { .. } | Job::ForgetSandbox { reply: None } => {
                    tracing::warn!(error = %error, "a sandbox's expiry or removal could not be written to the SQLite store");
                }
            }
        }
    }
}

impl Shared {
    pub(super) fn apply(&self, effect: Effect) {
        match effect {
            Effect::None => {}
            Effect::Created => {
                self.count.fetch_add(1, Ordering::SeqCst);
            }
            Effect::Clock(offset) => self.clock.set_offset_nanos(offset),
            Effect::Reserved(upto) => {
                self.journal_reserved.fetch_max(upto, Ordering::SeqCst);
            }
            Effect::Reset { erase, floor } => {
                self.pending_written(if erase { u64::MAX } else { floor });
                self.count.store(0, Ordering::SeqCst);
                self.clock.reset();
                if erase {
                    self.journal.erase();
                    self.journal_reserved.store(0, Ordering::SeqCst);
                    self.journal_written
                        .store(self.journal.last_seq(), Ordering::SeqCst);
                } else {
                    // Entries recorded while the reset committed are newer
                    // than the floor: kept, and still to be written.
                    self.journal.clear_through(floor);
                    self.journal_written.fetch_max(floor, Ordering::SeqCst);
                }
            }
        }
    }

    /// The journal entries kept from failed writes, oldest first.
    pub(super) fn pending(&self) -> std::sync::MutexGuard<'_, Vec<JournalEntry>> {
        self.journal_pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Keeps `entries`, whose write failed, for the next write: the last
    /// [`CAPACITY`] of those kept, as the journal keeps.
    fn keep_pending(&self, entries: Vec<JournalEntry>) {
        let mut pending = self.pending();
        pending.extend(entries);
        pending.sort_by_key(|e| e.seq);
        pending.dedup_by_key(|e| e.seq);
        let over = pending.len().saturating_sub(CAPACITY);
        pending.drain(..over);
    }

    /// Forgets the kept entries numbered up to `last_seq` (written, or
    /// gone with a reset).
    fn pending_written(&self, last_seq: u64) {
        self.pending().retain(|e| e.seq > last_seq);
    }

    /// The journal entries not yet handed to the writer (at most the last
    /// [`CAPACITY`]), and the newest number.
    pub(super) fn unwritten(&self) -> Option<(Vec<JournalEntry>, u64)> {
        let written = self.journal_written.load(Ordering::SeqCst);
        let last = self.journal.last_seq();
        if last <= written {
            return None;
        }
        let entries = self.journal.since(written, CAPACITY);
        self.journal_written.store(last, Ordering::SeqCst);
        Some((entries, last))
    }
}

/// The journal's write-behind: every [`JOURNAL_EVERY`], what is new in
/// each view, and what a failed write left (`Writer::failed`). The last pass, as the file closes, also writes each view's
/// exact last number over its reservation ([`JOURNAL_AHEAD`]): nothing
/// more is numbered, and a clean restart numbers on without a gap.
pub(super) fn flush_journal(views: &Views, jobs: &mpsc::Sender<Sent>) {
    loop {
        let closing = views.stop.load(Ordering::SeqCst);
        for view in views.all() {
            let job = match view.unwritten() {
                Some((entries, last_seq)) => Job::Journal {
                    entries,
                    last_seq,
                    closing,
                },
                // Nothing new, but entries kept from a failed write (or,
                // at the stop, a reservation past the last number).
                None if !view.pending().is_empty()
                    || (closing
                        && view.journal_reserved.load(Ordering::SeqCst)
                            > view.journal.last_seq()) =>
                {
                    Job::Journal {
                        entries: Vec::new(),
                        last_seq: view.journal.last_seq(),
                        closing,
                    }
                }
                None => continue,
            };
            let _ = jobs.blocking_send((view, job, claim::Claim::default()));
        }
        if closing {
            return;
        }
        std::thread::park_timeout(JOURNAL_EVERY);
    }
}

#[cfg(test)]
mod pending_tests;
#[cfg(test)]
pub(super) mod tests;
