//! The mock's coverage of the application under test (CONTRACT section
//! 20, issue 43): which of the interface's answers it gave, which
//! transitions its transactions made, which faults each endpoint met, and
//! whether the application came back after a fault that committed.
//!
//! The cells are `payments_interface::coverage`'s, never a list of our
//! own: what is counted here is what was answered (endpoint, status,
//! `errorCode`) and what moved (from, to), and the interface's
//! [`Coverage`] sorts it into its cells, or outside them, when read.
//!
//! # What each request pays
//!
//! Counting is the metrics' way (`metrics.rs`): atomics prepared at start,
//! found by small indexes, no look-up and no lock per request:
//!
//! - every `/api/` answer: one index (endpoint, status, code) and one
//!   relaxed increment ([`Counter::answer`]);
//! - an initiate or confirm that changed a transaction: one more;
//! - a read that shows the application a transaction (status reads, a
//!   confirm answered `TRANSACTION_EXPIRED`, the payment page; never the
//!   test's own look: the admin list, `Controls::transactions`, the
//!   console): its view compared with its recorded status; only a
//!   transaction the clock moved (expired, settled, the payer window
//!   passed) takes a lock, to count that move once ([`Counter::observe`]);
//! - a request that met a fault: its counts, and for a fault that
//!   committed, a note of the transaction it was about (the `pending`
//!   queue);
//! - while a note waits, a status read answered 200 and an initiate
//!   answered `DUPLICATE_REFERENCE_NO` look it up (`http/recovery.rs`);
//!   with none waiting, one atomic load says so.
//!
//! An `/api/` request counts nothing at once: what it met goes into its
//! tally (`coverage/tally.rs`), counted as its journal entry is admitted,
//! so a request counts exactly when its entry outlives a reset racing it.
//!
//! The report ([`Counter::report`]) is built on a read, off the hot path.

mod report;
mod tally;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use chrono::{DateTime, Utc};
use payments_interface::coverage::Coverage;
use payments_interface::{Endpoint, ErrorCode, Status};
use uuid::Uuid;

use crate::domain::transaction::Record;
use crate::metrics::{FAULT_KINDS, STATUSES, status_index};

pub use report::{CoverageReport, FaultCell};
pub(crate) use tally::{tally_of, tallying};

const ENDPOINTS: usize = Endpoint::ALL.len();
/// Every `ErrorCode`, and none (a success).
const CODES: usize = ErrorCode::ALL.len() + 1;
const ANSWERS: usize = ENDPOINTS * STATUSES.len() * CODES;
/// Before a transition: created (none), or a status.
const FROM: usize = Status::ALL.len() + 1;
const TRANSITIONS: usize = FROM * Status::ALL.len();
const KINDS: usize = FAULT_KINDS.len();
const FAULT_CELLS: usize = ENDPOINTS * KINDS;

/// Which fault kinds ([`FAULT_KINDS`]) make the change before failing,
/// and so have a recovered cell: `commit-then-error`, `commit-then-reset`,
/// `answer-other`, `commit-then-hang`, `truncate` (`Fault::commits`,
/// tested to agree).
const COMMITS: [bool; KINDS] = [
    false, true, false, true, false, false, true, false, true, true, false, false,
];

/// Most notes of committed faults waiting for the application to come
/// back; past it the oldest is dropped (never counted recovered).
const MAX_PENDING: usize = 10_000;

/// Most transactions remembered as seen moved by the clock; past it the
/// memory starts over (such a transaction read again counts again).
const MAX_OBSERVED: usize = 1 << 20;

/// What a committed fault was about: the transaction (as far as the
/// request and its true answer named it), so that the application's next
/// look at it can be recognised.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Subject {
    /// Its transactionId, when known.
    pub(crate) id: Option<Uuid>,
    /// Its merchant, when known.
    pub(crate) merchant: Option<Uuid>,
    /// Its referenceNo, when known.
    pub(crate) reference: Option<Box<str>>,
}

impl Subject {
    /// Whether a look at `seen` is a look at this subject: the same
    /// transaction, or the same merchant's reference (a reference of a
    /// subject without a merchant: anyone's).
    fn is(&self, seen: &Subject) -> bool {
        let same_id = self.id.is_some() && self.id == seen.id;
        let same_reference = self.reference.is_some()
            && self.reference == seen.reference
            && (self.merchant.is_none() || self.merchant == seen.merchant);
        same_id || same_reference
    }
}

#[derive(Debug)]
struct Pending {
    /// Index into the fault cells: endpoint × kind.
    cell: usize,
    subject: Subject,
}

