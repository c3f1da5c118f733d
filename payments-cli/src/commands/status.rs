//! `payments status`: one or many look-ups by id or reference, optionally
//! waiting for a final state.
//!
//! Look-ups run concurrently (`--concurrency`); results are printed in input
//! order; a failed look-up is reported and remembered, never fatal to the
//! others; the exit code is the highest of them (ripgrep's "messages" habit).
//!
//! With many look-ups (`--from-file`, or more than one id or reference),
//! `json` prints one line per input, malformed lines included, each naming
//! the input it answers: `{"input":{"line":N,"value":"..."},"envelope":...,
//! "error":...}` (`"arg":N` for an id or reference given as an argument), so
//! results join back to their input (COMMANDS.md, "Output").

use std::time::Duration;
use tracing::Instrument as _;

use futures::{FutureExt as _, StreamExt as _};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use payments_client::wire::encode_path_segment;
use payments_client::{Currency, Error as ClientError, PaymentStatus, Reply, WaitOptions};
use serde_json::value::RawValue;
use uuid::Uuid;

use super::Context;
use crate::{
    cli::StatusArgs,
    error::{self, CliError},
    exit::Exit,
    output::{self, LookupRow, StatusView},
};

/// What one input asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    Id(String),
    Reference(String),
}

impl Lookup {
    fn text(&self) -> &str {
        match self {
            Self::Id(text) | Self::Reference(text) => text,
        }
    }

    fn is_reference(&self) -> bool {
        matches!(self, Self::Reference(_))
    }

    fn describe(&self) -> String {
        match self {
            // At most 200 bytes of either, as usage errors quote a value.
            Self::Id(id) => format!("status of {}", crate::text::cut(id)),
            Self::Reference(reference) => {
                format!("status of reference {}", crate::text::cut(reference))
            }
        }
    }
}

/// Where an input came from, for the `input` of its json line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The Nth id or reference on the command line (1-based).
    Arg(usize),
    /// Line N of `--from-file` (1-based).
    Line(usize),
}

/// One input: a look-up, or a line of `--from-file` that could not be one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Input {
    pub origin: Origin,
    /// The text as given (a line trimmed; lossy UTF-8, cut to 200 bytes,
    /// when the line is malformed).
    pub value: String,
    /// The look-up, or why the line is not one.
    pub lookup: Result<Lookup, String>,
}

impl Input {
    fn arg(index: usize, lookup: Lookup) -> Self {
        Self {
            origin: Origin::Arg(index + 1),
            value: lookup.text().to_owned(),
            lookup: Ok(lookup),
        }
    }
}

/// How one look-up ended.
#[derive(Debug)]
enum Outcome {
    Found(Box<Reply<PaymentStatus>>),
    Failed(CliError),
    Malformed { line: usize, reason: String },
}

impl Outcome {
    fn malformed(input: &Input, reason: &str) -> Self {
        let line = match input.origin {
            Origin::Line(line) | Origin::Arg(line) => line,
        };
        Self::Malformed {
            line,
            reason: reason.to_owned(),
        }
    }
}

