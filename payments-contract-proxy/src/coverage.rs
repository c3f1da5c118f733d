//! Interface coverage as the proxy sees it (CONTRACT section 20): which of
//! the interface's answers and transitions (the cells of
//! `payments_interface::coverage`) the service was seen to give, counted
//! from each judged exchange; and how it is shown: the table on stderr at
//! the stop and of `check --coverage`, the envelope of
//! `GET /_proxy/coverage`, the console's page, the `--min-coverage` gate.
//!
//! An answer counts in the cell of its endpoint, HTTP status and
//! `errorCode` (a success in the endpoint's 200) when it is the
//! envelope, well formed; one that is not (an HTML page, a success with
//! `data` null) counts outside the cells, as `… (not the envelope)`. A transition is a
//! transaction's status seen to change: an initiate's answer is `created`
//! to its status; a later answer showing another status than the one the
//! proxy's memory last saw is that status to the new one. The proxy's own
//! answers and unjudged exchanges count nowhere: they show nothing of the
//! service.

use std::borrow::Cow;
use std::fmt::Write as _;

use payments_interface::Status;
use payments_interface::coverage::{Cell, Coverage};
use serde::Serialize;

use crate::exchange::{Endpoint, Parsed};
use crate::memory::Memory;
use crate::rules::Finding;

/// Distinct names seen outside the cells, at most: an upstream that
/// answers a new `errorCode` every time fills no more (the rest is
/// counted as `(other errorCodes)`).
const OUTSIDE_KEPT: usize = 100;
/// The longest `errorCode` shown as it was sent.
const CODE_SHOWN: usize = 64;

/// The `errorCode` as coverage names it: one the interface names as it
/// is; another as sent when it is short visible text (through `scrub`,
/// which replaces a secret the exchange carried), `(not a code)` when it
/// is not, `(other errorCodes)` once [`OUTSIDE_KEPT`] names are kept.
fn code_name<'a>(
    code: &'a str,
    coverage: &Coverage,
    scrub: impl Fn(&str) -> String,
) -> Cow<'a, str> {
    if payments_interface::ErrorCode::parse(code).is_some() {
        return Cow::Borrowed(code);
    }
    if code.is_empty() || code.len() > CODE_SHOWN || !code.bytes().all(|b| b.is_ascii_graphic()) {
        return Cow::Borrowed("(not a code)");
    }
    let code = scrub(code);
    let known = coverage
        .outside()
        .iter()
        .any(|(name, _)| name.rsplit(' ').next() == Some(code.as_str()));
    if !known && coverage.outside().len() >= OUTSIDE_KEPT {
        return Cow::Borrowed("(other errorCodes)");
    }
    Cow::Owned(code)
}

/// What an answer that is not the envelope is counted as, outside the
/// cells: `statusById 200 (not the envelope)`, `confirm 400
/// TRANSACTION_NOT_FOUND (not the envelope)`.
const NOT_THE_ENVELOPE: &str = "(not the envelope)";

/// Counts what a judged exchange showed of the interface, before
/// `rules::remember` records its status (the transition starts from the
/// status remembered before it). `findings` are the exchange's: an answer
/// the envelope rules (`envelope.shape`, `envelope.consistency`) found
/// wanting is no documented answer and earns no cell (a gateway's HTML
/// 200 is not the service's success): it counts outside the cells.
/// `scrub` replaces the secrets of the exchange in an `errorCode` the
/// interface does not name.
pub(crate) fn observe(
    p: &Parsed<'_>,
    findings: &[Finding],
    memory: &Memory,
    coverage: &mut Coverage,
    scrub: impl Fn(&str) -> String,
) {
    let Some(operation) = p.endpoint.operation() else {
        return;
    };
    let envelope = p.envelope();
    let code = envelope
        .filter(|e| e.success() == Some(false))
        .and_then(|e| e.code());
    let code = code.as_deref().map(|code| code_name(code, coverage, scrub));
    let malformed = findings
        .iter()
        .any(|f| matches!(f.rule, "envelope.shape" | "envelope.consistency"));
    if malformed {
        let name = match code {
            Some(code) => format!("{code} {NOT_THE_ENVELOPE}"),
            None => NOT_THE_ENVELOPE.to_owned(),
        };
        coverage.answer(operation, p.status(), Some(&name));
    } else {
        coverage.answer(operation, p.status(), code.as_deref());
    }
    let Some(data) = p.success_data() else {
        return;
    };
    let Some(to) = data.text("status").as_deref().and_then(Status::parse) else {
        return;
    };
    // The transaction the answer is about (a confirm's, as the rules
    // remember it, when its answer names none).
    let Some(id) = data.text("transactionId").or_else(|| {
        (p.endpoint == Endpoint::Confirm)
            .then(|| p.request_text("transactionId"))
            .flatten()
    }) else {
        return;
    };
    match memory.transaction(&id).and_then(|seen| seen.status) {
        None if p.endpoint == Endpoint::Initiate => coverage.transition(None, to),
        Some(from) if from != to => coverage.transition(Some(from), to),
        _ => {}
    }
}

