//! The console's Coverage page (CONTRACT section 20, issue 43): what the
//! application under test met of this process, as `GET /_mock/coverage`
//! gives it. An admin's page: the counts are the whole process's, so a
//! merchant's key is refused, as on `/_mock/coverage`.

use askama::Template;
use axum::http::{StatusCode, Uri};
use axum::response::Response;
use payments_interface::Endpoint;
use payments_interface::coverage::Cell;

use super::{Chrome, console_page};
use crate::coverage::CoverageReport;
use crate::domain::access::{Refusal, Viewer};
use crate::state::Here;
use crate::web::html::render;

/// One cell's line.
#[derive(Debug)]
struct Line {
    name: String,
    /// `interface document` or `contract`.
    source: &'static str,
    count: u64,
}

impl Line {
    fn of(cell: Cell, count: u64) -> Self {
        Self {
            name: cell.to_string(),
            source: if cell.is_documented() {
                "interface document"
            } else {
                "contract"
            },
            count,
        }
    }
}

/// One endpoint's answer cells.
#[derive(Debug)]
struct EndpointCells {
    name: &'static str,
    cells: Vec<Line>,
}

/// One endpoint's count of one fault kind.
#[derive(Debug)]
struct FaultLine {
    /// `initiate commit-then-error`.
    name: String,
    met: u64,
    recovered: Option<u64>,
}

#[derive(Template)]
#[template(path = "console/coverage.html")]
struct CoveragePage {
    chrome: Chrome,
    since: String,
    replica: String,
    covered: usize,
    cells: usize,
    percent: String,
    faults_covered: usize,
    fault_cells: usize,
    fault_percent: String,
    endpoints: Vec<EndpointCells>,
    transitions: Vec<Line>,
    faults: Vec<FaultLine>,
    outside: Vec<(String, u64)>,
}

impl CoveragePage {
    fn new(chrome: Chrome, report: &CoverageReport) -> Self {
        let matrix = report.matrix();
        let mut endpoints: Vec<EndpointCells> = Endpoint::ALL
            .into_iter()
            .map(|e| EndpointCells {
                name: e.name(),
                cells: Vec::new(),
            })
            .collect();
        let mut transitions = Vec::new();
        for &(cell, count) in matrix.cells() {
            match cell.endpoint() {
                Some(endpoint) => endpoints[endpoint as usize]
                    .cells
                    .push(Line::of(cell, count)),
                None => transitions.push(Line::of(cell, count)),
            }
        }
        let fault_cells = report.fault_cells();
        Self {
            chrome,
            since: crate::domain::clock::format_time(report.since()),
            replica: payments_serve::pages::visible(report.replica()).into_owned(),
            covered: matrix.cells().iter().filter(|(_, n)| *n > 0).count(),
            cells: matrix.cells().len(),
            percent: format!("{:.1}", report.percent()),
            faults_covered: fault_cells.iter().filter(|(_, n)| *n > 0).count(),
            fault_cells: fault_cells.len(),
            fault_percent: format!("{:.1}", report.fault_percent()),
            endpoints,
            transitions,
            faults: report
                .faults()
                .iter()
                .map(|f| FaultLine {
                    name: f.name(),
                    met: f.met,
                    recovered: f.recovered,
                })
                .collect(),
            outside: matrix.outside().to_vec(),
        }
    }
}

/// `GET /_mock/ui/coverage`.
#[cfg_attr(
    feature = "openapi",
    utoipa::path(
        get,
        path = "/_mock/ui/coverage",
        operation_id = "consoleCoverage",
        tag = "console"
    )
)]
pub(crate) async fn page(Here(state): Here, viewer: Viewer, uri: Uri) -> Response {
    if !viewer.role.may_change() {
        return super::sign_in::refused(&state, Refusal::ReadOnly, &uri, Some(viewer));
    }
    let chrome = Chrome::new(&state, uri.path(), "coverage").seen_by(viewer);
    console_page(render(
        StatusCode::OK,
        &CoveragePage::new(chrome, &state.coverage()),
    ))
}
