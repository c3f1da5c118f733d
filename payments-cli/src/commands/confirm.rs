//! `payments confirm`: confirm an initiated transaction.

use payments_client::{ConfirmRequest, Reconciled};
use tracing::Instrument as _;

use super::Context;
use crate::{
    cli::ConfirmArgs,
    error::CliError,
    exit::Exit,
    output::{self, ConfirmedView},
    usage,
};

/// Confirms and prints the outcome.
///
/// A confirmed payment that the provider declined (`FAILED`) still exits 0:
/// the exit code describes the call, not the payment.
///
/// # Errors
///
/// Values the client refuses to send, and the call's failure.
pub async fn run(ctx: &Context, args: ConfirmArgs) -> Result<Exit, CliError> {
    let currency = args
        .currency
        .as_deref()
        .map(|code| super::currency_flag("--currency", code))
        .transpose()?;
    // A transactionId is a UUID (CONTRACT section 1): one with whitespace
    // at an end was sent as typed and answered not found; refused as
    // initiate refuses such a --reference-no (status refuses both).
    if args.transaction_id.trim() != args.transaction_id {
        return Err(CliError::Usage(format!(
            "TRANSACTION_ID {}: must not start or end with whitespace",
            usage::quote(&args.transaction_id)
        )));
    }
    // Held to the rules status holds an id argument to (at most 128
    // characters, no control or invisible character): such an id was sent
    // and answered not found (exit 3).
    if let Some(problem) = super::status::id_problem(&args.transaction_id) {
        return Err(CliError::Usage(format!(
            "TRANSACTION_ID {} {problem}",
            usage::quote(&args.transaction_id)
        )));
    }
    // At most 200 bytes of the id, as usage errors quote a value.
    let call = format!("confirm of {}", crate::text::cut(&args.transaction_id));
    let mut builder =
        ConfirmRequest::builder(args.transaction_id.clone(), args.reference_no.clone());
    if let Some(code) = &args.code {
        crate::secrets::remember(code);
        builder = builder.confirmation_code(code.clone());
    }
    if let Some(extra) = args.extra {
        builder = builder.extra_properties(serde_json::Value::Object(extra.0));
    }
    let request = builder.build().map_err(|err| match err {
        payments_client::Error::InvalidInput(errors) => {
            CliError::Usage(usage::invalid_request(&errors, |field| match field {
                "transactionId" => Some(args.transaction_id.as_str()),
                "referenceNo" => Some(args.reference_no.as_str()),
                // An OTP is never repeated, not even a malformed one.
                "confirmationCode" => None,
                _ => None,
            }))
        }
        other => CliError::Usage(format!("invalid request: {other}")),
    })?;

    let started = ctx.log_request("POST", "/api/payments/confirm");
    let result = ctx.client.confirm(request).instrument(started.span()).await;
    ctx.log_response(
        &started,
        result
            .as_ref()
            .map(|reply| (reply.http_status(), reply.request_id(), reply.attempts())),
    );
    let reply = result.map_err(|source| ctx.call_failed(call, source))?;

    if let (true, Some(why)) = (ctx.is_json(), reply.reconciled()) {
        let envelope = output::reconciled_envelope(reply.data(), reply.request_id(), why)
            .map_err(|err| CliError::Output(std::io::Error::other(err)))?;
        ctx.print_line(&envelope)?;
    } else if ctx.is_json() {
        ctx.print_line(reply.raw_envelope())?;
    } else {
        let data = reply.data();
        let view = ConfirmedView {
            transaction_id: data.transaction_id.to_string(),
            reference_no: data.reference_no.clone(),
            status: data.status.to_string(),
            amount: currency
                .as_ref()
                .and_then(|currency| super::amount_in(&data.amount, currency))
                .unwrap_or_else(|| data.amount.to_string()),
            provider_reference: data.provider_reference.clone(),
            confirmed_at: data.confirmed_at,
            error_message: data.error_message.clone(),
            extra_properties: data.extra_properties.clone(),
            payment_url: data.payment_url().map(String::from),
        };
        ctx.print(&output::confirmed(&view, ctx.style()))?;
        if let Some(currency) = currency
            .as_ref()
            .filter(|currency| super::amount_in(&data.amount, currency).is_none())
        {
            super::stderr_line(super::other_decimals_note(&data.amount, currency));
        }
    }
    // Said in either output, on stderr, where a script's parsing of stdout
    // does not meet it.
    if let Some(why) = reply.reconciled() {
        super::stderr_line(reconciled_note(why));
    }
    Ok(Exit::Ok)
}

/// What stderr says of a confirm read back by id: what happened (a
/// single confirm whose answer was `data: null` had no retry to speak of).
fn reconciled_note(why: Reconciled) -> String {
    let what = match why {
        Reconciled::RetryFoundItDone => {
            "a retry found this transaction already confirmed (an earlier attempt's answer was \
             lost)"
        }
        _ => &format!(
            "{}, so the transaction was read back by its id",
            output::read_back_because(why)
        ),
    };
    format!("note: {what}; it was confirmed once")
}
