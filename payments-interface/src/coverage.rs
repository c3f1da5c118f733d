//! Interface coverage (CONTRACT section 20): the interface's answers as a
//! matrix of cells, built from this crate's vocabulary and nothing else:
//! per endpoint its success and each status and `errorCode` pair the
//! document (section 7) and the contract (section 8) give it, and each
//! state transition of [`TRANSITIONS`]. A tool counts what it saw of each
//! cell ([`Coverage`]); adding a code to an endpoint adds a cell.
//!
//! ```
//! use payments_interface::coverage::{Cell, Coverage};
//! use payments_interface::{Endpoint, ErrorCode, Status};
//!
//! let mut seen = Coverage::new();
//! seen.answer(Endpoint::Confirm, 400, Some("TRANSACTION_NOT_FOUND"));
//! seen.transition(Some(Status::Initiated), Status::Successful);
//! assert_eq!(seen.count("confirm 400 TRANSACTION_NOT_FOUND"), Some(1));
//! assert_eq!(seen.count("transition INITIATED -> SUCCESSFUL"), Some(1));
//! assert!(seen.percent() > 0.0 && seen.percent() < 100.0);
//! ```

use std::fmt;

use crate::code::ErrorCode;
use crate::endpoint::Endpoint;
use crate::status::{Status, TRANSITIONS};

/// One documented answer, or one transition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Cell {
    /// An endpoint's success (200) or failure (a status and its code).
    Answer {
        /// The endpoint.
        endpoint: Endpoint,
        /// The HTTP status.
        status: u16,
        /// The `errorCode`; `None` for the success.
        code: Option<ErrorCode>,
    },
    /// A transaction's status moved `from` (`None`: created) `to`.
    Transition {
        /// Before (`None`: the initiate).
        from: Option<Status>,
        /// After.
        to: Status,
    },
}

impl Cell {
    /// Whether the interface document shows it (else the contract's
    /// extension): a success, a code the document gives that endpoint
    /// (`VALIDATION_ERROR` on a status by reference is the contract's:
    /// its `merchantId` query is an extension), or a transition between
    /// the document's statuses.
    pub fn is_documented(self) -> bool {
        match self {
            Self::Answer { endpoint, code, .. } => {
                code.is_none_or(|c| endpoint.documented_codes().contains(&c))
            }
            Self::Transition { from, to } => {
                from.is_none_or(Status::is_documented) && to.is_documented()
            }
        }
    }

    /// The endpoint of an answer.
    pub fn endpoint(self) -> Option<Endpoint> {
        match self {
            Self::Answer { endpoint, .. } => Some(endpoint),
            Self::Transition { .. } => None,
        }
    }
}

/// Its name, what reports and tests use: `confirm 400
/// TRANSACTION_NOT_FOUND`, `initiate 200`, `transition INITIATED ->
/// SUCCESSFUL`, `transition created -> PENDING`.
impl fmt::Display for Cell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Answer {
                endpoint,
                status,
                code: None,
            } => write!(f, "{} {status}", endpoint.name()),
            Self::Answer {
                endpoint,
                status,
                code: Some(code),
            } => write!(f, "{} {status} {}", endpoint.name(), code.as_str()),
            Self::Transition { from, to } => write!(
                f,
                "transition {} -> {}",
                from.map_or("created", Status::as_str),
                to.as_str()
            ),
        }
    }
}

/// Every cell, endpoints in the document's order (the success, then the
/// document's codes, then the contract's), then the transitions.
pub fn cells() -> Vec<Cell> {
    let mut cells = Vec::new();
    for endpoint in Endpoint::ALL {
        cells.push(Cell::Answer {
            endpoint,
            status: 200,
            code: None,
        });
        for &code in endpoint
            .documented_codes()
            .iter()
            .chain(endpoint.contract_codes())
        {
            let status = endpoint
                .status_of(code)
                .unwrap_or_else(|| code.http_status());
            let cell = Cell::Answer {
                endpoint,
                status,
                code: Some(code),
            };
            if !cells.contains(&cell) {
                cells.push(cell);
            }
        }
    }
    cells.extend(
        TRANSITIONS
            .iter()
            .map(|&(from, to)| Cell::Transition { from, to }),
    );
    cells
}

