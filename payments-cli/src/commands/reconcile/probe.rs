//! The first look-ups of a run, until one answer is usable.
//!
//! A row whose own answer the client cannot use is `unverified`, and the
//! run goes on: the answer is about that row. But when no answer can be
//! used at all (a service that writes every `createdAt` as a number, a
//! client that no longer reads the service's answers), every row would be
//! `unverified`, hours later, with exit 6, as if the ledger were wrong. So
//! the first [`ROWS`] rows looked up (in ledger order, the order rows are
//! judged in) are watched: when none of them has a usable answer, the run
//! stops there with the first one's failure (exit 4), as any failure common
//! to every row does. Once one answer is usable, a later unusable one is
//! that row's own (`unverified`). A ledger with fewer rows to look up,
//! none of them usable, ends the same way once every row is judged.

use crate::error::CliError;

/// Rows looked up, none of them usable, after which the run stops.
pub const ROWS: u32 = 10;

/// What a row's look-up gave, as far as the probe cares.
#[derive(Debug)]
pub enum Answer {
    /// Not looked up (`invalid`, `duplicate`, or a row the client refused
    /// to send): says nothing of the service.
    None,
    /// An answer the run could use (`missing` included: the service said
    /// so in its envelope).
    Usable,
    /// The row's answer could not be used (`unverified`): the failure.
    Unusable(CliError),
}

/// Every row looked up so far had an unusable answer: how many, the first
/// one's line and failure, and the line of the last.
#[derive(Debug)]
pub struct NoneUsable {
    pub rows: u32,
    pub first_line: u64,
    pub last_line: u64,
    pub error: CliError,
}

impl NoneUsable {
    /// What stderr says before the first row's failure: why the run ended
    /// with exit 4 rather than with rows `unverified`.
    pub fn said(&self) -> String {
        let rows = if self.rows == 1 {
            format!("the 1 row looked up (ledger line {})", self.first_line)
        } else if self.rows < ROWS {
            format!(
                "any of the {} rows looked up (ledger lines {} to {})",
                self.rows, self.first_line, self.last_line
            )
        } else {
            format!(
                "any of the first {} rows looked up (ledger lines {} to {})",
                self.rows, self.first_line, self.last_line
            )
        };
        format!(
            "the service's answer could not be used for {rows}: the service or this client is \
             at fault, not the ledger"
        )
    }
}

/// Watches the first rows looked up.
#[derive(Debug, Default)]
pub struct Probe {
    /// A usable answer came: the probe is over.
    passed: bool,
    unusable: u32,
    first: Option<(u64, CliError)>,
    last_line: u64,
}

impl Probe {
    /// Notes the answer of the row on `line`; gives the stop when it is
    /// the [`ROWS`]th looked up and none was usable.
    pub fn note(&mut self, line: u64, answer: Answer) -> Option<NoneUsable> {
        if self.passed {
            return None;
        }
        match answer {
            Answer::None => None,
            Answer::Usable => {
                self.passed = true;
                self.first = None;
                None
            }
            Answer::Unusable(error) => {
                self.unusable += 1;
                self.last_line = line;
                self.first.get_or_insert((line, error));
                if self.unusable < ROWS {
                    return None;
                }
                self.passed = true;
                self.none_usable()
            }
        }
    }

    /// At the end of the ledger: every row looked up (fewer than
    /// [`ROWS`], at least one) had an unusable answer.
    pub fn finish(mut self) -> Option<NoneUsable> {
        if self.passed {
            return None;
        }
        self.none_usable()
    }

    fn none_usable(&mut self) -> Option<NoneUsable> {
        let (first_line, error) = self.first.take()?;
        Some(NoneUsable {
            rows: self.unusable,
            first_line,
            last_line: self.last_line,
            error,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unusable() -> Answer {
        Answer::Unusable(CliError::Usage("x".to_owned()))
    }

    #[test]
    fn the_tenth_unusable_answer_with_none_usable_stops() {
        let mut probe = Probe::default();
        assert!(probe.note(2, Answer::None).is_none());
        for line in 3..12 {
            assert!(probe.note(line, unusable()).is_none(), "{line}");
        }
        let stop = probe.note(12, unusable()).expect("a stop");
        assert_eq!((stop.rows, stop.first_line, stop.last_line), (10, 3, 12));
        assert!(
            stop.said()
                .contains("any of the first 10 rows looked up (ledger lines 3 to 12)")
        );
    }

    #[test]
    fn one_usable_answer_ends_the_probe() {
        let mut probe = Probe::default();
        for line in 2..11 {
            assert!(probe.note(line, unusable()).is_none());
        }
        assert!(probe.note(11, Answer::Usable).is_none());
        for line in 12..40 {
            assert!(probe.note(line, unusable()).is_none());
        }
        assert!(probe.finish().is_none());
    }

    #[test]
    fn a_short_ledger_with_no_usable_answer_ends_as_one() {
        let mut probe = Probe::default();
        assert!(probe.note(2, unusable()).is_none());
        assert!(probe.note(3, Answer::None).is_none());
        assert!(probe.note(4, unusable()).is_none());
        let stop = probe.finish().expect("none usable");
        assert_eq!((stop.rows, stop.first_line, stop.last_line), (2, 2, 4));
        assert!(Probe::default().finish().is_none(), "nothing looked up");
        let mut probe = Probe::default();
        probe.note(5, unusable());
        let said = probe.finish().expect("none usable").said();
        assert!(
            said.contains("the 1 row looked up (ledger line 5)"),
            "{said}"
        );
    }
}