/// Runs the look-ups and prints them in input order. An input without
/// any (a `--from-file` of blank and comment lines) is said in a `note:`
/// on stderr, with nothing on stdout and exit 0: no call, none failed.
///
/// # Errors
///
/// Only what stops everything: an unreadable `--from-file`, or stdout gone.
pub async fn run(ctx: &Context, args: StatusArgs) -> Result<Exit, CliError> {
    let inputs = collect_inputs(&args)?;
    let merchant_id = ctx.settings.merchant_id;
    let wait = args.wait.then_some(args.wait_timeout);
    let currency = args
        .currency
        .as_deref()
        .map(|code| super::currency_flag("--currency", code))
        .transpose()?;
    if inputs.is_empty() {
        // A `--from-file` with only blank or comment lines (a quiet day's
        // `grep … | payments status --from-file -`): zero look-ups, all of
        // them succeeded, as reconcile's ledger with only a header exits 0.
        // Said after the flags are checked: a bad --currency is still exit 2.
        super::stderr_line(nothing_to_look_up(args.from_file.as_deref()));
        return Ok(Exit::Ok);
    }
    let many = args.from_file.is_some() || inputs.len() > 1;

    let progress = progress_bar(ctx, inputs.len(), wait.is_some());
    let mut outcomes: Vec<Option<Outcome>> = (0..inputs.len()).map(|_| None).collect();
    let mut conflicts = Conflicts::default();
    // json lines go out as soon as every earlier input is done, so a script
    // reading a long file sees results while the rest are still running.
    let mut printed = 0;
    let mut stream = futures::stream::iter(inputs.iter().enumerate())
        .map(|(index, input)| async move {
            let outcome = match &input.lookup {
                Err(reason) => Outcome::malformed(input, reason),
                Ok(lookup) => match look_up(ctx, lookup, merchant_id, wait).await {
                    Ok(reply) => Outcome::Found(Box::new(reply)),
                    Err(err) => Outcome::Failed(err),
                },
            };
            (index, outcome)
        })
        .buffer_unordered(usize::from(args.concurrency));
    loop {
        // Queued lines go out whenever nothing more is ready, so a reader
        // still sees each result as soon as the service answers it.
        let next = match stream.next().now_or_never() {
            Some(next) => next,
            None => {
                progress.suspend(|| ctx.flush_queued())?;
                stream.next().await
            }
        };
        let Some((index, outcome)) = next else { break };
        progress.inc(1);
        let conflicted = conflicts.note(index, &outcome);
        outcomes[index] = Some(outcome);
        // Found answers that another answer of the run contradicts are
        // refused, the one before as well as the one after (conflicts.rs).
        for k in conflicted {
            if let (Some(Outcome::Found(reply)), Ok(lookup)) = (&outcomes[k], &inputs[k].lookup) {
                let written = k < printed && ctx.is_json();
                let refused = conflicts.refuse(lookup, reply, written);
                outcomes[k] = Some(Outcome::Failed(refused));
            }
        }
        while let Some(Some(ready)) = outcomes.get(printed) {
            if ctx.is_json() {
                let input = &inputs[printed];
                progress.suspend(|| print_json(ctx, input, ready, many))?;
            }
            printed += 1;
        }
    }
    progress.suspend(|| ctx.flush_queued())?;
    progress.finish_and_clear();

    let outcomes: Vec<Outcome> = outcomes.into_iter().flatten().collect();
    report(ctx, &inputs, &outcomes, currency.as_ref())
}

/// `json`: the envelope of one outcome, exactly as received, if there is
/// one; with many look-ups, one line for every input that names it.
fn print_json(ctx: &Context, input: &Input, outcome: &Outcome, many: bool) -> Result<(), CliError> {
    let envelope = match outcome {
        Outcome::Found(reply) => Some(reply.raw_envelope()),
        Outcome::Failed(err) => last_envelope(err),
        Outcome::Malformed { .. } => None,
    };
    if !many {
        return match envelope {
            Some(envelope) => ctx.queue_line(&crate::text::one_json_line(envelope)),
            None => Ok(()),
        };
    }
    let error = match outcome {
        Outcome::Found(_) => None,
        Outcome::Failed(err) => Some(err.to_string()),
        Outcome::Malformed { line, reason } => Some(format!("--from-file line {line}: {reason}")),
    };
    let received = match outcome {
        Outcome::Failed(err) => err.refused_envelope(),
        _ => None,
    };
    ctx.queue_line(&joined_line(input, envelope, error.as_deref(), received))
}

/// `{"input":{"line":N,"value":"..."},"envelope":<as received>,"error":...}`,
/// and for an answer the client refused (CONTRACT section 17) `"envelope":
/// null` and that answer under `"received"`.
///
/// The envelope is embedded as the service wrote it; only one that spans
/// several lines loses the white space between its tokens (nothing else:
/// keys keep their order, numbers their digits), so each result stays one
/// line. A refused answer that is not JSON at all is embedded as a string.
fn joined_line(
    input: &Input,
    envelope: Option<&str>,
    error: Option<&str>,
    received: Option<&str>,
) -> String {
    #[derive(serde::Serialize)]
    struct Joined<'a> {
        input: InputJson<'a>,
        envelope: Option<&'a RawValue>,
        error: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        received: Option<Received<'a>>,
    }
    #[derive(serde::Serialize)]
    #[serde(untagged)]
    enum Received<'a> {
        Json(&'a RawValue),
        Text(&'a str),
    }
    #[derive(serde::Serialize)]
    struct InputJson<'a> {
        #[serde(skip_serializing_if = "Option::is_none")]
        line: Option<usize>,
        #[serde(skip_serializing_if = "Option::is_none")]
        arg: Option<usize>,
        value: &'a str,
    }
    let envelope = envelope.map(crate::text::one_json_line);
    let received_text = received.map(crate::text::one_json_line);
    let (line, arg) = match input.origin {
        Origin::Line(line) => (Some(line), None),
        Origin::Arg(arg) => (None, Some(arg)),
    };
    let joined = Joined {
        input: InputJson {
            line,
            arg,
            value: &input.value,
        },
        envelope: envelope
            .as_deref()
            .and_then(|text| serde_json::from_str::<&RawValue>(text).ok()),
        error,
        received: received_text.as_deref().map(|text| {
            serde_json::from_str::<&RawValue>(text).map_or(Received::Text(text), Received::Json)
        }),
    };
    // Serialising borrowed strings and valid raw JSON cannot fail.
    serde_json::to_string(&joined).unwrap_or_default()
}

