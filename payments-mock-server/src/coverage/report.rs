//! What a test reads of the coverage: [`CoverageReport`], the interface's
//! matrix as `payments_interface::coverage` counts it, the fault cells
//! beside it, and [`CoverageReport::assert_covered`].

use std::fmt::Write as _;

use chrono::{DateTime, Utc};
use payments_interface::Endpoint;
use payments_interface::coverage::{Coverage, percent};

/// What the application under test met of this mock since it started or
/// was last reset ([`crate::Controls::coverage`], `GET /_mock/coverage`,
/// the console's Coverage page): the interface's answers and transitions
/// (the matrix of [`payments_interface::coverage`]), the injected faults
/// per endpoint, and whether the application came back after each fault
/// that committed. One process's count (each replica of a PostgreSQL store
/// counts its own).
///
/// Every cell has a name: `initiate 200`, `confirm 400
/// TRANSACTION_NOT_FOUND`, `transition INITIATED -> SUCCESSFUL` (the
/// interface's), `initiate commit-then-error` (the fault was met) and
/// `initiate commit-then-error recovered`.
///
/// ```
/// use payments_mock_server::{Fault, MockServer};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let server = MockServer::start().await;
/// server.inject_faults([Fault::CommitThenError]);
/// let http = reqwest::Client::new();
/// let initiate = || {
///     http.post(format!("{}/api/payments/initiate", server.base_url()))
///         .json(&serde_json::json!({
///             "merchantId": "6f1c0d3e-1b7a-4c1e-9a55-1c2b3d4e5f60",
///             "referenceNo": "INV-1", "amount": 1050, "productCode": "TOPUP",
///             "storeId": "S1", "payerId": "60123456789",
///         }))
///         .send()
/// };
/// assert_eq!(initiate().await.unwrap().status(), 500); // stored, then 500
/// assert_eq!(initiate().await.unwrap().status(), 400); // the retry: a duplicate
///
/// let coverage = server.coverage().await;
/// coverage.assert_covered([
///     "initiate 400 DUPLICATE_REFERENCE_NO",
///     "transition created -> INITIATED",
///     "initiate commit-then-error recovered",
/// ]);
/// assert_eq!(coverage.count("initiate 500 INTERNAL_ERROR"), Some(1));
/// assert_eq!(coverage.count("initiate 200"), Some(0));
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct CoverageReport {
    pub(super) matrix: Coverage,
    pub(super) faults: Vec<FaultCell>,
    pub(super) replica: String,
    pub(super) since: DateTime<Utc>,
}

/// One endpoint's count of one fault kind.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct FaultCell {
    /// The endpoint the faulted request was for.
    pub endpoint: Endpoint,
    /// The fault's kind, as `X-Mock-Fault` and fault rules name it:
    /// `internal-error`, `commit-then-error`, `reset`, `commit-then-reset`,
    /// `delay`, `rate-limit`, `answer-other`, `hang`, `commit-then-hang`,
    /// `truncate`, `slow-body` or `gateway`.
    pub fault: &'static str,
    /// How many requests met it (`X-Mock-Fault`, a fault rule, a queued
    /// fault or `--fail-rate`). An `answer-other` that had no other
    /// transaction to show (or a true answer that is no success) changed
    /// nothing and is not counted.
    pub met: u64,
    /// For the faults that make the change before failing
    /// (`commit-then-error`, `commit-then-reset`, `answer-other`,
    /// `commit-then-hang`, `truncate`): how many
    /// of those requests the application came back for afterwards (a
    /// status read of the transaction, by id or by reference, or a retried
    /// initiate answered `DUPLICATE_REFERENCE_NO`); `None` for the others.
    pub recovered: Option<u64>,
}

impl FaultCell {
    /// `initiate commit-then-error`.
    pub fn name(&self) -> String {
        format!("{} {}", self.endpoint.name(), self.fault)
    }

