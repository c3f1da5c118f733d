//! `payments reconcile LEDGER.csv`: the shop's ledger held against the
//! service, row by row (COMMANDS.md; issue 34).
//!
//! # Layout
//!
//! - `records`: CSV records in buffers of a bounded size (csv-core).
//! - `ledger`: the header's columns, and each row checked before anything
//!   is sent (`invalid`, `duplicate`).
//! - `judge`: the classes, and a looked-up row judged against the answer.
//! - `emit`: json lines and the table.
//! - `report`: the `--report` CSV, and what its FILE may be.
//! - `probe`: the first rows looked up, which stop the run when none of
//!   their answers can be used.
//!
//! Ctrl-C, SIGTERM and SIGHUP (`super::signals`) stop the run as a
//! failure does (exit 130, 143 or 129).
//!
//! # Memory
//!
//! The ledger is streamed: a thread reads and checks rows and hands them
//! over a channel of [`CHANNEL_ROWS`]; at most `--concurrency` look-ups are
//! in flight, and results are written in ledger order as they complete
//! (`buffered` keeps the order; a slow look-up holds back only the rows
//! after it). What grows with the ledger is the set of references seen (13
//! bytes a row, for `duplicate`) and, in table output only, the rows that
//! are not `match`, which wait in a temporary file.
//!
//! # Failures
//!
//! A row the service does not know is `missing`. A row whose own answer
//! the client cannot use (the service's envelope, but a success whose data
//! is missing or does not read, or an answer about another transaction or
//! reference) is `unverified`, and the run goes on, unless none of the
//! first rows looked up has a usable answer (`probe`): that is the
//! service's failure or the client's, not the rows', and the run stops as
//! below, with the first one's failure. Any other failure of a look-up (the service unreachable or failing after the client's retries,
//! an answer that is not the service's envelope, a key it refuses, a
//! reference several merchants use without `--merchant-id`) would fail
//! every row after it as well: the run stops there, the rows before it are
//! written, and the exit code is the failure's (4, or 1 for a refusal).

mod emit;
mod judge;
mod ledger;
mod probe;
mod records;
mod report;

use std::{
    fs::File,
    io::{IsTerminal as _, Read, Write as _},
    path::Path,
    time::Duration,
};

use futures::{FutureExt as _, StreamExt as _};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use payments_client::{Error as ClientError, ErrorCode};
use tokio::sync::mpsc;

use self::{
    emit::{Counts, Judged, Spool},
    judge::{Class, Judgement},
    ledger::{Checker, Row, Verdict},
    probe::{Answer, NoneUsable, Probe},
    records::{Next, Records},
    report::Report,
};
use super::{
    Context, signals,
    status::{Lookup, look_up},
};
use crate::{cli::ReconcileArgs, error::CliError, exit::Exit};

/// Rows read ahead of the look-ups (each a few hundred bytes at most).
const CHANNEL_ROWS: usize = 256;

/// What the reading thread sends: a row and the bytes read so far, or why
/// reading stopped.
type Item = Result<(Row, u64), ReadFailed>;

/// Reading the ledger failed after its header.
#[derive(Debug)]
enum ReadFailed {
    /// The source could not be read.
    Io {
        /// Bytes read before the failure.
        at_byte: u64,
        source: std::io::Error,
    },
    /// A quote never closes: what follows it cannot be read as rows (said
    /// where it opened).
    OpenQuote(String),
}

