//! The SQLite writer thread: jobs taken in batches, one transaction, one
//! commit, then the answers; and the journal's write-behind.

use super::*;
use rows::*;

/// The writer thread's state: the connection, the statements it runs for
/// nearly every job, and what to put back when a batch is rolled back.
///
/// Each view keeps the writer's clock offset and journal floor as of the
/// jobs it has run (committed or about to be): `Shared::writer_offset` and
/// `Shared::journal_floor`, the newest `seq` a reset has forgotten (a
/// journal job taken before that reset and run after it, the flusher and a
/// reset racing, writes only what is newer, so no entry from before a
/// reset comes back, not even after a restart).
pub(super) struct Writer<'c> {
    conn: &'c Connection,
    statements: Statements<'c>,
    /// The offsets and floors of the views the running batch changed, as
    /// they were before it.
    undo: Vec<(Arc<Shared>, i64, u64)>,
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

/// `slot`'s statement, prepared from `sql` on `conn` if it is not yet.
fn prepared<'s, 'c>(
    slot: &'s mut Option<rusqlite::Statement<'c>>,
    conn: &'c Connection,
    sql: &str,
) -> Result<&'s mut rusqlite::Statement<'c>, StoreError> {
    if slot.is_none() {
        *slot = Some(conn.prepare(sql).map_err(|e| store_error(&e))?);
    }
    slot.as_mut()
        .ok_or_else(|| StoreError::new("a prepared statement went missing"))
}

/// Confirms a transaction of the sandbox `?11` that is still confirmable.
const CONFIRM: &str = "UPDATE mock_transactions SET confirmed_at = ?2, result = ?3, settles_at = ?4, \
     error_message = ?5, provider_reference = ?6, confirm_extra = ?7, \
     page_token = ?8, page_deadline = ?9 \
     WHERE id = ?1 AND sandbox = ?11 AND confirmed_at IS NULL AND expires_at > ?10";

/// Runs one statement without parameters, prepared once per connection:
/// `execute_batch` parsed `SAVEPOINT job` and `RELEASE job` again for every
/// job, and `BEGIN` and `COMMIT` for every batch (BENCHMARKS.md, "Keeping
/// state").
fn step(conn: &Connection, sql: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(sql)?.execute([]).map(|_| ())
}

impl<'c> Writer<'c> {
    /// The writer of `conn`.
    pub(super) fn new(conn: &'c Connection) -> Self {
        Self {
            conn,
            statements: Statements::default(),
            undo: Vec::new(),
        }
    }

    /// Notes `view`'s offset and floor before the batch changes them.
    fn changing(&mut self, view: &Arc<Shared>) {
        if !self.undo.iter().any(|(v, ..)| Arc::ptr_eq(v, view)) {
            self.undo.push((
                Arc::clone(view),
                view.writer_offset.load(Ordering::SeqCst),
                view.journal_floor.load(Ordering::SeqCst),
            ));
        }
    }

