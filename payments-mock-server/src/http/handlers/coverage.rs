//! `GET /_mock/coverage` (CONTRACT section 20, issue 43): what the
//! application under test met of this process, as JSON. With
//! `--admin-key`, the admin key's alone (the middleware): the counts are
//! the whole process's, never split by merchant.

use axum::response::Response;
use payments_interface::coverage::Cell;
use serde::Serialize;

use crate::coverage::CoverageReport;
use crate::state::Here;
use payments_serve::success;

/// `data` of `GET /_mock/coverage`.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub(crate) struct CoverageData {
    /// The interface's cells (answers and transitions) seen at least
    /// once, in percent.
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 100))]
    percent: f64,
    /// How many of the interface's cells were seen.
    covered: usize,
    /// How many cells the interface has.
    cells: usize,
    /// The fault cells (met, and recovered for the faults that commit)
    /// seen at least once, in percent.
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 100))]
    fault_percent: f64,
    /// The replica that counted (`--replica-name`): each process counts
    /// its own.
    replica: String,
    /// When counting started: the process's start or the last reset (real
    /// time).
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::timestamp))]
    since: String,
    /// Every endpoint's answers: its success, and each status and
    /// `errorCode` the document or the contract gives it.
    answers: Vec<AnswerCell>,
    /// Every transition of the contract's state machine.
    transitions: Vec<TransitionCell>,
    /// Every endpoint's faults.
    faults: Vec<FaultRow>,
    /// Answers (and moves) that are no cell of the interface, by name: a
    /// wrong method on an endpoint's path, say.
    outside: Vec<OutsideCell>,
}

/// Who defines a cell.
#[derive(Debug, Clone, Copy, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub(crate) enum Source {
    /// The interface document.
    Document,
    /// The contract's extension (CONTRACT.md).
    Contract,
}

impl Source {
    fn of(cell: Cell) -> Self {
        if cell.is_documented() {
            Self::Document
        } else {
            Self::Contract
        }
    }
}

/// One answer cell.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub(crate) struct AnswerCell {
    /// `initiate 200`, `confirm 400 TRANSACTION_NOT_FOUND`.
    name: String,
    /// The endpoint (its operationId).
    #[cfg_attr(feature = "openapi", schema(value_type = String, pattern = "^(initiate|confirm|statusById|statusByReference)$"))]
    endpoint: &'static str,
    /// The HTTP status.
    status: u16,
    /// The `errorCode`; null for the success.
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::optional_error_code))]
    error_code: Option<&'static str>,
    source: Source,
    /// How many answers were this.
    count: u64,
}

/// One transition cell.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub(crate) struct TransitionCell {
    /// `transition created -> PENDING`, `transition INITIATED -> SUCCESSFUL`.
    name: String,
    /// The status before; null for the initiate (created).
    #[cfg_attr(feature = "openapi", schema(schema_with = optional_status))]
    from: Option<&'static str>,
    /// The status after.
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::transaction_status))]
    to: &'static str,
    source: Source,
    /// How many transactions made it (a move of the clock's, counted
    /// once, when first shown).
    count: u64,
}

/// One endpoint's count of one fault kind.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub(crate) struct FaultRow {
    /// `initiate commit-then-error`: the cell of the fault met.
    name: String,
    /// The endpoint (its operationId).
    #[cfg_attr(feature = "openapi", schema(value_type = String, pattern = "^(initiate|confirm|statusById|statusByReference)$"))]
    endpoint: &'static str,
    /// The fault's kind, as `X-Mock-Fault` names it.
    #[cfg_attr(feature = "openapi", schema(value_type = String, pattern = "^(internal-error|commit-then-error|reset|commit-then-reset|delay|rate-limit|answer-other|hang|commit-then-hang|truncate|slow-body|gateway)$"))]
    fault: &'static str,
    /// How many requests met it.
    met: u64,
    /// `initiate commit-then-error recovered`, for the faults that commit
    /// (`commit-then-error`, `commit-then-reset`, `answer-other`); null
    /// for the others.
    recovered_name: Option<String>,
    /// How many of those requests the application came back for (a status
    /// read of the transaction, or a retried initiate answered as a
    /// duplicate); null for the faults that commit nothing.
    recovered: Option<u64>,
}

/// Something seen that is no cell.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub(crate) struct OutsideCell {
    /// `initiate 405 METHOD_NOT_ALLOWED`.
    name: String,
    count: u64,
}

#[cfg(feature = "openapi")]
fn optional_status() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
    serde_json::from_value(serde_json::json!({
        "anyOf": [{ "type": "null" }, { "$ref": "#/components/schemas/TransactionStatus" }]
    }))
    .unwrap_or_else(|_| utoipa::openapi::RefOr::T(utoipa::openapi::schema::Schema::default()))
}

impl CoverageData {
    /// The wire form of `report`.
    pub(crate) fn of(report: &CoverageReport) -> Self {
        let matrix = report.matrix();
        let mut answers = Vec::new();
        let mut transitions = Vec::new();
        for &(cell, count) in matrix.cells() {
            let name = cell.to_string();
            match cell {
                Cell::Answer {
                    endpoint,
                    status,
                    code,
                } => answers.push(AnswerCell {
                    name,
                    endpoint: endpoint.name(),
                    status,
                    error_code: code.map(payments_interface::ErrorCode::as_str),
                    source: Source::of(cell),
                    count,
                }),
                Cell::Transition { from, to } => transitions.push(TransitionCell {
                    name,
                    from: from.map(payments_interface::Status::as_str),
                    to: to.as_str(),
                    source: Source::of(cell),
                    count,
                }),
                // A kind of cell added to the interface: its name and
                // count still show, outside the two lists.
                _ => {}
            }
        }
        let faults = report
            .faults()
            .iter()
            .map(|f| FaultRow {
                name: f.name(),
                endpoint: f.endpoint.name(),
                fault: f.fault,
                met: f.met,
                recovered_name: f.recovered_name(),
                recovered: f.recovered,
            })
            .collect();
        Self {
            percent: report.percent(),
            covered: matrix.cells().iter().filter(|(_, n)| *n > 0).count(),
            cells: matrix.cells().len(),
            fault_percent: report.fault_percent(),
            replica: report.replica().to_owned(),
            since: crate::domain::clock::format_time(report.since()),
            answers,
            transitions,
            faults,
            outside: matrix
                .outside()
                .iter()
                .map(|(name, count)| OutsideCell {
                    name: name.clone(),
                    count: *count,
                })
                .collect(),
        }
    }
}

/// What the application under test met of this process since it started
/// or was last reset: every answer and transition cell of the interface
/// with its count, the faults per endpoint (met, and recovered for those
/// that commit), what was outside the cells, and the percentages. With
/// `--admin-key`, the admin key's alone.
#[cfg_attr(
    feature = "openapi",
    utoipa::path(
        get,
        path = "/_mock/coverage",
        operation_id = "mockCoverage",
        tag = "mock"
    )
)]
pub async fn coverage(Here(state): Here) -> Response {
    success(CoverageData::of(&state.coverage()), None)
}
