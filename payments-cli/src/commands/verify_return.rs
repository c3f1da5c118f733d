//! `payments verify-return URL`: the return address a payer's browser
//! arrived at after a redirect-based payment, checked against the service
//! (CONTRACT section 13). The service is the truth: the address is a
//! convenience anyone can forge.

use payments_client::PaymentStatus;
use payments_client::wire::encode_path_segment;
use payments_client::{Error as ClientError, Reply, ReturnAddress};
use tracing::Instrument as _;

use super::Context;
use super::status::view_in;
use crate::{
    cli::VerifyReturnArgs,
    error::CliError,
    exit::Exit,
    output::{self, printable},
};

/// Reads the address, reads the transaction, prints its status; exit 1
/// when the address's referenceNo or status disagrees with the service.
///
/// # Errors
///
/// An address without the three parameters (usage), a referenceNo that is
/// not the transaction's, and the status read's failures.
pub async fn run(ctx: &Context, args: VerifyReturnArgs) -> Result<Exit, CliError> {
    let address = ReturnAddress::parse(&args.url).map_err(|err| {
        // The problems alone: "invalid request" would be the client's word
        // for a request it refused to send, and there is none yet.
        let problems = match &err {
            ClientError::InvalidInput(problems) => problems.to_string(),
            other => other.to_string(),
        };
        CliError::Usage(format!("not a return address: {}", printable(&problems)))
    })?;
    let id = address.transaction_id();
    // The address is the payer's browser's: anyone can forge it.
    let call = format!("verify-return of {}", crate::text::cut(id.as_str()));
    let path = format!("/api/payments/{}/status", encode_path_segment(id.as_str()));
    let started = ctx.log_request("GET", &path);
    let result = ctx
        .client
        .verify_return(&address)
        .instrument(started.span())
        .await;
    ctx.log_response(
        &started,
        result.as_ref().map(|v| {
            let reply = v.reply();
            (reply.http_status(), reply.request_id(), reply.attempts())
        }),
    );
    match result {
        Ok(verified) => {
            show(ctx, verified.reply())?;
            if verified.status_matches() {
                return Ok(Exit::Ok);
            }
            super::stderr_line(format_args!(
                "error: the return address says status {}, but the service says {}: the service is the truth (request id {})",
                printable(verified.claimed_status().as_str()),
                printable(verified.status().as_str()),
                verified.reply().request_id()
            ));
            Ok(Exit::Rejected)
        }
        Err(err) => {
            // What the service does say of that transaction, before the
            // error line (json prints its envelope with the error).
            if let ClientError::ReturnMismatch { found, .. } = &err
                && !ctx.is_json()
            {
                show(ctx, found)?;
            }
            Err(ctx.call_failed(call, err))
        }
    }
}

/// The status as `payments status` prints it.
fn show(ctx: &Context, reply: &Reply<PaymentStatus>) -> Result<(), CliError> {
    if ctx.is_json() {
        ctx.print_line(reply.raw_envelope())
    } else {
        ctx.print(&output::status(&view_in(reply.data(), None), ctx.style()))
    }
}
