//! `payments-mock-server check FILE`: the proxy's checks offline, on a
//! recording, in the order it was recorded; the same summary and exit code,
//! the interface coverage the recording shows, and the trail its JUnit and
//! SARIF files are written from. A broken line is reported with its
//! number and the rest still checked.

use payments_interface::coverage::Coverage;

use super::coverage;
use super::exchange::Parsed;
use super::memory::Memory;
use super::record::{self, BadLines};
use super::report::Summary;
use super::rules::{self, Verdict};
use super::trail::Trail;

/// What checking a recording found.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CheckOutcome {
    /// The summary, as the proxy would have made it.
    pub summary: Summary,
    /// Lines that are no recorded exchange: the first ones, by number, and
    /// how many.
    pub bad_lines: BadLines,
    /// The interface's answers and transitions the recording shows
    /// (CONTRACT section 20).
    pub coverage: Coverage,
    /// Each exchange, compactly, for JUnit and SARIF (with the line it
    /// was read from); empty when not kept.
    pub trail: Trail,
}

/// Checks a recording, read line by line from `reader`.
///
/// ```
/// let recording = r#"{"seq":1,"time":"2026-11-25T10:00:00Z","request":{"method":"GET","path":"/api/payments/x/status"},"response":{"status":404,"body":"{\"isSuccess\":false,\"errorCode\":\"TRANSACTION_NOT_FOUND\",\"message\":\"no such transaction\",\"data\":null}"},"durationMs":1.5}"#;
/// let outcome = payments_contract_proxy::check_recording(recording.as_bytes()).expect("a recording");
/// assert_eq!(outcome.summary.exchanges, 1);
/// assert_eq!(outcome.summary.exit_code(false), 0);
/// assert_eq!(outcome.coverage.count("statusById 404 TRANSACTION_NOT_FOUND"), Some(1));
/// assert_eq!(outcome.trail.len(), 1);
/// ```
///
/// # Errors
///
/// A message when the reader fails, or when not one line is a recorded
/// exchange (the file is not a recording at all), naming the first line's
/// problem.
pub fn check_recording(reader: impl std::io::BufRead) -> Result<CheckOutcome, String> {
    check(reader, true)
}

/// [`check_recording`], keeping the trail only when `keep_trail` (JUnit or
/// SARIF asked for): a recording of any length is then read in the memory
/// of the rules' bounded memory alone.
pub(crate) fn check(
    reader: impl std::io::BufRead,
    keep_trail: bool,
) -> Result<CheckOutcome, String> {
    let mut memory = Memory::default();
    let mut summary = Summary::default();
    let mut coverage = Coverage::new();
    let mut trail = Trail::default();
    let mut any = false;
    // A recording appended to by several runs (`--record` appends) starts
    // its `seq` again at each: each run is judged on its own, with the
    // memory its proxy started with, and its exchanges numbered on after
    // the run before (so each keeps one name in the JUnit and the summary).
    // Within a run the lines come in the order the proxy judged them (as
    // each exchange finished, so 1, 3, 2 under concurrency): that order is
    // kept, and only a `seq` the run already showed starts a new one.
    let mut runs = Runs::default();
    let bad_lines = record::numbered(reader, |line, mut exchange| {
        any = true;
        let (new_run, number) = runs.place(exchange.seq);
        if new_run {
            memory = Memory::default();
        }
        exchange.seq = number;
        let parsed = Parsed::of(&exchange);
        let whole = exchange.request.is_whole() && exchange.response.is_whole();
        // None of the four endpoints: nothing to judge it against, as the
        // live proxy says (a recording from before said `judged` for it).
        let judged = whole
            && exchange.judged
            && !exchange.proxy_answer
            && parsed.endpoint.operation().is_some();
        let (verdict, findings) = if judged {
            let findings = rules::judge(&parsed, &memory);
            // A recording's secrets are already replaced.
            coverage::observe(&parsed, &findings, &memory, &mut coverage, str::to_owned);
            rules::remember(&parsed, &mut memory);
            (Verdict::of(&findings), findings)
        } else {
            (Verdict::Unchecked, Vec::new())
        };
        summary.add(&exchange, &parsed.endpoint, verdict, &findings);
        if keep_trail {
            trail.push(&exchange, &parsed.endpoint, verdict, &findings, Some(line));
        }
    })
    .map_err(|e| format!("cannot read the recording: {e}"))?;
    if !any {
        return Err(match bad_lines.first.first() {
            Some(first) => format!(
                "not a recording (JSON Lines of exchanges): no line is a recorded exchange; line {}: {}",
                first.line, first.reason
            ),
            None => "the recording is empty".to_owned(),
        });
    }
    Ok(CheckOutcome {
        summary,
        bad_lines,
        coverage,
        trail,
    })
}

/// How many `seq`s below the highest of a run may still come (an
/// exchange overtaken by this many later ones is past it: taken for the
/// start of a new run).
const OVERTAKEN: u64 = 65_536;

