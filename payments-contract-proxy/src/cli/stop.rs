//! What the proxy says on stderr at the stop: the summary and the
//! interface coverage as tables (`--log-format text`), or as log events,
//! one JSON line each (`--log-format json`), with the same numbers; and
//! the report or recording that lacks lines. A stderr that cannot be
//! written loses them (never the run's exit code).

use std::path::PathBuf;

use payments_serve::logging::LogFormat;

use super::output::to_stderr;

use crate::coverage::{headline, rows, shown, table as coverage_table};
use crate::rules::Level;
use crate::{Coverage, Summary};

/// The target of the summary's events.
const SUMMARY: &str = "payments_contract_proxy::summary";
/// The target of the coverage's events.
const COVERAGE: &str = "payments_contract_proxy::coverage";

/// The summary and the coverage at the stop, in `format`.
pub(super) fn say_finished(format: LogFormat, summary: &Summary, coverage: &Coverage) {
    match format {
        LogFormat::Text => {
            to_stderr(&summary.table());
            to_stderr(&coverage_table(coverage));
        }
        LogFormat::Json => {
            log_summary(summary);
            log_coverage(coverage);
        }
    }
}

/// `--min-coverage` not met: a line of text, or a warning event.
pub(super) fn say_shortfall(format: LogFormat, shortfall: &str) {
    match format {
        LogFormat::Text => to_stderr(&format!("{shortfall}\n")),
        LogFormat::Json => tracing::warn!(target: SUMMARY, "{shortfall}"),
    }
}

/// The report and recording files that lack lines (`lacking`: each
/// file, and how many of the run's `exchanges` it lacks): the evidence is
/// incomplete.
pub(super) fn say_lacking(format: LogFormat, lacking: &[(PathBuf, u64)], exchanges: u64) {
    for (path, lost) in lacking {
        let path = path.display();
        let said = format!(
            "evidence incomplete: {path} lacks {lost} of the {exchanges} exchanges (their lines could not be written to it)"
        );
        match format {
            LogFormat::Text => to_stderr(&format!("error: {said}\n")),
            LogFormat::Json => tracing::error!(target: SUMMARY, path = %path, lost, "{said}"),
        }
    }
}

/// The summary's counts as one event (fields named as the report's JSON
/// names them, a dot for each level of nesting: `verdicts.pass`), then an
/// event per row of the table's rules: rule, level, count and the first
/// exchange that tripped it.
fn log_summary(summary: &Summary) {
    let endpoint = |name: &str| summary.endpoints.get(name).copied().unwrap_or(0);
    let verdict = |name: &str| summary.verdicts.get(name).copied().unwrap_or(0);
    let violations = summary.count(Level::Violation);
    let undocumented = summary.count(Level::Undocumented);
    let client = summary.count(Level::Client);
    tracing::info!(
        target: SUMMARY,
        exchanges = summary.exchanges,
        endpoints.initiate = endpoint("initiate"),
        endpoints.confirm = endpoint("confirm"),
        endpoints.statusById = endpoint("statusById"),
        endpoints.statusByReference = endpoint("statusByReference"),
        endpoints.other = endpoint("other"),
        verdicts.pass = verdict("pass"),
        verdicts.undocumented = verdict("undocumented"),
        verdicts.violation = verdict("violation"),
        verdicts.unchecked = verdict("unchecked"),
        levels.violation = violations,
        levels.undocumented = undocumented,
        levels.client = client,
        "contract check: {} exchanges; violations {violations}, undocumented {undocumented}, client {client}",
        summary.exchanges
    );
    for rule in &crate::rules::RULES {
        let Some(count) = summary.rules.get(rule.id) else {
            continue;
        };
        for (level, n) in &count.levels {
            tracing::info!(
                target: SUMMARY,
                rule = rule.id,
                level,
                count = n,
                first.seq = count.first.seq,
                first.request = count.first.request.as_str(),
                first.status = count.first.status,
                first.message = count.first.message.as_str(),
                "rule {} ({level}): {n}",
                rule.id
            );
        }
    }
}

/// The coverage as one event (cells seen of all, the percentage shown),
/// then an event per cell and per name seen outside the cells.
fn log_coverage(coverage: &Coverage) {
    let (cells, outside) = rows(coverage);
    let covered = cells.iter().filter(|row| row.count > 0).count();
    tracing::info!(
        target: COVERAGE,
        covered,
        total = cells.len(),
        percent = shown(coverage.percent()),
        outside = outside.len(),
        "interface coverage: {}",
        headline(coverage)
    );
    for row in cells.iter().chain(&outside) {
        tracing::info!(
            target: COVERAGE,
            cell = row.name.as_str(),
            whose = row.whose,
            seen = row.count,
            "{} seen {}",
            row.name,
            row.count
        );
    }
}