/// Reads, looks up and judges every row, and writes the results.
///
/// # Errors
///
/// An unreadable ledger or a bad flag (exit 2), and the failure that
/// stopped the run (see the module docs).
pub async fn run(ctx: &Context, args: ReconcileArgs) -> Result<Exit, CliError> {
    let default_currency = super::currency_flag("--currency", &args.currency)?;
    let (source, size) = open(&args.ledger)?;
    let mut records = Records::new(source);
    let columns = ledger::header(&mut records)
        .map_err(|source| input_error(&args.ledger, source))?
        .map_err(|problem| {
            CliError::Usage(format!("{}: {}", shown_path(&args.ledger), problem.0))
        })?;
    let mut report = match &args.report {
        Some(report) => Some(Report::create(report, ledger_file(&args.ledger).as_ref())?),
        None => None,
    };
    let mut spool = if ctx.is_json() {
        None
    } else {
        Some(Spool::new()?)
    };

    let (sender, mut receiver) = mpsc::channel::<Item>(CHANNEL_ROWS);
    let checker = Checker::new(columns, default_currency.clone());
    let reader = std::thread::Builder::new()
        .name("ledger".to_owned())
        .spawn(move || read_rows(records, checker, &sender))
        .map_err(CliError::Runtime)?;

    // Ctrl-C, SIGTERM or SIGHUP stops the look-ups; what was judged is
    // written whole, as for any stop.
    let mut interrupt = signals::Signals::new().map_err(CliError::Runtime)?;
    let progress = progress_bar(size);
    let merchant_id = ctx.settings.merchant_id;
    let rows = futures::stream::poll_fn(move |cx| receiver.poll_recv(cx));
    let mut judged = rows
        .map(|read| async move {
            let (row, consumed) = read?;
            let spanned = row.spanned.clone();
            let (judged, answer) = judge_row(ctx, row, merchant_id).await?;
            Ok::<_, Stop>((judged, consumed, answer, spanned))
        })
        .buffered(usize::from(args.concurrency));

    let mut counts = Counts::default();
    let mut probe = Probe::default();
    let mut stopped = None;
    let mut last_line = 0;
    loop {
        if let Some(signal) = interrupt.received().now_or_never() {
            stopped = Some(Stop::Signal(signal));
            break;
        }
        let next = match judged.next().now_or_never() {
            Some(next) => next,
            None => {
                progress.suspend(|| ctx.flush_queued())?;
                tokio::select! {
                    biased;
                    signal = interrupt.received() => {
                        stopped = Some(Stop::Signal(signal));
                        break;
                    }
                    next = judged.next() => next,
                }
            }
        };
        let Some(result) = next else { break };
        let (row, consumed, answer, spanned) = match result {
            Ok(done) => done,
            Err(stop) => {
                stopped = Some(stop);
                break;
            }
        };
        if let Some(none_usable) = probe.note(row.line, answer) {
            stopped = Some(Stop::NoneUsable(none_usable));
            break;
        }
        last_line = row.line;
        if let Some(spanned) = spanned {
            // Named whatever its class: a value over lines may be a quote
            // that swallowed rows, which must not pass unseen. Not
            // eprintln!, as below.
            progress.suspend(|| {
                let _ = writeln!(std::io::stderr().lock(), "note: ledger {spanned}");
            });
        }
        counts.add(row.judgement.class);
        progress.set_position(consumed);
        progress.set_message(format!("{} rows", counts.total()));
        if ctx.is_json() {
            progress.suspend(|| ctx.queue_line(&emit::json_line(&row)))?;
        }
        if let Some(report) = &mut report {
            report.write(&row)?;
        }
        if let Some(spool) = &mut spool
            && row.judgement.class != Class::Match
        {
            spool.push(&row)?;
        }
    }
    // Dropping the stream drops the receiver: a reader still sending stops.
    drop(judged);
    // At the end of the ledger the reading thread has returned (the channel
    // closed when it did); a panic there is a bug worth seeing. After a stop
    // it is left alone: it may be waiting on stdin, and it ends with the
    // process.
    if stopped.is_none() && reader.join().is_err() {
        return Err(CliError::Output(std::io::Error::other(
            "the ledger reader stopped unexpectedly",
        )));
    }
    progress.finish_and_clear();

    let complete = stopped.is_none();
    // Every row judged, and none of those looked up (fewer than the
    // probe's) had a usable answer.
    let none_usable = if complete { probe.finish() } else { None };
    if ctx.is_json() {
        ctx.queue_line(&emit::json_summary(
            &counts,
            default_currency.code(),
            complete,
        ))?;
        ctx.flush_queued()?;
    }
    if let Some(report) = report {
        report.finish(complete)?;
    }
    if let Some(spool) = spool {
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        spool.print(&counts, complete, ctx.style().width, &mut out)?;
        out.flush().map_err(CliError::Output)?;
    }
    if let Some(none_usable) = none_usable {
        // Not eprintln!, as below.
        let _ = writeln!(
            std::io::stderr().lock(),
            "reconcile: {}; the first one's failure follows",
            none_usable.said()
        );
        return Err(none_usable.error);
    }
    match stopped {
        None if counts.all_match() => Ok(Exit::Ok),
        None => Ok(Exit::Mismatch),
        Some(Stop::Read(ReadFailed::Io { at_byte, source })) => Err(input_error(
            &args.ledger,
            std::io::Error::new(source.kind(), format!("after {at_byte} bytes: {source}")),
        )),
        Some(Stop::Read(ReadFailed::OpenQuote(said))) => Err(CliError::Usage(format!(
            "{}: {said}; the rows before it are shown, none from it on was judged",
            shown_path(&args.ledger)
        ))),
        Some(Stop::Signal(signal)) => {
            // Not eprintln!, which panics when stderr cannot be written
            // (`2>/dev/full`): the note is lost, the exit code is not.
            let _ = writeln!(
                std::io::stderr().lock(),
                "reconcile interrupted by {} after ledger line {last_line}: the rows judged \
                 are shown, none after them",
                signal.name()
            );
            std::process::exit(signal.exit_code());
        }
        Some(Stop::NoneUsable(none_usable)) => {
            // Not eprintln!, as below.
            let _ = writeln!(
                std::io::stderr().lock(),
                "reconcile stopped at ledger line {}: {}; the rows before it are shown, none \
                 after it was judged; the first one's failure follows",
                none_usable.last_line,
                none_usable.said()
            );
            Err(none_usable.error)
        }
        Some(Stop::Call { line, error }) => {
            // Not eprintln!, which panics when stderr cannot be written
            // (`2>/dev/full`): the note is lost, the exit code is not.
            let _ = writeln!(
                std::io::stderr().lock(),
                "reconcile stopped at ledger line {line}: the rows before it are shown, \
                 none after it was judged"
            );
            Err(error)
        }
    }
}