/// Where a recording's runs start, and each exchange's number across them.
#[derive(Debug, Default)]
struct Runs {
    /// The highest `seq` of this run.
    max: u64,
    /// The `seq`s below `max` this run has not shown yet (the highest
    /// [`OVERTAKEN`] of them): exchanges still to finish.
    missing: std::collections::BTreeSet<u64>,
    /// The numbers the runs before used.
    offset: u64,
    /// The highest number given.
    numbered: u64,
}

impl Runs {
    /// Whether `seq` starts a new run (a `seq` this run showed already),
    /// and its number in the whole recording.
    fn place(&mut self, seq: u64) -> (bool, u64) {
        let new_run = self.max != 0 && seq <= self.max && !self.missing.remove(&seq);
        if new_run {
            self.offset = self.numbered;
            self.max = 0;
            self.missing.clear();
        }
        if seq > self.max {
            let from = self
                .max
                .saturating_add(1)
                .max(seq.saturating_sub(OVERTAKEN));
            self.missing.extend(from..seq);
            self.max = seq;
            while self.missing.len() as u64 > OVERTAKEN {
                self.missing.pop_first();
            }
        }
        let number = seq.saturating_add(self.offset);
        self.numbered = self.numbered.max(number);
        (new_run, number)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::rules::test_support::{exchange, failure};

    #[test]
    fn broken_lines_are_numbered_and_the_rest_checked() {
        let bad = serde_json::to_string(&exchange(
            "GET",
            "/api/payments/x/status",
            json!(null),
            502,
            json!("<html>"),
        ))
        .expect("serializes");
        let good = serde_json::to_string(&exchange(
            "GET",
            "/api/payments/x/status",
            json!(null),
            404,
            failure("TRANSACTION_NOT_FOUND"),
        ))
        .expect("serializes");
        let outcome =
            check_recording(format!("{good}\n{{oops\n{bad}\n").as_bytes()).expect("a recording");
        assert_eq!(outcome.bad_lines.count, 1);
        assert_eq!(outcome.bad_lines.first[0].line, 2);
        assert_eq!(outcome.summary.exchanges, 2);
        assert_eq!(outcome.summary.exit_code(false), 1);
        // Recorded unjudged (a compressed body): never judged offline either.
        let mut unjudged: Value = serde_json::from_str(&bad).expect("JSON");
        unjudged["judged"] = json!(false);
        let outcome = check_recording(format!("{unjudged}\n").as_bytes()).expect("a recording");
        assert_eq!(outcome.summary.verdicts.get("unchecked"), Some(&1));
        assert_eq!(outcome.summary.exit_code(false), 0);
        let err = check_recording("hello\nworld\n".as_bytes()).expect_err("not a recording");
        assert!(err.contains("line 1"), "{err}");
        assert!(check_recording("".as_bytes()).is_err());
    }

    #[test]
    fn coverage_and_the_trail_carry_each_exchanges_line() {
        let missing = serde_json::to_string(&exchange(
            "GET",
            "/api/payments/x/status",
            json!(null),
            400,
            failure("TRANSACTION_NOT_FOUND"),
        ))
        .expect("serializes");
        let outcome = check_recording(format!("\n{missing}\n").as_bytes()).expect("a recording");
        assert_eq!(
            outcome
                .coverage
                .count("statusById 404 TRANSACTION_NOT_FOUND"),
            Some(0)
        );
        assert_eq!(
            outcome.coverage.outside()[0].0,
            "statusById 400 TRANSACTION_NOT_FOUND"
        );
        let cases: Vec<_> = outcome.trail.cases().collect();
        assert_eq!(cases.len(), 1);
        assert_eq!(cases[0].line, Some(2), "the line it was read from");
        assert!(!cases[0].findings.is_empty());
        let lean = check(format!("{missing}\n").as_bytes(), false).expect("a recording");
        assert!(lean.trail.is_empty());
        assert_eq!(lean.summary.exchanges, 1);
    }

    /// `--record` appends: two runs that each initiated `R` once are each
    /// clean, as each live proxy found; one run that initiated it twice
    /// is not. The later run's exchanges are numbered on.
    #[test]
    fn a_recording_appended_by_two_runs_judges_each_on_its_own() {
        let initiate = |seq: u64, id: &str| {
            let mut e = exchange(
                "POST",
                "/api/payments/initiate",
                crate::rules::test_support::initiate_body("R", 1050),
                200,
                crate::rules::test_support::ok(crate::rules::test_support::initiate_data(
                    id, "R", 1050,
                )),
            );
            e.seq = seq;
            serde_json::to_string(&e).expect("serializes")
        };
        let two_runs = format!("{}\n{}\n", initiate(1, "t1"), initiate(1, "t2"));
        let outcome = check_recording(two_runs.as_bytes()).expect("a recording");
        assert_eq!(
            outcome.summary.exit_code(false),
            0,
            "{}",
            outcome.summary.table()
        );
        let seqs: Vec<u64> = outcome.trail.cases().map(|c| c.seq).collect();
        assert_eq!(seqs, [1, 2]);
        let one_run = format!("{}\n{}\n", initiate(1, "t1"), initiate(2, "t2"));
        let outcome = check_recording(one_run.as_bytes()).expect("a recording");
        assert_eq!(outcome.summary.exit_code(false), 1, "initiate.duplicate");
    }

    /// Lines are written as exchanges finish: 1, 3, 2 is one run, judged
    /// in that order as the live proxy judged it (the reviewer's case: a
    /// slow read of A, a quick one, then an initiate of B answered with
    /// A's transaction; and a regression after the out-of-order pair).
    #[test]
    fn exchanges_that_finished_out_of_order_are_one_run() {
        use crate::rules::test_support::{initiate_body, initiate_data, ok, status_data};
        let line = |seq: u64, at_ms: i64, took_ms: f64, mut e: crate::exchange::Exchange| {
            e.seq = seq;
            e.time = chrono::DateTime::UNIX_EPOCH + chrono::Duration::milliseconds(at_ms);
            e.duration_ms = took_ms;
            serde_json::to_string(&e).expect("serializes")
        };
        let read = |status: &str| {
            exchange(
                "GET",
                "/api/payments/tA/status",
                json!(null),
                200,
                ok(status_data("tA", "A", status, "10.50")),
            )
        };
        let initiate = |reference: &str| {
            exchange(
                "POST",
                "/api/payments/initiate",
                initiate_body(reference, 1050),
                200,
                ok(initiate_data("tA", "A", 1050)),
            )
        };
        let recording = [
            line(1, 0, 1.0, initiate("A")),
            line(3, 2000, 1.0, read("SUCCESSFUL")),
            line(2, 1000, 5000.0, read("INITIATED")),
            line(4, 10_000, 1.0, initiate("B")),
            line(5, 11_000, 1.0, read("INITIATED")),
        ]
        .join("\n");
        let outcome = check_recording(recording.as_bytes()).expect("a recording");
        let cases: Vec<_> = outcome.trail.cases().collect();
        let seqs: Vec<u64> = cases.iter().map(|c| c.seq).collect();
        assert_eq!(seqs, [1, 3, 2, 4, 5], "numbered as recorded");
        let rules = |n: usize| -> Vec<&str> { cases[n].findings.iter().map(|f| f.rule).collect() };
        assert_eq!(rules(2), Vec::<&str>::new(), "overlapping: either order");
        assert_eq!(
            rules(3),
            ["data.echo", "status.regressed", "transaction.id-reused"]
        );
        assert_eq!(rules(4), ["status.regressed"]);
        assert_eq!(outcome.summary.exit_code(false), 1);
        // Two runs appended, the second's first exchange finishing after
        // its second: 1, 2, 3 then 2, 1.
        let appended = [
            line(1, 0, 1.0, initiate("A")),
            line(2, 1, 1.0, read("INITIATED")),
            line(3, 2, 1.0, read("INITIATED")),
            line(2, 100_000, 1.0, read("INITIATED")),
            line(1, 99_000, 5000.0, initiate("A")),
        ]
        .join("\n");
        let outcome = check_recording(appended.as_bytes()).expect("a recording");
        let seqs: Vec<u64> = outcome.trail.cases().map(|c| c.seq).collect();
        assert_eq!(seqs, [1, 2, 3, 5, 4]);
        assert_eq!(
            outcome.summary.exit_code(false),
            0,
            "each run on its own: {}",
            outcome.summary.table()
        );
    }

    /// A hand-edited line may say any time chrono reads: the last instant
    /// it holds, a long exchange at it, is judged (its answer complete at
    /// that instant), not a panic of `check`.
    #[test]
    fn times_at_the_end_of_chronos_range_are_judged_without_overflow() {
        use crate::rules::test_support::{initiate_body, initiate_data, ok, status_data};
        let at_the_end = |seq: u64, mut e: crate::exchange::Exchange| {
            let mut line: Value = serde_json::to_value({
                e.seq = seq;
                e.duration_ms = 1e12;
                e
            })
            .expect("serializes");
            line["time"] = json!("+262142-12-31T23:59:59.999999999Z");
            line.to_string()
        };
        let read = |status: &str| {
            exchange(
                "GET",
                "/api/payments/tA/status",
                json!(null),
                200,
                ok(status_data("tA", "A", status, "10.50")),
            )
        };
        let initiate = exchange(
            "POST",
            "/api/payments/initiate",
            initiate_body("A", 1050),
            200,
            ok(initiate_data("tA", "A", 1050)),
        );
        let recording = [
            at_the_end(1, initiate),
            at_the_end(2, read("SUCCESSFUL")),
            at_the_end(3, read("INITIATED")),
        ]
        .join("\n");
        let outcome = check_recording(recording.as_bytes()).expect("a recording");
        assert_eq!(outcome.bad_lines.count, 0, "each line an exchange");
        let rules: Vec<Vec<&str>> = outcome
            .trail
            .cases()
            .map(|c| c.findings.iter().map(|f| f.rule).collect())
            .collect();
        assert_eq!(rules[2], ["status.regressed"], "still judged: {rules:?}");
    }
}