fn progress_bar(ctx: &Context, len: usize, waiting: bool) -> ProgressBar {
    if !ctx.stderr_is_terminal() || (len < 2 && !waiting) {
        return ProgressBar::hidden();
    }
    let bar = if len < 2 {
        let spinner = ProgressBar::new_spinner().with_message("waiting for a final state");
        spinner.enable_steady_tick(Duration::from_millis(120));
        spinner
    } else {
        let bar = ProgressBar::new(len as u64);
        if let Ok(style) = ProgressStyle::with_template("{bar:40} {pos}/{len} look-ups {elapsed}") {
            bar.set_style(style);
        }
        bar
    };
    bar.set_draw_target(ProgressDrawTarget::stderr());
    bar
}

/// One look-up; with `wait`, polls until a final state or the timeout.
pub(crate) async fn look_up(
    ctx: &Context,
    lookup: &Lookup,
    merchant_id: Option<Uuid>,
    wait: Option<Duration>,
) -> Result<Reply<PaymentStatus>, CliError> {
    let fail = |source| ctx.call_failed(lookup.describe(), source);
    // `--wait-timeout` counts from here: the first read is part of the wait.
    let began = tokio::time::Instant::now();
    let first = async {
        match lookup {
            Lookup::Id(id) => {
                let path = format!("/api/payments/{}/status", encode_path_segment(id));
                let started = ctx.log_request("GET", &path);
                let result = ctx.client.status(id).instrument(started.span()).await;
                log(ctx, &started, &result);
                result
            }
            Lookup::Reference(reference) => {
                let query = merchant_id
                    .map(|m| format!("?merchantId={m}"))
                    .unwrap_or_default();
                let path = format!(
                    "/api/payments/reference/{}/status{query}",
                    encode_path_segment(reference)
                );
                let started = ctx.log_request("GET", &path);
                let result = ctx
                    .client
                    .status_by_reference(reference, merchant_id)
                    .instrument(started.span())
                    .await;
                log(ctx, &started, &result);
                result
            }
        }
    };
    let Some(timeout) = wait else {
        return first.await.map_err(fail);
    };
    let gave_up = |last: Option<Box<Reply<PaymentStatus>>>| ClientError::WaitTimeout {
        waited: began.elapsed(),
        last,
    };
    let deadline = began.checked_add(timeout);
    let reply = match deadline {
        Some(deadline) => tokio::time::timeout_at(deadline, first)
            .await
            .map_err(|_| fail(gave_up(None)))?,
        None => first.await,
    }
    .map_err(fail)?;
    if reply.data().status.is_final() {
        return Ok(reply);
    }
    let remaining = timeout.saturating_sub(began.elapsed());
    if remaining.is_zero() {
        return Err(fail(gave_up(Some(Box::new(reply)))));
    }
    let id = reply.data().transaction_id.clone();
    let started = ctx.log_request("GET", &format!("/api/payments/{id}/status (polling)"));
    let options = WaitOptions::default().timeout(remaining);
    let result = ctx
        .client
        .wait_for_final(&id, options)
        .instrument(started.span())
        .await;
    log(ctx, &started, &result);
    result.map_err(|err| match err {
        // The first read is what was last seen when no poll answered; the
        // time waited is the whole wait's.
        ClientError::WaitTimeout { last, .. } => fail(gave_up(last.or(Some(Box::new(reply))))),
        other => fail(other),
    })
}

fn log(
    ctx: &Context,
    started: &crate::commands::Started,
    result: &Result<Reply<PaymentStatus>, ClientError>,
) {
    ctx.log_response(
        started,
        result
            .as_ref()
            .map(|reply| (reply.http_status(), reply.request_id(), reply.attempts())),
    );
}