/// One server's coverage counts (the state's).
#[derive(Debug)]
pub(crate) struct Counter {
    /// Endpoint × status (an index of [`STATUSES`]) × code.
    answers: Box<[AtomicU64]>,
    /// Answers with a status outside [`STATUSES`] (none the mock gives
    /// today): endpoint, status, code index, count.
    odd: Mutex<Vec<(usize, u16, usize, u64)>>,
    /// From (created, or a status) × to.
    transitions: [AtomicU64; TRANSITIONS],
    /// Endpoint × fault kind.
    met: [AtomicU64; FAULT_CELLS],
    recovered: [AtomicU64; FAULT_CELLS],
    pending: Mutex<VecDeque<Pending>>,
    /// `pending`'s length, read without the lock.
    waiting: AtomicUsize,
    /// Transactions whose move by the clock was counted.
    observed: Mutex<hashbrown::HashSet<Uuid>>,
    since: Mutex<DateTime<Utc>>,
}

impl Default for Counter {
    fn default() -> Self {
        Self::new()
    }
}

impl Counter {
    /// Nothing counted yet.
    pub(crate) fn new() -> Self {
        Self {
            answers: (0..ANSWERS).map(|_| AtomicU64::new(0)).collect(),
            odd: Mutex::default(),
            transitions: [const { AtomicU64::new(0) }; TRANSITIONS],
            met: [const { AtomicU64::new(0) }; FAULT_CELLS],
            recovered: [const { AtomicU64::new(0) }; FAULT_CELLS],
            pending: Mutex::default(),
            waiting: AtomicUsize::new(0),
            observed: Mutex::default(),
            since: Mutex::new(Utc::now()),
        }
    }

    /// Counts one answer of `endpoint`: its HTTP status and `errorCode`
    /// (`None` for a success).
    #[inline]
    pub(crate) fn answer(&self, endpoint: Endpoint, status: u16, code: Option<ErrorCode>) {
        let slot = status_index(status);
        let code = code.map_or(0, |c| c as usize + 1);
        if slot == STATUSES.len() {
            self.odd_answer(endpoint as usize, status, code);
            return;
        }
        let cell = (endpoint as usize * STATUSES.len() + slot) * CODES + code;
        self.answers[cell].fetch_add(1, Ordering::Relaxed);
    }

    #[cold]
    fn odd_answer(&self, endpoint: usize, status: u16, code: usize) {
        let mut odd = self.odd.lock().unwrap_or_else(PoisonError::into_inner);
        match odd
            .iter_mut()
            .find(|(e, s, c, _)| (*e, *s, *c) == (endpoint, status, code))
        {
            Some((.., n)) => *n += 1,
            None => odd.push((endpoint, status, code, 1)),
        }
    }

