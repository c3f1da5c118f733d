//! Turning "already done" answers to a *retry* back into the original
//! outcome (CONTRACT section 12).
//!
//! A retry of initiate that meets `DUPLICATE_REFERENCE_NO`, or of confirm
//! that meets `TRANSACTION_ALREADY_CONFIRMED`, most likely repeats a call
//! the service carried out although the client never saw the answer. The
//! transaction is read back; if it is the caller's, that is the result
//! (marked reconciled), otherwise a distinct error, never a false success.
//! On a first attempt those codes are ordinary API errors.
//!
//! A 2xx answer to initiate or confirm that cannot be read (not the
//! envelope, `data` null, `data` not matching the model) means the service
//! carried the call out; it is read back the same way. There, any
//! read-back failure or disagreement is an error whose outcome is
//! `Unknown`.
//!
//! The read-back keeps the call's request id but gets a fresh deadline
//! (the client's `deadline` from now), so that a deadline spent by the
//! attempts does not turn a carried-out call into an error.
//!
//! An initiate whose answer disagrees with its request (the answer guard,
//! `guard.rs`) is settled the same way: the sent reference is read back,
//! and only a transaction that matches the request is a success
//! ([`settle_initiate`]). Every read-back is itself a checked status read.

use crate::calls::confirm::ConfirmRequest;
use crate::calls::initiate::InitiateRequest;
use crate::calls::status::Lookup;
use crate::error::{AnswerMismatch, Disagreement, ReadBack as Found};
use crate::error::{Error, Outcome};
use crate::model::envelope::{Reconciled, Reply};
use crate::model::status::{ErrorCode, TransactionStatus};
use crate::model::transaction::{Confirmation, Initiated, PaymentStatus};
use crate::money::{to_major, to_minor};
use crate::transport::{CallContext, Failed, Transport};

/// A retry rejected as a repeat *after an ambiguous attempt*. When every
/// earlier attempt was certainly not carried out (a 429, a refused
/// connection), the rejection can only mean the reference or the confirm
/// was someone else's, so it stays a plain error, as on a first attempt.
fn is_repeat(failed: &Failed, code: &ErrorCode) -> bool {
    failed.attempts > 1 && failed.earlier_ambiguous && failed.error.error_code() == Some(code)
}

/// Why a failed call is read back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ReadBack {
    /// A retry was rejected as a repeat (CONTRACT section 12).
    Repeat,
    /// A 2xx answer could not be read: the service carried the call out,
    /// so the read-back is the only way to learn its result.
    UnreadableSuccess,
}

impl ReadBack {
    fn of(failed: &Failed, repeat_code: &ErrorCode) -> Option<Self> {
        if is_repeat(failed, repeat_code) {
            Some(ReadBack::Repeat)
        } else if failed.error.is_unreadable_success() {
            Some(ReadBack::UnreadableSuccess)
        } else {
            None
        }
    }

    /// What the reply read back will say of itself.
    fn reconciled(self) -> Reconciled {
        match self {
            ReadBack::Repeat => Reconciled::RetryFoundItDone,
            ReadBack::UnreadableSuccess => Reconciled::AnswerUnreadable,
        }
    }

    fn describe(self, failed: &Failed) -> String {
        match self {
            ReadBack::Repeat => "the retry was rejected as a repeat".to_owned(),
            ReadBack::UnreadableSuccess => {
                format!(
                    "the service's success answer could not be read ({})",
                    failed.error
                )
            }
        }
    }
}

/// Reads the transaction back with the same request id but a deadline of
/// its own: the call's deadline may already be spent by the attempts that
/// led here, and timing out now would turn a call the service carried out
/// into an error.
async fn read_back(
    transport: &Transport,
    ctx: &CallContext,
    what: Lookup<'_>,
) -> Result<Reply<PaymentStatus>, Error> {
    let lookup_ctx = CallContext {
        request_id: ctx.request_id.clone(),
        deadline: transport.fresh_deadline(),
    };
    transport.read_status(what, &lookup_ctx).await
}

