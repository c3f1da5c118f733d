//! What a request is about, for the scripted fault rules
//! (`fault_rules.rs`): its endpoint, and the merchant, reference and
//! transaction it names. Read from the request; for a confirm or a status
//! read by id, the merchant and reference come from the stored
//! transaction, looked up (in the caller's merchant scope, like the
//! handlers) only when a rule asks for them.

use axum::http::request::Parts;
use payments_interface::Endpoint;
use serde_json::{Map, Value};
use uuid::Uuid;

use crate::domain::access::Caller;
use crate::domain::port::Store as _;
use crate::fault_rules::{Facts, Hit};
use crate::http::extract::decoded_segment;
use crate::state::AppState;

/// The fault of the first live rule that the request matches, if any,
/// when the request itself says enough; `Err` with what it says when a
/// rule needs the stored transaction: then [`meet_after_lookup`].
/// Synchronous: the common case (no rule matches, or one does by what the
/// request names) allocates nothing and awaits nothing.
pub(crate) fn meet(
    state: &AppState,
    parts: &Parts,
    caller: Caller,
    endpoint: Option<Endpoint>,
    body: &[u8],
) -> Result<Option<Hit>, Facts> {
    let mut facts = facts(parts, caller, endpoint, body);
    // A transaction met before (a status polled): its merchant and
    // reference without a store read, and the rules walked once.
    if !facts.complete {
        state.fault_rules.recall(&mut facts, caller.merchant);
    }
    match state.fault_rules.meet(&facts, state.faults.seed()) {
        Ok(hit) => Ok(hit),
        Err(()) => Err(facts),
    }
}

/// [`meet`] once the stored transaction the request names (in the
/// caller's merchant scope) has given its merchant and reference.
pub(crate) async fn meet_after_lookup(
    state: &AppState,
    caller: Caller,
    mut facts: Facts,
) -> Option<Hit> {
    if let Some(id) = facts.transaction_id {
        // A store that cannot be read leaves the rule unmatched.
        if let Ok(Some((merchant, reference))) = state
            .store
            .with_id(id, caller.merchant, |r| {
                (r.fields.merchant_id, r.fields.reference_no.to_string())
            })
            .await
        {
            state.fault_rules.remember(id, merchant, &reference);
            facts.merchant_id = Some(merchant);
            facts.reference_no = Some(reference);
        }
    }
    facts.complete = true;
    state
        .fault_rules
        .meet(&facts, state.faults.seed())
        .ok()
        .flatten()
}

fn text<'a>(object: Option<&'a Map<String, Value>>, field: &str) -> Option<&'a str> {
    object?.get(field)?.as_str()
}

fn uuid(text: Option<&str>) -> Option<Uuid> {
    text.and_then(|t| Uuid::parse_str(t).ok())
}

/// What the request itself says.
fn facts(parts: &Parts, caller: Caller, endpoint: Option<Endpoint>, body: &[u8]) -> Facts {
    let object = || serde_json::from_slice::<Map<String, Value>>(body).ok();
    let mut facts = Facts {
        endpoint,
        complete: true,
        ..Facts::default()
    };
    match endpoint {
        Some(Endpoint::Initiate) => {
            let o = object();
            facts.merchant_id = uuid(text(o.as_ref(), "merchantId")).or(caller.merchant);
            facts.reference_no = text(o.as_ref(), "referenceNo").map(str::to_owned);
        }
        Some(Endpoint::Confirm) => {
            let o = object();
            facts.transaction_id = uuid(text(o.as_ref(), "transactionId"));
            facts.reference_no = text(o.as_ref(), "referenceNo").map(str::to_owned);
            facts.merchant_id = caller.merchant;
            facts.complete = facts.transaction_id.is_none();
        }
        Some(Endpoint::StatusById) => {
            let raw = payments_interface::route(parts.uri.path()).map_or("", |r| r.raw);
            facts.transaction_id = uuid(decoded_segment(raw).as_deref());
            facts.merchant_id = caller.merchant;
            facts.complete = facts.transaction_id.is_none();
        }
        Some(Endpoint::StatusByReference) => {
            let raw = payments_interface::route(parts.uri.path()).map_or("", |r| r.raw);
            facts.reference_no = decoded_segment(raw).map(std::borrow::Cow::into_owned);
            let query = payments_serve::admin::query_pairs(parts.uri.query());
            facts.merchant_id = caller.merchant.or_else(|| {
                uuid(
                    query
                        .iter()
                        .find(|(k, _)| k == "merchantId")
                        .map(|(_, v)| v.as_str()),
                )
            });
        }
        None => {}
    }
    facts
}