/// Prints the table (json is already out) and the problems, in input
/// order; returns the highest exit code.
fn report(
    ctx: &Context,
    inputs: &[Input],
    outcomes: &[Outcome],
    currency: Option<&Currency>,
) -> Result<Exit, CliError> {
    let mut exits = Vec::with_capacity(outcomes.len());
    let mut rows = Vec::with_capacity(outcomes.len());
    let mut problems = Vec::new();
    let mut other_decimals = None;
    for (input, outcome) in inputs.iter().zip(outcomes) {
        match outcome {
            Outcome::Found(reply) => {
                exits.push(Exit::Ok);
                let amount = reply.data().amount;
                if currency.is_some_and(|currency| super::amount_in(&amount, currency).is_none()) {
                    other_decimals.get_or_insert(amount);
                }
                rows.push(LookupRow::Found(view_in(reply.data(), currency)));
            }
            Outcome::Malformed { line, reason } => {
                exits.push(Exit::Usage);
                problems.push(format!("--from-file line {line}: {reason}"));
                rows.push(LookupRow::Failed {
                    input: format!("(line {line})"),
                    by_reference: false,
                    label: "INVALID".to_owned(),
                    reason: reason.clone(),
                });
            }
            Outcome::Failed(err) => {
                exits.push(err.exit_code());
                problems.push(err.to_string());
                let Ok(lookup) = &input.lookup else {
                    continue;
                };
                rows.push(failed_row(lookup, err, currency));
            }
        }
    }
    let single = outcomes.len() == 1;
    let only_failures = rows
        .iter()
        .all(|row| matches!(row, LookupRow::Failed { .. }));
    if !(ctx.is_json() || single && only_failures) {
        let table = match rows.as_slice() {
            [LookupRow::Found(view)] => output::status(view, ctx.style()),
            rows => output::statuses(rows, ctx.style()),
        };
        ctx.print(&table)?;
    }
    if let (Some(amount), Some(currency)) = (other_decimals.filter(|_| !ctx.is_json()), currency) {
        super::stderr_line(super::other_decimals_note(&amount, currency));
    }
    for problem in &problems {
        super::stderr_line(format_args!("error: {}", crate::text::printable(problem)));
    }
    if !single && !problems.is_empty() {
        super::stderr_line(format_args!(
            "{} of {} look-ups failed",
            problems.len(),
            outcomes.len()
        ));
    }
    Ok(Exit::worst(exits))
}

/// The envelope to show a script for a failure: the service's error
/// envelope, or for `--wait` the last status read.
fn last_envelope(err: &CliError) -> Option<&str> {
    last_status(err).map_or_else(|| err.service_envelope(), |last| Some(last.raw_envelope()))
}

/// The last status `--wait` read before it gave up.
fn last_status(err: &CliError) -> Option<&Reply<PaymentStatus>> {
    match err {
        CliError::Call { source, .. } => match source.as_ref() {
            ClientError::WaitTimeout { last, .. } => last.as_deref(),
            _ => None,
        },
        _ => None,
    }
}

fn failed_row(lookup: &Lookup, err: &CliError, currency: Option<&Currency>) -> LookupRow {
    if let Some(last) = last_status(err) {
        let mut view = view_in(last.data(), currency);
        view.message = Some(format!(
            "gave up waiting{}",
            view.message.map(|m| format!(": {m}")).unwrap_or_default()
        ));
        return LookupRow::Found(view);
    }
    let (label, reason) = match err {
        CliError::Call { source, .. } => (error::label_for(source), error::reason(source)),
        CliError::Refused { reason, .. } => ("ERROR", reason.clone()),
        other => ("ERROR", other.to_string()),
    };
    LookupRow::Failed {
        input: lookup.text().to_owned(),
        by_reference: lookup.is_reference(),
        label: label.to_owned(),
        reason,
    }
}

/// A status as a table shows it, its amount with `currency` when that is
/// the currency's number of decimals (the answer carries no currency).
pub(crate) fn view_in(data: &PaymentStatus, currency: Option<&Currency>) -> StatusView {
    StatusView {
        transaction_id: data.transaction_id.to_string(),
        reference_no: data.reference_no.clone(),
        status: data.status.to_string(),
        amount: currency
            .and_then(|currency| super::amount_in(&data.amount, currency))
            .unwrap_or_else(|| data.amount.to_string()),
        product_code: data.product_code.clone(),
        created_at: data.created_at,
        last_modified_at: data.last_modified_at,
        provider_reference: data.provider_reference.clone(),
        message: data.message.clone(),
    }
}

/// One transactionId answered for two references: neither is used.
mod conflicts;
/// The inputs: arguments, `--from-file` lines.
mod inputs;

use conflicts::Conflicts;

pub(crate) use inputs::id_problem;
#[cfg(test)]
use inputs::parse_lines;
use inputs::{collect_inputs, nothing_to_look_up};

#[cfg(test)]
mod tests;