    /// Puts back what the batch changed in the views' offsets and floors.
    fn undo(&mut self) {
        for (view, offset, floor) in self.undo.drain(..).rev() {
            view.writer_offset.store(offset, Ordering::SeqCst);
            view.journal_floor.store(floor, Ordering::SeqCst);
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
    pub(super) fn commit(&mut self, batch: &mut Vec<Sent>) {
        self.undo.clear();
        let mut run = self.run_batch(batch, false);
        if matches!(run, Err(Stop::JobFailed)) {
            self.undo();
            run = self.run_batch(batch, true);
        }
        let run = run.and_then(|done| match step(self.conn, "COMMIT") {
            Ok(()) => Ok(done),
            Err(e) => Err(Stop::Batch(store_error(&e))),
        });
        let done = match run {
            Ok(done) => done,
            Err(stop) => {
                self.roll_back();
                self.undo();
                let error = match stop {
                    Stop::Batch(error) => error,
                    Stop::JobFailed => {
                        StoreError::new("a job failed with each job in its own savepoint")
                    }
                };
                for (_, job) in batch.drain(..) {
                    fail(job, &error);
                }
                return;
            }
        };
        // The copies of changed rows go before any answer does.
        for ((view, job), (effect, _)) in batch.iter().zip(&done) {
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
                | Job::KeepSandbox { .. }
                | Job::ForgetSandbox { .. }
                | Job::RenewSandbox { .. } => {}
            }
        }
        for ((view, job), (effect, outcome)) in batch.drain(..).zip(done) {
            if let Ok(effect) = &effect {
                view.apply(*effect);
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
    fn run_batch(&mut self, jobs: &[Sent], isolated: bool) -> Result<Vec<Done>, Stop> {
        step(self.conn, "BEGIN IMMEDIATE").map_err(|e| Stop::Batch(store_error(&e)))?;
        let mut done = Vec::with_capacity(jobs.len());
        for (view, job) in jobs {
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

    /// One job of `view` inside the transaction: what it changes in the
    /// process and what it answers.
    fn apply(&mut self, view: &Arc<Shared>, job: &Job) -> Result<(Effect, Outcome), StoreError> {
        let conn = self.conn;
        let key = view.key.as_slice();
        let now_of = |view: &Shared| Clock::at_offset(view.writer_offset.load(Ordering::SeqCst));
        match job {
            Job::Seed { record, .. } => {
                let statement = prepared(&mut self.statements.insert, conn, INSERT)?;
                let inserted =
                    insert(statement, key, &Row::of(record)).map_err(|e| store_error(&e))?;
                Ok(if inserted {
                    (Effect::Created, Outcome::Seeded(Ok(())))
                } else {
                    (
                        Effect::None,
                        Outcome::Seeded(Err(InsertRefusal::Duplicate(record.id))),
                    )
                })
            }
            Job::Create {
                new,
                initial,
                expiry,
                ..
            } => {
                let now = now_of(view);
                let id = id_at(now);
                let row = new_row(
                    id,
                    (**new).clone(),
                    *initial,
                    now,
                    crate::domain::clock::add(now, *expiry),
                );
                let statement = prepared(&mut self.statements.insert, conn, INSERT)?;
                let inserted = insert(statement, key, &row).map_err(|e| store_error(&e))?;
                if inserted {
                    let record = row.into_record()?;
                    Ok((Effect::Created, Outcome::Created(Ok(record))))
                } else {
                    let existing: Vec<u8> = conn
                        .query_row(
                            "SELECT id FROM mock_transactions WHERE sandbox = ?3 AND merchant_id = ?1 AND reference_no = ?2",
                            params![new.merchant_id.as_bytes().as_slice(), new.reference_no, key],
                            |r| r.get(0),
                        )
                        .map_err(|e| store_error(&e))?;
                    let existing = uuid_of(&existing).map_err(|e| store_error(&e))?;
                    Ok((
                        Effect::None,
                        Outcome::Created(Err(InsertRefusal::Duplicate(existing))),
                    ))
                }
            }
            Job::Confirm {
                id,
                now,
                confirmation,
                ..
            } => {
                let c = ConfirmColumns::of(confirmation);
                let changed = prepared(&mut self.statements.confirm, conn, CONFIRM)?
                    .execute(params![
                        id.as_bytes().as_slice(),
                        c.confirmed_at,
                        c.result,
                        c.settles_at,
                        c.error_message,
                        c.provider_reference,
                        c.confirm_extra,
                        c.page_token,
                        c.page_deadline,
                        millis(*now),
                        key,
                    ])
                    .map_err(|e| store_error(&e))?;
                let select = prepared(&mut self.statements.select_id, conn, SELECT_ID)?;
                let transition = match select_id_with(select, key, *id)? {
                    None => Transition::Missing,
                    Some(record) if changed == 1 => Transition::Moved(record),
                    Some(record) => Transition::Unmoved(record),
                };
                Ok((Effect::None, Outcome::Confirmed(transition)))
            }
            Job::Decide {
                key: page,
                scope,
                action,
                now,
                ..
            } => {
                let Some(record) = select_page(conn, key, page)?
                    .filter(|r| scope.is_none_or(|m| m == r.fields.merchant_id))
                else {
                    return Ok((Effect::None, Outcome::Decided(Err(PayerRefusal::NotFound))));
                };
                let Some(payment_page) = record.payment_page() else {
                    let refusal = match page {
                        PageKey::Token(_) => PayerRefusal::NotFound,
                        PageKey::Transaction(_) => PayerRefusal::NoPaymentPage,
                    };
                    return Ok((Effect::None, Outcome::Decided(Err(refusal))));
                };
                let decided_now = payment_page.is_open(*now);
                let id = record.id.as_bytes().to_vec();
                if decided_now {
                    conn.execute(
                        "UPDATE mock_transactions SET decision = ?2, decided_at = ?3 WHERE id = ?1",
                        params![id, action.as_str(), millis(*now)],
                    )
                } else {
                    conn.execute(
                        "UPDATE mock_transactions SET later_submits = MIN(later_submits + 1, 4294967295) WHERE id = ?1",
                        params![id],
                    )
                }
                .map_err(|e| store_error(&e))?;
                let record = select_id(conn, key, record.id)?
                    .ok_or_else(|| StoreError::new("a decided transaction vanished"))?;
                Ok((
                    Effect::None,
                    Outcome::Decided(Ok(Decided {
                        record,
                        decided_now,
                    })),
                ))
            }
            Job::Advance { by, .. } => {
                self.changing(view);
                let add = i64::try_from(by.as_nanos()).unwrap_or(i64::MAX);
                let offset = view.writer_offset.load(Ordering::SeqCst).saturating_add(add);
                match view.sandbox {
                    None => conn.execute(
                        "UPDATE mock_clock SET offset_nanos = ?1 WHERE id = 1",
                        [offset],
                    ),
                    Some(_) => conn.execute(
                        "UPDATE mock_sandboxes SET offset_nanos = ?1 WHERE id = ?2",
                        params![offset, key],
                    ),
                }
                .map_err(|e| store_error(&e))?;
                view.writer_offset.store(offset, Ordering::SeqCst);
                Ok((
                    Effect::Clock(offset),
                    Outcome::Clock(ClockReading {
                        now: now_of(view),
                        offset_nanos: offset,
                    }),
                ))
            }
            Job::Reset { erase, .. } => {
                self.changing(view);
                // Everything recorded up to here goes; what is recorded from
                // now on stays (in the process and in the file alike).
                let floor = view.journal.last_seq();
                let floor_sql = i64::try_from(floor).unwrap_or(i64::MAX);
                if *erase {
                    // `--fresh`, before serving: every sandbox goes too.
                    conn.execute_batch(
                        "DELETE FROM mock_transactions; DELETE FROM mock_journal; \
                         DELETE FROM mock_sandboxes; DELETE FROM mock_settings; \
                         UPDATE mock_clock SET offset_nanos = 0 WHERE id = 1;",
                    )
                } else {
                    conn.execute(
                        "DELETE FROM mock_transactions WHERE sandbox = ?1",
                        [key],
                    )
                    .and_then(|_| conn.execute("DELETE FROM mock_journal WHERE sandbox = ?1", [key]))
                    .and_then(|_| match view.sandbox {
                        None => conn
                            .execute("UPDATE mock_clock SET offset_nanos = 0 WHERE id = 1", [])
                            .and_then(|_| {
                                put_setting(conn, "journal_last_seq", &floor.to_string())
                            }),
                        Some(_) => conn
                            .execute(
                                "UPDATE mock_sandboxes SET offset_nanos = 0, journal_last_seq = ?1 WHERE id = ?2",
                                params![floor_sql, key],
                            )
                            .map(|_| ()),
                    })
                }
                .map_err(|e| store_error(&e))?;
                view.writer_offset.store(0, Ordering::SeqCst);
                // `--fresh` numbers from 1 again, before serving: no floor.
                view.journal_floor
                    .store(if *erase { 0 } else { floor }, Ordering::SeqCst);
                Ok((
                    Effect::Reset {
                        erase: *erase,
                        floor,
                    },
                    Outcome::Done,
                ))
            }
            Job::SaveSettings { settings, .. } => {
                let expiry = crate::store::stored_settings::expiry_millis(settings).to_string();
                for (key, value) in [
                    ("catalog", settings.catalog.to_toml()),
                    ("expiry_ms", expiry),
                ] {
                    conn.execute(
                        "INSERT INTO mock_settings (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO NOTHING",
                        params![key, value],
                    )
                    .map_err(|e| store_error(&e))?;
                }
                Ok((Effect::None, Outcome::Done))
            }
            Job::Journal { entries, last_seq } => {
                // A removed sandbox's last entries are not written back.
                if view.gone.load(Ordering::SeqCst) {
                    return Ok((Effect::None, Outcome::Done));
                }
                let mut insert = conn
                    .prepare_cached(&format!(
                        "INSERT OR REPLACE INTO mock_journal (sandbox, {JOURNAL_COLUMNS}) \
                         VALUES (?13, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)"
                    ))
                    .map_err(|e| store_error(&e))?;
                let floor = view.journal_floor.load(Ordering::SeqCst);
                for entry in entries.iter().filter(|e| e.seq > floor) {
                    let r = JournalRow::of(entry);
                    insert
                        .execute(params![
                            r.seq,
                            r.at,
                            r.method,
                            r.path,
                            r.query,
                            r.headers,
                            r.body,
                            r.status,
                            r.error_code,
                            r.request_id,
                            r.fault,
                            r.replica,
                            key
                        ])
                        .map_err(|e| store_error(&e))?;
                }
                let keep_from =
                    i64::try_from(last_seq.saturating_sub(CAPACITY as u64)).unwrap_or(0);
                let last = i64::try_from(*last_seq).unwrap_or(i64::MAX);
                conn.execute(
                    "DELETE FROM mock_journal WHERE sandbox = ?2 AND seq <= ?1",
                    params![keep_from, key],
                )
                .and_then(|_| match view.sandbox {
                    None => put_setting(conn, "journal_last_seq", &last_seq.to_string()),
                    Some(_) => conn
                        .execute(
                            "UPDATE mock_sandboxes SET journal_last_seq = ?1 WHERE id = ?2",
                            params![last, key],
                        )
                        .map(|_| ()),
                })
                .map_err(|e| store_error(&e))?;
                Ok((Effect::None, Outcome::Done))
            }
            Job::KeepSandbox { kept, .. } => {
                conn.execute(
                    "INSERT INTO mock_sandboxes (id, owner, label, created_at, ttl_ms, expires_at) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    params![
                        kept.id.as_bytes().as_slice(),
                        kept.owner.map(|o| o.as_bytes().to_vec()),
                        kept.label,
                        millis(kept.created_at),
                        i64::try_from(kept.ttl.as_millis()).unwrap_or(i64::MAX),
                        millis(kept.expires_at),
                    ],
                )
                .map_err(|e| store_error(&e))?;
                Ok((Effect::None, Outcome::Done))
            }
            Job::ForgetSandbox { .. } => {
                if view.sandbox.is_none() {
                    return Err(StoreError::new("the root is not a sandbox to remove"));
                }
                view.gone.store(true, Ordering::SeqCst);
                conn.execute("DELETE FROM mock_transactions WHERE sandbox = ?1", [key])
                    .and_then(|_| conn.execute("DELETE FROM mock_journal WHERE sandbox = ?1", [key]))
                    .and_then(|_| conn.execute("DELETE FROM mock_sandboxes WHERE id = ?1", [key]))
                    .map_err(|e| store_error(&e))?;
                Ok((Effect::None, Outcome::Done))
            }
            Job::RenewSandbox { expires_at } => {
                conn.execute(
                    "UPDATE mock_sandboxes SET expires_at = MAX(expires_at, ?1) WHERE id = ?2",
                    params![millis(*expires_at), key],
                )
                .map_err(|e| store_error(&e))?;
                Ok((Effect::None, Outcome::Done))
            }
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
    Clock(ClockReading),
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
                | Job::ForgetSandbox {
                    reply: Some(reply), ..
                } => {
                    send(reply, Err(error));
                }
                Job::Journal { .. } => {
                    tracing::warn!(error = %error, "the request journal could not be written to the SQLite store");
                }
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
            Effect::Reset { erase, floor } => {
                self.count.store(0, Ordering::SeqCst);
                self.clock.reset();
                if erase {
                    self.journal.erase();
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
/// each view.
pub(super) fn flush_journal(views: &Views, jobs: &mpsc::Sender<Sent>) {
    loop {
        let stopping = views.stop.load(Ordering::SeqCst);
        for view in views.all() {
            if let Some((entries, last_seq)) = view.unwritten() {
                let _ = jobs.blocking_send((view, Job::Journal { entries, last_seq }));
            }
        }
        if stopping {
            return;
        }
        std::thread::park_timeout(JOURNAL_EVERY);
    }
}

#[cfg(test)]
mod tests;