    /// Counts a transaction's move `from` (`None`: created) `to`.
    #[inline]
    pub(crate) fn transition(&self, from: Option<Status>, to: Status) {
        let from = from.map_or(0, |s| s as usize + 1);
        let cell = from * Status::ALL.len() + to as usize;
        if !self.defer_transition(cell) {
            self.transitions[cell].fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Counts the move the clock made of `record` by `now` (an expiry, a
    /// settlement, the payer window passing), once per transaction: the
    /// first time a read shows it.
    #[inline]
    pub(crate) fn observe(&self, record: &Record, now: DateTime<Utc>) {
        let shown = record.view(now).status;
        let recorded = record.recorded_status();
        if shown != recorded {
            self.observed_move(record.id, recorded, shown);
        }
    }

    #[cold]
    fn observed_move(&self, id: Uuid, from: Status, to: Status) {
        if !self.defer_observed(id, from, to) {
            self.count_observed(id, from, to);
        }
    }

    fn count_observed(&self, id: Uuid, from: Status, to: Status) {
        let first = {
            let mut observed = self.observed.lock().unwrap_or_else(PoisonError::into_inner);
            if observed.len() >= MAX_OBSERVED && !observed.contains(&id) {
                observed.clear();
            }
            observed.insert(id)
        };
        if first {
            let cell = (from as usize + 1) * Status::ALL.len() + to as usize;
            self.transitions[cell].fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Counts a confirm that moved `record` (at `now`) from its initial
    /// status: to the status it recorded, and on to what the clock shows
    /// at once (a settlement of no delay).
    pub(crate) fn confirmed(&self, record: &Record, now: DateTime<Utc>) {
        let initial = match record.initial {
            crate::domain::catalog::InitialState::Pending => Status::Pending,
            crate::domain::catalog::InitialState::Initiated => Status::Initiated,
        };
        self.transition(Some(initial), record.recorded_status());
        self.observe(record, now);
    }

    /// Counts one fault of kind `kind` (an index of [`FAULT_KINDS`]) met by
    /// a request for `endpoint`.
    pub(crate) fn fault(&self, endpoint: Endpoint, kind: usize) {
        let cell = endpoint as usize * KINDS + kind;
        if !self.defer_fault(cell) {
            self.met[cell].fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Notes that a request for `endpoint` met the committing fault `kind`
    /// about `subject`: the application's next look at it recovers it.
    pub(crate) fn committed(&self, endpoint: Endpoint, kind: usize, subject: Subject) {
        let cell = endpoint as usize * KINDS + kind;
        if let Some(subject) = self.defer_committed(cell, subject) {
            self.note_committed(cell, subject);
        }
    }

    fn note_committed(&self, cell: usize, subject: Subject) {
        let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        if pending.len() >= MAX_PENDING {
            pending.pop_front();
        }
        pending.push_back(Pending { cell, subject });
        self.waiting.store(pending.len(), Ordering::Release);
    }

    /// Whether a committed fault waits for the application to come back:
    /// one atomic load, what every status read and duplicate answer pays
    /// when none does.
    #[inline]
    pub(crate) fn awaits(&self) -> bool {
        self.waiting.load(Ordering::Acquire) > 0
    }

    /// The application looked at `seen` (a status read answered, a retried
    /// initiate answered as a duplicate): every committed fault about it
    /// is recovered.
    pub(crate) fn came_back(&self, seen: &Subject) {
        if !self.defer_came_back(seen) {
            self.recover(seen);
        }
    }

    fn recover(&self, seen: &Subject) {
        let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        pending.retain(|p| {
            if p.subject.is(seen) {
                self.recovered[p.cell].fetch_add(1, Ordering::Relaxed);
                false
            } else {
                true
            }
        });
        self.waiting.store(pending.len(), Ordering::Release);
    }

    /// Forgets everything counted (`POST /_mock/reset`): counting starts
    /// over now.
    pub(crate) fn reset(&self) {
        for count in self
            .answers
            .iter()
            .chain(&self.transitions)
            .chain(&self.met)
            .chain(&self.recovered)
        {
            count.store(0, Ordering::Relaxed);
        }
        self.odd
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
        let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        pending.clear();
        self.waiting.store(0, Ordering::Release);
        drop(pending);
        self.observed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
        *self.since.lock().unwrap_or_else(PoisonError::into_inner) = Utc::now();
    }

    /// The counts so far, as the interface's matrix and the fault cells.
    pub(crate) fn report(&self, replica: &str) -> CoverageReport {
        let code_of = |c: usize| c.checked_sub(1).map(|c| ErrorCode::ALL[c]);
        let mut seen: Vec<(Seen, u64)> = Vec::new();
        for (cell, count) in self.answers.iter().enumerate() {
            let n = count.load(Ordering::Relaxed);
            if n > 0 {
                let (endpoint, rest) = (
                    cell / (STATUSES.len() * CODES),
                    cell % (STATUSES.len() * CODES),
                );
                let (status, code) = (STATUSES[rest / CODES], code_of(rest % CODES));
                seen.push((Seen::Answer(Endpoint::ALL[endpoint], status, code), n));
            }
        }
        for &(endpoint, status, code, n) in self
            .odd
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
        {
            seen.push((
                Seen::Answer(Endpoint::ALL[endpoint], status, code_of(code)),
                n,
            ));
        }
        for (cell, count) in self.transitions.iter().enumerate() {
            let n = count.load(Ordering::Relaxed);
            if n > 0 {
                let (from, to) = (cell / Status::ALL.len(), cell % Status::ALL.len());
                let from = from.checked_sub(1).map(|f| Status::ALL[f]);
                seen.push((Seen::Transition(from, Status::ALL[to]), n));
            }
        }
        let faults = Endpoint::ALL
            .into_iter()
            .flat_map(|endpoint| {
                FAULT_KINDS.iter().enumerate().map(move |(kind, fault)| {
                    let cell = endpoint as usize * KINDS + kind;
                    FaultCell {
                        endpoint,
                        fault,
                        met: self.met[cell].load(Ordering::Relaxed),
                        recovered: COMMITS[kind]
                            .then(|| self.recovered[cell].load(Ordering::Relaxed)),
                    }
                })
            })
            .collect();
        CoverageReport {
            matrix: matrix(&seen),
            faults,
            replica: replica.to_owned(),
            since: *self.since.lock().unwrap_or_else(PoisonError::into_inner),
        }
    }
}

/// A reset forgets the counts at the moment its journal forgets the
/// entries (`Journal::fence_with`).
impl crate::domain::journal::Fence for Counter {
    fn fenced(&self) {
        self.reset();
    }
}

/// Something counted, to hand to the interface's [`Coverage`].
#[derive(Debug, Clone, Copy)]
enum Seen {
    Answer(Endpoint, u16, Option<ErrorCode>),
    Transition(Option<Status>, Status),
}

impl Seen {
    fn add_to(self, coverage: &mut Coverage, n: u64) {
        match self {
            Self::Answer(endpoint, status, code) => {
                coverage.add_answers(endpoint, status, code.map(ErrorCode::as_str), n);
            }
            Self::Transition(from, to) => coverage.add_transitions(from, to, n),
        }
    }
}

/// The interface's matrix with `seen`'s counts.
fn matrix(seen: &[(Seen, u64)]) -> Coverage {
    let mut matrix = Coverage::new();
    for (s, n) in seen {
        s.add_to(&mut matrix, *n);
    }
    matrix
}

#[cfg(test)]
mod tests;
