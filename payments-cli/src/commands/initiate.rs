//! `payments initiate`: create a payment transaction.

use payments_client::{Currency, InitiateRequest, MinorAmount};

use super::Context;
use crate::{
    amount,
    cli::InitiateArgs,
    error::CliError,
    exit::Exit,
    output::{self, InitiatedView},
};

/// Validates the flags, initiates, prints the result.
///
/// # Errors
///
/// Usage errors (amount, currency, merchant, values the client refuses to
/// send) and the call's failure.
pub async fn run(ctx: &Context, args: InitiateArgs) -> Result<Exit, CliError> {
    let currency_code = args.currency.to_ascii_uppercase();
    let (currency, exponent) = amount::currency(&currency_code)
        .map_err(|err| CliError::Usage(format!("--currency {err}")))?;
    let minor = match (&args.amount, &args.amount_minor) {
        (Some(major), _) => amount::parse_major(major, currency)
            .map_err(|err| CliError::Usage(format!("--amount {err}")))?,
        (None, Some(minor)) => amount::parse_minor(minor)
            .map_err(|err| CliError::Usage(format!("--amount-minor {err}")))?,
        (None, None) => {
            return Err(CliError::Usage(
                "give the amount with --amount or --amount-minor".to_owned(),
            ));
        }
    };
    let merchant_id = ctx.settings.require_merchant_id()?;
    let request = build_request(args, merchant_id, minor, &currency_code)?;

    let started = ctx.log_request("POST", "/api/payments/initiate");
    let result = ctx.client.initiate(request).await;
    ctx.log_response(
        started,
        result
            .as_ref()
            .map(|reply| (reply.http_status(), reply.request_id(), reply.attempts())),
    );
    let reply = result.map_err(|source| ctx.call_failed("initiate", source))?;

    if ctx.is_json() && reply.is_reconciled() {
        let envelope = output::reconciled_envelope(reply.data(), reply.request_id())
            .map_err(|err| CliError::Output(std::io::Error::other(err)))?;
        ctx.print_line(&envelope)?;
    } else if ctx.is_json() {
        ctx.print_line(reply.raw_envelope())?;
    } else {
        let data = reply.data();
        let view = InitiatedView {
            transaction_id: data.transaction_id.to_string(),
            reference_no: data.reference_no.clone(),
            status: data.status.to_string(),
            amount: format!(
                "{} {}",
                amount::format_minor(
                    data.amount.get(),
                    exponent_of(&data.currency_code, exponent)
                ),
                data.currency_code
            ),
            product_code: data.product_code.clone(),
            created_at: data.created_at,
            extra_properties: data.extra_properties.clone(),
        };
        ctx.print(&output::initiated(&view, ctx.style()))?;
        if reply.is_reconciled() {
            eprintln!(
                "note: this transaction was read back by its reference (a retry found it \
                 already created, or the first answer was about another request); it was created once"
            );
        }
    }
    Ok(Exit::Ok)
}

/// The exponent of the currency the service echoed (it should be ours).
fn exponent_of(code: &impl ToString, requested: u16) -> u16 {
    amount::currency(&code.to_string()).map_or(requested, |(_, e)| e)
}

fn build_request(
    args: InitiateArgs,
    merchant_id: uuid::Uuid,
    minor: u64,
    currency_code: &str,
) -> Result<InitiateRequest, CliError> {
    fn invalid(err: impl std::fmt::Display) -> CliError {
        CliError::Usage(format!("{err}"))
    }
    let amount = MinorAmount::new(minor).map_err(invalid)?;
    let currency = Currency::from_code(currency_code).map_err(invalid)?;
    let mut builder = InitiateRequest::builder(
        merchant_id,
        args.reference_no,
        amount,
        args.product,
        args.store_id,
    )
    .currency(currency);
    if let Some(description) = args.description {
        builder = builder.description(description);
    }
    if let Some(quantity) = args.quantity {
        builder = builder.quantity(quantity);
    }
    if let Some(country) = args.country {
        builder = builder.country_code(country);
    }
    if let Some(device_id) = args.device_id {
        builder = builder.device_id(device_id);
    }
    if let Some(payer_id) = args.payer_id {
        builder = builder.payer_id(payer_id);
    }
    if let Some(return_url) = args.return_url {
        builder = builder.return_url(return_url);
    }
    if let Some(extra) = args.extra {
        builder = builder.extra_properties(serde_json::Value::Object(extra.0));
    }
    builder.build().map_err(invalid)
}