/// Why the run stops before the end of the ledger.
#[derive(Debug)]
enum Stop {
    Read(ReadFailed),
    Signal(signals::Signal),
    Call {
        line: u64,
        error: CliError,
    },
    /// None of the first rows looked up had a usable answer.
    NoneUsable(NoneUsable),
}

impl From<ReadFailed> for Stop {
    fn from(failed: ReadFailed) -> Self {
        Self::Read(failed)
    }
}

/// The ledger's rows, checked, in order, until the end, a read error, or
/// the receiver going away.
fn read_rows<R: Read>(mut records: Records<R>, mut checker: Checker, sender: &mpsc::Sender<Item>) {
    loop {
        let row = match records.next() {
            Ok(Next::End) => return,
            Ok(Next::Record { line }) => Ok((checker.check(&records, line), records.consumed())),
            Ok(Next::TooLong { line, why }) => {
                Ok((checker.too_long(line, why), records.consumed()))
            }
            Ok(Next::OpenQuote(open)) => Err(ReadFailed::OpenQuote(checker.open_quote(open))),
            Err(source) => Err(ReadFailed::Io {
                at_byte: records.consumed(),
                source,
            }),
        };
        let failed = row.is_err();
        if sender.blocking_send(row).is_err() || failed {
            return;
        }
    }
}

/// A row the service has no transaction for: `missing`, and when its
/// reference has another normalization form (NFC, NFD) under which the
/// service has one, said so (looked up once per form; a failed look-up
/// leaves the plain `missing`).
async fn missing(
    ctx: &Context,
    valid: &ledger::Valid,
    merchant_id: Option<uuid::Uuid>,
) -> Judgement {
    if valid.transaction_id.is_none() {
        for (form, reference) in judge::other_forms(&valid.reference) {
            let lookup = Lookup::Reference(reference);
            if let Ok(reply) = look_up(ctx, &lookup, merchant_id, None).await {
                let found = reply.into_data();
                return judge::missing_beside(valid, form, found.transaction_id.as_ref());
            }
        }
    }
    judge::missing(valid)
}

/// A row's judgement: known already, or asked of the service; and what
/// its look-up gave (for the [`Probe`]).
async fn judge_row(
    ctx: &Context,
    row: Row,
    merchant_id: Option<uuid::Uuid>,
) -> Result<(Judged, Answer), Stop> {
    let mut answer = Answer::None;
    let (judgement, service) = match &row.verdict {
        Verdict::Invalid(reason) => (
            Judgement {
                class: Class::Invalid,
                detail: Some(reason.clone()),
            },
            None,
        ),
        Verdict::Duplicate { first_line } => (
            Judgement {
                class: Class::Duplicate,
                detail: Some(format!("referenceNo already on line {first_line}")),
            },
            None,
        ),
        Verdict::LookUp(valid) => {
            let lookup = match &valid.transaction_id {
                Some(id) => Lookup::Id(id.clone()),
                None => Lookup::Reference(valid.reference.clone()),
            };
            match look_up(ctx, &lookup, merchant_id, None).await {
                Ok(reply) => {
                    let found = reply.into_data();
                    answer = Answer::Usable;
                    (judge::judge(valid, &found), Some(Box::new(found)))
                }
                Err(err) if is_not_found(&err) => {
                    answer = Answer::Usable;
                    (missing(ctx, valid, merchant_id).await, None)
                }
                Err(CliError::Call { source, .. })
                    if matches!(*source, ClientError::InvalidInput(_)) =>
                {
                    // The client refused to send it: the row is malformed
                    // in a way the checks above did not catch.
                    (
                        Judgement {
                            class: Class::Invalid,
                            detail: Some(crate::output::printable(&source.to_string())),
                        },
                        None,
                    )
                }
                Err(error) if unusable_answer(&error).is_some() => {
                    // This row's own answer: the rows after it are asked
                    // on, unless no answer is usable (see the module docs).
                    let reason = unusable_answer(&error)
                        .map(crate::error::client_line)
                        .unwrap_or_default();
                    answer = Answer::Unusable(error);
                    (judge::unverified(&reason), None)
                }
                Err(error) => {
                    return Err(Stop::Call {
                        line: row.line,
                        error,
                    });
                }
            }
        }
    };
    let judged = Judged {
        line: row.line,
        cells: row.cells,
        judgement,
        service,
    };
    Ok((judged, answer))
}

