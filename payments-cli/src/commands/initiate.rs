//! `payments initiate`: create a payment transaction.

use payments_client::{Currency, InitiateRequest, MinorAmount};
use tracing::Instrument as _;

use super::Context;
use crate::{
    amount,
    cli::InitiateArgs,
    error::CliError,
    exit::Exit,
    output::{self, InitiatedView},
    usage,
};

/// Validates the flags, initiates, prints the result.
///
/// The product code, the store, the description and the other strings are
/// sent as typed: their lengths and forms are the service's to judge (the
/// mock's limits are its own), and its refusal exits as any other.
///
/// # Errors
///
/// Usage errors (amount, currency, merchant, a reference with whitespace
/// at an end or one status could not look up, values the client refuses
/// to send) and the call's failure.
pub async fn run(ctx: &Context, args: InitiateArgs) -> Result<Exit, CliError> {
    // As status and confirm refuse such an argument: a space at an end is
    // a slip of the command line, and `payments status --reference-no`
    // could not look the transaction up by it afterwards.
    if args.reference_no.trim() != args.reference_no {
        return Err(CliError::Usage(format!(
            "--reference-no {} must not start or end with whitespace",
            usage::quote(&args.reference_no)
        )));
    }
    // Nor one that status and reconcile would refuse to look up: after an
    // ambiguous answer, `payments status --reference-no` must find it.
    if let Some(problem) = super::reference::problem(&args.reference_no) {
        return Err(CliError::Usage(format!(
            "--reference-no {} {problem}",
            usage::quote(&args.reference_no)
        )));
    }
    if let Some(problem) = args.country.as_deref().and_then(usage::check_country) {
        return Err(CliError::Usage(problem));
    }
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
    let product = args.product.clone();
    let request = build_request(args, merchant_id, minor, &currency_code)?;

    let started = ctx.log_request("POST", "/api/payments/initiate");
    let result = ctx
        .client
        .initiate(request)
        .instrument(started.span())
        .await;
    ctx.log_response(
        &started,
        result
            .as_ref()
            .map(|reply| (reply.http_status(), reply.request_id(), reply.attempts())),
    );
    let reply = match result {
        Ok(reply) => reply,
        Err(source) => {
            let advice = if names_the_product(&source) {
                Some(product_advice(ctx, &product).await)
            } else {
                None
            };
            let mut err = ctx.call_failed("initiate", source);
            if let CliError::Call { advice: slot, .. } = &mut err {
                *slot = advice;
            }
            return Err(err);
        }
    };

    if let (true, Some(why)) = (ctx.is_json(), reply.reconciled()) {
        let envelope = output::reconciled_envelope(reply.data(), reply.request_id(), why)
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
    }
    // Said in either output, on stderr, where a script's parsing of stdout
    // does not meet it.
    if let Some(why) = reply.reconciled() {
        super::stderr_line(format_args!(
            "note: {}, so this transaction was read back by its reference; it was created once",
            output::read_back_because(why)
        ));
    }
    Ok(Exit::Ok)
}

/// Whether the service refused the product code (the mock: `productCode
/// NOPE is not offered`; any validation message that names the field).
fn names_the_product(error: &payments_client::Error) -> bool {
    error.as_api().is_some_and(|api| {
        api.code == payments_client::ErrorCode::ValidationError
            && api.message.contains("productCode")
    })
}

/// What to do about a product the service refused: the products it
/// offers when it publishes them (the mock does, in `/openapi.json`), or
/// whom to ask.
async fn product_advice(ctx: &Context, product: &str) -> String {
    // It sends no API key: only the URL's `user:pass@`, if any.
    let started = ctx.log_request_sending("GET", "/openapi.json", false);
    let offered = offered_products(ctx).await;
    if ctx.settings.verbose {
        super::stderr_line(format_args!(
            "< {} in {} ms",
            if offered.is_some() {
                "product list read"
            } else {
                "no product list"
            },
            started.elapsed().as_millis()
        ));
    }
    match offered {
        Some(codes) => {
            // `topup` where the service lists `TOPUP`: a hint, after the
            // service's own refusal (a service may take either case).
            let hint = codes
                .iter()
                .find(|code| code.as_str() != product && code.eq_ignore_ascii_case(product))
                .map(|code| format!("; did you mean {code}?"))
                .unwrap_or_default();
            format!(
                "--product {}: the service offers {}{hint}",
                usage::quote(product),
                codes.join(", ")
            )
        }
        None => format!(
            "--product {}: the service does not publish its products; ask your payment \
             provider which product codes your merchant may use",
            usage::quote(product)
        ),
    }
}

/// The product codes in the service's OpenAPI description, if it has one
/// (no API key is sent: the description is public on the mock). Read with
/// the CLI's TLS settings and proxy rule (`commands::http`). Bounded: 3 s,
/// 4 MiB.
async fn offered_products(ctx: &Context) -> Option<Vec<String>> {
    const LIMIT: usize = 4 * 1024 * 1024;
    let http = crate::commands::http::client(ctx, std::time::Duration::from_secs(3)).ok()?;
    let url = format!("{}/openapi.json", ctx.base_url.trim().trim_end_matches('/'));
    let mut response = http.get(url).send().await.ok()?;
    if !response.status().is_success() {
        return None;
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.ok()? {
        body.extend_from_slice(&chunk);
        if body.len() > LIMIT {
            return None;
        }
    }
    let document = serde_json::from_slice(&body).ok()?;
    usage::products_in_openapi(&document)
}

/// The exponent of the currency the service echoed (it should be ours).
fn exponent_of(code: &impl ToString, requested: u32) -> u32 {
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
    // What the user typed, for messages that name the flag.
    let typed: Vec<(&str, String)> = [
        ("referenceNo", Some(args.reference_no.clone())),
        ("productCode", Some(args.product.clone())),
        ("storeId", Some(args.store_id.clone())),
        ("description", args.description.clone()),
        ("quantity", args.quantity.map(|q| q.to_string())),
        ("countryCode", args.country.clone()),
        ("deviceId", args.device_id.clone()),
        ("payerId", args.payer_id.clone()),
        ("returnUrl", args.return_url.clone()),
        (
            "extraProperties",
            args.extra
                .as_ref()
                .map(|extra| serde_json::Value::Object(extra.0.clone()).to_string()),
        ),
    ]
    .into_iter()
    .filter_map(|(field, text)| text.map(|text| (field, text)))
    .collect();
    let typed_value = |field: &str| {
        typed
            .iter()
            .find(|(name, _)| *name == field)
            .map(|(_, text)| text.as_str())
    };
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
    builder.build().map_err(|err| match err {
        payments_client::Error::InvalidInput(errors) => {
            CliError::Usage(usage::invalid_request(&errors, typed_value))
        }
        other => invalid(other),
    })
}