    /// `initiate commit-then-error recovered`, for a fault that commits.
    pub fn recovered_name(&self) -> Option<String> {
        self.recovered.map(|_| format!("{} recovered", self.name()))
    }
}

impl CoverageReport {
    /// The interface's answers and transitions, counted
    /// ([`payments_interface::coverage::Coverage`]): its cells, and what
    /// was seen outside them (`initiate 405 METHOD_NOT_ALLOWED`).
    pub fn matrix(&self) -> &Coverage {
        &self.matrix
    }

    /// Every endpoint's count of every fault kind, endpoints in the
    /// document's order, kinds in `X-Mock-Fault`'s.
    pub fn faults(&self) -> &[FaultCell] {
        &self.faults
    }

    /// The replica that counted (`--replica-name`).
    pub fn replica(&self) -> &str {
        &self.replica
    }

    /// When the count started: the start, or the last reset (real time).
    pub fn since(&self) -> DateTime<Utc> {
        self.since
    }

    /// The share of the interface's cells (answers and transitions) seen at
    /// least once, in percent: [`Coverage::percent`].
    pub fn percent(&self) -> f64 {
        self.matrix.percent()
    }

    /// The share of the fault cells (met, and recovered for the faults
    /// that commit) seen at least once, in percent.
    pub fn fault_percent(&self) -> f64 {
        let counts = self.fault_cells();
        percent(counts.iter().filter(|(_, n)| *n > 0).count(), counts.len())
    }

    /// Every fault cell by name with its count, in [`CoverageReport::faults`]'
    /// order: each one met, then (for a fault that commits) recovered.
    pub fn fault_cells(&self) -> Vec<(String, u64)> {
        let mut counts = Vec::with_capacity(self.faults.len() * 2);
        for cell in &self.faults {
            counts.push((cell.name(), cell.met));
            if let (Some(name), Some(n)) = (cell.recovered_name(), cell.recovered) {
                counts.push((name, n));
            }
        }
        counts
    }

    /// How often the cell named `name` was exercised: an answer, a
    /// transition, a fault met or recovered; `None` when no cell has that
    /// name.
    pub fn count(&self, name: &str) -> Option<u64> {
        self.matrix.count(name).or_else(|| {
            self.fault_cells()
                .into_iter()
                .find(|(n, _)| n == name)
                .map(|(_, count)| count)
        })
    }

    /// Of `names`, those never exercised, and those no cell has (each
    /// with what is wrong), in the order given.
    pub fn uncovered<I, S>(&self, names: I) -> Vec<String>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        names
            .into_iter()
            .filter_map(|name| {
                let name = name.as_ref();
                match self.count(name) {
                    Some(0) => Some(format!("{name:?}: not exercised")),
                    Some(_) => None,
                    None => Some(format!("{name:?}: no such cell")),
                }
            })
            .collect()
    }

    /// Panics unless every cell of `names` was exercised at least once,
    /// naming each one that was not (or that no cell has): for a test that
    /// demands its application met an answer or survived a fault.
    ///
    /// # Panics
    ///
    /// When a cell of `names` was not exercised, or no cell has that name.
    #[track_caller]
    pub fn assert_covered<I, S>(&self, names: I)
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let missing = self.uncovered(names);
        if missing.is_empty() {
            return;
        }
        let mut message = format!(
            "payments-mock-server coverage ({:.1} % of the interface's cells): {} cell{} not covered:",
            self.percent(),
            missing.len(),
            if missing.len() == 1 { "" } else { "s" }
        );
        for line in &missing {
            let _ = write!(message, "\n  {line}");
        }
        message.push_str(
            "\n(cells are named like \"initiate 200\", \"confirm 400 TRANSACTION_NOT_FOUND\", \
             \"transition INITIATED -> SUCCESSFUL\", \"initiate commit-then-error\" and \
             \"initiate commit-then-error recovered\"; GET /_mock/coverage lists them all)",
        );
        panic!("{message}");
    }
}