/// An answer about this row that the client could not use, where the
/// service did answer with its envelope: a success whose `data` is missing
/// or does not read (`"amount":null`, `"amount":1e30`), or an answer about
/// another transaction or reference. It says nothing of the other rows.
/// Every other failure (no answer, a 5xx or 429 after the retries, a body
/// that is not the envelope, a refusal) would fail them too. The client's
/// error, when `err` is one.
fn unusable_answer(err: &CliError) -> Option<&ClientError> {
    match err {
        CliError::Call { source, .. }
            if matches!(
                **source,
                ClientError::Decode { .. }
                    | ClientError::MissingData { .. }
                    | ClientError::AnswerMismatch(_)
            ) =>
        {
            Some(source)
        }
        _ => None,
    }
}

fn is_not_found(err: &CliError) -> bool {
    matches!(err, CliError::Call { source, .. }
        if source.error_code() == Some(&ErrorCode::TransactionNotFound))
}

/// The ledger, and its size when known (for the progress bar).
fn open(path: &Path) -> Result<(Box<dyn Read + Send>, Option<u64>), CliError> {
    if path.as_os_str() == "-" && crate::commands::stdin_was_closed() {
        // Closed at start (`<&-`): said so, not read as an empty ledger.
        return Err(input_error(
            path,
            std::io::Error::other(crate::commands::STDIN_GONE),
        ));
    }
    if path.as_os_str() == "-" {
        return Ok((Box::new(std::io::stdin()), None));
    }
    let file = File::open(path).map_err(|source| input_error(path, source))?;
    let metadata = file
        .metadata()
        .map_err(|source| input_error(path, source))?;
    if metadata.is_dir() {
        return Err(input_error(
            path,
            std::io::Error::other("it is a directory, not a CSV file"),
        ));
    }
    let size = metadata.is_file().then_some(metadata.len());
    Ok((Box::new(file), size))
}

/// The ledger's file, to tell a `--report` naming it: the file behind
/// standard input for `-` (fstat of fd 0: `< shop.csv` is a file; a pipe
/// or a terminal is no report's). `None` when it cannot be known.
fn ledger_file(ledger: &Path) -> Option<std::fs::Metadata> {
    if ledger.as_os_str() == "-" {
        use std::os::fd::AsFd as _;
        std::io::stdin()
            .as_fd()
            .try_clone_to_owned()
            .map(File::from)
            .and_then(|stdin| stdin.metadata())
            .ok()
    } else {
        std::fs::metadata(ledger).ok()
    }
}

fn input_error(path: &Path, source: std::io::Error) -> CliError {
    CliError::Input {
        path: path.to_owned(),
        source,
    }
}

fn shown_path(path: &Path) -> String {
    if path.as_os_str() == "-" {
        "standard input".to_owned()
    } else {
        crate::text::cut(&path.display().to_string())
    }
}

/// On a terminal: a bar over the ledger's bytes, or a spinner for stdin.
fn progress_bar(size: Option<u64>) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = match size {
        Some(size) => {
            let bar = ProgressBar::new(size);
            if let Ok(style) =
                ProgressStyle::with_template("{bar:40} {percent:>3}% {msg} {elapsed} (eta {eta})")
            {
                bar.set_style(style);
            }
            bar
        }
        None => {
            let spinner = ProgressBar::new_spinner();
            spinner.enable_steady_tick(Duration::from_millis(120));
            spinner
        }
    };
    bar.set_draw_target(ProgressDrawTarget::stderr());
    bar
}
