//! Turning "already done" answers to a *retry* back into the original
//! outcome (CONTRACT section 12).
//!
//! A retry of initiate that meets `DUPLICATE_REFERENCE_NO`, or of confirm
//! that meets `TRANSACTION_ALREADY_CONFIRMED`, most likely repeats a call
//! the service carried out although the client never saw the answer. The
//! transaction is read back; if it is the caller's, that is the result
//! (marked reconciled), otherwise a distinct error, never a false success.
//! On a first attempt those codes are ordinary API errors.

use crate::calls::confirm::ConfirmRequest;
use crate::calls::initiate::InitiateRequest;
use crate::calls::status;
use crate::error::Error;
use crate::model::envelope::Reply;
use crate::model::money::to_minor;
use crate::model::status::{ErrorCode, TransactionStatus};
use crate::model::transaction::{Confirmation, Initiated, PaymentStatus};
use crate::transport::{CallContext, Failed, Transport};

fn is_repeat(failed: &Failed, code: &ErrorCode) -> bool {
    failed.attempts > 1 && failed.error.error_code() == Some(code)
}

/// Reads the transaction back with the same request id and deadline.
async fn lookup(
    transport: &Transport,
    ctx: &CallContext,
    call: Result<crate::transport::Call, Error>,
) -> Result<Reply<PaymentStatus>, Error> {
    let call = call.map_err(|e| failed_lookup(ctx, e))?;
    transport
        .execute::<PaymentStatus>(&call, ctx)
        .await
        .map_err(|f| failed_lookup(ctx, f.error))
}

fn failed_lookup(ctx: &CallContext, e: Error) -> Error {
    Error::Reconciliation {
        reason: "the retry was rejected as a repeat and reading the transaction back failed"
            .to_owned(),
        request_id: ctx.request_id.clone(),
        found: None,
        source: Some(Box::new(e)),
    }
}

fn mismatch(ctx: &CallContext, reason: String, found: PaymentStatus) -> Error {
    Error::Reconciliation {
        reason,
        request_id: ctx.request_id.clone(),
        found: Some(Box::new(found)),
        source: None,
    }
}

/// After a failed initiate: reconcile a repeated reference, or pass the
/// error on.
pub(crate) async fn initiate(
    transport: &Transport,
    ctx: &CallContext,
    req: &InitiateRequest,
    failed: Failed,
) -> Result<Reply<Initiated>, Error> {
    if !is_repeat(&failed, &ErrorCode::DuplicateReferenceNo) {
        return Err(failed.error);
    }
    tracing::info!(request_id = %ctx.request_id, "initiate retry met DUPLICATE_REFERENCE_NO; reading it back");
    let call = status::by_reference(req.reference_no(), Some(req.merchant_id()));
    let found = lookup(transport, ctx, call).await?;
    let currency = req.effective_currency();
    let st = found.data();
    // The status carries no currency: compare in the request's minor units.
    let same_amount = to_minor(st.amount, &currency).is_ok_and(|m| m == req.amount());
    if !same_amount {
        let reason = format!(
            "reference {} already holds a transaction of {} (major units), not {} {} minor units",
            req.reference_no(),
            st.amount,
            req.amount(),
            currency
        );
        return Err(mismatch(ctx, reason, found.into_data()));
    }
    if st.product_code != req.product_code() {
        let reason = format!(
            "reference {} already holds a transaction for product {}, not {}",
            req.reference_no(),
            st.product_code,
            req.product_code()
        );
        return Err(mismatch(ctx, reason, found.into_data()));
    }
    let amount = req.amount();
    let mut reply = found.map(|st| Initiated {
        transaction_id: st.transaction_id,
        reference_no: st.reference_no,
        status: st.status,
        amount,
        currency_code: currency,
        product_code: st.product_code,
        created_at: st.created_at,
        extra_properties: st.extra_properties,
    });
    reply.attempts = failed.attempts;
    reply.reconciled = true;
    Ok(reply)
}

/// After a failed confirm: reconcile an already-confirmed transaction, or
/// pass the error on.
pub(crate) async fn confirm(
    transport: &Transport,
    ctx: &CallContext,
    req: &ConfirmRequest,
    failed: Failed,
) -> Result<Reply<Confirmation>, Error> {
    if !is_repeat(&failed, &ErrorCode::TransactionAlreadyConfirmed) {
        return Err(failed.error);
    }
    tracing::info!(request_id = %ctx.request_id, "confirm retry met TRANSACTION_ALREADY_CONFIRMED; reading it back");
    let call = status::by_id(req.transaction_id().as_str());
    let found = lookup(transport, ctx, call).await?;
    let st = found.data();
    if st.reference_no != req.reference_no() {
        let reason = format!(
            "transaction {} has reference {}, not {}",
            st.transaction_id,
            st.reference_no,
            req.reference_no()
        );
        return Err(mismatch(ctx, reason, found.into_data()));
    }
    if matches!(
        st.status,
        TransactionStatus::Pending | TransactionStatus::Initiated | TransactionStatus::Expired
    ) {
        let reason = format!(
            "transaction {} is {}, not confirmed",
            st.transaction_id, st.status
        );
        return Err(mismatch(ctx, reason, found.into_data()));
    }
    let mut reply = found.map(|st| {
        let error_message = if st.status == TransactionStatus::Failed {
            st.message
        } else {
            None
        };
        Confirmation {
            transaction_id: st.transaction_id,
            reference_no: st.reference_no,
            status: st.status,
            amount: st.amount,
            provider_reference: st.provider_reference,
            confirmed_at: None,
            error_message,
            extra_properties: st.extra_properties,
        }
    });
    reply.attempts = failed.attempts;
    reply.reconciled = true;
    Ok(reply)
}