/// What was seen of each cell, and what was seen outside the matrix.
#[derive(Debug, Clone)]
pub struct Coverage {
    cells: Vec<(Cell, u64)>,
    /// Answers and transitions that are no cell, by name, with counts: an
    /// undocumented code, a status moving back.
    outside: Vec<(String, u64)>,
}

impl Default for Coverage {
    fn default() -> Self {
        Self::new()
    }
}

impl Coverage {
    /// Nothing seen yet.
    pub fn new() -> Self {
        Self {
            cells: cells().into_iter().map(|cell| (cell, 0)).collect(),
            outside: Vec::new(),
        }
    }

    fn hit(&mut self, cell: Cell, n: u64, name: impl FnOnce() -> String) {
        match self.cells.iter_mut().find(|(c, _)| *c == cell) {
            Some((_, count)) => *count += n,
            None => self.outside_add(name(), n),
        }
    }

    fn outside_add(&mut self, name: String, n: u64) {
        match self.outside.iter_mut().find(|(known, _)| *known == name) {
            Some((_, count)) => *count += n,
            None => self.outside.push((name, n)),
        }
    }

    /// An answer of `endpoint`: its HTTP status and `errorCode` as sent
    /// (`None` for a success).
    pub fn answer(&mut self, endpoint: Endpoint, status: u16, code: Option<&str>) {
        self.add_answers(endpoint, status, code, 1);
    }

    /// `n` answers alike (a tool that counted them elsewhere).
    pub fn add_answers(&mut self, endpoint: Endpoint, status: u16, code: Option<&str>, n: u64) {
        match code.map(|text| (text, ErrorCode::parse(text))) {
            None => self.hit(
                Cell::Answer {
                    endpoint,
                    status,
                    code: None,
                },
                n,
                || format!("{} {status}", endpoint.name()),
            ),
            Some((_, Some(code))) => self.hit(
                Cell::Answer {
                    endpoint,
                    status,
                    code: Some(code),
                },
                n,
                || format!("{} {status} {}", endpoint.name(), code.as_str()),
            ),
            Some((text, None)) => {
                self.outside_add(format!("{} {status} {text}", endpoint.name()), n);
            }
        }
    }

    /// A transaction seen to move `from` (`None`: created) `to`.
    pub fn transition(&mut self, from: Option<Status>, to: Status) {
        self.add_transitions(from, to, 1);
    }

    /// `n` transactions seen to move alike.
    pub fn add_transitions(&mut self, from: Option<Status>, to: Status, n: u64) {
        let cell = Cell::Transition { from, to };
        self.hit(cell, n, || cell.to_string());
    }

    /// How often the cell named `name` was seen; `None` when no cell has
    /// that name.
    pub fn count(&self, name: &str) -> Option<u64> {
        self.cells
            .iter()
            .find(|(cell, _)| cell.to_string() == name)
            .map(|(_, count)| *count)
    }

    /// Every cell and how often it was seen, in [`cells`]' order.
    pub fn cells(&self) -> &[(Cell, u64)] {
        &self.cells
    }

    /// What was seen outside the matrix, by name, in the order first seen.
    pub fn outside(&self) -> &[(String, u64)] {
        &self.outside
    }

    /// The share of cells seen at least once, in percent.
    pub fn percent(&self) -> f64 {
        let seen = self.cells.iter().filter(|(_, n)| *n > 0).count();
        percent(seen, self.cells.len())
    }

    /// Adds what `other` saw.
    pub fn merge(&mut self, other: &Self) {
        for ((_, count), (_, more)) in self.cells.iter_mut().zip(&other.cells) {
            *count += more;
        }
        for (name, more) in &other.outside {
            self.outside_add(name.clone(), *more);
        }
    }
}

