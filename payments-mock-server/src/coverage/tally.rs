//! A request's coverage, held until its journal entry is admitted: a
//! request counts exactly when its entry outlives a `POST /_mock/reset`
//! racing it (CONTRACT section 20).
//!
//! The `/api/` guard runs each request inside [`tallying`]: while it runs,
//! what the [`Counter`]'s methods would count (a transition, a fault met,
//! a clock's move seen, a committed fault noted or recovered) goes into the
//! request's [`Tally`] instead. The guard then names the answer and hands
//! the tally to the store with the entry; the journal calls
//! [`Counter::admit`] under the lock that admits the entry, where a reset
//! forgets the entries and the counts at one moment (`Fence`). Outside a
//! tallied request (the payment page, the admin's payer action) the
//! methods count at once, as before.
//!
//! What it costs a request: the tally (24 bytes: the answer, up to six
//! small cell numbers, and a pointer for the rare rest) is moved into the
//! task-local on each poll of the request and out again; each count is a
//! task-local look-up and a byte written; the admission is the increments
//! the counts were. Only a request counting more than six cells, a clock's
//! move or a committed fault allocates (the rest).

use std::cell::RefCell;
use std::pin::Pin;
use std::sync::atomic::Ordering;

use payments_interface::{Endpoint, ErrorCode, Status};
use tokio::task::futures::TaskLocalFuture;
use uuid::Uuid;

use super::{Counter, FAULT_CELLS, Subject, TRANSITIONS};

tokio::task_local! {
    /// The running `/api/` request's tally.
    static TALLY: RefCell<Tally>;
}

/// Cell numbers held inline; more go to the rest.
const INLINE: usize = 6;

// A cell number is a byte: transitions first, then the fault cells.
const _: () = assert!(TRANSITIONS + FAULT_CELLS <= u8::MAX as usize);

/// What one request counts, until its entry is admitted.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    /// The answer's endpoint, status and `errorCode`.
    answer: Option<(Endpoint, u16, Option<ErrorCode>)>,
    /// Transition cells (below [`TRANSITIONS`]) and fault cells (above).
    cells: [u8; INLINE],
    len: u8,
    rest: Option<Box<Rest>>,
}

/// The rare rest of a tally.
#[derive(Debug, Default)]
struct Rest {
    cells: Vec<u8>,
    later: Vec<Later>,
}

/// A count that needs more than a cell, in the order it was met.
#[derive(Debug)]
enum Later {
    /// A clock's move seen: the transaction, from, to.
    Observed(Uuid, Status, Status),
    /// A committed fault (its cell) about a subject.
    Committed(usize, Subject),
    /// A look at a subject.
    CameBack(Subject),
}

impl Tally {
    /// Names the request's answer: `endpoint`'s, with its HTTP status and
    /// `errorCode` (`None`: a success).
    pub(crate) fn answered(&mut self, endpoint: Endpoint, status: u16, code: Option<ErrorCode>) {
        self.answer = Some((endpoint, status, code));
    }

    fn cell(&mut self, cell: u8) {
        match self.cells.get_mut(usize::from(self.len)) {
            Some(slot) => {
                *slot = cell;
                self.len += 1;
            }
            None => self.rest().cells.push(cell),
        }
    }

    fn later(&mut self, later: Later) {
        self.rest().later.push(later);
    }

    #[cold]
    fn rest(&mut self) -> &mut Rest {
        self.rest.get_or_insert_default()
    }
}

/// `request`, run with a tally of its own; once it is done,
/// [`tally_of`] takes what it counted (nothing of it counted yet:
/// [`Counter::admit`]). The request's future is held as it is, not moved
/// into another (an `async` wrapper held it twice: 3 KiB more per request).
pub(crate) fn tallying<F: Future>(request: F) -> TaskLocalFuture<RefCell<Tally>, F> {
    TALLY.scope(RefCell::new(Tally::default()), request)
}

/// What the request run by `done` ([`tallying`]) counted.
pub(crate) fn tally_of<F>(done: Pin<&mut TaskLocalFuture<RefCell<Tally>, F>>) -> Tally {
    done.take_value()
        .map(RefCell::into_inner)
        .unwrap_or_default()
}

/// Writes `value` into the running request's tally, if there is one;
/// gives it back when there is none (to count at once).
fn defer<T>(value: T, write: fn(&mut Tally, T)) -> Option<T> {
    let mut value = Some(value);
    let _ = TALLY.try_with(|t| {
        if let Ok(mut tally) = t.try_borrow_mut()
            && let Some(v) = value.take()
        {
            write(&mut tally, v);
        }
    });
    value
}

/// A transition cell as a tally holds it.
fn transition_cell(cell: usize) -> u8 {
    u8::try_from(cell).unwrap_or(u8::MAX)
}

/// A fault cell as a tally holds it.
fn fault_cell(cell: usize) -> u8 {
    u8::try_from(TRANSITIONS + cell).unwrap_or(u8::MAX)
}

impl Counter {
    /// Defers a transition cell to the running request's tally: whether
    /// there was one.
    #[inline]
    pub(super) fn defer_transition(&self, cell: usize) -> bool {
        defer(transition_cell(cell), Tally::cell).is_none()
    }

    /// Defers a fault cell to the running request's tally: whether there
    /// was one.
    #[inline]
    pub(super) fn defer_fault(&self, cell: usize) -> bool {
        defer(fault_cell(cell), Tally::cell).is_none()
    }

    /// Defers a clock's move seen: whether there was a tally.
    pub(super) fn defer_observed(&self, id: Uuid, from: Status, to: Status) -> bool {
        defer((id, from, to), |t, (id, from, to)| {
            t.later(Later::Observed(id, from, to));
        })
        .is_none()
    }

    /// Defers a committed fault's note; gives the subject back when there
    /// is no tally.
    pub(super) fn defer_committed(&self, cell: usize, subject: Subject) -> Option<Subject> {
        defer((cell, subject), |t, (cell, subject)| {
            t.later(Later::Committed(cell, subject));
        })
        .map(|(_, subject)| subject)
    }

    /// Defers a look at `seen`: whether there was a tally.
    pub(super) fn defer_came_back(&self, seen: &Subject) -> bool {
        let there = TALLY.try_with(|_| ()).is_ok();
        there && defer(seen.clone(), |t, seen| t.later(Later::CameBack(seen))).is_none()
    }

    /// Counts what a request tallied: called as its journal entry is
    /// admitted (under the journal's lock, for the memory and SQLite
    /// stores), never twice.
    pub(crate) fn admit(&self, tally: Tally) {
        if let Some((endpoint, status, code)) = tally.answer {
            self.answer(endpoint, status, code);
        }
        let inline = tally.cells.get(..usize::from(tally.len)).unwrap_or(&[]);
        for &cell in inline {
            self.count_cell(cell);
        }
        if let Some(rest) = tally.rest {
            for &cell in &rest.cells {
                self.count_cell(cell);
            }
            for later in rest.later {
                match later {
                    Later::Observed(id, from, to) => self.count_observed(id, from, to),
                    Later::Committed(cell, subject) => self.note_committed(cell, subject),
                    Later::CameBack(seen) => self.recover(&seen),
                }
            }
        }
    }

    fn count_cell(&self, cell: u8) {
        let cell = usize::from(cell);
        let count = match cell.checked_sub(TRANSITIONS) {
            None => self.transitions.get(cell),
            Some(fault) => self.met.get(fault),
        };
        if let Some(count) = count {
            count.fetch_add(1, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests;