/// The percentage as shown: one decimal place.
pub(crate) fn shown(percent: f64) -> f64 {
    (percent * 10.0).round() / 10.0
}

/// Who gives a cell: the interface document, or this project's contract.
fn whose(cell: Cell) -> &'static str {
    if cell.is_documented() {
        "document"
    } else {
        "contract"
    }
}

/// One cell as `GET /_proxy/coverage` shows it.
#[derive(Debug, Serialize)]
struct CellShown {
    /// `confirm 400 TRANSACTION_NOT_FOUND`, `transition created -> PENDING`.
    name: String,
    /// `answer` or `transition`.
    kind: &'static str,
    /// The endpoint of an answer.
    endpoint: Option<&'static str>,
    /// `document` or `contract`.
    whose: &'static str,
    /// How often it was seen.
    count: u64,
}

/// Something seen outside the cells.
#[derive(Debug, Serialize)]
struct OutsideShown<'a> {
    name: &'a str,
    count: u64,
}

/// The coverage as `GET /_proxy/coverage` (and `check --output json
/// --coverage`) shows it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Shown<'a> {
    /// Cells seen at least once, in percent (one decimal place).
    percent: f64,
    /// How many cells were seen.
    covered: usize,
    /// How many cells there are.
    total: usize,
    cells: Vec<CellShown>,
    /// What was seen outside the cells (an undocumented code, a status
    /// moving back), by name, in the order first seen.
    outside: Vec<OutsideShown<'a>>,
}

impl<'a> Shown<'a> {
    pub(crate) fn of(coverage: &'a Coverage) -> Self {
        Self {
            percent: shown(coverage.percent()),
            covered: coverage.cells().iter().filter(|(_, n)| *n > 0).count(),
            total: coverage.cells().len(),
            cells: coverage
                .cells()
                .iter()
                .map(|&(cell, count)| CellShown {
                    name: cell.to_string(),
                    kind: match cell {
                        Cell::Transition { .. } => "transition",
                        _ => "answer",
                    },
                    endpoint: cell.endpoint().map(payments_interface::Endpoint::name),
                    whose: whose(cell),
                    count,
                })
                .collect(),
            outside: coverage
                .outside()
                .iter()
                .map(|(name, count)| OutsideShown {
                    name,
                    count: *count,
                })
                .collect(),
        }
    }
}

/// One row of the console's coverage page.
#[derive(Debug)]
pub(crate) struct Row {
    pub(crate) name: String,
    pub(crate) whose: &'static str,
    pub(crate) count: u64,
}

/// The console's rows: the cells (answers per endpoint, then the
/// transitions), and what was seen outside them.
pub(crate) fn rows(coverage: &Coverage) -> (Vec<Row>, Vec<Row>) {
    let cells = coverage
        .cells()
        .iter()
        .map(|&(cell, count)| Row {
            name: cell.to_string(),
            whose: whose(cell),
            count,
        })
        .collect();
    let outside = coverage
        .outside()
        .iter()
        .map(|(name, count)| Row {
            name: name.clone(),
            whose: "outside",
            count: *count,
        })
        .collect();
    (cells, outside)
}

/// `covered of total cells (p %)`.
pub(crate) fn headline(coverage: &Coverage) -> String {
    let covered = coverage.cells().iter().filter(|(_, n)| *n > 0).count();
    format!(
        "{covered} of {} cells seen ({:.1} %)",
        coverage.cells().len(),
        coverage.percent()
    )
}