/// `part` of `whole` in percent, one decimal place kept exact enough for a
/// gate (`--min-coverage`): 0 of 0 is 0.
pub fn percent(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        return 0.0;
    }
    // Counts of cells: far below f64's exact integers.
    #[allow(clippy::cast_precision_loss)]
    let ratio = part as f64 / whole as f64;
    ratio * 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The matrix is exactly the vocabulary: every endpoint's success, each
    /// of its document and contract codes with the status the document
    /// gives it, every transition; nothing else, nothing twice.
    #[test]
    fn the_cells_are_the_vocabularys_answers_and_transitions() {
        let cells = cells();
        let mut expected = 0;
        for endpoint in Endpoint::ALL {
            let codes: Vec<ErrorCode> = endpoint
                .documented_codes()
                .iter()
                .chain(endpoint.contract_codes())
                .copied()
                .collect();
            let mut unique = codes.clone();
            unique.dedup();
            expected += 1 + unique.len();
            assert!(cells.contains(&Cell::Answer {
                endpoint,
                status: 200,
                code: None
            }));
            for code in codes {
                let status = endpoint.status_of(code).unwrap_or(code.http_status());
                assert!(
                    cells.contains(&Cell::Answer {
                        endpoint,
                        status,
                        code: Some(code)
                    }),
                    "{} {status} {}",
                    endpoint.name(),
                    code.as_str()
                );
            }
        }
        expected += TRANSITIONS.len();
        assert_eq!(cells.len(), expected);
        let names: std::collections::BTreeSet<String> =
            cells.iter().map(ToString::to_string).collect();
        assert_eq!(names.len(), cells.len(), "names are unique");
        assert!(names.contains("confirm 400 TRANSACTION_NOT_FOUND"));
        assert!(names.contains("statusById 404 TRANSACTION_NOT_FOUND"));
        assert!(names.contains("transition created -> PENDING"));
        // The proxy's own and the route-level codes are no endpoint's.
        for name in &names {
            for code in [
                " UPSTREAM_UNAVAILABLE",
                " CONTRACT_VIOLATION",
                " NOT_FOUND",
                " METHOD_NOT_ALLOWED",
            ] {
                assert!(!name.ends_with(code), "{name}");
            }
        }
    }

    #[test]
    fn what_is_seen_is_counted_in_its_cell_or_outside() {
        let mut seen = Coverage::new();
        assert_eq!(seen.percent(), 0.0);
        seen.answer(Endpoint::Initiate, 200, None);
        seen.answer(Endpoint::Initiate, 200, None);
        seen.answer(Endpoint::Initiate, 400, Some("DUPLICATE_REFERENCE_NO"));
        seen.answer(Endpoint::Initiate, 409, Some("CONFLICT"));
        seen.answer(Endpoint::Confirm, 404, Some("TRANSACTION_NOT_FOUND"));
        seen.transition(Some(Status::Successful), Status::Pending);
        assert_eq!(seen.count("initiate 200"), Some(2));
        assert_eq!(seen.count("initiate 400 DUPLICATE_REFERENCE_NO"), Some(1));
        assert_eq!(seen.count("nonsense"), None);
        let outside: Vec<&str> = seen.outside().iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            outside,
            [
                "initiate 409 CONFLICT",
                "confirm 404 TRANSACTION_NOT_FOUND",
                "transition SUCCESSFUL -> PENDING"
            ]
        );
        let mut more = Coverage::new();
        more.answer(Endpoint::Initiate, 200, None);
        more.add_transitions(None, Status::Initiated, 40);
        seen.merge(&more);
        assert_eq!(seen.count("initiate 200"), Some(3));
        assert_eq!(seen.count("transition created -> INITIATED"), Some(40));
        let covered = seen.cells().iter().filter(|(_, n)| *n > 0).count();
        assert_eq!(seen.percent(), percent(covered, seen.cells().len()));
    }

    #[test]
    fn a_cell_says_whether_the_document_shows_it() {
        assert!(
            Cell::Answer {
                endpoint: Endpoint::Confirm,
                status: 400,
                code: Some(ErrorCode::TransactionNotFound)
            }
            .is_documented()
        );
        assert!(
            !Cell::Answer {
                endpoint: Endpoint::Confirm,
                status: 400,
                code: Some(ErrorCode::TransactionExpired)
            }
            .is_documented()
        );
        assert!(
            !Cell::Transition {
                from: Some(Status::Initiated),
                to: Status::Expired
            }
            .is_documented()
        );
        assert!(
            !Cell::Answer {
                endpoint: Endpoint::StatusByReference,
                status: 400,
                code: Some(ErrorCode::ValidationError)
            }
            .is_documented()
        );
    }
}