/// [`read_back`], its failure told as a failed reconciliation.
async fn lookup(
    transport: &Transport,
    ctx: &CallContext,
    what: Lookup<'_>,
    why: &str,
) -> Result<Reply<PaymentStatus>, Error> {
    read_back(transport, ctx, what)
        .await
        .map_err(|e| failed_lookup(ctx, why, e))
}

fn failed_lookup(ctx: &CallContext, why: &str, e: Error) -> Error {
    Error::Reconciliation {
        reason: format!("{why} and reading the transaction back failed"),
        outcome: Outcome::Unknown,
        request_id: ctx.request_id.clone(),
        found: None,
        source: Some(Box::new(e)),
    }
}

fn mismatch(ctx: &CallContext, reason: String, outcome: Outcome, found: PaymentStatus) -> Error {
    Error::Reconciliation {
        reason,
        outcome,
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
    let Some(read_back) = ReadBack::of(&failed, &ErrorCode::DuplicateReferenceNo) else {
        return Err(failed.into_error());
    };
    tracing::info!(request_id = %ctx.request_id, ?read_back, "initiate: reading the reference back");
    let why = read_back.describe(&failed);
    let what = Lookup::Reference {
        reference_no: req.reference_no(),
        merchant_id: Some(req.merchant_id()),
    };
    let found = lookup(transport, ctx, what, &why).await?;
    let currency = req.effective_currency();
    let st = found.data();
    // A compared mismatch after DUPLICATE_REFERENCE_NO proves the reference
    // belongs to another payment, so this call created nothing. After an
    // unreadable success it proves nothing of the kind.
    let compared_mismatch = match read_back {
        ReadBack::Repeat => Outcome::NotCarriedOut,
        ReadBack::UnreadableSuccess => Outcome::Unknown,
    };
    // The status carries no currency: compare in the request's minor units.
    match to_minor(st.amount, &currency) {
        Err(e) => {
            let reason = format!(
                "{why}; reference {} holds a transaction of {} (major units), which cannot be \
                 compared with {} {} minor units: {e}",
                req.reference_no(),
                st.amount,
                req.amount(),
                currency
            );
            return Err(mismatch(ctx, reason, Outcome::Unknown, found.into_data()));
        }
        Ok(m) if m != req.amount() => {
            let reason = format!(
                "{why}; reference {} holds a transaction of {} (major units), not {} {} minor units",
                req.reference_no(),
                st.amount,
                req.amount(),
                currency
            );
            return Err(mismatch(ctx, reason, compared_mismatch, found.into_data()));
        }
        Ok(_) => {}
    }
    if st.product_code != req.product_code() {
        let reason = format!(
            "{why}; reference {} holds a transaction for product {}, not {}",
            req.reference_no(),
            st.product_code,
            req.product_code()
        );
        return Err(mismatch(ctx, reason, compared_mismatch, found.into_data()));
    }
    Ok(as_initiated(
        req,
        found,
        failed.attempts,
        read_back.reconciled(),
    ))
}

/// A status read of the request's reference as the initiate's result,
/// marked reconciled.
fn as_initiated(
    req: &InitiateRequest,
    found: Reply<PaymentStatus>,
    attempts: u32,
    why: Reconciled,
) -> Reply<Initiated> {
    let amount = req.amount();
    let currency = req.effective_currency();
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
    reply.attempts = attempts;
    reply.reconciled = Some(why);
    reply
}

/// After an initiate whose answer disagreed with the request: reads the
/// sent reference back (the request's merchant as scope) and succeeds,
/// marked reconciled, only when that transaction is the request's (same
/// amount in the request's currency, same product; the reference is
/// checked by the read itself) and the answer disagreed on nothing a
/// status read cannot show (its currency). Otherwise the mismatch stands,
/// saying what the read-back found or how it failed. Never a blind retry.
pub(crate) async fn settle_initiate(
    transport: &Transport,
    ctx: &CallContext,
    req: &InitiateRequest,
    mut mismatch: Box<AnswerMismatch>,
    attempts: u32,
) -> Result<Reply<Initiated>, Error> {
    tracing::warn!(
        request_id = %ctx.request_id,
        answer = %mismatch,
        "initiate: the answer disagrees with the request; reading the reference back"
    );
    let what = Lookup::Reference {
        reference_no: req.reference_no(),
        merchant_id: Some(req.merchant_id()),
    };
    let found = match read_back(transport, ctx, what).await {
        Ok(found) => found,
        Err(e) => {
            mismatch.read_back = Some(Found::Failed(Box::new(e)));
            return Err(Error::AnswerMismatch(mismatch));
        }
    };
    let currency = req.effective_currency();
    let st = found.data();
    let mut differences = Vec::new();
    // Decimals compare by value: `150.0` is `150.00`. A currency without an
    // exponent cannot be sent (the builder refuses it), so the conversion
    // only fails on an amount that overflows, which cannot match anyway.
    let sent = to_major(req.amount(), &currency);
    if !matches!(&sent, Ok(sent) if *sent == st.amount) {
        differences.push(Disagreement::Field {
            field: "amount",
            sent: sent.map_or_else(|_| req.amount().to_string(), |d| d.to_string()),
            answered: st.amount.to_string(),
        });
    }
    if st.product_code != req.product_code() {
        differences.push(Disagreement::Field {
            field: "productCode",
            sent: req.product_code().to_owned(),
            answered: st.product_code.clone(),
        });
    }
    if !differences.is_empty() {
        mismatch.read_back = Some(Found::Disagrees {
            found: Box::new(found),
            disagreements: differences,
        });
        return Err(Error::AnswerMismatch(mismatch));
    }
    // A status read has no currency: an answer that named another one (or
    // none, which means MYR, for a request in another currency) may have
    // booked the amount in it, and the read cannot tell. Never settled
    // into a success in the request's currency.
    if mismatch.has("currencyCode") {
        mismatch.read_back = Some(Found::Unsettled {
            found: Box::new(found),
            field: "currencyCode",
        });
        return Err(Error::AnswerMismatch(mismatch));
    }
    let reply = as_initiated(req, found, attempts, Reconciled::AnswerAboutAnotherRequest);
    if let Some(guard) = &transport.guard {
        // Remembers the initiated amount for later confirms.
        guard.initiate(req, &reply).map_err(Error::AnswerMismatch)?;
    }
    tracing::info!(request_id = %ctx.request_id, "initiate: the reference read back matches the request");
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
    let Some(read_back) = ReadBack::of(&failed, &ErrorCode::TransactionAlreadyConfirmed) else {
        return Err(failed.into_error());
    };
    tracing::info!(request_id = %ctx.request_id, ?read_back, "confirm: reading the status back");
    let why = read_back.describe(&failed);
    let what = Lookup::Id(req.transaction_id().as_str());
    let found = lookup(transport, ctx, what, &why).await?;
    let st = found.data();
    // The service said the confirm happened (or answered 2xx); a read-back
    // that disagrees leaves the outcome open, never "not carried out".
    if st.reference_no != req.reference_no() {
        let reason = format!(
            "{why}; transaction {} has reference {}, not {}",
            st.transaction_id,
            st.reference_no,
            req.reference_no()
        );
        return Err(mismatch(ctx, reason, Outcome::Unknown, found.into_data()));
    }
    if matches!(
        st.status,
        TransactionStatus::Pending | TransactionStatus::Initiated | TransactionStatus::Expired
    ) {
        let reason = format!(
            "{why}; transaction {} is {}, not confirmed",
            st.transaction_id, st.status
        );
        return Err(mismatch(ctx, reason, Outcome::Unknown, found.into_data()));
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
    reply.reconciled = Some(read_back.reconciled());
    Ok(reply)
}