/// The interface coverage as a table for a terminal (what the proxy
/// prints on stderr at the stop, and `check --coverage`): every cell with
/// how often it was seen and whose it is (`document` or `contract`), then
/// what was seen outside the cells.
///
/// ```
/// use payments_contract_proxy::{Coverage, coverage_table};
///
/// let table = coverage_table(&Coverage::new());
/// assert!(table.starts_with("interface coverage: 0 of "));
/// assert!(table.contains("       0  document  initiate 200"));
/// ```
pub fn table(coverage: &Coverage) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "interface coverage: {}", headline(coverage));
    let _ = writeln!(out, "{:>8}  {:<8}  cell", "seen", "whose");
    for &(cell, count) in coverage.cells() {
        let _ = writeln!(out, "{count:>8}  {:<8}  {cell}", whose(cell));
    }
    if coverage.outside().is_empty() {
        let _ = writeln!(out, "nothing seen outside the cells");
    } else {
        let _ = writeln!(out, "seen outside the cells:");
        for (name, count) in coverage.outside() {
            let _ = writeln!(out, "{count:>8}  {:<8}  {}", "outside", cell(name));
        }
    }
    out
}

/// Text from outside (a message quoting the upstream's answer, a path) as
/// one cell of the terminal's table: control characters as their control
/// pictures (an ESC could recolour or rewrite a CI log), a line break too.
pub(crate) fn cell(text: &str) -> std::borrow::Cow<'_, str> {
    let shown = payments_serve::pages::visible(text);
    if shown.contains(['\n', '\t']) {
        return shown
            .replace('\n', "\u{240a}")
            .replace('\t', "\u{2409}")
            .into();
    }
    shown
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::rules::test_support::{
        confirm_data, exchange, failure, initiate_body, initiate_data, ok, status_data,
    };
    use crate::rules::{judge, remember};

    fn run(exchanges: &[crate::exchange::Exchange]) -> Coverage {
        let mut memory = Memory::default();
        let mut coverage = Coverage::new();
        for exchange in exchanges {
            let parsed = Parsed::of(exchange);
            let findings = judge(&parsed, &memory);
            observe(&parsed, &findings, &memory, &mut coverage, str::to_owned);
            remember(&parsed, &mut memory);
        }
        coverage
    }

    #[test]
    fn the_table_shows_an_outside_codes_control_characters_as_symbols() {
        let coverage = run(&[exchange(
            "GET",
            "/api/payments/t1/status",
            json!(null),
            409,
            failure("X\u{1b}[31m\nforged line"),
        )]);
        assert_eq!(coverage.outside().len(), 1);
        let table = table(&coverage);
        assert!(
            !table.chars().any(|c| c.is_control() && c != '\n'),
            "{table:?}"
        );
        assert!(!table.lines().any(|l| l.starts_with("forged")), "{table}");
    }

    #[test]
    fn answers_and_transitions_are_counted_in_their_cells_or_outside() {
        let status = |s: &str| {
            exchange(
                "GET",
                "/api/payments/t1/status",
                json!(null),
                200,
                ok(status_data("t1", "R", s, "10.50")),
            )
        };
        let coverage = run(&[
            exchange(
                "POST",
                "/api/payments/initiate",
                initiate_body("R", 1050),
                200,
                ok(initiate_data("t1", "R", 1050)),
            ),
            status("INITIATED"),
            exchange(
                "POST",
                "/api/payments/confirm",
                json!({ "transactionId": "t1", "referenceNo": "R" }),
                200,
                ok(confirm_data("t1", "R", "CONFIRMED", "10.50")),
            ),
            status("SUCCESSFUL"),
            status("CONFIRMED"),
            exchange(
                "GET",
                "/api/payments/nope/status",
                json!(null),
                404,
                failure("TRANSACTION_NOT_FOUND"),
            ),
            exchange(
                "GET",
                "/api/payments/x/status",
                json!(null),
                502,
                json!("<html>"),
            ),
            exchange(
                "POST",
                "/api/payments/confirm",
                json!({ "transactionId": "t1", "referenceNo": "R" }),
                400,
                failure("TRANSACTION_ALREADY_CONFIRMED"),
            ),
            exchange("GET", "/api/other", json!(null), 200, json!({})),
        ]);
        let count = |name: &str| coverage.count(name).unwrap_or_else(|| panic!("{name}"));
        assert_eq!(count("initiate 200"), 1);
        assert_eq!(count("statusById 200"), 3);
        assert_eq!(count("confirm 200"), 1);
        assert_eq!(count("statusById 404 TRANSACTION_NOT_FOUND"), 1);
        assert_eq!(count("confirm 400 TRANSACTION_ALREADY_CONFIRMED"), 1);
        assert_eq!(count("transition created -> INITIATED"), 1);
        assert_eq!(count("transition INITIATED -> CONFIRMED"), 1);
        assert_eq!(count("transition CONFIRMED -> SUCCESSFUL"), 1);
        let outside: Vec<&str> = coverage.outside().iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            outside,
            [
                "transition SUCCESSFUL -> CONFIRMED",
                "statusById 502 (not the envelope)"
            ]
        );
        let table = table(&coverage);
        assert!(table.contains("interface coverage: "), "{table}");
        assert!(table.contains("statusById 502"), "{table}");
        let shown = serde_json::to_value(Shown::of(&coverage)).expect("JSON");
        assert_eq!(shown["total"], coverage.cells().len());
        assert_eq!(shown["cells"][0]["name"], "initiate 200");
        assert_eq!(shown["cells"][0]["whose"], "document");
        assert_eq!(shown["cells"][0]["endpoint"], "initiate");
        assert_eq!(
            shown["outside"][1]["name"],
            "statusById 502 (not the envelope)"
        );
    }

    /// A 200 that is not the envelope (a gateway's HTML page, a success
    /// with `data` null) is no documented answer: it earns no cell (so no
    /// coverage, and no `--min-coverage`), and counts outside them; a
    /// failure's code is kept in its name.
    #[test]
    fn an_answer_that_is_not_the_envelope_earns_no_cell() {
        let read = |status: u16, body: serde_json::Value| {
            exchange("GET", "/api/payments/t1/status", json!(null), status, body)
        };
        let coverage = run(&[
            read(200, json!("<html>ok</html>")),
            read(
                200,
                json!({"isSuccess": true, "errorCode": null, "message": null, "data": null}),
            ),
            read(
                404,
                json!({"isSuccess": false, "errorCode": "TRANSACTION_NOT_FOUND", "message": null, "data": null}),
            ),
        ]);
        assert_eq!(coverage.count("statusById 200"), Some(0));
        assert_eq!(
            coverage.count("statusById 404 TRANSACTION_NOT_FOUND"),
            Some(0)
        );
        assert!(coverage.cells().iter().all(|(_, n)| *n == 0));
        assert_eq!(
            coverage.outside(),
            [
                ("statusById 200 (not the envelope)".to_owned(), 2),
                (
                    "statusById 404 TRANSACTION_NOT_FOUND (not the envelope)".to_owned(),
                    1
                )
            ]
        );
        // The envelope, well formed: its cell.
        let coverage = run(&[read(200, ok(status_data("t1", "R", "INITIATED", "1.00")))]);
        assert_eq!(coverage.count("statusById 200"), Some(1));
        assert!(coverage.outside().is_empty());
    }

    #[test]
    fn codes_outside_the_interface_are_bounded_and_scrubbed() {
        let refused = |code: &str| {
            exchange(
                "GET",
                "/api/payments/x/status",
                json!(null),
                409,
                failure(code),
            )
        };
        let mut exchanges: Vec<_> = (0..150).map(|n| refused(&format!("CODE_{n}"))).collect();
        exchanges.push(refused("CODE_3"));
        exchanges.push(refused("two words"));
        exchanges.push(refused(&"X".repeat(65)));
        let mut memory = Memory::default();
        let mut coverage = Coverage::new();
        for exchange in &exchanges {
            let parsed = Parsed::of(exchange);
            observe(&parsed, &[], &memory, &mut coverage, |code| {
                code.replace("CODE_7", "[REDACTED]")
            });
            remember(&parsed, &mut memory);
        }
        let outside = coverage.outside();
        // The kept codes, `(other errorCodes)` and `(not a code)`.
        assert_eq!(outside.len(), OUTSIDE_KEPT + 2, "{outside:?}");
        let count = |name: &str| {
            outside
                .iter()
                .find(|(n, _)| n == name)
                .map_or(0, |(_, count)| *count)
        };
        assert_eq!(count("statusById 409 CODE_3"), 2, "a kept code counts on");
        assert_eq!(count("statusById 409 [REDACTED]"), 1, "scrubbed");
        assert_eq!(count("statusById 409 (not a code)"), 2, "spaces, length");
        assert_eq!(
            count("statusById 409 (other errorCodes)"),
            50,
            "past the bound"
        );
    }
}
