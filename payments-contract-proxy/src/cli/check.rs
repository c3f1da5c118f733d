//! `check FILE`: the proxy's rules on a recording, offline.

use std::fmt::Write as _;
use std::process::ExitCode;

use super::output::{stdout_closed, to_stderr, to_stdout, unwritable_output};
use super::{CheckArgs, CheckOutput, coverage_shortfall};
use crate::Summary;
use crate::check::{CheckOutcome, check};
use crate::config::files;
use crate::coverage::{Shown, table as coverage_table};

/// `check FILE`: the proxy's rules on a recording; the summary on stdout
/// (with `--coverage`, the interface coverage too), broken lines on
/// stderr; the JUnit and SARIF files written; exit 1 on a violation (with
/// `--strict` also an undocumented finding) or a coverage below
/// `--min-coverage`, 2 for a file that cannot be read or written, or a
/// stdout that cannot be (closed, full, its reader gone: the files are
/// written all the same). A stderr that cannot be written loses its
/// lines, never the run.
#[must_use]
pub fn run_check(args: &CheckArgs) -> ExitCode {
    // First, before a file is opened: a stdout closed at the start.
    let closed = stdout_closed();
    // The JUnit and SARIF files replace what they name: never the
    // recording read, nor each other.
    let outputs: Vec<files::Named<'_>> = [
        args.evidence.junit.as_deref().map(|p| ("--junit", p)),
        args.evidence.sarif.as_deref().map(|p| ("--sarif", p)),
    ]
    .into_iter()
    .flatten()
    .collect();
    if let Err(e) = files::refuse_shared(&outputs, &[("the recording", &args.file)]) {
        to_stderr(&format!("error: {e}\n"));
        return ExitCode::from(2);
    }
    let file = match std::fs::File::open(&args.file) {
        Ok(file) => file,
        Err(e) => {
            to_stderr(&format!(
                "error: cannot read {}: {e}\n",
                args.file.display()
            ));
            return ExitCode::from(2);
        }
    };
    let evidence = &args.evidence;
    let keep_trail = evidence.junit.is_some() || evidence.sarif.is_some();
    let outcome = match check(std::io::BufReader::new(file), keep_trail) {
        Ok(outcome) => outcome,
        Err(e) => {
            to_stderr(&format!("error: {}: {e}\n", args.file.display()));
            return ExitCode::from(2);
        }
    };
    let mut bad = String::new();
    for line in &outcome.bad_lines.first {
        let _ = writeln!(
            bad,
            "{}:{}: {}",
            args.file.display(),
            line.line,
            line.reason
        );
    }
    let unshown = outcome.bad_lines.count - outcome.bad_lines.first.len();
    if unshown > 0 {
        let _ = writeln!(
            bad,
            "{}: {unshown} more lines are no recorded exchange ({} in all)",
            args.file.display(),
            outcome.bad_lines.count
        );
    }
    to_stderr(&bad);
    let shown = match shown(args, &outcome) {
        Ok(text) => text,
        Err(e) => {
            to_stderr(&format!("error: {e}\n"));
            return ExitCode::FAILURE;
        }
    };
    let printed = if closed {
        Err(std::io::Error::other("stdout is closed"))
    } else {
        to_stdout(&shown)
    };
    // The files whatever became of stdout: they are the evidence.
    if let Err(e) = write_files(args, &outcome) {
        to_stderr(&format!("error: {e}\n"));
        return ExitCode::from(2);
    }
    if let Err(e) = printed {
        to_stderr(&format!("error: {}\n", unwritable_output(&e)));
        return ExitCode::from(2);
    }
    let verdict = outcome.summary.exit_code(args.strict);
    let shortfall = coverage_shortfall(&outcome.coverage, evidence.min_coverage);
    if let Some(shortfall) = &shortfall {
        to_stderr(&format!("{shortfall}\n"));
    }
    ExitCode::from(verdict.max(u8::from(shortfall.is_some())))
}

/// What `check` prints on stdout: the table (and the coverage's), or the
/// summary as JSON.
fn shown(args: &CheckArgs, outcome: &CheckOutcome) -> Result<String, serde_json::Error> {
    match args.output {
        CheckOutput::Table => {
            let mut text = outcome.summary.table();
            if args.coverage {
                text.push_str(&coverage_table(&outcome.coverage));
            }
            Ok(text)
        }
        CheckOutput::Json => {
            let json = if args.coverage {
                serde_json::to_string_pretty(&WithCoverage {
                    summary: &outcome.summary,
                    coverage: Shown::of(&outcome.coverage),
                })
            } else {
                serde_json::to_string_pretty(&outcome.summary)
            };
            json.map(|json| json + "\n")
        }
    }
}

/// `check --output json --coverage`: the summary, and its `coverage`.
#[derive(serde::Serialize)]
struct WithCoverage<'a> {
    #[serde(flatten)]
    summary: &'a Summary,
    coverage: Shown<'a>,
}

/// `check`'s `--junit` and `--sarif` files, each written whole (a
/// temporary file renamed over it), each result of the SARIF located at
/// the recording's line.
fn write_files(args: &CheckArgs, outcome: &CheckOutcome) -> Result<(), String> {
    if let Some(path) = &args.evidence.junit {
        files::write_whole(path, |out| outcome.trail.write_junit(out, args.strict))
            .map_err(|e| format!("cannot write the JUnit file {}: {e}", path.display()))?;
    }
    if let Some(path) = &args.evidence.sarif {
        files::write_whole(path, |out| outcome.trail.write_sarif(out, Some(&args.file)))
            .map_err(|e| format!("cannot write the SARIF file {}: {e}", path.display()))?;
    }
    Ok(())
}
